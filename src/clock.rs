//! The clock events are stamped with: the CPU's time-stamp counter read through `quanta`,
//! anchored once to the wall clock, so a timestamp costs a counter read and a multiply instead
//! of a `clock_gettime` call, and logs still carry absolute times. An event keeps only the
//! counter's reading ([`Stamp`]) and pays the multiply when its time is asked.
//!
//! The anchor is one `(SystemTime, raw counter reading)` pair taken when the clock is first used;
//! every later reading is the anchor's wall time plus the counter's elapsed nanoseconds. So
//! timestamps of one process never go backwards (a rate between two events is never negative),
//! even if the wall clock is stepped while the process runs; in exchange they drift from the
//! wall clock as NTP slews it (parts per million: milliseconds over a day). Where the CPU has
//! no invariant counter, `quanta` falls back to the monotonic clock and nothing else changes.

use std::sync::OnceLock;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

struct Anchored {
    clock: quanta::Clock,
    /// The counter's raw reading at the anchor (ticks, scaled only as a difference).
    at: u64,
    /// Nanoseconds since the Unix epoch at the anchor.
    wall: u64,
}

static CLOCK: OnceLock<Anchored> = OnceLock::new();

/// The process's clock and anchor: after the first call, one load and a branch, inline (every
/// event reads the counter through it).
#[inline]
fn anchored() -> &'static Anchored {
    match CLOCK.get() {
        Some(anchored) => anchored,
        None => anchor(),
    }
}

/// [`anchored`]'s first call: calibrates the counter and takes the anchor.
#[cold]
#[inline(never)]
fn anchor() -> &'static Anchored {
    CLOCK.get_or_init(|| {
        // Calibrating the counter against the monotonic clock takes up to 200 ms, once per
        // process; `routing` warms the clock up when the first scope opens, not at a give.
        #[cfg(not(miri))]
        let clock = quanta::Clock::new();
        // Miri cannot run `cpuid` (quanta's counter detection is inline assembly): under Miri
        // the clock is quanta's mock, which stands still at the anchor.
        #[cfg(miri)]
        let clock = quanta::Clock::mock().0;
        let at = clock.raw();
        let wall = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
            .unwrap_or_default();
        Anchored { clock, at, wall }
    })
}

/// Wall-clock time of an event, in nanoseconds since the Unix epoch.
///
/// Differences between timestamps of one process are what rates are computed from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Timestamp(u64);

impl Timestamp {
    /// The current wall-clock time, read from the CPU's time-stamp counter anchored to the
    /// wall clock once per process: it never goes backwards within a process (see
    /// docs/architecture.md, "Timestamps").
    #[inline]
    pub fn now() -> Self {
        Self(now_nanos())
    }

    /// A timestamp `nanos` nanoseconds after the Unix epoch.
    pub const fn from_nanos(nanos: u64) -> Self {
        Self(nanos)
    }

    /// Nanoseconds since the Unix epoch.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }

    /// Seconds since the Unix epoch.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }

    /// How long after `earlier` this is (zero if it is not later).
    pub fn duration_since(self, earlier: Timestamp) -> Duration {
        Duration::from_nanos(self.0.saturating_sub(earlier.0))
    }

    /// This timestamp moved `by` later.
    pub fn plus(self, by: Duration) -> Self {
        Self(
            self.0
                .saturating_add(u64::try_from(by.as_nanos()).unwrap_or(u64::MAX)),
        )
    }
}

impl From<SystemTime> for Timestamp {
    fn from(time: SystemTime) -> Self {
        let since_epoch = time.duration_since(UNIX_EPOCH).unwrap_or_default();
        Self(u64::try_from(since_epoch.as_nanos()).unwrap_or(u64::MAX))
    }
}

impl From<Timestamp> for SystemTime {
    fn from(time: Timestamp) -> Self {
        UNIX_EPOCH + Duration::from_nanos(time.0)
    }
}

/// Nanoseconds since the Unix epoch, now.
#[inline]
pub(crate) fn now_nanos() -> u64 {
    let anchored = anchored();
    anchored.nanos_at(anchored.clock.raw())
}

impl Anchored {
    /// Nanoseconds since the Unix epoch at the counter's raw reading `raw`.
    #[inline]
    fn nanos_at(&self, raw: u64) -> u64 {
        // One scaling of the difference from the anchor: going through `quanta::Instant`
        // and `Duration` split the nanoseconds into seconds and back (a division and a u128
        // multiply per event). A reading before the anchor (another core's counter) counts
        // as 0.
        self.wall
            .saturating_add(self.clock.delta_as_nanos(self.at, raw))
    }
}

/// When an event was given, as its slot keeps it: the counter's raw reading, scaled to a
/// [`Timestamp`] only when someone asks for the event's time (most events are never asked),
/// or a timestamp given explicitly. The scaling is a pure function of the reading and the
/// process's anchor, so a time asked for later is the time it would have been at the give;
/// the giving thread saves the scaling (a 128-bit multiply, a shift and the clock's match).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Stamp(u64);

/// The bit of a [`Stamp`] that says it is a raw reading. A counter reaches it after about a
/// century of uptime; a timestamp in the year 2262.
const RAW: u64 = 1 << 63;

impl Stamp {
    /// A placeholder, for a slot whose stamp is written after its fields.
    pub(crate) const UNSET: Stamp = Stamp(0);

    /// Now: the counter's raw reading.
    #[inline]
    pub(crate) fn now() -> Stamp {
        Stamp(anchored().clock.raw() & !RAW | RAW)
    }

    /// The wall-clock time this stands for.
    #[inline]
    pub(crate) fn timestamp(self) -> Timestamp {
        if self.0 & RAW != 0 {
            Timestamp(anchored().nanos_at(self.0 & !RAW))
        } else {
            Timestamp(self.0)
        }
    }
}

impl From<Timestamp> for Stamp {
    /// An explicit time, kept as it is (one past the year 2262 is kept as the last
    /// representable nanosecond).
    fn from(time: Timestamp) -> Self {
        Stamp(time.0.min(RAW - 1))
    }
}

/// Calibrates the clock now, so the first event given does not pay for it.
pub(crate) fn warm_up() {
    anchored();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readings_track_the_wall_clock_and_never_go_backwards() {
        let wall = |t: SystemTime| t.duration_since(UNIX_EPOCH).unwrap().as_nanos() as u64;
        let before = wall(SystemTime::now());
        let mut last = now_nanos();
        for _ in 0..100_000 {
            let now = now_nanos();
            assert!(now >= last, "went back from {last} to {now}");
            last = now;
        }
        let after = wall(SystemTime::now());
        // The anchor was taken within this test's process, so the readings lie within a
        // generous margin of the wall clock around them (not a timing: a sanity bound).
        let margin = 5_000_000_000;
        assert!(last + margin >= before && last <= after + margin);
    }

    #[test]
    fn a_stamp_is_the_time_of_its_reading_whenever_it_is_asked() {
        let before = now_nanos();
        let stamp = Stamp::now();
        let after = now_nanos();
        let first = stamp.timestamp().as_nanos();
        assert!(
            before <= first && first <= after,
            "{before} {first} {after}"
        );
        // Asked again later: the same time, not the time of asking.
        std::thread::sleep(Duration::from_millis(2));
        assert_eq!(stamp.timestamp().as_nanos(), first);
        // Explicit times are kept as given.
        assert_eq!(
            Stamp::from(Timestamp::from_nanos(7)).timestamp(),
            Timestamp::from_nanos(7)
        );
        assert_eq!(
            Stamp::from(Timestamp::from_nanos(u64::MAX)).timestamp(),
            Timestamp::from_nanos(RAW - 1)
        );
    }
}

//! When an unpaced reader should stop being woken by each append and wait for the pacer's tick
//! instead: it parks so often that the wake-ups cost more than the events.
//!
//! A reader that shares a core with the giving thread (a machine whose cores are all busy) is
//! woken by the first append after it parked; woken, it takes the CPU from the giving thread at
//! once (the scheduler favours a thread that has slept), takes the few events given meanwhile
//! and parks again. Measured on one core (`taskset -c 0 target/release/examples/handoff_modes 5
//! threads`): a park every 2–10 µs, 2,500–6,800 per 2M events, each costing both threads a
//! context switch and the giving thread a `futex` call and an append under the lock; waiting
//! for 1 ms ticks instead, the same reader takes the same events in about 90 wake-ups at 20–29
//! ns of CPU per event instead of 34, the giving thread 27–40 instead of 37 (the same command;
//! docs/architecture.md, "Woken per event, or per tick"). So a reader whose parks come
//! [`QUICK_PARKS`] times in a row less than [`QUICK_GAP`] apart sleeps until the pacer's next
//! tick instead ([`LOAD_PERIOD`]), taking what came meanwhile in one batch, while the giving
//! thread appends without the lock and wakes nobody; it is woken per append again once a tick
//! finds nothing new (the loop slowed down or paused). A loop that gives an event per step of
//! a millisecond or more never parks its reader that often, and keeps its immediate wake-up.

use std::time::{Duration, Instant};

/// Parks closer together than this are *quick*: ten times the round trip of a park and its
/// wake-up on a core shared with the giving thread.
pub(super) const QUICK_GAP: Duration = Duration::from_micros(100);

/// Quick parks in a row after which a reader waits for the pacer's tick instead.
pub(super) const QUICK_PARKS: u32 = 8;

/// How long a reader under load waits between batches: the pacer's shortest period.
pub(super) const LOAD_PERIOD: Duration = crate::pace::MIN_PERIOD;

/// One reader's recent parks, and whether it waits for ticks.
#[derive(Default)]
pub(super) struct ParkRate {
    last_park: Option<Instant>,
    quick: u32,
    mode: Mode,
}

#[derive(Default, PartialEq, Eq, Debug)]
enum Mode {
    /// Parked and woken by the next append.
    #[default]
    Woken,
    /// Sleeping until the pacer's tick; the index of the event the reader had taken when it
    /// last went to sleep (`None` before the first sleep).
    Ticks { slept_at: Option<u64> },
}

impl ParkRate {
    /// A reader that has taken the events before `index` found nothing more: whether it
    /// sleeps until the pacer's next tick ([`LOAD_PERIOD`]) rather than park. It does while
    /// every tick brings events; a tick with nothing new ends that, and the reader parks.
    pub(super) fn waits_for_tick(&mut self, index: u64) -> bool {
        match &mut self.mode {
            Mode::Woken => false,
            Mode::Ticks { slept_at } if *slept_at == Some(index) => {
                // The loop slowed down or paused: woken per append again, counted afresh.
                *self = Self::default();
                false
            }
            Mode::Ticks { slept_at } => {
                *slept_at = Some(index);
                true
            }
        }
    }

    /// The reader parked at `now`: after [`QUICK_PARKS`] quick parks in a row, it waits for
    /// ticks from the next time it finds nothing.
    pub(super) fn parked(&mut self, now: Instant) {
        let quick = self
            .last_park
            .is_some_and(|last| now.saturating_duration_since(last) < QUICK_GAP);
        self.quick = if quick { self.quick + 1 } else { 0 };
        self.last_park = Some(now);
        if self.quick >= QUICK_PARKS {
            self.mode = Mode::Ticks { slept_at: None };
        }
    }

    /// Whether the reader waits for ticks (it does not spin then: the giving thread may need
    /// the core it would spin on).
    pub(super) fn under_load(&self) -> bool {
        self.mode != Mode::Woken
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_parks_in_a_row_turn_to_ticks_until_a_tick_brings_nothing() {
        let start = Instant::now();
        let at = |micros: u64| start + Duration::from_micros(micros);
        let mut rate = ParkRate::default();
        // Parks 10 µs apart: the first is not counted (nothing before it), the next eight
        // are quick, and the eighth turns the reader to ticks.
        for park in 0..QUICK_PARKS {
            assert!(!rate.waits_for_tick(u64::from(park)));
            rate.parked(at(10 * u64::from(park)));
            assert!(!rate.under_load(), "park {park}");
        }
        rate.parked(at(80));
        assert!(rate.under_load());
        // Each tick that brings events keeps it there, however far apart.
        assert!(rate.waits_for_tick(100));
        assert!(rate.waits_for_tick(600));
        // A tick with nothing new: back to parking, counted afresh.
        assert!(!rate.waits_for_tick(600));
        assert!(!rate.under_load());
        rate.parked(at(6_000));
        rate.parked(at(6_010));
        assert!(!rate.waits_for_tick(601));
    }

    #[test]
    fn a_slow_park_breaks_the_run_of_quick_ones() {
        let start = Instant::now();
        let mut rate = ParkRate::default();
        let mut micros = 0;
        for park in 0..4 * QUICK_PARKS {
            // Every fifth park comes late: never eight quick ones in a row.
            micros += if park % 5 == 4 { 500 } else { 10 };
            rate.parked(start + Duration::from_micros(micros));
            assert!(!rate.under_load(), "park {park}");
        }
    }
}

//! The pacer: one background thread that wakes paced subscribers (see
//! [`EventStream::paced`](crate::EventStream::paced)) on a shared clock, so that a reader that
//! tolerates latency is never woken by the thread that gives.
//!
//! A parked reader costs the giving thread a lock and a wake-up system call per event it gives
//! after the park, and the woken reader takes a core at that moment: on a machine whose cores
//! the training keeps busy, that is a core taken from the training once per step. A paced
//! reader instead asks to be woken at the next tick of its period and reads everything given
//! meanwhile in one batch. Ticks are aligned on one grid per period (multiples of the period
//! since the pacer started), so readers with the same period wake together: one wake-up of the
//! thread that runs them per tick, whatever their number.
//!
//! The pacer's thread starts with the first paced park and sleeps on a condition variable while
//! nobody waits; it never runs user code (wakers are called after its lock is released).

#[cfg(not(all(test, giving_loom)))]
use std::cmp::Reverse;
#[cfg(not(all(test, giving_loom)))]
use std::collections::BinaryHeap;
#[cfg(not(all(test, giving_loom)))]
use std::sync::{Condvar, Mutex, OnceLock, PoisonError};
use std::task::Waker;
use std::time::Duration;
#[cfg(not(all(test, giving_loom)))]
use std::time::Instant;

/// Under loom no tick ever comes: the models check that an end alone wakes a sleeping
/// reader, and that it then sees every event (src/feed/loom_models.rs).
#[cfg(all(test, giving_loom))]
pub(crate) fn wake_at_next_tick(_period: Duration, _waker: &Waker) {}

/// The shortest period a paced reader may ask for: below it the pacer would wake more often
/// than the loop gives on most machines, which defeats its purpose.
pub(crate) const MIN_PERIOD: Duration = Duration::from_millis(1);

#[cfg(not(all(test, giving_loom)))]
/// A waker due at a tick; ordered by its deadline only (the heap is a min-heap through
/// `Reverse`).
struct Due {
    at: Instant,
    /// The period whose tick this is: the thread expects the same period's next tick to be
    /// asked for again (see [`Sleep`]).
    period: Duration,
    /// Registration order: ties on the deadline wake in the order they came.
    seq: u64,
    waker: Waker,
}

#[cfg(not(all(test, giving_loom)))]
impl PartialEq for Due {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}

#[cfg(not(all(test, giving_loom)))]
impl Eq for Due {}

#[cfg(not(all(test, giving_loom)))]
impl PartialOrd for Due {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

#[cfg(not(all(test, giving_loom)))]
impl Ord for Due {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.at, self.seq).cmp(&(other.at, other.seq))
    }
}

#[cfg(not(all(test, giving_loom)))]
struct Pacer {
    /// The grid's origin: ticks fall at `origin + k * period`.
    origin: Instant,
    due: Mutex<Queue>,
    /// Signalled when a waker is due earlier than everything the thread sleeps for.
    changed: Condvar,
}

#[cfg(not(all(test, giving_loom)))]
#[derive(Default)]
struct Queue {
    heap: BinaryHeap<Reverse<Due>>,
    next_seq: u64,
    /// What the thread will do next on its own, so that a registration signals it only when
    /// it must.
    sleep: Sleep,
    /// Signals sent to the thread (a registration earlier than its next wake-up).
    #[cfg(test)]
    signals: usize,
}

#[cfg(not(all(test, giving_loom)))]
/// The pacer thread's state, read by registrations under the lock.
///
/// A paced reader woken at a tick reads its batch and asks for the next tick of its period at
/// once; were the thread asleep with no deadline by then, each tick would cost it a second
/// wake-up (the signal) besides the tick's own. So after waking readers it sleeps until the
/// next tick of the shortest period it woke, expecting them back, and a registration for that
/// tick (or later) does not signal it.
#[derive(Default, Clone, Copy)]
enum Sleep {
    /// Running: it looks at the heap before it sleeps again.
    #[default]
    Awake,
    /// Asleep until this instant.
    Until(Instant),
    /// Asleep until signalled.
    Forever,
}

#[cfg(not(all(test, giving_loom)))]
fn pacer() -> &'static Pacer {
    static PACER: OnceLock<Pacer> = OnceLock::new();
    static THREAD: OnceLock<()> = OnceLock::new();
    let shared: &'static Pacer = PACER.get_or_init(|| Pacer {
        origin: Instant::now(),
        due: Mutex::new(Queue::default()),
        changed: Condvar::new(),
    });
    THREAD.get_or_init(|| {
        std::thread::Builder::new()
            .name("giving-pacer".into())
            .spawn(move || shared.run())
            .expect("cannot start the giving-pacer thread");
    });
    shared
}

#[cfg(not(all(test, giving_loom)))]
/// Wakes `waker` at the next tick of `period` (at least [`MIN_PERIOD`]) after now.
pub(crate) fn wake_at_next_tick(period: Duration, waker: &Waker) {
    pacer().register(period.max(MIN_PERIOD), waker);
}

#[cfg(not(all(test, giving_loom)))]
impl Pacer {
    fn lock(&self) -> std::sync::MutexGuard<'_, Queue> {
        // Nothing under this lock can panic halfway (heap pushes and pops of plain data).
        self.due.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues `waker` for the next tick of `period`, signalling the thread only if it would
    /// otherwise sleep past that tick.
    fn register(&self, period: Duration, waker: &Waker) {
        let at = self.next_tick(period, Instant::now());
        let mut queue = self.lock();
        let seq = queue.next_seq;
        queue.next_seq += 1;
        queue.heap.push(Reverse(Due {
            at,
            period,
            seq,
            waker: waker.clone(),
        }));
        let signal = match queue.sleep {
            Sleep::Awake => false,
            Sleep::Until(wakes) => at < wakes,
            Sleep::Forever => true,
        };
        #[cfg(test)]
        {
            queue.signals += usize::from(signal);
        }
        drop(queue);
        if signal {
            self.changed.notify_one();
        }
    }

    /// The first tick of `period`'s grid strictly after `now`.
    fn next_tick(&self, period: Duration, now: Instant) -> Instant {
        let since = now.saturating_duration_since(self.origin).as_nanos();
        let period_ns = period.as_nanos().max(1);
        let ticks = since / period_ns + 1;
        let offset = ticks.saturating_mul(period_ns);
        self.origin + Duration::from_nanos(u64::try_from(offset).unwrap_or(u64::MAX))
    }

    /// The thread: sleeps until the earliest deadline (or the tick it expects readers back
    /// for, see [`Sleep`]), wakes what is due, forever.
    fn run(&self) {
        let mut ready = Vec::new();
        let mut expected: Option<Instant> = None;
        let mut queue = self.lock();
        loop {
            let now = Instant::now();
            let mut shortest: Option<Duration> = None;
            while let Some(Reverse(due)) = queue.heap.peek() {
                if due.at > now {
                    break;
                }
                let Some(Reverse(due)) = queue.heap.pop() else {
                    break;
                };
                shortest = Some(shortest.map_or(due.period, |p| p.min(due.period)));
                ready.push(due.waker);
            }
            if let Some(period) = shortest {
                expected = Some(self.next_tick(period, now));
                // Woken without the lock: a waker may run arbitrary code (even park again).
                drop(queue);
                ready.drain(..).for_each(Waker::wake);
                queue = self.lock();
                continue;
            }
            // An expected tick that came and went with nobody back: sleep on the heap alone.
            if expected.is_some_and(|at| at <= now) {
                expected = None;
            }
            let next = queue.heap.peek().map(|Reverse(due)| due.at);
            let until = next.into_iter().chain(expected).min();
            queue.sleep = until.map_or(Sleep::Forever, Sleep::Until);
            queue = match until {
                Some(at) => {
                    self.changed
                        .wait_timeout(queue, at.saturating_duration_since(now))
                        .unwrap_or_else(PoisonError::into_inner)
                        .0
                }
                None => self
                    .changed
                    .wait(queue)
                    .unwrap_or_else(PoisonError::into_inner),
            };
            queue.sleep = Sleep::Awake;
        }
    }
}

#[cfg(all(test, not(giving_loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::Wake;

    struct Count(AtomicUsize, std::thread::Thread);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
            self.1.unpark();
        }
    }

    #[test]
    fn ticks_fall_on_one_grid_per_period() {
        let pacer = pacer();
        let period = Duration::from_millis(10);
        let now = Instant::now();
        let tick = pacer.next_tick(period, now);
        assert!(tick > now && tick <= now + period);
        assert_eq!(
            tick.duration_since(pacer.origin).as_nanos() % period.as_nanos(),
            0
        );
        // On the grid itself, the next tick is one period on: never "now".
        assert_eq!(pacer.next_tick(period, tick), tick + period);
    }

    #[test]
    fn a_reader_back_for_its_next_tick_does_not_signal_the_thread() {
        // A pacer of its own: the global one serves the other tests' paced streams.
        let pacer: &'static Pacer = Box::leak(Box::new(Pacer {
            origin: Instant::now(),
            due: Mutex::new(Queue::default()),
            changed: Condvar::new(),
        }));
        std::thread::spawn(move || pacer.run());
        while !matches!(pacer.lock().sleep, Sleep::Forever) {
            std::thread::sleep(Duration::from_millis(1));
        }
        let count = Arc::new(Count(AtomicUsize::new(0), std::thread::current()));
        let waker = Waker::from(count.clone());
        // Long enough that the reader is back well before its next tick, even on a busy CI.
        let period = Duration::from_secs(1);
        let wait_for = |n: usize| {
            while count.0.load(Ordering::SeqCst) < n {
                std::thread::park_timeout(Duration::from_millis(50));
            }
        };
        pacer.register(period, &waker);
        wait_for(1);
        // Back at once for the next tick, as a paced reader is after reading its batch.
        pacer.register(period, &waker);
        wait_for(2);
        assert_eq!(
            pacer.lock().signals,
            1,
            "only the first registration, with the thread asleep without a deadline, signals it"
        );
    }

    #[test]
    fn every_registered_waker_is_woken_once_after_its_tick() {
        let count = Arc::new(Count(AtomicUsize::new(0), std::thread::current()));
        let waker = Waker::from(count.clone());
        for period in [2, 3, 5] {
            wake_at_next_tick(Duration::from_millis(period), &waker);
        }
        while count.0.load(Ordering::SeqCst) < 3 {
            std::thread::park_timeout(Duration::from_millis(50));
        }
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(count.0.load(Ordering::SeqCst), 3);
    }
}

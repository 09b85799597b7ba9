//! Is a slow round of the hand-off giving's, or the machine's? Each round first times a cache
//! line bounced between the first two CPUs the process may run on (two threads pinned there,
//! one atomic, ns per round trip), then hands over `EVENTS` losses from the main thread to one
//! other thread four ways, one after the other: giving (one lossless subscriber, by value,
//! then by reference), crossbeam-channel and tokio mpsc (a `(u64, f64)` tuple by value, as in
//! `benches/peers.rs`). A row per round: `rtt_ns giving_ns giving_by_ref_ns crossbeam_ns
//! tokio_ns`. On a virtual machine the round trip moves as the host places its virtual CPUs
//! (near each other or not: docs/architecture.md, "The slow mode"); run with a busy process
//! per core too. `cargo run --release --example handoff_modes -- 20`; with `threads` after the
//! count (`-- 20 threads`), each round is followed by what each side of each hand-off spent:
//! the giving (sending) thread's and the reader's CPU time per event, page faults and context
//! switches (voluntary + involuntary), from `getrusage(RUSAGE_THREAD)`. With `step` among the
//! arguments (`-- 20 threads step`), giving's rows give `give!(step, loss)`, the fields of the
//! channels' tuple, instead of `give!(loss)`. With `read`, giving's readers read each event's
//! `loss` (`e.get("loss")`), as the channels' receivers take their tuple; without it they
//! drop each event unread.
use giving::prelude::*;
use giving::{give, given};
use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

const EVENTS: u64 = 2_000_000;
const ROUND_TRIPS: u64 = 100_000;

/// The calling thread's CPU set (`sched_getaffinity(2)`).
fn affinity() -> libc::cpu_set_t {
    // SAFETY: a zeroed `cpu_set_t` is the empty set; the call writes only the set passed.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        let refused = libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set);
        assert_eq!(refused, 0, "sched_getaffinity");
        set
    }
}

/// Runs the calling thread on the CPUs of `set` only (`sched_setaffinity(2)`).
fn set_affinity(set: &libc::cpu_set_t) {
    // SAFETY: the call only reads the set passed.
    let refused =
        unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set) };
    assert_eq!(refused, 0, "sched_setaffinity");
}

/// Pins the calling thread to `cpu`.
fn pin(cpu: usize) {
    // SAFETY: a zeroed `cpu_set_t` is the empty set; CPU_SET writes only the set passed.
    let set = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        set
    };
    set_affinity(&set);
}

/// Nanoseconds per round trip of one cache line between the first two CPUs this thread may
/// run on (it runs on all of them again afterwards); NaN when it may run on one only (run
/// under `taskset -c 0`, every thread shares a CPU: what each side spends, without a cache
/// line crossing between cores).
fn round_trip_ns() -> f64 {
    let allowed = affinity();
    let mut cpus = (0..libc::CPU_SETSIZE as usize)
        // SAFETY: CPU_ISSET only reads the set, at an index below its size.
        .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &allowed) });
    let (Some(near), Some(far)) = (cpus.next(), cpus.next()) else {
        return f64::NAN;
    };
    let line = Arc::new(AtomicU64::new(0));
    let other = line.clone();
    let echo = std::thread::spawn(move || {
        pin(far);
        for i in 0..ROUND_TRIPS {
            while other.load(Ordering::Acquire) != 2 * i + 1 {
                std::hint::spin_loop();
            }
            other.store(2 * i + 2, Ordering::Release);
        }
    });
    pin(near);
    let start = Instant::now();
    for i in 0..ROUND_TRIPS {
        line.store(2 * i + 1, Ordering::Release);
        while line.load(Ordering::Acquire) != 2 * i + 2 {
            std::hint::spin_loop();
        }
    }
    let ns = start.elapsed().as_nanos() as f64 / ROUND_TRIPS as f64;
    echo.join().unwrap();
    set_affinity(&allowed);
    ns
}

/// What one thread spent during a hand-off.
#[derive(Clone, Copy)]
struct Spent {
    cpu_ns: f64,
    faults: i64,
    voluntary: i64,
    involuntary: i64,
}

impl Spent {
    /// What the calling thread has spent so far (`getrusage(RUSAGE_THREAD)` and its CPU clock).
    fn so_far() -> Self {
        // SAFETY: zeroed `rusage` and `timespec` are valid; the calls write only what is passed.
        let (usage, cpu) = unsafe {
            let mut usage: libc::rusage = std::mem::zeroed();
            let refused = libc::getrusage(libc::RUSAGE_THREAD, &mut usage);
            assert_eq!(refused, 0, "getrusage");
            let mut cpu: libc::timespec = std::mem::zeroed();
            let refused = libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut cpu);
            assert_eq!(refused, 0, "clock_gettime");
            (usage, cpu)
        };
        Self {
            cpu_ns: cpu.tv_sec as f64 * 1e9 + cpu.tv_nsec as f64,
            faults: usage.ru_minflt,
            voluntary: usage.ru_nvcsw,
            involuntary: usage.ru_nivcsw,
        }
    }

    /// What the calling thread spent since `start`.
    fn since(start: Self) -> Self {
        let now = Self::so_far();
        Self {
            cpu_ns: now.cpu_ns - start.cpu_ns,
            faults: now.faults - start.faults,
            voluntary: now.voluntary - start.voluntary,
            involuntary: now.involuntary - start.involuntary,
        }
    }
}

impl std::fmt::Display for Spent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "cpu {:.1} ns/event, {} faults, {}+{} switches",
            self.cpu_ns / EVENTS as f64,
            self.faults,
            self.voluntary,
            self.involuntary
        )
    }
}

/// One hand-off: ns per event (wall clock, until the reader has taken the last), and what the
/// giving thread and the reader spent.
struct HandOff {
    ns: f64,
    giver: Spent,
    reader: Spent,
}

/// Runs `drain` on a new thread that also reports what it spent.
fn spawn_reader(
    drain: impl FnOnce() -> u64 + Send + 'static,
) -> std::thread::JoinHandle<(u64, Spent)> {
    std::thread::spawn(move || {
        let start = Spent::so_far();
        let taken = drain();
        (taken, Spent::since(start))
    })
}

fn loss(i: u64) -> f64 {
    (i % 1000) as f64 * 0.001
}

fn ns_per_event(start: Instant) -> f64 {
    start.elapsed().as_nanos() as f64 / EVENTS as f64
}

fn giving(by_ref: bool, with_step: bool, read: bool) -> HandOff {
    let gv = given();
    let mut stream = gv.stream();
    let consumer = spawn_reader(move || {
        futures::executor::block_on(async {
            let mut n = 0u64;
            if by_ref {
                while let Some(e) = stream.next_ref().await {
                    if read {
                        black_box(e.get("loss"));
                    }
                    black_box(e);
                    n += 1;
                }
            } else {
                while let Some(e) = stream.next().await {
                    if read {
                        black_box(e.get("loss"));
                    }
                    black_box(&e);
                    n += 1;
                }
            }
            n
        })
    });
    timed(consumer, || {
        if with_step {
            for step in 0..EVENTS {
                let loss = loss(step);
                give!(step, loss);
            }
        } else {
            for i in 0..EVENTS {
                let loss = loss(i);
                give!(loss);
            }
        }
        gv.finish().unwrap();
    })
}

/// Times `give_all` (which gives `EVENTS` events and ends the stream) on this thread until
/// `consumer` has taken them all.
fn timed(consumer: std::thread::JoinHandle<(u64, Spent)>, give_all: impl FnOnce()) -> HandOff {
    let spent = Spent::so_far();
    let start = Instant::now();
    give_all();
    let giver = Spent::since(spent);
    let (taken, reader) = consumer.join().unwrap();
    assert_eq!(taken, EVENTS);
    HandOff {
        ns: ns_per_event(start),
        giver,
        reader,
    }
}

/// A channel peer: `EVENTS` tuples sent with `send`, counted by the `drain` thread; the
/// sender is dropped at the end, which ends the drain.
fn tuple_hand_off<Tx>(
    tx: Tx,
    send: impl Fn(&Tx, (u64, f64)),
    drain: impl FnOnce() -> u64 + Send + 'static,
) -> HandOff {
    timed(spawn_reader(drain), || {
        for i in 0..EVENTS {
            send(&tx, (i, loss(i)));
        }
        drop(tx);
    })
}

fn crossbeam_tuple() -> HandOff {
    let (tx, rx) = crossbeam_channel::unbounded::<(u64, f64)>();
    tuple_hand_off(
        tx,
        |tx, m| {
            let _ = tx.send(m);
        },
        move || {
            rx.iter().fold(0, |n, m| {
                black_box(m);
                n + 1
            })
        },
    )
}

fn tokio_tuple() -> HandOff {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(u64, f64)>();
    tuple_hand_off(
        tx,
        |tx, m| {
            let _ = tx.send(m);
        },
        move || {
            futures::executor::block_on(async {
                let mut n = 0;
                while let Some(m) = rx.recv().await {
                    black_box(m);
                    n += 1;
                }
                n
            })
        },
    )
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .map_or(10, |n| n.parse().expect("a number of rounds"));
    let threads = std::env::args().skip(2).any(|arg| arg == "threads");
    // `give!(step, loss)`: the peers bench's event, the fields of the channels' tuple.
    let with_step = std::env::args().skip(2).any(|arg| arg == "step");
    let read = std::env::args().skip(2).any(|arg| arg == "read");
    println!("rtt_ns giving_ns giving_by_ref_ns crossbeam_ns tokio_ns");
    // Untimed: a process's first hand-off faults in the memory its backlog grows into (with
    // a busy core the reader falls behind by most of the run), which every later one reuses;
    // timed, it would charge that to whichever row came first.
    giving(false, with_step, read);
    for _ in 0..rounds {
        let rtt = round_trip_ns();
        let hand_offs = [
            ("giving", giving(false, with_step, read)),
            ("giving by ref", giving(true, with_step, read)),
            ("crossbeam", crossbeam_tuple()),
            ("tokio", tokio_tuple()),
        ];
        let row: Vec<String> = hand_offs
            .iter()
            .map(|(_, hand_off)| format!("{:.1}", hand_off.ns))
            .collect();
        println!("{rtt:.0} {}", row.join(" "));
        if threads {
            for (name, hand_off) in &hand_offs {
                println!(
                    "  {name}: giver {} | reader {}",
                    hand_off.giver, hand_off.reader
                );
            }
        }
    }
}

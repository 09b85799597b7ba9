//! `flush_denormals` sets flush-to-zero on the calling thread and on rayon's workers, and a
//! thread it did not set keeps subnormals. In a process of its own: rayon's global pool is
//! built once per process.

use std::hint::black_box;

use rayon::prelude::*;

/// Half the smallest normal `f32`, computed by the compiler: a subnormal.
const HALF_MIN: f32 = f32::MIN_POSITIVE / 2.0;

/// Half the smallest normal `f32`, computed at run time: [`HALF_MIN`] unless the thread
/// flushes it to zero.
fn halved_min() -> f32 {
    black_box(f32::MIN_POSITIVE) / black_box(2.0)
}

#[test]
fn denormals_are_flushed_on_this_thread_its_new_threads_and_rayons_workers() {
    // A thread started before the flush keeps the default mode (the mode is per thread).
    let (go, wait) = std::sync::mpsc::channel::<()>();
    let before = std::thread::spawn(move || {
        wait.recv().unwrap();
        halved_min()
    });
    let flush = giving_burn::denormals::flush_denormals();
    if !flush.this_thread {
        eprintln!("SKIPPED: this CPU has no flush-to-zero control");
        return;
    }
    assert!(HALF_MIN.is_subnormal());
    assert_eq!(flush.rayon_workers, Ok(()), "{flush}");
    assert_eq!(halved_min().to_bits(), 0);
    let on_workers: Vec<f32> = (0..64).into_par_iter().map(|_| halved_min()).collect();
    assert!(
        on_workers.iter().all(|x| x.to_bits() == 0),
        "{on_workers:?}"
    );
    go.send(()).unwrap();
    let unset = before.join().unwrap();
    // Looked at by its bits: with DAZ, this thread would compare it as 0.
    assert_eq!(unset.to_bits(), HALF_MIN.to_bits(), "{unset}");
    // A thread started after it inherits its creator's mode (Linux copies it at `clone`).
    #[cfg(target_os = "linux")]
    assert_eq!(std::thread::spawn(halved_min).join().unwrap().to_bits(), 0);
    // rayon's pool exists now: a second call says so and still sets its own thread.
    let again = std::thread::spawn(giving_burn::denormals::flush_denormals)
        .join()
        .unwrap();
    assert!(again.this_thread && again.rayon_workers.is_err(), "{again}");
}

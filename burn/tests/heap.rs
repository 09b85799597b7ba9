//! `keep_freed_memory` makes glibc keep what a step frees: a round of allocations that a
//! default glibc gives back and faults in again (blocks under the default mmap threshold
//! that free into more than the default trim threshold at the heap's top) faults nothing once
//! it has run once. In a process of its own: the setting is process-wide.

#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn freed_memory_is_reused_without_faulting_pages_in_again() {
    use giving_burn::heap::{HeapTuning, keep_freed_memory};

    /// Minor page faults of this thread so far.
    fn faults() -> i64 {
        // SAFETY: `getrusage` writes the zeroed struct it is given.
        unsafe {
            let mut usage: libc::rusage = std::mem::zeroed();
            assert_eq!(libc::getrusage(libc::RUSAGE_THREAD, &mut usage), 0);
            usage.ru_minflt
        }
    }

    /// A step's worth of buffers: 64 blocks of 64 KiB (4 MiB), written, then freed together.
    fn step() {
        let blocks: Vec<Vec<u8>> = (0..64).map(|i| vec![i as u8 + 1; 64 << 10]).collect();
        std::hint::black_box(&blocks);
    }

    match keep_freed_memory() {
        HeapTuning::Applied { .. } => {}
        unchanged @ (HeapTuning::SetByUser(_) | HeapTuning::NotGlibc) => {
            eprintln!("SKIPPED: {unchanged}");
            return;
        }
        refused => panic!("{refused}"),
    }
    step();
    let before = faults();
    for _ in 0..10 {
        step();
    }
    let faulted = faults() - before;
    // Given back at every step, each of the 10 would fault its 1024 pages in again.
    assert!(
        faulted < 256,
        "{faulted} page faults in 10 steps after the first: the freed memory was given back"
    );
}

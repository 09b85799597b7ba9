//! [`CpuHog`]: one busy thread per core, as a training run keeps the machine busy.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

/// Busy threads that spin until the hog is dropped.
#[derive(Debug)]
pub struct CpuHog {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

impl CpuHog {
    /// Starts one busy thread per core the process may use.
    pub fn per_core() -> Self {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        Self::threads(cores)
    }

    /// Starts `count` busy threads.
    pub fn threads(count: usize) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let threads = (0..count)
            .map(|i| {
                let stop = stop.clone();
                std::thread::Builder::new()
                    .name(format!("cpu-hog-{i}"))
                    .spawn(move || {
                        while !stop.load(Ordering::Relaxed) {
                            std::hint::spin_loop();
                        }
                    })
                    .expect("spawn a CPU hog thread")
            })
            .collect();
        Self { stop, threads }
    }

    /// How many busy threads run.
    pub fn len(&self) -> usize {
        self.threads.len()
    }

    /// Whether no busy thread runs.
    pub fn is_empty(&self) -> bool {
        self.threads.is_empty()
    }
}

impl Drop for CpuHog {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

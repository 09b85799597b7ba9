//! Monitors on tokio's paused clock: a sample per interval, and an end when the scope ends.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use giving::prelude::*;
use giving::{Event, event, given};
use giving_instruments::{BoxError, CpuMonitor, GpuMonitor, Sampler, poll};

struct Counter(Arc<AtomicU64>);

impl Sampler for Counter {
    fn sample(&mut self) -> Result<Event, BoxError> {
        let n = self.0.fetch_add(1, Ordering::Relaxed);
        Ok(event!(sample = n))
    }
}

#[tokio::test(start_paused = true)]
async fn a_monitor_samples_once_per_interval_until_stopped() {
    let gv = given();
    let samples = gv.stream().where_(["sample"]);
    let count = Arc::new(AtomicU64::new(0));
    let monitor = poll(&gv, "test", Duration::from_secs(2), Counter(count.clone()));
    tokio::time::sleep(Duration::from_millis(10_500)).await; // paused clock: instant
    monitor.stop();
    let pipeline = monitor.into_pipeline().unwrap();
    pipeline.await.unwrap();
    gv.finish_async().await.unwrap();
    let samples: Vec<u64> = samples.key::<u64>("sample").collect().await;
    assert_eq!(samples, vec![0, 1, 2, 3, 4, 5], "at 0, 2, 4, 6, 8 and 10 s");
}

#[tokio::test(start_paused = true)]
async fn a_monitor_ends_at_its_first_tick_after_the_scope_ended() {
    let gv = given();
    let count = Arc::new(AtomicU64::new(0));
    let monitor = poll(&gv, "test", Duration::from_secs(1), Counter(count.clone()));
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    gv.finish_async().await.unwrap(); // waits for the monitor's pipeline
    assert_eq!(count.load(Ordering::Relaxed), 3);
    drop(monitor);
}

#[test]
fn the_cpu_monitor_gives_cpudata_and_process() {
    let gv = given();
    let first = gv.spawn(gv.stream().where_(["cpudata"]).take(1).collect::<Vec<_>>());
    let monitor = CpuMonitor::new().attach(&gv);
    let first = first.join().unwrap();
    monitor.stop();
    gv.finish().unwrap();
    let cpu = first[0].get("cpudata").unwrap().to_string();
    assert!(cpu.contains("load") && cpu.contains("memory"), "{cpu}");
    let process = first[0].get("process").unwrap().to_string();
    assert!(
        process.contains("rss_mb") && process.contains("pid"),
        "{process}"
    );
}

#[test]
fn the_gpu_monitor_runs_or_gives_nothing() {
    let gv = given();
    let events = gv.stream();
    let monitor = GpuMonitor::new()
        .interval(Duration::from_millis(10))
        .attach(&gv);
    let running = monitor.is_running();
    monitor.stop();
    gv.finish().unwrap();
    let events: Vec<Event> = futures::executor::block_on(events.collect());
    if !running {
        assert!(
            events.is_empty(),
            "without NVML: a notice on stderr and nothing else"
        );
    } else if let Some(first) = events.first() {
        let gpus = first.get("gpudata").unwrap().to_string();
        assert!(gpus.contains("memory") && gpus.contains("load"), "{gpus}");
    }
}

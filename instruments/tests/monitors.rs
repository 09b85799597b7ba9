//! Monitors on tokio's paused clock: a sample per interval, and an end when the scope ends.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use giving::prelude::*;
use giving::{Event, event, given};
use giving_instruments::{BoxError, CpuMonitor, GpuMonitor, Instrument, Overseer, Sampler, poll};

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
    pipeline.await.unwrap().unwrap();
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

/// Runs `train` under an Overseer with `monitor`, collecting every event.
fn collect_with(monitor: impl Instrument + 'static, train: impl FnOnce()) -> Vec<Event> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let run = Overseer::new()
        .with(monitor)
        .instrument_fn("sink", move |start| {
            let sink = sink.clone();
            let events = start.given().stream();
            start.spawn(events.for_each(move |e| sink.lock().unwrap().push(e)));
            Ok(())
        })
        .run(train);
    assert!(run.problems.is_empty(), "{:?}", run.problems);
    std::mem::take(&mut *seen.lock().unwrap())
}

#[test]
fn the_cpu_monitor_gives_cpudata_and_process() {
    let events = collect_with(CpuMonitor::new(), || {
        std::thread::sleep(Duration::from_millis(20));
    });
    let first = events
        .iter()
        .find(|e| e.has("cpudata"))
        .expect("a sample at once");
    let cpu = first.get("cpudata").unwrap().to_string();
    assert!(cpu.contains("load") && cpu.contains("memory"), "{cpu}");
    let process = first.get("process").unwrap().to_string();
    assert!(
        process.contains("rss_mb") && process.contains("pid"),
        "{process}"
    );
}

#[test]
fn the_gpu_monitor_runs_or_gives_nothing() {
    let events = collect_with(
        GpuMonitor::new().interval(Duration::from_millis(10)),
        || {
            std::thread::sleep(Duration::from_millis(30));
        },
    );
    match events.first() {
        // Without NVML: a notice on stderr and nothing else.
        None => {}
        Some(first) => {
            let gpus = first.get("gpudata").unwrap().to_string();
            assert!(gpus.contains("memory") && gpus.contains("load"), "{gpus}");
        }
    }
}

struct Failing;

impl Sampler for Failing {
    fn sample(&mut self) -> Result<Event, BoxError> {
        Err("the device went away".into())
    }
}

#[test]
fn a_failing_sampler_is_an_event_and_a_problem_not_a_line_on_stderr() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let run = Overseer::new()
        .quiet(true)
        .instrument_fn("fans", |start| {
            let monitor = poll(start.given(), "fan", Duration::from_millis(5), Failing);
            start.track(monitor.into_pipeline().unwrap());
            Ok(())
        })
        .instrument_fn("sink", move |start| {
            let sink = sink.clone();
            let problems = start.given().stream().where_(["problem"]);
            start.spawn(problems.for_each(move |e| sink.lock().unwrap().push(e)));
            Ok(())
        })
        .run(|| std::thread::sleep(Duration::from_millis(50)));
    assert_eq!(run.problems.len(), 1, "{:?}", run.problems);
    assert_eq!(run.problems[0].instrument, "fans");
    assert!(
        run.problems[0].message.contains("the device went away"),
        "{}",
        run.problems[0]
    );
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1);
    assert_eq!(
        seen[0].get_as::<String>("instrument").unwrap(),
        "fan monitor"
    );
    assert!(
        seen[0]
            .get_as::<String>("problem")
            .unwrap()
            .contains("the device went away")
    );
}

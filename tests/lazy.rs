//! Lazy values are resolved by the consumer, once, never by the giving thread.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread::ThreadId;

use giving::prelude::*;
use giving::{Resolve, ResolveError, Value, give, given};

struct CountingTensor {
    value: f64,
    resolutions: Arc<AtomicUsize>,
    resolved_on: Arc<std::sync::Mutex<Option<ThreadId>>>,
}

impl Resolve for CountingTensor {
    fn resolve(&self) -> Result<Value, ResolveError> {
        self.resolutions.fetch_add(1, Ordering::SeqCst);
        *self.resolved_on.lock().unwrap() = Some(std::thread::current().id());
        Ok(Value::F64(self.value))
    }
}

#[test]
fn a_lazy_loss_is_resolved_once_on_the_consumer_side() {
    let resolutions = Arc::new(AtomicUsize::new(0));
    let resolved_on = Arc::new(std::sync::Mutex::new(None));
    let gv = given();
    let first = gv.stream();
    let second = gv.stream();
    let loss = Value::lazy(CountingTensor {
        value: 0.5,
        resolutions: resolutions.clone(),
        resolved_on: resolved_on.clone(),
    });
    give!(loss);
    gv.finish().unwrap();
    assert_eq!(
        resolutions.load(Ordering::SeqCst),
        0,
        "giving never resolves"
    );

    let consumer = std::thread::spawn(move || {
        let a: Vec<f64> = futures::executor::block_on(first.key::<f64>("loss").collect());
        let b: Vec<f64> = futures::executor::block_on(second.key::<f64>("loss").collect());
        (a, b, std::thread::current().id())
    });
    let (a, b, consumer_id) = consumer.join().unwrap();
    assert_eq!((a, b), (vec![0.5], vec![0.5]));
    assert_eq!(
        resolutions.load(Ordering::SeqCst),
        1,
        "resolved once for both subscribers"
    );
    assert_eq!(*resolved_on.lock().unwrap(), Some(consumer_id));
}

struct Failing;

impl Resolve for Failing {
    fn resolve(&self) -> Result<Value, ResolveError> {
        Err(ResolveError::new("device lost"))
    }
}

#[test]
fn a_lazy_value_that_fails_reports_why() {
    let event = giving::event!(loss = Value::lazy(Failing));
    let error = event.get_as::<f64>("loss").unwrap_err();
    assert_eq!(
        error.to_string(),
        "key `loss`: expected f64, found lazy value that failed to resolve (device lost)"
    );
    assert_eq!(
        event.to_string(),
        "loss=<could not resolve lazy value: device lost>"
    );
    assert!(serde_json::to_string(&event).is_err());
}

/// The README's pattern: a printer that samples before it converts reads only the losses it
/// prints, where a reduction over every loss reads each one.
#[tokio::test(start_paused = true)]
async fn sampling_before_converting_reads_only_the_sampled_losses() {
    use std::time::Duration;

    let resolutions = Arc::new(AtomicUsize::new(0));
    let resolved_on = Arc::new(std::sync::Mutex::new(None));
    let gv = given();
    let printed = gv
        .stream()
        .where_(["loss"])
        .throttle_latest(Duration::from_secs(1))
        .key::<f64>("loss");
    let best = gv.stream().key::<f64>("loss").min();
    for step in 0..300u64 {
        let loss = Value::lazy(CountingTensor {
            value: 1.0 / (1.0 + step as f64),
            resolutions: resolutions.clone(),
            resolved_on: resolved_on.clone(),
        });
        give!(step, loss);
    }
    gv.finish().unwrap();

    let printed: Vec<f64> = printed.collect().await;
    // Every loss arrives in the first window: the leading one, then the newest at the end.
    assert_eq!(printed, [1.0, 1.0 / 300.0]);
    assert_eq!(
        resolutions.load(Ordering::SeqCst),
        2,
        "the printer read two"
    );
    assert_eq!(best.await, Some(1.0 / 300.0));
    assert_eq!(
        resolutions.load(Ordering::SeqCst),
        300,
        "the reduction read every loss (the printed two were read once, and cached)"
    );
}

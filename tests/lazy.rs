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

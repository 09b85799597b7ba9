//! Training throughput of the bundled MLP and CNN on `Flex`, bare and with one subscriber.
//!
//! Each sample runs real training steps (data loading, forward, backward, Adam) through the
//! same loop as `giving train`; only the loop's own time is counted (`TrainReport::train_time`,
//! which ends with a device sync), not model initialisation or data generation. The
//! subscriber reads (resolves) every lazy loss on the pipeline's thread, the most any consumer
//! asks of the loop. Run with `cargo bench -p giving-models --bench train`; the CLI equivalent
//! is `giving bench mlp` / `giving bench cnn`.

// criterion_group! generates a `pub fn benches` with no doc comment (and takes no attribute).
#![expect(missing_docs)]

use std::time::Duration;

use burn::backend::{Autodiff, Flex};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use giving::prelude::*;
use giving_models::data::digits;
use giving_models::model::init_seeded;
use giving_models::train::{Classification, Workload, fit};
use giving_models::{TrainConfig, TrainReport, default_cnn, default_mlp};

type B = Autodiff<Flex>;

const STEPS: usize = 20;
const BATCH: usize = 64;

fn config() -> TrainConfig {
    TrainConfig {
        epochs: 1,
        steps: Some(STEPS),
        batch_size: BATCH,
        lr: 1e-3,
        train_size: STEPS * BATCH,
        valid_size: 0,
        ..TrainConfig::default()
    }
}

fn run<W: Workload<B>>(workload: &W, model: &W::Model, subscribed: bool) -> Duration {
    let device = Default::default();
    let train = || -> TrainReport { fit(workload, model.clone(), &config(), &device).unwrap().1 };
    if !subscribed {
        return train().train_time;
    }
    let gv = giving::given();
    let losses = gv.spawn(gv.stream().key::<f64>("loss").count());
    let report = train();
    gv.finish().unwrap();
    assert_eq!(losses.join().unwrap() as usize, STEPS);
    report.train_time
}

fn bench_model<W: Workload<B>>(c: &mut Criterion, name: &str, workload: W, model: W::Model) {
    let mut group = c.benchmark_group(format!("train_{name}"));
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(15))
        .throughput(Throughput::Elements((STEPS * BATCH) as u64));
    for (label, subscribed) in [("bare", false), ("one_subscriber", true)] {
        group.bench_function(label, |b| {
            b.iter_custom(|iters| (0..iters).map(|_| run(&workload, &model, subscribed)).sum())
        });
    }
    group.finish();
}

/// The digits of one run, as a classification workload for model `M`.
fn data<M>() -> Classification<M> {
    let n = (STEPS * BATCH) as u64;
    Classification::new(digits(0..n, 0), digits(n..n, 0), BATCH, 0)
}

fn train(c: &mut Criterion) {
    let device = Default::default();
    let mlp = init_seeded::<B, _>(&device, 0, |d| default_mlp().init(d));
    bench_model(c, "mlp", data(), mlp);
    let cnn = init_seeded::<B, _>(&device, 0, |d| default_cnn().init(d));
    bench_model(c, "cnn", data(), cnn);
}

criterion_group!(benches, train);
criterion_main!(benches);

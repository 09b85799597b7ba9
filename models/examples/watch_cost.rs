//! What a watched step costs the training thread: the time `ModelWatch::observe` takes to
//! return on a watched step (the statistics queued, nothing read), and a training step's, for
//! the bundled MLP on each backend compiled in. `cargo run --release -p giving-models
//! --example watch_cost [--features wgpu]`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use burn::backend::Autodiff;
use burn::optim::{AdamConfig, GradientsParams, Optimizer};
use burn::prelude::Backend;
use burn::tensor::Tensor;
use burn::tensor::backend::AutodiffBackend;
use cpu_time::ThreadTime;
use giving::prelude::*;
use giving_burn::{ModelWatch, StatsOn};
use giving_models::Classifier;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn run<B: AutodiffBackend>(name: &str, device: &B::Device, on: StatsOn) {
    let mut model = giving_models::default_mlp().init::<B>(device);
    let mut optim = AdamConfig::new().init::<B, giving_models::Mlp<B>>();
    let x = Tensor::<B, 2>::random([64, 784], burn::tensor::Distribution::Default, device);
    let gv = giving::given();
    // A reader that reads every statistic, as the log does, counting the CPU time of its
    // reads (not the wall time: its thread shares the cores with training's): the statistics
    // are computed by the first read, on this reader's thread (the host path).
    let reading = Arc::new(AtomicU64::new(0));
    let read = gv.spawn(gv.stream().for_each({
        let reading = reading.clone();
        move |event| {
            let start = ThreadTime::now();
            for (_, value) in event.iter() {
                let _ = value.resolved();
            }
            let took = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
            reading.fetch_add(took, Ordering::Relaxed);
        }
    }));
    let mut watch = ModelWatch::new().every(10).stats_on(on);
    let (mut steps, mut watched, mut unwatched) = (Vec::new(), Vec::new(), Vec::new());
    for step in 0..200u64 {
        let start = Instant::now();
        let loss = model.logits(x.clone()).powi_scalar(2).mean();
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        let trained = start.elapsed();
        let start = Instant::now();
        watch.observe(step, &model, &grads);
        let observed = start.elapsed();
        model = optim.step(1e-4, model, grads);
        if step % 10 == 9 {
            let _ = B::sync(device);
        }
        if step >= 20 {
            steps.push(trained);
            if watch.is_watched(step) {
                watched.push(observed);
            } else {
                unwatched.push(observed);
            }
        }
    }
    gv.finish().unwrap();
    read.join().unwrap();
    // Every watched step of the 200 (the first 20 included) was read.
    let watched_steps = (0..200u64).filter(|&step| watch.is_watched(step)).count() as u32;
    let reading = Duration::from_nanos(reading.load(Ordering::Relaxed)) / watched_steps;
    println!(
        "{name} {on:?}: forward+backward {:?}, observe on a watched step {:?} (max {:?}), on another {:?}; the reader's CPU per watched step {reading:?}",
        median(steps),
        median(watched.clone()),
        watched.iter().max().unwrap(),
        median(unwatched)
    );
}

/// The time to queue each kind of operation the device statistics use, on a tensor of `n`
/// elements, after a sync (so the queue is empty), median of 20 tries.
fn ops<B: Backend>(name: &str, device: &B::Device, n: usize) {
    let x = Tensor::<B, 1>::random([n], burn::tensor::Distribution::Default, device);
    let time = |op: &dyn Fn() -> Tensor<B, 1>| {
        let tries: Vec<Duration> = (0..20)
            .map(|_| {
                let _ = B::sync(device);
                let start = Instant::now();
                let out = op();
                let took = start.elapsed();
                drop(out);
                took
            })
            .collect();
        median(tries)
    };
    let finite = || x.clone().is_finite();
    let rows: [(&str, &dyn Fn() -> Tensor<B, 1>); 9] = [
        ("sum", &|| x.clone().sum()),
        ("powi + sum", &|| x.clone().powi_scalar(2).sum()),
        ("sub mean, powi, sum", &|| {
            (x.clone() - x.clone().sum()).powi_scalar(2).sum()
        }),
        ("is_finite", &|| finite().float()),
        ("mask_fill + min", &|| {
            x.clone()
                .mask_fill(finite().bool_not(), f64::INFINITY)
                .min()
        }),
        ("equal_elem, float, sum", &|| {
            x.clone().equal_elem(0.0).float().sum()
        }),
        ("floor, clamp, int", &|| {
            x.clone().floor().clamp(0.0, 63.0).int().float()
        }),
        ("zeros + scatter add", &|| {
            let index = x.clone().abs().clamp(0.0, 63.0).int();
            Tensor::<B, 1>::zeros([64], device).scatter(
                0,
                index,
                x.clone(),
                burn::tensor::IndexingUpdateOp::Add,
            )
        }),
        ("cat of 9 scalars", &|| {
            Tensor::cat(vec![x.clone().sum(); 9], 0)
        }),
    ];
    for (op, f) in rows {
        println!("{name} {n}: {op}: {:?}", time(f));
    }
}

fn main() {
    giving_burn::heap::keep_freed_memory();
    for on in [StatsOn::Host, StatsOn::Device] {
        run::<Autodiff<burn::backend::Flex>>("flex", &Default::default(), on);
    }
    ops::<burn::backend::Flex>("flex", &Default::default(), 200_704);
    #[cfg(feature = "wgpu")]
    ops::<burn::backend::Wgpu>("wgpu", &Default::default(), 200_704);
    #[cfg(feature = "wgpu")]
    for on in [StatsOn::Host, StatsOn::Device] {
        run::<Autodiff<burn::backend::Wgpu>>("wgpu", &Default::default(), on);
    }
}

//! Each approximation knob alone against the exact layer, on every convolution of the bundled
//! VGG on `Flex`, side by side in one run: burn's `conv2d` (the exact layer the tuner
//! measures against and a user's network runs), the exact layer through the knobs' own im2col
//! and matrix product (`exact_on_host`), and each knob. Run with
//! `cargo bench -p giving-tuner --bench knobs`; `--example layer_costs` prints the same
//! comparison as one table with each knob's time over `cost factor × conv2d`.
//!
//! Each sample runs the layer on its own copy of the input (made outside the timed part), as a
//! pass does: a host kernel then reads the buffer in place.

// criterion_group! generates a `pub fn benches` with no doc comment (and takes no attribute).
#![expect(missing_docs)]

use std::time::Duration;

use burn::backend::Flex;
use burn::tensor::{Distribution, Tensor};
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use giving_tuner::{ApproxConv, Knob, default_vgg, exact_on_host};

/// Images per batch: enough for every layer to be worth threads, few enough for quick samples.
const BATCH: usize = 32;

const KNOBS: [&str; 6] = [
    "perf_row_k2_o0",
    "perf_col_k2_o1",
    "perf_row_k4_o0",
    "samp_k2_o0",
    "samp_k3_o0",
    "samp_k4_o0",
];

fn knobs(c: &mut Criterion) {
    let device = Default::default();
    let vgg = default_vgg().init::<Flex>(&device);
    let mut side = 32;
    for i in 0..vgg.conv_count() {
        let conv = vgg.conv(i);
        let [_, channels, _, _] = conv.weight.dims();
        let x: Tensor<Flex, 4> = Tensor::random(
            [BATCH, channels, side, side],
            Distribution::Normal(0.0, 1.0),
            &device,
        );
        let own = || Tensor::<Flex, 4>::from_data(x.to_data(), &device);
        let mut group = c.benchmark_group(format!("knobs/layer {i} ({channels}ch, {side}px)"));
        group
            .sample_size(20)
            .warm_up_time(Duration::from_millis(300))
            .measurement_time(Duration::from_secs(2));
        let exact = ApproxConv::new(conv, Knob::Baseline, side).unwrap();
        group.bench_function("conv2d", |b| {
            b.iter_batched(own, |x| exact.forward(x).into_data(), BatchSize::LargeInput)
        });
        group.bench_function("exact on host", |b| {
            b.iter_batched(
                own,
                |x| exact_on_host(conv, x).unwrap().into_data(),
                BatchSize::LargeInput,
            )
        });
        for id in KNOBS {
            let knob: Knob = id.parse().unwrap();
            let approx = ApproxConv::new(conv, knob, side).unwrap();
            group.bench_function(id, |b| {
                b.iter_batched(
                    own,
                    |x| approx.forward(x).into_data(),
                    BatchSize::LargeInput,
                )
            });
        }
        group.finish();
        if i % 2 == 1 {
            side /= 2;
        }
    }
}

criterion_group!(benches, knobs);
criterion_main!(benches);

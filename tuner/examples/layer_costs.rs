//! Times each convolution layer of a (randomly initialised) VGG of the given widths, exact and
//! under a few knobs, on a batch of the tuning set: where a pass spends its time.
//!
//! `cargo run --release -p giving-tuner --example layer_costs -- [CHANNELS] [BATCH]`
//! (CHANNELS comma-separated, default the bundled network's).
//!
//! Each knob's line: its cost factor (the share of the exact layer's multiply-adds it does),
//! its speedup over burn's `conv2d` (the exact layer the tuner measures against), its time
//! over `factor × conv2d` (the target: at most 1.1), and its speedup over the exact layer
//! computed as the knobs are on the host ([`giving_tuner::exact_on_host`]: the saving of the
//! knob apart from the kernel's).
//!
//! Every figure is a median of 5 and includes reading the output back. What follows a
//! convolution (ReLU, pooling) is timed on an output that nothing else holds, as in a pass:
//! on a CPU backend a shared tensor cannot be rectified in place, and timing it on a clone
//! would charge it a copy that a pass never makes.

use std::time::{Duration, Instant};

use burn::backend::Flex;
use burn::tensor::Tensor;
use giving_models::data::{SHAPE_SIDE, Split, shapes};
use giving_tuner::ApproxConv;
use giving_tuner::Knob;
use giving_tuner::default_vgg;
use giving_tuner::exact_on_host;

const RUNS: usize = 5;

fn median(mut v: Vec<Duration>) -> f64 {
    v.sort_unstable();
    v[v.len() / 2].as_secs_f64() * 1e3
}

/// Median wall time of `f`, given a fresh input from `input` each run (not timed).
fn time<I, const D: usize>(mut input: impl FnMut() -> I, f: impl Fn(I) -> Tensor<Flex, D>) -> f64 {
    let mut t = vec![];
    for _ in 0..RUNS {
        let x = input();
        let s = Instant::now();
        let _ = f(x).into_data();
        t.push(s.elapsed());
    }
    median(t)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let mut config = default_vgg();
    if let Some(c) = args.get(1) {
        config.channels = c.split(',').map(str::parse).collect::<Result<_, _>>()?;
    }
    let batch: usize = args.get(2).map_or(Ok(250), |b| b.parse())?;
    let device = Default::default();
    let vgg = config.init::<Flex>(&device);
    let data = shapes(0, Split::Tune, batch);
    let images: Tensor<Flex, 4> = Tensor::from_data(
        burn::tensor::TensorData::new(
            data.gather(&(0..batch).collect::<Vec<_>>()).0,
            [batch, 3, SHAPE_SIDE, SHAPE_SIDE],
        ),
        &device,
    );
    let knobs: Vec<Knob> = [
        "perf_row_k2_o0",
        "perf_row_k2_o1",
        "perf_col_k2_o0",
        "perf_col_k2_o1",
        "perf_row_k3_o0",
        "perf_col_k3_o1",
        "perf_row_k4_o0",
        "perf_col_k4_o2",
        "samp_k2_o0",
        "samp_k3_o0",
        "samp_k4_o0",
    ]
    .iter()
    .map(|k| k.parse())
    .collect::<Result<_, _>>()?;
    let mut x = images.clone();
    let mut side = SHAPE_SIDE;
    let (mut convs, mut afters) = (0.0, 0.0);
    for i in 0..vgg.conv_count() {
        let conv = vgg.conv(i);
        let exact = ApproxConv::new(conv, Knob::Baseline, side)?;
        // Each run gets its own copy of the input, as a layer does in a pass (the previous
        // layer's output, held by nothing else): a host kernel then reads it in place, where a
        // shared buffer would first be copied.
        let own = || Tensor::<Flex, 4>::from_data(x.to_data(), &device);
        let e = time(own, |x| exact.forward(x));
        let after = time(|| exact.forward(x.clone()), |y| vgg.after_conv(i, y));
        convs += e;
        afters += after;
        let host = time(own, |x| {
            exact_on_host(conv, x).expect("flex is a host backend")
        });
        println!(
            "layer {i} ({side}px, {:?}): conv2d {e:7.2} ms, exact on the host {host:7.2} ms \
             ({:.2}x), relu/pool {after:6.2} ms",
            conv.weight.dims(),
            e / host
        );
        println!("  knob              factor  vs conv2d  time/(factor·conv2d)  vs host exact");
        for k in &knobs {
            let a = ApproxConv::new(conv, *k, side)?;
            let t = time(own, |x| a.forward(x));
            let factor = k.cost_factor();
            println!(
                "  {:<16} {factor:6.3} {:9.2}x {:21.2} {:13.2}x",
                k.to_string(),
                e / t,
                t / (factor * e),
                host / t
            );
        }
        x = vgg.after_conv(i, exact.forward(x));
        if i % 2 == 1 {
            side /= 2;
        }
    }
    let head = time(|| x.clone(), |x| vgg.head(x));
    let pass = time(|| images.clone(), |x| vgg.forward(x));
    println!(
        "head {head:.2} ms; convolutions {convs:.1} ms + relu/pool {afters:.1} ms + head = {:.1} ms; \
         one whole pass {pass:.1} ms per {batch} images",
        convs + afters + head
    );
    Ok(())
}

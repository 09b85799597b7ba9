//! Times each convolution layer of a (randomly initialised) VGG of the given widths, exact and
//! under a few knobs, on a batch of the tuning set: where a pass spends its time.
//!
//! `cargo run --release -p giving-tuner --example layer_costs -- [CHANNELS] [BATCH]`
//! (CHANNELS comma-separated, default the bundled network's).

use std::time::{Duration, Instant};

use burn::backend::Flex;
use burn::tensor::Tensor;
use giving_models::data::{SHAPE_SIDE, Split, shapes};
use giving_tuner::Knob;
use giving_tuner::approx::ApproxConv;
use giving_tuner::job::default_vgg;

fn median(mut v: Vec<Duration>) -> f64 {
    v.sort_unstable();
    v[v.len() / 2].as_secs_f64() * 1e3
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
        "perf_row_k4_o0",
        "samp_k3_o0",
        "samp_k2_o0",
    ]
    .iter()
    .map(|k| k.parse())
    .collect::<Result<_, _>>()?;
    let mut x = images;
    let mut side = SHAPE_SIDE;
    let mut total = 0.0;
    for i in 0..vgg.conv_count() {
        let conv = vgg.conv(i);
        let exact = ApproxConv::new(conv, Knob::Baseline, side)?;
        let time = |layer: &ApproxConv<Flex>, x: &Tensor<Flex, 4>| {
            let mut t = vec![];
            for _ in 0..5 {
                let s = Instant::now();
                let y = layer.forward(x.clone());
                let _ = y.into_data();
                t.push(s.elapsed());
            }
            median(t)
        };
        let e = time(&exact, &x);
        let y = exact.forward(x.clone());
        let s = Instant::now();
        let next = vgg.after_conv(i, y.clone());
        let _ = next.clone().into_data();
        let after = s.elapsed().as_secs_f64() * 1e3;
        total += e + after;
        let mut line = format!(
            "layer {i} ({side}px, {:?}): exact {e:7.2} ms, relu/pool {after:6.2} ms;",
            conv.weight.dims()
        );
        for k in &knobs {
            let a = ApproxConv::new(conv, *k, side)?;
            let t = time(&a, &x);
            line += &format!(" {k} {:.2}x", e / t);
        }
        println!("{line}");
        x = next;
        if i % 2 == 1 {
            side /= 2;
        }
    }
    let s = Instant::now();
    let _ = vgg.head(x).into_data();
    println!(
        "head {:.2} ms; total ≈ {:.1} ms per {batch} images",
        s.elapsed().as_secs_f64() * 1e3,
        total
    );
    Ok(())
}

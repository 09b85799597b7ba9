//! Measures what each knob costs on this machine: the bundled VGG (trained, or loaded from the
//! cache) run with one knob on every layer, timed interleaved against the exact network, with
//! the QoS it reaches.
//!
//! `cargo run --release -p giving-tuner --example knob_costs -- [CACHE_DIR] [EPOCHS] [LR]`

use burn::backend::{Autodiff, Flex};
use burn::module::AutodiffModule;
use giving_models::data::{SHAPE_SIDE, Split, shapes};
use giving_tuner::{
    Dataset, Knob, Network, default_cache_dir, default_training, default_vgg, load_weights,
    measure_speedup, save_weights, weights_path,
};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let cache = args.get(1).map_or_else(default_cache_dir, Into::into);
    let mut train = default_training();
    if let Some(e) = args.get(2) {
        train.epochs = e.parse()?;
    }
    if let Some(lr) = args.get(3) {
        train.lr = lr.parse()?;
    }
    let model = default_vgg();
    let device = Default::default();
    let path = weights_path(&cache, &model, &train);
    let vgg = if path.is_file() {
        load_weights::<Flex>(&model, &path, &device)?
    } else {
        let (vgg, report) = giving_models::train_vgg::<Autodiff<Flex>>(&device, &train, &model)?;
        println!(
            "trained: accuracy {:?} in {:.1}s",
            report.accuracy,
            report.train_time.as_secs_f64()
        );
        let vgg = vgg.valid();
        save_weights(&vgg, &path)?;
        vgg
    };
    let data = Dataset::new(&shapes(train.seed, Split::Tune, 500), SHAPE_SIDE, &device);
    let net = Network::new(vgg, Knob::all())?;
    let layers = net.layer_count();
    let start = std::time::Instant::now();
    let base = net.qos(&vec![0; layers], &data)?;
    println!(
        "baseline qos {base:.2}% ({:.3}s per pass of 500)",
        start.elapsed().as_secs_f64()
    );
    for (k, knob) in net.knobs().iter().enumerate().skip(1) {
        for layer in [0, layers - 1] {
            let mut config = vec![0; layers];
            config[layer] = k;
            let qos = net.qos(&config, &data)?;
            println!("{knob:<16} layer {layer}: qos {qos:6.2}");
        }
        let all = vec![k; layers];
        let qos = net.qos(&all, &data)?;
        let speedup = measure_speedup(&net, &all, &data, 2)?;
        println!(
            "{knob:<16} all layers: qos {qos:6.2}  measured speedup {speedup:.2}x  (cost factor {:.2})",
            knob.cost_factor()
        );
    }
    Ok(())
}

//! The wgpu backend for real (Mesa's software Vulkan on a machine without a GPU): the MLP
//! trains a few steps, and its lazy losses are read by the consumer, on the consumer's thread,
//! never by the training thread. Built with `--features wgpu`; says SKIPPED where no Vulkan
//! driver is installed (`apt-get install mesa-vulkan-drivers`).
#![cfg(feature = "wgpu")]

use std::sync::{Arc, Mutex};
use std::thread::ThreadId;

use burn::backend::Autodiff;
use burn::backend::wgpu::{Wgpu, WgpuDevice};
use giving::Value;
use giving::prelude::*;
use giving_models::{MlpConfig, TrainConfig, train_mlp};

/// Whether a Vulkan driver is installed (Mesa's software one counts).
pub fn vulkan_available() -> bool {
    ["/usr/share/vulkan/icd.d", "/etc/vulkan/icd.d"]
        .iter()
        .any(|dir| std::fs::read_dir(dir).is_ok_and(|mut entries| entries.next().is_some()))
}

#[test]
fn lazy_losses_on_wgpu_are_read_off_the_training_thread() {
    if !vulkan_available() {
        eprintln!("SKIPPED: no Vulkan driver (apt-get install mesa-vulkan-drivers)");
        return;
    }
    let cfg = TrainConfig {
        epochs: 1,
        steps: Some(12),
        batch_size: 16,
        lr: 1e-3,
        train_size: 192,
        valid_size: 0,
        window: 4,
        ..TrainConfig::default()
    };
    let readers: Arc<Mutex<Vec<ThreadId>>> = Arc::default();
    let seen = readers.clone();
    let gv = giving::given();
    let losses = gv.spawn(
        gv.stream()
            .where_(["loss"])
            .map(move |event| {
                let value = event.get("loss").unwrap().clone();
                let Value::Lazy(lazy) = &value else {
                    panic!("the loss is not lazy: {value:?}")
                };
                // Nobody read it before this consumer: not the training thread.
                assert!(!lazy.is_resolved(), "the loss was read before its consumer");
                let loss = value.resolved().unwrap().as_f64().unwrap();
                seen.lock().unwrap().push(std::thread::current().id());
                loss
            })
            .collect::<Vec<f64>>(),
    );
    let training_thread = std::thread::current().id();
    let report = train_mlp::<Autodiff<Wgpu>>(
        &WgpuDevice::DefaultDevice,
        &cfg,
        &MlpConfig::new(784, vec![32], 10),
    )
    .unwrap();
    gv.finish().unwrap();
    let losses = losses.join().unwrap();
    assert_eq!(report.steps, 12);
    assert_eq!(losses.len(), 12);
    assert!(
        losses.iter().all(|l| l.is_finite() && *l > 0.0),
        "{losses:?}"
    );
    let readers = readers.lock().unwrap();
    assert_eq!(readers.len(), 12);
    assert!(
        readers.iter().all(|id| *id != training_thread),
        "every loss was read on the consumer's thread"
    );
}

/// The model watch on a GPU runtime: a watched step's weights and gradients are read with one
/// transfer (the host path's concatenation), and each parameter's statistics are those of its
/// own values, its update ratio that of its own step.
#[test]
fn the_watch_on_wgpu_gives_each_parameters_statistics() {
    use burn::nn::{Linear, LinearConfig};
    use burn::optim::{GradientsParams, Optimizer, SgdConfig};
    use burn::tensor::Tensor;
    use giving::vocab::keys;
    use giving_burn::ModelWatch;

    if !vulkan_available() {
        eprintln!("SKIPPED: no Vulkan driver (apt-get install mesa-vulkan-drivers)");
        return;
    }
    type B = Autodiff<Wgpu>;
    let device = WgpuDevice::default();
    let mut model: Linear<B> = LinearConfig::new(5, 3).init(&device);
    let values = |t: Tensor<Wgpu, 2>| -> Vec<f64> { t.into_data().iter::<f64>().collect() };
    let weights_before = values(model.weight.val().inner());
    let mut optim = SgdConfig::new().init();
    let gv = giving::given();
    let events = gv.spawn(gv.stream().where_([keys::WATCH]).collect::<Vec<_>>());
    let mut watch = ModelWatch::new().every(2);
    let mut weights_after = Vec::new();
    for step in 0..2u64 {
        let x = Tensor::<B, 2>::ones([4, 5], &device);
        let loss = model.forward(x).powi_scalar(2).mean();
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        watch.observe(step, &model, &grads);
        model = optim.step(0.5, model, grads);
        if step == 0 {
            weights_after = values(model.weight.val().inner());
        }
    }
    gv.finish().unwrap();
    let events = events.join().unwrap();
    let find = |param: &str, what: &str| {
        events
            .iter()
            .find(|e| {
                e.get_as::<String>(keys::PARAM).unwrap() == param
                    && e.get_as::<String>(keys::WATCH).unwrap() == what
            })
            .unwrap_or_else(|| panic!("no {what} event for {param}"))
    };
    let stat = |param: &str, what: &str, key: &str| find(param, what).get_as::<f64>(key).unwrap();
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-5 * (1.0 + b.abs());
    let norm = weights_before.iter().map(|x| x * x).sum::<f64>().sqrt();
    let max = weights_before
        .iter()
        .copied()
        .fold(f64::NEG_INFINITY, f64::max);
    assert!(close(stat("weight", "weight", keys::NORM), norm));
    assert!(close(stat("weight", "weight", keys::MAX), max));
    let hist: Vec<f64> = find("weight", "weight").get_as(keys::HIST).unwrap();
    assert_eq!(hist.iter().sum::<f64>(), 15.0);
    // The bias (3 elements) is its own part of the one transfer.
    let bias: Vec<f64> = find("bias", "weight").get_as(keys::HIST).unwrap();
    assert_eq!(bias.iter().sum::<f64>(), 3.0);
    assert!(stat("weight", "grad", keys::NORM) > 0.0);
    let delta: f64 = weights_before
        .iter()
        .zip(&weights_after)
        .map(|(b, a)| (a - b) * (a - b))
        .sum::<f64>()
        .sqrt();
    assert!(close(
        stat("weight", "update", keys::UPDATE_RATIO),
        delta / norm
    ));
}

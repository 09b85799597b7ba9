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

//! Every bundled model learns on its data, deterministically, with small debug-build sizes.

use burn::backend::{Autodiff, Flex};
use giving::prelude::*;
use giving_models::data::{self, text::TextData};
use giving_models::train::{Classification, fit};
use giving_models::{
    CharLmConfig, CnnConfig, MlpConfig, TrainConfig, TrainReport, model::init_seeded, train_charlm,
    train_cnn, train_mlp,
};

type B = Autodiff<Flex>;

fn config(train_size: usize, batch_size: usize, epochs: usize, lr: f64, seed: u64) -> TrainConfig {
    TrainConfig {
        epochs,
        batch_size,
        lr,
        seed,
        train_size,
        valid_size: 100,
        window: 5,
        ..TrainConfig::default()
    }
}

/// Runs `train` with a subscriber and returns the losses it read, with the report.
fn losses_of(train: impl FnOnce() -> TrainReport) -> (Vec<f64>, TrainReport) {
    let gv = giving::given();
    let losses = gv.spawn(gv.stream().key::<f64>("loss").collect::<Vec<_>>());
    let report = train();
    gv.finish().unwrap();
    (losses.join().unwrap(), report)
}

fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// The mean of the last `k` losses is well below the mean of the first `k`.
fn assert_falls(name: &str, losses: &[f64], k: usize, factor: f64) {
    assert!(
        losses.len() >= 2 * k,
        "{name}: only {} losses",
        losses.len()
    );
    let (first, last) = (mean(&losses[..k]), mean(&losses[losses.len() - k..]));
    assert!(
        last < factor * first,
        "{name}: loss did not fall enough: first {k} average {first:.4}, last {k} average {last:.4}"
    );
}

fn small_mlp() -> MlpConfig {
    MlpConfig::new(784, vec![32], 10)
}

#[test]
fn mlp_loss_falls_on_digits() {
    let cfg = config(640, 32, 2, 3e-3, 1);
    let (losses, report) =
        losses_of(|| train_mlp::<B>(&Default::default(), &cfg, &small_mlp()).unwrap());
    assert_eq!(losses.len(), 40);
    assert_eq!(report.steps, 40);
    assert_eq!(report.items, 1280);
    assert_falls("mlp", &losses, 8, 0.6);
    assert!(report.accuracy.unwrap() > 0.5, "{report:?}");
    assert!((report.final_loss - losses[39]).abs() < 1e-6);
}

#[test]
fn cnn_loss_falls_on_digits() {
    let cfg = config(640, 32, 2, 5e-3, 2);
    let model = CnnConfig::new(28, 10).with_channels([4, 8]).with_hidden(32);
    let (losses, report) = losses_of(|| train_cnn::<B>(&Default::default(), &cfg, &model).unwrap());
    assert_eq!(losses.len(), 40);
    assert_falls("cnn", &losses, 8, 0.8);
    assert!(report.val_loss.is_some());
}

#[test]
fn charlm_loss_falls_on_the_bundled_text() {
    let vocab = TextData::bundled().vocab.len();
    let model = CharLmConfig::new(vocab, 16)
        .with_d_model(32)
        .with_heads(2)
        .with_layers(1)
        .with_d_ff(64);
    let mut cfg = config(8 * 40, 8, 1, 1e-2, 3);
    cfg.valid_size = 8;
    let (losses, report) =
        losses_of(|| train_charlm::<B>(&Default::default(), &cfg, &model).unwrap());
    assert_eq!(losses.len(), 40);
    // Starts near ln(vocab) (uniform guess) and must learn at least character frequencies.
    assert!(
        losses[0] > 0.8 * (vocab as f64).ln(),
        "first loss {}",
        losses[0]
    );
    assert_falls("charlm", &losses, 5, 0.8);
    assert!(report.accuracy.unwrap() > 0.1, "{report:?}");
}

#[test]
fn mlp_loss_falls_on_blobs() {
    let train = data::blobs(512, 4, 8, 1.0, 5);
    let valid = data::blobs(128, 4, 8, 1.0, 5);
    let cfg = config(512, 32, 2, 1e-2, 5);
    let device = Default::default();
    let model = init_seeded::<B, _>(&device, 5, |d| MlpConfig::new(8, vec![16], 4).init(d));
    let workload = Classification::new(train, valid, 32, 5);
    let (losses, report) = losses_of(|| fit(&workload, model, &cfg, &device).unwrap().1);
    assert_falls("mlp on blobs", &losses, 6, 0.5);
    assert!(report.accuracy.unwrap() > 0.9, "{report:?}");
}

#[test]
fn same_seed_same_first_losses() {
    let first = |seed| {
        let mut cfg = config(320, 32, 1, 3e-3, seed);
        cfg.steps = Some(6);
        cfg.valid_size = 0;
        losses_of(|| train_mlp::<B>(&Default::default(), &cfg, &small_mlp()).unwrap()).0
    };
    let a = first(7);
    assert_eq!(a.len(), 6);
    assert_eq!(a, first(7), "same seed, different losses");
    assert_ne!(a, first(8), "different seeds, same losses");
}

#[test]
fn the_loop_gives_steps_epochs_and_lr() {
    let mut cfg = config(128, 32, 2, 1e-3, 0);
    cfg.window = 3;
    let gv = giving::given();
    let events = gv.spawn(gv.stream().collect::<Vec<_>>());
    let report = train_mlp::<B>(&Default::default(), &cfg, &small_mlp()).unwrap();
    gv.finish().unwrap();
    let events = events.join().unwrap();
    assert_eq!(report.steps, 8);

    let epochs: Vec<(u64, f64)> = events
        .iter()
        .filter(|e| e.has("lr"))
        .map(|e| (e.get_as("epoch").unwrap(), e.get_as("lr").unwrap()))
        .collect();
    assert_eq!(epochs, vec![(0, 1e-3), (1, 1e-3)]);

    let loss_steps: Vec<u64> = events
        .iter()
        .filter(|e| e.has("loss"))
        .map(|e| e.get_as("global_step").unwrap())
        .collect();
    assert_eq!(loss_steps, (0..8).collect::<Vec<_>>());

    // iterate's step events: a batch size on each, one sync per window of 3 and per epoch end.
    let steps: Vec<_> = events
        .iter()
        .filter(|e| e.has("task") && e.has("step"))
        .map(|e| (e.get_as::<u64>("batch").unwrap(), e.has("synced")))
        .collect();
    assert_eq!(steps.len(), 8);
    assert!(steps.iter().all(|(batch, _)| *batch == 32));
    let synced: Vec<bool> = steps.iter().map(|(_, s)| *s).collect();
    assert_eq!(synced, [false, false, true, true, false, false, true, true]);

    let validations = events.iter().filter(|e| e.has("accuracy")).count();
    assert_eq!(validations, 2);
}

#[test]
fn bad_settings_are_reported() {
    let device = Default::default();
    let mut cfg = config(64, 0, 1, 1e-3, 0);
    let err = train_mlp::<B>(&device, &cfg, &small_mlp()).unwrap_err();
    assert!(
        err.to_string()
            .contains("batch-size must be at least 1, not 0"),
        "{err}"
    );
    cfg.batch_size = 128;
    let err = train_mlp::<B>(&device, &cfg, &small_mlp()).unwrap_err();
    assert!(
        err.to_string()
            .contains("train-size must be at least one batch (128)"),
        "{err}"
    );
    cfg.batch_size = 8;
    cfg.lr = f64::NAN;
    let err = train_mlp::<B>(&device, &cfg, &small_mlp()).unwrap_err();
    assert!(
        err.to_string()
            .contains("lr must be a positive number, not NaN"),
        "the learning rate: {err}"
    );
    let cfg = config(64, 8, 1, 1e-3, 0);
    let vocab = TextData::bundled().vocab.len();
    let err = train_charlm::<B>(&device, &cfg, &CharLmConfig::new(vocab, 100_000)).unwrap_err();
    assert!(err.to_string().contains("context"), "{err}");
}

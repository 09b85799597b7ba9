//! `ModelWatch`: every statistic it gives equals the one computed from the tensor's values on
//! the host, parameters are named by their paths, non-finite elements are counted and left
//! out of the range, and nothing is given between watched steps — with the statistics computed
//! on the device and on the host alike.

use burn::backend::{Autodiff, Flex};
use burn::module::{Module, Param};
use burn::nn::{Linear, LinearConfig};
use burn::optim::{GradientsParams, Optimizer, SgdConfig};
use burn::prelude::Backend;
use burn::tensor::{Tensor, TensorData};
use giving::prelude::*;
use giving::vocab::keys;
use giving::{Event, given};
use giving_burn::{ModelWatch, StatsOn};

type B = Autodiff<Flex>;

#[derive(Module, Debug)]
struct Net<B: Backend> {
    fc1: Linear<B>,
    fc2: Linear<B>,
}

impl<B: Backend> Net<B> {
    fn new(device: &B::Device) -> Self {
        Self {
            fc1: LinearConfig::new(4, 8).init(device),
            fc2: LinearConfig::new(8, 1).init(device),
        }
    }

    fn forward(&self, x: Tensor<B, 2>) -> Tensor<B, 2> {
        self.fc2
            .forward(burn::tensor::activation::relu(self.fc1.forward(x)))
    }
}

fn loss(model: &Net<B>) -> Tensor<B, 1> {
    let device = Default::default();
    let x = Tensor::<B, 2>::from_data(
        TensorData::new((0..32).map(|i| (i % 7) as f32 / 7.0).collect(), [8, 4]),
        &device,
    );
    model.forward(x).powi_scalar(2).mean()
}

/// Both places the statistics can be computed.
const PLACES: [StatsOn; 2] = [StatsOn::Device, StatsOn::Host];

/// Trains `steps` steps of SGD with a watch of every `every`-th step computing its statistics
/// `on`; returns the events and the weights of every step (before its update), by parameter
/// path.
fn watched_run(
    steps: u64,
    every: u64,
    mut model: Net<B>,
    on: StatsOn,
) -> (Vec<Event>, Vec<Vec<f64>>) {
    let gv = given();
    let events = gv.spawn(gv.stream().where_([keys::WATCH]).collect::<Vec<_>>());
    let mut watch = ModelWatch::new().every(every).bins(4).stats_on(on);
    let mut optim = SgdConfig::new().init();
    let mut fc1_weights = Vec::new();
    for step in 0..steps {
        fc1_weights.push(values(model.fc1.weight.val().inner()));
        let grads = GradientsParams::from_grads(loss(&model).backward(), &model);
        watch.observe(step, &model, &grads);
        model = optim.step(0.5, model, grads);
    }
    gv.finish().unwrap();
    (events.join().unwrap(), fc1_weights)
}

fn values<const D: usize>(tensor: Tensor<Flex, D>) -> Vec<f64> {
    tensor.into_data().iter::<f64>().collect()
}

fn stat(event: &Event, key: &str) -> f64 {
    event.get_as::<f64>(key).unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-5 * (1.0 + b.abs())
}

#[test]
fn each_statistic_is_the_one_of_the_values_and_parameters_are_named_by_path() {
    for on in PLACES {
        each_statistic_is_the_one_of_the_values(on);
    }
}

fn each_statistic_is_the_one_of_the_values(on: StatsOn) {
    let (events, fc1) = watched_run(5, 2, Net::new(&Default::default()), on);
    let watched: Vec<(u64, String, String)> = events
        .iter()
        .map(|e| {
            (
                e.get_as::<u64>(keys::GLOBAL_STEP).unwrap(),
                e.get_as::<String>(keys::PARAM).unwrap(),
                e.get_as::<String>(keys::WATCH).unwrap(),
            )
        })
        .collect();
    let names = ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"];
    // Steps 0, 2 and 4 watched; the update of steps 0 and 2 given at the step after.
    for step in [0u64, 2, 4] {
        for name in names {
            for what in ["weight", "grad"] {
                let key = (step, name.to_owned(), what.to_owned());
                assert!(watched.contains(&key), "{key:?} in {watched:?}");
            }
        }
    }
    for step in [0u64, 2] {
        for name in names {
            assert!(watched.contains(&(step, name.to_owned(), "update".to_owned())));
        }
    }
    assert_eq!(watched.len(), 3 * 4 * 2 + 2 * 4);

    for event in &events {
        let step = event.get_as::<u64>(keys::GLOBAL_STEP).unwrap() as usize;
        let is = |name: &str, what: &str| {
            event.get_as::<String>(keys::PARAM).unwrap() == name
                && event.get_as::<String>(keys::WATCH).unwrap() == what
        };
        if is("fc1.weight", "weight") {
            let x = &fc1[step];
            let n = x.len() as f64;
            let mean = x.iter().sum::<f64>() / n;
            let std = (x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n).sqrt();
            let norm = x.iter().map(|v| v * v).sum::<f64>().sqrt();
            let min = x.iter().copied().fold(f64::INFINITY, f64::min);
            let max = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            for (key, expected) in [
                (keys::NORM, norm),
                (keys::MEAN, mean),
                (keys::STD, std),
                (keys::MIN, min),
                (keys::MAX, max),
                (keys::ZEROS, 0.0),
                (keys::NANS, 0.0),
                (keys::INFS, 0.0),
            ] {
                assert!(
                    close(stat(event, key), expected),
                    "{key}: {} vs {expected}",
                    stat(event, key)
                );
            }
            // Four equal bins from min to max, the max in the last.
            let width = (max - min) / 4.0;
            let mut counts = [0.0; 4];
            for v in x {
                counts[(((v - min) / width) as usize).min(3)] += 1.0;
            }
            assert_eq!(
                event.get_as::<Vec<f64>>(keys::HIST).unwrap(),
                counts.to_vec()
            );
        }
        if is("fc1.weight", "update") {
            let (old, new) = (&fc1[step], &fc1[step + 1]);
            let delta = old
                .iter()
                .zip(new)
                .map(|(a, b)| (b - a).powi(2))
                .sum::<f64>()
                .sqrt();
            let norm = old.iter().map(|v| v * v).sum::<f64>().sqrt();
            let ratio = stat(event, keys::UPDATE_RATIO);
            assert!(
                ratio > 0.0 && close(ratio, delta / norm),
                "{ratio} vs {}",
                delta / norm
            );
        }
    }
}

#[test]
fn non_finite_elements_are_counted_and_left_out_of_the_range() {
    for on in PLACES {
        non_finite_elements_are_counted(on);
    }
}

fn non_finite_elements_are_counted(on: StatsOn) {
    let device = Default::default();
    let mut model = Net::<B>::new(&device);
    let weights = [
        1.0,
        f32::NAN,
        -2.0,
        f32::INFINITY,
        0.0,
        3.0,
        f32::NEG_INFINITY,
        0.5,
    ];
    model.fc2.weight = Param::from_tensor(Tensor::from_data(
        TensorData::new(weights.to_vec(), [8, 1]),
        &device,
    ));
    let (events, _) = watched_run(1, 1, model, on);
    let fc2 = events
        .iter()
        .find(|e| {
            e.get_as::<String>(keys::PARAM).unwrap() == "fc2.weight"
                && e.get_as::<String>(keys::WATCH).unwrap() == "weight"
        })
        .unwrap();
    assert_eq!(stat(fc2, keys::NANS), 1.0, "{on:?}");
    assert_eq!(stat(fc2, keys::INFS), 2.0);
    assert_eq!((stat(fc2, keys::MIN), stat(fc2, keys::MAX)), (-2.0, 3.0));
    assert_eq!(stat(fc2, keys::ZEROS), 1.0 / 8.0);
    assert!(stat(fc2, keys::NORM).is_nan());
    // The five finite elements in 4 bins of 1.25 from -2: [-2] [0] [0.5, 1] [3].
    assert_eq!(
        fc2.get_as::<Vec<f64>>(keys::HIST).unwrap(),
        vec![1.0, 1.0, 2.0, 1.0]
    );
}

#[test]
fn between_watched_steps_nothing_is_given() {
    let gv = given();
    let count = gv.spawn(gv.stream().count());
    let mut model = Net::<B>::new(&Default::default());
    let mut watch = ModelWatch::new().every(10);
    let mut optim = SgdConfig::new().init();
    for step in 1..10u64 {
        let grads = GradientsParams::from_grads(loss(&model).backward(), &model);
        watch.observe(step, &model, &grads);
        model = optim.step(0.1, model, grads);
    }
    gv.finish().unwrap();
    assert_eq!(count.join().unwrap(), 0);
}

/// A network whose forward is instrumented: its hidden layer is the variable `hidden`.
#[derive(Module, Debug)]
struct Probed<B: Backend> {
    net: Net<B>,
}

/// The hidden layer, in a type of its own so that the test counts its captures.
#[derive(Clone)]
struct Hidden(Tensor<B, 2>);

/// Every value a probe gave for `hidden` (a handle sharing its cache: whether it was read).
static CAPTURED: std::sync::Mutex<Vec<giving::Value>> = std::sync::Mutex::new(Vec::new());

/// Gives `hidden` as probes give a tensor (lazily), keeping a handle to what it gave.
fn capture(hidden: &Hidden) -> giving::Value {
    let value: giving::Value = giving_burn::LazyTensor::<Flex, 2>::detached(&hidden.0).into();
    CAPTURED.lock().unwrap().push(value.clone());
    value
}

/// Whether a lazy value was read.
fn was_read(value: &giving::Value) -> bool {
    match value {
        giving::Value::Lazy(lazy) => lazy.is_resolved(),
        _ => true,
    }
}

#[giving::probe]
impl Probed<B> {
    fn forward(&self, x: Tensor<B, 2>) -> Tensor<B, 2> {
        let hidden = Hidden(burn::tensor::activation::relu(self.net.fc1.forward(x)));
        self.net.fc2.forward(hidden.0)
    }
}

#[test]
fn activations_are_watched_on_watched_steps_only_with_the_statistics_of_their_values() {
    // SAFETY: `Hidden` has no lifetime parameter.
    unsafe { giving::probe::register_value::<Hidden>(capture) };
    for on in PLACES {
        CAPTURED.lock().unwrap().clear();
        activations_are_watched(on);
        let captured = std::mem::take(&mut *CAPTURED.lock().unwrap());
        // The probe is open for the watched steps' forward only (steps 0, 3 and 6).
        assert_eq!(captured.len(), 3, "{on:?}");
        // On the device the activation's statistics are computed from the tensor where it is
        // and only they are read; on the host, from its values, read.
        let read = captured.iter().filter(|v| was_read(v)).count();
        let expected = match on {
            StatsOn::Device => 0,
            StatsOn::Host => 3,
        };
        assert_eq!(read, expected, "{on:?}: activations read");
    }
}

fn activations_are_watched(on: StatsOn) {
    let device = Default::default();
    let mut model = Probed::<B> {
        net: Net::new(&device),
    };
    let x = Tensor::<B, 2>::from_data(
        TensorData::new(
            (0..32).map(|i| (i % 7) as f32 / 7.0 - 0.4).collect(),
            [8, 4],
        ),
        &device,
    );
    let mut optim = SgdConfig::new().init();
    let gv = given();
    let events = gv.spawn(gv.stream().where_eq(keys::WATCH, "act").collect::<Vec<_>>());
    let mut watch = ModelWatch::new()
        .every(3)
        .stats_on(on)
        .activations("Probed.forward > hidden")
        .unwrap();
    let mut hidden_of_step = Vec::new();
    for step in 0..7u64 {
        let hidden = burn::tensor::activation::relu(model.net.fc1.forward(x.clone()));
        hidden_of_step.push(values(hidden.inner()));
        let loss = model.forward(x.clone()).powi_scalar(2).mean();
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        watch.observe(step, &model, &grads);
        model = optim.step(0.1, model, grads);
    }
    gv.finish().unwrap();
    let events = events.join().unwrap();
    let steps: Vec<u64> = events
        .iter()
        .map(|e| e.get_as::<u64>(keys::GLOBAL_STEP).unwrap())
        .collect();
    assert_eq!(steps, [0, 3, 6]);
    for event in &events {
        let step = event.get_as::<u64>(keys::GLOBAL_STEP).unwrap() as usize;
        assert_eq!(
            event.get_as::<String>(keys::PARAM).unwrap(),
            "Probed.forward > hidden"
        );
        let hidden = &hidden_of_step[step];
        let n = hidden.len() as f64;
        let max = hidden.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let zeros = hidden.iter().filter(|&&x| x == 0.0).count() as f64 / n;
        let norm = hidden.iter().map(|x| x * x).sum::<f64>().sqrt();
        assert!(close(stat(event, keys::MAX), max), "step {step}");
        assert!(close(stat(event, keys::NORM), norm), "step {step}");
        assert_eq!(stat(event, keys::ZEROS), zeros, "step {step}");
        let hist: Vec<f64> = event.get_as(keys::HIST).unwrap();
        assert_eq!(hist.iter().sum::<f64>(), n, "step {step}");
    }
}

#[test]
fn a_selector_that_names_no_instrumented_variable_is_refused() {
    let error = ModelWatch::<Flex>::new()
        .activations("Probed.forward > hiden")
        .unwrap_err();
    assert!(error.to_string().contains("hidden"), "{error}");
}

//! A tuning session, as PredTuner's `tune`: search knob configurations with NSGA-II, keep
//! those within the QoS threshold, mark the best, validate predicted QoS, time every kept one
//! on the test set and drop those whose test QoS misses the threshold.
//!
//! Every iteration gives `{task: "tune", iteration, qos, qos_loss, speedup, kept, best}`
//! (`speedup`: the configuration's predicted speedup; `best`: the best predicted speedup kept
//! so far) and [`giving::iterate`] gives the session's progress, so any instrument (the
//! dashboard, the log, the timeline) follows a tuning session like a training run. The QoS
//! models' initialisation, the validation (`qos validation`, apart from the training's
//! `validation`) and the measurements are spans on the timeline.

use std::time::Instant;

use burn::prelude::Backend;
use giving::timeline::Channel;
use giving::{give, iterate, tracepoint};

use crate::configs::{ConfigRecord, Dropped, Timing};
use crate::cost::{Cost, LinearCost, MeasuredCost};
use crate::error::Error;
use crate::network::{Dataset, Network, accuracy, median};
use crate::nsga::Nsga2;
use crate::pareto::{pareto_front, take_best};
use crate::qos_model::{ProfileReport, ProfileStore, QosPredictor};
use crate::settings::{CostModel, QosModel, TuneSettings};
use crate::tunable::Tunable;

/// Timings per (layer, knob) pair of the measured cost model, of which it keeps the median.
const COST_REPEATS: usize = 3;

/// What a session found.
#[derive(Debug, Clone)]
pub struct Tuning {
    /// The exact network's QoS on the tuning set.
    pub baseline_qos: f64,
    /// The exact network's QoS on the test set.
    pub baseline_test_qos: f64,
    /// The kept configurations, fastest measured first.
    pub configs: Vec<ConfigRecord>,
    /// The cost model the search predicted speedups with ([`CostModel::Auto`] decided).
    pub cost_model: CostModel,
    /// How long the stages took.
    pub timing: Timing,
    /// How the QoS model's profile was obtained (`None` with the empirical QoS).
    pub profile: Option<ProfileReport>,
    /// Configurations dropped after the search.
    pub dropped: Dropped,
}

/// A configuration the search kept, before it is written out.
#[derive(Debug, Clone)]
struct Kept {
    config: Vec<usize>,
    qos: f64,
    predicted_qos: Option<f64>,
    speedup: f64,
}

/// Runs a tuning session of `net` on `tune`, checking the best configurations on `test`,
/// without storing the QoS model's profile.
pub fn tune<B: Backend, M: Tunable<B>>(
    net: &Network<B, M>,
    tune: &Dataset<B>,
    test: &Dataset<B>,
    settings: &TuneSettings,
) -> Result<Tuning, Error> {
    tune_with(net, tune, test, settings, None)
}

/// [`tune`], loading the QoS model's profile from `store` if it holds one for this network,
/// weights and data, and storing it there (completed) otherwise.
pub fn tune_with<B: Backend, M: Tunable<B>>(
    net: &Network<B, M>,
    tune: &Dataset<B>,
    test: &Dataset<B>,
    settings: &TuneSettings,
    store: Option<&ProfileStore>,
) -> Result<Tuning, Error> {
    settings.validate()?;
    let knobs = net.knobs();
    // Alleles of the search: indices into the network's knobs, the baseline first.
    let mut alleles = vec![0];
    for knob in settings.searched_knobs()? {
        if let Some(i) = knobs.iter().position(|k| *k == knob)
            && !alleles.contains(&i)
        {
            alleles.push(i);
        }
    }
    let layers = net.layer_count();
    let baseline = vec![0; layers];
    let baseline_qos = net.qos(&baseline, tune)?;
    let keep_loss = settings.keep_loss(baseline_qos);
    let tuner_loss = settings.tuner_loss(baseline_qos);
    let mut timing = Timing::default();

    let started = Instant::now();
    let cost = match settings.cost_model.resolved::<B>() {
        CostModel::Linear | CostModel::Auto => {
            Cost::Linear(LinearCost::new(net.conv_macs().to_vec(), net.other_macs()))
        }
        CostModel::Measured => {
            let span = tracepoint!(Channel::thread(), "cost_model_init");
            let (layers, fixed) = net.profile(tune, &alleles, COST_REPEATS)?;
            span.end();
            Cost::Measured(MeasuredCost::new(layers, fixed))
        }
    };
    let (model, profile) = match settings.qos_model {
        QosModel::Empirical => (None, None),
        qos_model => {
            let span = tracepoint!(Channel::thread(), "qos_model_init");
            let (model, report) = QosPredictor::init(qos_model, net, tune, &alleles, store)?;
            span.end();
            (Some(model), Some(report))
        }
    };
    let mut dropped = Dropped::default();
    timing.init = started.elapsed().as_secs_f64();

    let search_start = Instant::now();
    // Empirical QoS starts each configuration at its first approximated layer, from the exact
    // network's activations computed once (the same results as a whole pass).
    let exact_inputs = match model {
        None => net.exact_inputs(tune),
        Some(_) => vec![],
    };
    let mut optimiser = Nsga2::new(layers, alleles.len(), settings.population, settings.seed);
    let mut kept: Vec<Kept> = vec![];
    let mut best = 1.0f64;
    for iteration in iterate("tune", 0..settings.max_iter).batch_size(1) {
        let Some(genome) = optimiser.ask() else {
            break;
        };
        let config: Vec<usize> = genome.iter().map(|&a| alleles[a]).collect();
        let qos = match &model {
            Some(model) => model.predict(&config),
            None => {
                let from = config.iter().position(|&k| k != 0).unwrap_or(layers - 1);
                let logits = net.logits_from(from, &exact_inputs[from], &config)?;
                accuracy(&logits, tune.labels(), tune.classes())
            }
        };
        let qos_loss = baseline_qos - qos;
        let speedup = cost.speedup(knobs, &config);
        optimiser.tell(genome, vec![qos_loss, -speedup], qos_loss - tuner_loss);
        if qos_loss <= keep_loss {
            best = best.max(speedup);
            kept.push(Kept {
                config,
                qos,
                predicted_qos: model.as_ref().map(|_| qos),
                speedup,
            });
        }
        let kept = kept.len();
        give!(task = "tune", iteration, qos, qos_loss, speedup, kept, best);
        timing.iterations += 1;
    }
    drop(exact_inputs);
    timing.search = search_start.elapsed().as_secs_f64();

    let points =
        |kept: &[Kept]| -> Vec<(f64, f64)> { kept.iter().map(|k| (k.qos, k.speedup)).collect() };
    if model.is_some() {
        // Validation: only the best predicted configurations are run; those whose measured
        // QoS misses the keep threshold are dropped, and the measured QoS replaces the
        // prediction for the rest.
        // Not `validation`, the name of the training's validation in the same trace.
        let span = tracepoint!(Channel::thread(), "qos validation");
        let validation_start = Instant::now();
        let mut validated = vec![];
        for i in take_best(&points(&kept), settings.take_best_n) {
            let mut k = kept[i].clone();
            k.qos = net.qos(&k.config, tune)?;
            if baseline_qos - k.qos <= keep_loss {
                validated.push(k);
            } else {
                dropped.validation += 1;
            }
        }
        kept = validated;
        timing.validation = validation_start.elapsed().as_secs_f64();
        span.end();
    }
    timing.tuning = started.elapsed().as_secs_f64();

    // Every kept configuration, checked on the test set and timed against the exact network:
    // the best with `repeats` interleaved rounds, the others with one (cheaper, noisier).
    let measure_start = Instant::now();
    let span = tracepoint!(Channel::thread(), "measurement");
    let front = pareto_front(&points(&kept));
    let best_set = take_best(&points(&kept), settings.take_best_n);
    let baseline_test_qos = net.qos(&baseline, test)?;
    // PredTuner's test keep threshold: the same loss below the exact network's test QoS (or
    // the same absolute QoS).
    let test_keep_loss = settings.keep_loss(baseline_test_qos);
    net.time(&baseline, test)?; // warm-up: allocations and caches
    let mut configs = vec![];
    for (i, k) in kept.iter().enumerate() {
        let is_best = best_set.binary_search(&i).is_ok();
        let repeats = if is_best { settings.repeats } else { 1 };
        let (measured, test_qos) = measure(net, &k.config, test, repeats)?;
        if baseline_test_qos - test_qos > test_keep_loss {
            dropped.test += 1;
            continue;
        }
        // A configuration measured slower than the exact network is no one's best choice,
        // whatever the cost model predicted: kept (with its figures) but not marked.
        let faster = measured >= 1.0;
        configs.push(ConfigRecord {
            knobs: k.config.iter().map(|&i| knobs[i].id()).collect(),
            qos: k.qos,
            qos_loss: baseline_qos - k.qos,
            predicted_qos: k.predicted_qos,
            test_qos: Some(test_qos),
            predicted_speedup: k.speedup,
            measured_speedup: Some(measured),
            pareto: faster && front.binary_search(&i).is_ok(),
            best: faster && is_best,
        });
    }
    span.end();
    timing.measurement = measure_start.elapsed().as_secs_f64();
    configs.sort_by(|a, b| {
        let measured = |c: &ConfigRecord| c.measured_speedup.unwrap_or(0.0);
        measured(b)
            .total_cmp(&measured(a))
            .then(b.qos.total_cmp(&a.qos))
    });
    Ok(Tuning {
        baseline_qos,
        baseline_test_qos,
        configs,
        cost_model: settings.cost_model.resolved::<B>(),
        timing,
        profile,
        dropped,
    })
}

/// End-to-end speedup of `config` over the exact network on `data`: `repeats` rounds, each
/// timing the exact network then the configuration, so that both see the same machine load;
/// the ratio of the median times.
pub fn measure_speedup<B: Backend, M: Tunable<B>>(
    net: &Network<B, M>,
    config: &[usize],
    data: &Dataset<B>,
    repeats: usize,
) -> Result<f64, Error> {
    Ok(measure(net, config, data, repeats)?.0)
}

/// [`measure_speedup`], and the QoS of `config` on `data` from the timed passes.
fn measure<B: Backend, M: Tunable<B>>(
    net: &Network<B, M>,
    config: &[usize],
    data: &Dataset<B>,
    repeats: usize,
) -> Result<(f64, f64), Error> {
    let baseline = vec![0; config.len()];
    let mut exact = vec![];
    let mut approx = vec![];
    let mut qos = 0.0;
    for _ in 0..repeats.max(1) {
        exact.push(net.time(&baseline, data)?);
        let (time, q) = net.timed_qos(config, data)?;
        approx.push(time);
        qos = q;
    }
    let speedup = median(exact).as_secs_f64() / median(approx).as_secs_f64().max(1e-9);
    Ok((speedup, qos))
}

#[cfg(test)]
mod tests {
    use burn::backend::Flex;

    use crate::knob::Knob;
    use giving_models::VggConfig;
    use giving_models::data::{Split, shapes};

    use super::*;

    /// An untrained four-layer network and 16-image tuning and test sets.
    fn small_network() -> (Network<Flex>, Dataset<Flex>, Dataset<Flex>) {
        let device = Default::default();
        // Seeded under the models' lock: tests run side by side, and burn's generator is one
        // for the process (another test drawing between seed and init changed these weights,
        // and once no configuration changed a test prediction).
        let vgg = giving_models::model::init_seeded::<Flex, _>(&device, 3, |d| {
            VggConfig::new(32, 10)
                .with_channels(vec![4, 4, 6, 6])
                .with_hidden(8)
                .init::<Flex>(d)
        });
        let net = Network::new(vgg, Knob::all()).unwrap();
        let tune_set = Dataset::new(&shapes(0, Split::Tune, 16), 32, &device);
        let test_set = Dataset::new(&shapes(0, Split::Test, 16), 32, &device);
        (net, tune_set, test_set)
    }

    /// A short session: 12 configurations, one timing round each.
    fn small_settings() -> TuneSettings {
        let mut settings = TuneSettings::new();
        settings.max_iter = 12;
        settings.population = 4;
        settings.take_best_n = 2;
        settings.repeats = 1;
        // An untrained network: keep everything, so that approximated layers are kept too.
        settings.qos_keep_threshold = 100.0;
        // FLOPs, not timings, steer the search: the same configurations every run (the
        // measured model, `auto`'s choice on flex, has a test of its own).
        settings.cost_model = CostModel::Linear;
        settings
    }

    #[test]
    fn every_kept_configuration_is_measured_and_its_qos_is_a_whole_pass() {
        let (net, tune_set, test_set) = small_network();
        let settings = small_settings();
        let tuning = tune(&net, &tune_set, &test_set, &settings).unwrap();
        assert_eq!(tuning.configs.len(), 12);
        assert!(tuning.configs.iter().any(|c| !c.best));
        let knobs = net.knobs();
        let measured: Vec<f64> = tuning
            .configs
            .iter()
            .map(|c| c.measured_speedup.unwrap())
            .collect();
        assert!(
            measured.windows(2).all(|w| w[0] >= w[1]),
            "fastest measured first: {measured:?}"
        );
        for c in &tuning.configs {
            assert!(c.measured_speedup.is_some_and(|s| s > 0.0), "{c:?}");
            if c.best || c.pareto {
                assert!(
                    c.measured_speedup.unwrap() >= 1.0,
                    "slower than exact: {c:?}"
                );
            }
            let config = c.knob_indices(knobs).unwrap();
            // The search started each configuration at its first approximated layer; a whole
            // pass from the images gives exactly the same QoS, on both sets.
            assert_eq!(c.qos, net.qos(&config, &tune_set).unwrap(), "{c:?}");
            assert_eq!(c.test_qos, Some(net.qos(&config, &test_set).unwrap()));
        }
    }

    #[test]
    fn the_measured_cost_model_times_every_searched_knob_and_predicts_from_them() {
        let (net, tune_set, test_set) = small_network();
        let searched = [0, 1, 5];
        let (layers, fixed) = net.profile(&tune_set, &searched, 1).unwrap();
        assert_eq!(layers.len(), net.layer_count());
        assert!(fixed > 0.0);
        for layer in &layers {
            assert_eq!(layer.len(), net.knobs().len());
            for (k, secs) in layer.iter().enumerate() {
                // Timed exactly the searched knobs.
                assert_eq!(secs.is_nan(), !searched.contains(&k), "knob {k}: {secs}");
                assert!(secs.is_nan() || *secs > 0.0);
            }
        }
        let mut settings = small_settings();
        settings.cost_model = CostModel::Measured;
        let tuning = tune(&net, &tune_set, &test_set, &settings).unwrap();
        assert!(tuning.timing.init > 0.0);
        for c in &tuning.configs {
            assert!(
                c.predicted_speedup.is_finite() && c.predicted_speedup > 0.0,
                "{c:?}"
            );
            if c.knobs.iter().all(|k| k == "baseline") {
                assert_eq!(c.predicted_speedup, 1.0);
            }
        }
    }

    #[test]
    fn a_stored_profile_is_loaded_by_the_next_session_for_p1_and_p2() {
        let (net, tune_set, test_set) = small_network();
        let dir = tempfile::tempdir().unwrap();
        let store = ProfileStore {
            dir: dir.path().join("profiles"),
            key: "0123abcd".into(),
        };
        let searched = TuneSettings::new().knobs.len() - 1;
        for qos_model in [QosModel::P1, QosModel::P2] {
            let mut settings = small_settings();
            settings.qos_model = qos_model;
            settings.max_iter = 4;
            let first = tune_with(&net, &tune_set, &test_set, &settings, Some(&store)).unwrap();
            let report = first.profile.clone().unwrap();
            // Every (layer, searched knob) pair ran once, and the profile was stored.
            assert!(!report.loaded);
            assert_eq!(report.built, net.layer_count() * searched, "{qos_model:?}");
            assert_eq!(report.path.as_deref(), Some(&*store.path(qos_model)));
            assert!(store.path(qos_model).is_file());
            // The next session runs no pair: it loads them all, and predicts the same.
            let second = tune_with(&net, &tune_set, &test_set, &settings, Some(&store)).unwrap();
            let report = second.profile.clone().unwrap();
            assert!(report.loaded, "{qos_model:?}");
            assert_eq!(report.built, 0, "{qos_model:?}");
            // In the same order whatever the timings (the configurations are listed fastest
            // measured first).
            let predicted = |t: &Tuning| -> Vec<_> {
                let mut p: Vec<_> = t
                    .configs
                    .iter()
                    .map(|c| (c.knobs.clone(), c.predicted_qos.map(f64::to_bits)))
                    .collect();
                p.sort();
                p
            };
            assert_eq!(predicted(&first), predicted(&second));
            // Another key (other weights or data) does not reuse it.
            let other = ProfileStore {
                key: "ffff".into(),
                ..store.clone()
            };
            let third = tune_with(&net, &tune_set, &test_set, &settings, Some(&other)).unwrap();
            assert!(!third.profile.unwrap().loaded);
        }
    }

    #[test]
    fn p2_predicts_the_exact_qos_plus_each_layers_change_alone() {
        let (net, tune_set, _) = small_network();
        let searched: Vec<usize> = (0..net.knobs().len()).collect();
        let (model, _) =
            QosPredictor::init(QosModel::P2, &net, &tune_set, &searched, None).unwrap();
        let exact = net.qos(&[0, 0, 0, 0], &tune_set).unwrap();
        let alone = |layer: usize, knob: usize| {
            let mut config = vec![0; 4];
            config[layer] = knob;
            net.qos(&config, &tune_set).unwrap()
        };
        assert_eq!(model.predict(&[0, 0, 0, 0]), exact);
        assert_eq!(model.predict(&[0, 3, 0, 0]), alone(1, 3));
        let sum = exact + (alone(0, 1) - exact) + (alone(2, 5) - exact);
        assert!((model.predict(&[1, 0, 5, 0]) - sum).abs() < 1e-9);
    }

    #[test]
    fn configurations_that_miss_the_test_threshold_are_dropped_and_counted() {
        let (net, tune_set, test_set) = small_network();
        // Tuning labels no prediction can match: every configuration has QoS 0 and loss 0,
        // so the search keeps all 12. Test labels are the exact network's predictions: the
        // exact network scores 100%, and a configuration that changes a prediction loses QoS.
        let classes = test_set.classes();
        let tune_set = tune_set.with_labels(vec![classes as u32; 16]);
        let logits = net.logits(&[0; 4], &test_set).unwrap();
        let predictions: Vec<u32> = logits
            .chunks_exact(classes)
            .map(|row| {
                let mut best = 0;
                for (i, &v) in row.iter().enumerate() {
                    if v > row[best] {
                        best = i;
                    }
                }
                best as u32
            })
            .collect();
        let test_set = test_set.with_labels(predictions);
        let mut settings = small_settings();
        settings.qos_keep_threshold = 0.0;
        let tuning = tune(&net, &tune_set, &test_set, &settings).unwrap();
        assert_eq!(tuning.baseline_test_qos, 100.0);
        assert_eq!(tuning.dropped.validation, 0);
        assert_eq!(tuning.configs.len() + tuning.dropped.test, 12);
        assert!(
            tuning.dropped.test > 0,
            "no configuration changed a prediction"
        );
        for c in &tuning.configs {
            assert_eq!(c.test_qos, Some(100.0), "{c:?}");
        }
    }
}

//! burn-train's `Learner` observed by giving: burn-train's own files are the reference for
//! what the giving log must hold, and a giving stop ends the Learner cleanly.

mod support;

use std::path::Path;

use burn_train::logger::FileMetricLogger;
use burn_train::metric::NumericEntry;
use burn_train::metric::store::Split;
use giving::Event;
use giving::vocab::{WatchEvent, keys};
use giving_burn::ModelWatch;
use giving_burn::train::{GivingLogger, GivingRenderer, metric_key, metric_value};
use giving_instruments::log::{LogReader, MsgpackLog};
use giving_instruments::{Overseer, RateMeter};

/// The events of the log at `path`, and whether it has its end record.
fn read_log(path: &Path) -> (Vec<Event>, bool) {
    let mut reader = LogReader::open(path).unwrap();
    let events: Vec<Event> = reader.by_ref().map(Result::unwrap).collect();
    (events, reader.end().is_some())
}

/// The values burn-train's `FileMetricLogger` wrote for `metric` in one split and epoch, one
/// per iteration (its file's lines).
fn burn_values(dir: &Path, split: &str, epoch: usize, metric: &str) -> Vec<f64> {
    let file = dir
        .join(split)
        .join(format!("epoch-{epoch}"))
        .join(format!("{metric}.log"));
    let text = std::fs::read_to_string(&file)
        .unwrap_or_else(|e| panic!("burn-train wrote no {}: {e}", file.display()));
    text.lines()
        .filter(|line| !line.is_empty())
        .map(|line| NumericEntry::deserialize(line).unwrap().current())
        .collect()
}

/// The giving event of one split, epoch and iteration that carries `key`.
fn giving_value(events: &[Event], split: &str, epoch: usize, iteration: usize, key: &str) -> f64 {
    let matching: Vec<&Event> = events
        .iter()
        .filter(|e| {
            e.has(key)
                && e.get(keys::SPLIT).and_then(|v| v.as_str()) == Some(split)
                // giving counts epochs from 0, burn-train from 1.
                && e.get_as::<u64>(keys::EPOCH).ok() == Some(epoch as u64 - 1)
                && e.get_as::<u64>(keys::ITERATION).ok() == Some(iteration as u64)
        })
        .collect();
    assert_eq!(
        matching.len(),
        1,
        "{split} epoch {epoch} iteration {iteration}: {} events with {key}",
        matching.len()
    );
    matching[0].get(key).and_then(|v| v.as_f64()).unwrap()
}

#[test]
fn every_value_burn_train_writes_is_in_the_giving_log_with_its_epoch_and_iteration() {
    let dir = tempfile::tempdir().unwrap();
    let burn_dir = dir.path().join("burn");
    let log = MsgpackLog::in_dir(dir.path().join("log")).unwrap();
    let path = log.path().to_path_buf();
    let epochs = 2;
    let run = Overseer::new().ctrl_c(false).quiet(true).with(log).run(|| {
        let (training, learner) = support::training(&burn_dir, epochs, 24);
        training
            .with_metric_logger(GivingLogger::new())
            .with_metric_logger(FileMetricLogger::new(&burn_dir))
            .renderer(GivingRenderer::new())
            .launch(learner);
    });
    assert!(run.problems.is_empty(), "{:?}", run.problems);
    assert!(run.output.is_ok());

    let (events, ended) = read_log(&path);
    assert!(ended, "the log has no end record");
    let mut compared = 0;
    for (split, burn_split) in [("train", Split::Train), ("valid", Split::Valid)] {
        for epoch in 1..=epochs {
            for metric in ["Loss", "Accuracy"] {
                let values = burn_values(&burn_dir, split, epoch, metric);
                // 24 training items and 8 validation items, in batches of 4.
                assert_eq!(values.len(), if split == "train" { 6 } else { 2 });
                let key = metric_key(metric, &burn_split);
                for (i, value) in values.iter().enumerate() {
                    let given = giving_value(&events, split, epoch, i + 1, &key);
                    assert_eq!(
                        given,
                        metric_value(metric, *value),
                        "{split} epoch {epoch} iteration {} {key}",
                        i + 1
                    );
                    compared += 1;
                }
            }
        }
    }
    assert_eq!(compared, 2 * epochs * (6 + 2));
    // One summary per validation epoch, each metric the epoch's mean of burn-train's values
    // (every batch holds 4 items, so the item-weighted mean is the plain one); none for the
    // training split, whose loss is given every step.
    let train_summaries = events
        .iter()
        .filter(|e| e.has(keys::EPOCH_END))
        .filter(|e| e.get_as::<String>(keys::SPLIT).ok().as_deref() == Some("train"))
        .count();
    assert_eq!(train_summaries, 0);
    for (split, burn_split) in [("valid", Split::Valid)] {
        for epoch in 1..=epochs {
            let summaries: Vec<&Event> = events
                .iter()
                .filter(|e| e.has(keys::EPOCH_END))
                .filter(|e| e.get_as::<String>(keys::SPLIT).ok().as_deref() == Some(split))
                .filter(|e| e.get_as::<u64>(keys::EPOCH).ok() == Some(epoch as u64 - 1))
                .collect();
            assert_eq!(summaries.len(), 1, "{split} epoch {epoch}: {summaries:?}");
            for metric in ["Loss", "Accuracy"] {
                let values = burn_values(&burn_dir, split, epoch, metric);
                let mean = values.iter().sum::<f64>() / values.len() as f64;
                let key = metric_key(metric, &burn_split);
                let given = summaries[0].get_as::<f64>(&key).unwrap();
                assert!(
                    (given - metric_value(metric, mean)).abs() < 1e-12,
                    "{split} epoch {epoch} {key}: {given} vs burn-train's mean {mean}"
                );
            }
        }
    }
    // The training split's updates count over the whole run, as the bundled loops' losses.
    let global: Vec<u64> = events
        .iter()
        .filter(|e| e.has(keys::LOSS))
        .filter_map(|e| e.get_as::<u64>(keys::GLOBAL_STEP).ok())
        .collect();
    assert_eq!(global, (0..12).collect::<Vec<u64>>());
}

#[test]
fn the_renderer_gives_each_iteration_as_a_step_of_its_task_and_the_rate_reads_them() {
    let dir = tempfile::tempdir().unwrap();
    let burn_dir = dir.path().join("burn");
    let log = MsgpackLog::in_dir(dir.path().join("log")).unwrap();
    let path = log.path().to_path_buf();
    let run = Overseer::new().ctrl_c(false).quiet(true).with(log).run(|| {
        let (training, learner) = support::training(&burn_dir, 2, 24);
        training
            .with_metric_logger(GivingLogger::new())
            .renderer(GivingRenderer::new().window(4))
            .launch(learner);
    });
    assert!(run.problems.is_empty(), "{:?}", run.problems);
    let (events, ended) = read_log(&path);
    assert!(ended);

    let task = |e: &Event| {
        e.get(keys::TASK)
            .and_then(|v| v.as_str())
            .map(str::to_string)
    };
    let train: Vec<&Event> = events
        .iter()
        .filter(|e| task(e).as_deref() == Some("train"))
        .collect();
    // Per epoch: the start {task, progress: (0, 24)}, then six steps of four items.
    assert_eq!(train.len(), 2 * 7);
    for epoch in train.chunks(7) {
        assert!(!epoch[0].has(keys::STEP));
        assert_eq!(
            epoch[0].get_as::<(u64, u64)>(keys::PROGRESS).unwrap(),
            (0, 24)
        );
        for (i, step) in epoch[1..].iter().enumerate() {
            let i = i as u64;
            assert_eq!(step.get_as::<u64>(keys::STEP).unwrap(), i);
            assert_eq!(step.get_as::<u64>(keys::BATCH).unwrap(), 4);
            assert_eq!(
                step.get_as::<(u64, u64)>(keys::PROGRESS).unwrap(),
                (4 * (i + 1), 24)
            );
            // Every fourth step closes a window, and the epoch's last one.
            assert_eq!(step.has(keys::SYNCED), i == 3 || i == 5, "step {i}");
        }
    }
    let valid_steps = events
        .iter()
        .filter(|e| task(e).as_deref() == Some("valid") && e.has(keys::STEP))
        .count();
    assert_eq!(valid_steps, 2 * 2);
    // Each training epoch's start says the run's steps: 6 per epoch (24 items by 4), 2 epochs.
    let epochs: Vec<(u64, u64, u64)> = events
        .iter()
        .filter(|e| e.has(keys::EPOCHS))
        .filter(|e| e.get(keys::SPLIT).and_then(|v| v.as_str()) == Some("train"))
        .map(|e| {
            (
                e.get_as(keys::EPOCH).unwrap(),
                e.get_as(keys::EPOCHS).unwrap(),
                e.get_as(keys::TOTAL_STEPS).unwrap(),
            )
        })
        .collect();
    assert_eq!(epochs, vec![(0, 2, 12), (1, 2, 12)]);

    // The rate instrument's meter reads a rate of items per second from these steps.
    let mut meter = RateMeter::new(0);
    let rates: Vec<Event> = events.iter().filter_map(|e| meter.observe(e)).collect();
    let train_rates: Vec<&Event> = rates
        .iter()
        .filter(|e| task(e).as_deref() == Some("train"))
        .collect();
    assert_eq!(train_rates.len(), 4);
    assert!(
        train_rates
            .iter()
            .all(|r| r.get_as::<f64>(keys::RATE).unwrap() > 0.0)
    );
}

#[test]
fn a_watching_optimizer_watches_the_learners_model_at_its_own_steps() {
    let dir = tempfile::tempdir().unwrap();
    let burn_dir = dir.path().join("burn");
    let log = MsgpackLog::in_dir(dir.path().join("log")).unwrap();
    let path = log.path().to_path_buf();
    let run = Overseer::new().ctrl_c(false).quiet(true).with(log).run(|| {
        // The one line a Learner user adds: the optimiser, watched every 4 steps.
        let optim = ModelWatch::new()
            .every(4)
            .optimizer(burn::optim::SgdConfig::new().init());
        let (training, learner) = support::training_with(&burn_dir, 2, 24, optim);
        training
            .with_metric_logger(GivingLogger::new())
            .renderer(GivingRenderer::new())
            .launch(learner);
    });
    assert!(run.problems.is_empty(), "{:?}", run.problems);
    let (events, ended) = read_log(&path);
    assert!(ended);
    // 2 epochs of 6 steps: watched at 0, 4 and 8, each parameter's weights and gradient.
    let mut stats: Vec<(u64, String, String)> = events
        .iter()
        .filter(|e| e.has(keys::NORM))
        .filter_map(WatchEvent::of)
        .map(|w| (w.step, w.param.to_owned(), w.watch.to_owned()))
        .collect();
    stats.sort();
    let mut expected = Vec::new();
    for step in [0, 4, 8] {
        for param in ["linear.bias", "linear.weight"] {
            for watch in ["grad", "weight"] {
                expected.push((step, param.to_owned(), watch.to_owned()));
            }
        }
    }
    assert_eq!(stats, expected);
    // Gradients of a training classifier: finite and not all zero; an update after each.
    for event in events.iter().filter(|e| e.has(keys::NORM)) {
        let norm = event.get_as::<f64>(keys::NORM).unwrap();
        assert!(norm.is_finite() && norm > 0.0, "{event}");
    }
    let updates = events.iter().filter(|e| e.has(keys::UPDATE_RATIO)).count();
    assert_eq!(updates, 3 * 2);
}

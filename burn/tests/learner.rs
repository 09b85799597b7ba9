//! burn-train's `Learner` observed by giving: burn-train's own files are the reference for
//! what the giving log must hold, and a giving stop ends the Learner cleanly.

mod support;

use std::path::Path;

use burn_train::logger::FileMetricLogger;
use burn_train::metric::NumericEntry;
use burn_train::metric::store::Split;
use giving::Event;
use giving::vocab::keys;
use giving_burn::train::{GivingLogger, metric_key};
use giving_instruments::Overseer;
use giving_instruments::log::{LogReader, MsgpackLog};

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
                && e.get_as::<u64>(keys::EPOCH).ok() == Some(epoch as u64)
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
                        *value,
                        "{split} epoch {epoch} iteration {} {key}",
                        i + 1
                    );
                    compared += 1;
                }
            }
        }
    }
    assert_eq!(compared, 2 * epochs * (6 + 2));
    // The training split's updates count over the whole run, as the bundled loops' losses.
    let global: Vec<u64> = events
        .iter()
        .filter(|e| e.has(keys::LOSS))
        .filter_map(|e| e.get_as::<u64>(keys::GLOBAL_STEP).ok())
        .collect();
    assert_eq!(global, (0..12).collect::<Vec<u64>>());
}

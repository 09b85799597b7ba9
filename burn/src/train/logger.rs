//! [`GivingLogger`]: burn-train's metric updates as giving events.

use std::collections::HashMap;

use burn_train::logger::MetricLogger;
use burn_train::metric::store::{EpochSummary, MetricsUpdate, Split};
use burn_train::metric::{MetricDefinition, MetricId, NumericEntry};
use giving::vocab::keys;
use giving::{Event, Giver, Value};

use super::keys::{metric_key, metric_value};

/// burn-train's `MetricLogger` that gives each metric update of every split as one event.
///
/// Register it with `SupervisedTraining::with_metric_logger(GivingLogger::new())`. Each update
/// becomes `{epoch, split, iteration, <metric>: value, ..}`: `epoch` counts from 0 as in the
/// vocabulary (burn-train's epoch − 1: its `epoch-1` files are giving's epoch 0), `split` is
/// `"train"`, `"valid"`
/// or `"test"`, `iteration` counts the split's updates from 1 in each epoch (the line of
/// burn-train's own `FileMetricLogger` file that holds the same values), the training split
/// adds `global_step` (from 0 over the whole run, as the bundled loops give it with `loss`),
/// and each metric's key is [`metric_key`] of its name. A numeric metric
/// gives the value burn-train logs for the update (an `f64`, an accuracy as a fraction:
/// [`metric_value`]); a text metric its serialized
/// form (a string). burn-train hands the logger numbers it has already read, not tensors, so
/// nothing here is lazy.
///
/// It also answers burn-train's own queries (`read_numeric`, used by early stopping and by
/// the best-checkpoint strategy) from the values it keeps, so it can be the only logger.
pub struct GivingLogger {
    giver: Giver,
    names: HashMap<MetricId, String>,
    /// Per split: the epoch being logged and how many updates it has had.
    iterations: HashMap<Split, (usize, usize)>,
    global_step: u64,
    /// The numeric values logged, per (metric name, split, epoch), for `read_numeric`.
    numeric: HashMap<(String, Split, usize), Vec<NumericEntry>>,
}

impl GivingLogger {
    /// A logger giving into the scopes the calling thread gives into now (burn-train calls it
    /// from a thread of its own).
    pub fn new() -> Self {
        Self::with_giver(Giver::current())
    }

    /// A logger giving through `giver`.
    pub fn with_giver(giver: Giver) -> Self {
        Self {
            giver,
            names: HashMap::new(),
            iterations: HashMap::new(),
            global_step: 0,
            numeric: HashMap::new(),
        }
    }

    fn name(&self, id: &MetricId) -> Option<&str> {
        self.names.get(id).map(String::as_str)
    }
}

impl Default for GivingLogger {
    fn default() -> Self {
        Self::new()
    }
}

impl MetricLogger for GivingLogger {
    fn log(&mut self, update: MetricsUpdate, epoch: usize, split: &Split) {
        let counter = self.iterations.entry(split.clone()).or_insert((epoch, 0));
        if counter.0 != epoch {
            *counter = (epoch, 0);
        }
        counter.1 += 1;
        let iteration = counter.1;

        let mut event = Event::builder()
            .field(keys::EPOCH, epoch.saturating_sub(1))
            .field(keys::SPLIT, split.to_string())
            .field(keys::ITERATION, iteration);
        if *split == Split::Train {
            event = event.field(keys::GLOBAL_STEP, self.global_step);
            self.global_step += 1;
        }
        for numeric in &update.entries_numeric {
            let Some(name) = self.name(&numeric.entry.metric_id).map(str::to_string) else {
                continue;
            };
            // The entry burn-train serializes into its FileMetricLogger's line for this update.
            let value = numeric.numeric_entry.clone();
            let given = metric_value(&name, value.current());
            event = event.field(metric_key(&name, split), Value::F64(given));
            self.numeric
                .entry((name, split.clone(), epoch))
                .or_default()
                .push(value);
        }
        for entry in &update.entries {
            let Some(name) = self.name(&entry.metric_id) else {
                continue;
            };
            event = event.field(
                metric_key(name, split),
                entry.serialized_entry.serialized.clone(),
            );
        }
        if self.giver.is_listening() {
            self.giver.give(event.build());
        }
    }

    fn read_numeric(
        &mut self,
        name: &str,
        epoch: usize,
        split: &Split,
    ) -> Result<Vec<NumericEntry>, String> {
        Ok(self
            .numeric
            .get(&(name.to_string(), split.clone(), epoch))
            .cloned()
            .unwrap_or_default())
    }

    fn log_metric_definition(&mut self, definition: MetricDefinition) {
        self.names.insert(definition.metric_id, definition.name);
    }

    /// Gives the epoch's summary of a validation or test split: `{epoch, split, epoch_end:
    /// true, <metric>: mean}`, each numeric metric averaged over the epoch as burn-train
    /// averages it (weighted by the items of each update), so a reader that wants one line per
    /// epoch (a validation line) need not average the per-update events itself. The training
    /// split gets none: its `loss` is given every step, and an epoch mean under the same key
    /// would be one more point on the per-step series (and one more loss than steps).
    fn log_epoch_summary(&mut self, summary: EpochSummary) {
        if !self.giver.is_listening() || summary.split == Split::Train {
            return;
        }
        let EpochSummary {
            epoch_number: epoch,
            split,
        } = summary;
        let mut means: Vec<(&str, f64)> = self
            .numeric
            .iter()
            .filter(|((_, s, e), _)| *s == split && *e == epoch)
            .filter_map(|((name, _, _), entries)| Some((name.as_str(), epoch_mean(entries)?)))
            .collect();
        means.sort_by(|a, b| a.0.cmp(b.0));
        let mut event = Event::builder()
            .field(keys::EPOCH, epoch.saturating_sub(1))
            .field(keys::SPLIT, split.to_string())
            .field(keys::EPOCH_END, true);
        for (name, mean) in means {
            event = event.field(
                metric_key(name, &split),
                Value::F64(metric_value(name, mean)),
            );
        }
        self.giver.give(event.build());
    }
}

/// The mean of an epoch's entries, weighted by the items each counts (burn-train's own
/// `Aggregate::Mean`); `None` for no entries.
fn epoch_mean(entries: &[NumericEntry]) -> Option<f64> {
    let (sum, count) = entries
        .iter()
        .map(|entry| match entry {
            NumericEntry::Value(value) => (*value, 1),
            NumericEntry::Aggregated {
                aggregated_value,
                count,
            } => (aggregated_value * *count as f64, *count),
        })
        .fold((0.0, 0usize), |(s, n), (v, c)| (s + v, n + c));
    (count > 0).then(|| sum / count as f64)
}

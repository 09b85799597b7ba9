//! Splitting what a run logs into `runs/log-batch` requests within MLflow's limits: at most
//! 1000 metrics, 100 params and 1000 items in all per request; params and keys within their
//! lengths.

use serde_json::{Value as Json, json};

/// Metrics per `log-batch` request.
pub(crate) const MAX_METRICS: usize = 1000;
/// Params per `log-batch` request.
pub(crate) const MAX_PARAMS: usize = 100;
/// Metrics, params and tags per `log-batch` request.
pub(crate) const MAX_TOTAL: usize = 1000;
/// The longest param value MLflow stores (6000 characters since MLflow 2.x).
pub(crate) const MAX_PARAM_VALUE: usize = 6000;
/// The longest key.
pub(crate) const MAX_KEY: usize = 250;

/// One metric sample.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Metric {
    pub(crate) key: String,
    pub(crate) value: f64,
    /// Milliseconds since the Unix epoch.
    pub(crate) timestamp: u64,
    pub(crate) step: i64,
}

/// One `log-batch` request's content.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Batch {
    pub(crate) metrics: Vec<Metric>,
    pub(crate) params: Vec<(String, String)>,
}

impl Batch {
    /// The request body for run `run_id`.
    pub(crate) fn body(&self, run_id: &str) -> Json {
        let metrics: Vec<Json> = self
            .metrics
            .iter()
            .map(|m| {
                json!({"key": m.key, "value": m.value, "timestamp": m.timestamp, "step": m.step})
            })
            .collect();
        let params: Vec<Json> = self
            .params
            .iter()
            .map(|(key, value)| json!({"key": key, "value": value}))
            .collect();
        json!({"run_id": run_id, "metrics": metrics, "params": params, "tags": []})
    }
}

/// `metrics` and `params` as requests within the limits, params first, every item once and in
/// order.
pub(crate) fn batches(metrics: Vec<Metric>, params: Vec<(String, String)>) -> Vec<Batch> {
    let mut out = Vec::new();
    let mut params = params.into_iter().map(clip_param).peekable();
    let mut metrics = metrics.into_iter().map(clip_metric).peekable();
    while params.peek().is_some() || metrics.peek().is_some() {
        let mut batch = Batch::default();
        batch.params.extend(params.by_ref().take(MAX_PARAMS));
        let room = (MAX_TOTAL - batch.params.len()).min(MAX_METRICS);
        batch.metrics.extend(metrics.by_ref().take(room));
        out.push(batch);
    }
    out
}

/// A prefix of `s` of at most `max` characters.
fn clip(mut s: String, max: usize) -> String {
    if let Some((at, _)) = s.char_indices().nth(max) {
        s.truncate(at);
    }
    s
}

fn clip_param((key, value): (String, String)) -> (String, String) {
    (clip(key, MAX_KEY), clip(value, MAX_PARAM_VALUE))
}

fn clip_metric(mut metric: Metric) -> Metric {
    metric.key = clip(metric.key, MAX_KEY);
    metric
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metric(i: usize) -> Metric {
        Metric {
            key: "loss".to_owned(),
            value: i as f64,
            timestamp: 1,
            step: i as i64,
        }
    }

    #[test]
    fn every_item_is_sent_once_in_order_within_the_limits() {
        let metrics: Vec<Metric> = (0..2500).map(metric).collect();
        let params: Vec<(String, String)> =
            (0..250).map(|i| (format!("p{i}"), i.to_string())).collect();
        let out = batches(metrics.clone(), params.clone());
        for batch in &out {
            assert!(batch.metrics.len() <= MAX_METRICS);
            assert!(batch.params.len() <= MAX_PARAMS);
            assert!(batch.metrics.len() + batch.params.len() <= MAX_TOTAL);
        }
        let sent_metrics: Vec<Metric> = out.iter().flat_map(|b| b.metrics.clone()).collect();
        let sent_params: Vec<_> = out.iter().flat_map(|b| b.params.clone()).collect();
        assert_eq!(sent_metrics, metrics);
        assert_eq!(sent_params, params);
        // 250 params go 100 per request; the metrics fill the rest of each request.
        assert_eq!(out[0].params.len(), 100);
        assert_eq!(out[0].metrics.len(), 900);
        assert_eq!(out.len(), 3);
    }

    #[test]
    fn nothing_to_send_is_no_request() {
        assert!(batches(Vec::new(), Vec::new()).is_empty());
        assert_eq!(
            batches((0..1000).map(metric).collect(), Vec::new()).len(),
            1
        );
        assert_eq!(
            batches((0..1001).map(metric).collect(), Vec::new()).len(),
            2
        );
    }

    #[test]
    fn long_params_and_keys_are_clipped_on_a_character_boundary() {
        let long = "é".repeat(MAX_PARAM_VALUE + 10);
        let out = batches(Vec::new(), vec![("k".repeat(300), long)]);
        let (key, value) = &out[0].params[0];
        assert_eq!(key.chars().count(), MAX_KEY);
        assert_eq!(value.chars().count(), MAX_PARAM_VALUE);
    }

    #[test]
    fn the_body_is_what_the_rest_api_expects() {
        let batch = &batches(vec![metric(3)], vec![("lr".into(), "0.1".into())])[0];
        assert_eq!(
            batch.body("abc"),
            json!({"run_id": "abc",
                   "metrics": [{"key": "loss", "value": 3.0, "timestamp": 1, "step": 3}],
                   "params": [{"key": "lr", "value": "0.1"}], "tags": []})
        );
    }
}

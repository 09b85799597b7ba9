//! [`WatchTable`]: a model watch's latest figures per parameter (`giving_burn::ModelWatch`'s
//! events), for the dashboard's per-layer table.

use giving::Event;
use giving::vocab::{WatchEvent, keys};

/// One parameter's latest watched figures.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ParamStat {
    /// Its path in the module (`fc1.weight`).
    pub(crate) param: String,
    /// The step its latest figures were measured at.
    pub(crate) step: u64,
    /// ‖w‖ at that step.
    pub(crate) weight_norm: Option<f64>,
    /// ‖∇w‖ at that step.
    pub(crate) grad_norm: Option<f64>,
    /// ‖Δw‖/‖w‖ of the optimiser's latest measured step.
    pub(crate) update_ratio: Option<f64>,
    /// NaN and infinite elements of its weights and gradient at the latest watched step.
    pub(crate) nonfinite: u64,
}

/// Every watched parameter, in the order the watch gives them (the module's: forward order).
#[derive(Debug, Clone, Default)]
pub(crate) struct WatchTable {
    rows: Vec<ParamStat>,
}

impl WatchTable {
    /// Folds in `event` if it is a watch event; returns whether it was.
    pub(crate) fn observe(&mut self, event: &Event) -> bool {
        let Some(watched) = WatchEvent::of(event) else {
            return false;
        };
        let row = match self.rows.iter().position(|r| r.param == watched.param) {
            Some(i) => &mut self.rows[i],
            None => {
                self.rows.push(ParamStat {
                    param: watched.param.to_owned(),
                    step: watched.step,
                    weight_norm: None,
                    grad_norm: None,
                    update_ratio: None,
                    nonfinite: 0,
                });
                self.rows.last_mut().expect("just pushed")
            }
        };
        let number = |key| event.get_as::<f64>(key).ok();
        // A new watched step: the counts start over (weights and gradient add to them).
        if watched.step != row.step && watched.watch != "update" {
            row.step = watched.step;
            row.nonfinite = 0;
        }
        let nonfinite = number(keys::NANS).unwrap_or(0.0) + number(keys::INFS).unwrap_or(0.0);
        row.nonfinite += nonfinite as u64;
        match watched.watch {
            // An activation's own norm goes where a parameter's weights' does: the row is
            // named by its selector (`Cnn.forward > x`), which says what it is.
            "weight" | "act" => row.weight_norm = number(keys::NORM),
            "grad" => row.grad_norm = number(keys::NORM),
            "update" => row.update_ratio = number(keys::UPDATE_RATIO),
            _ => {}
        }
        true
    }

    /// The parameters, in the watch's order.
    pub(crate) fn rows(&self) -> &[ParamStat] {
        &self.rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn watched(step: u64, param: &str, watch: &str, key: &'static str, x: f64) -> Event {
        Event::builder()
            .field(keys::GLOBAL_STEP, step)
            .field(keys::PARAM, param)
            .field(keys::WATCH, watch)
            .field(key, x)
            .build()
    }

    #[test]
    fn a_row_per_parameter_in_the_watchs_order_with_its_latest_figures() {
        let mut table = WatchTable::default();
        assert!(!table.observe(&Event::builder().field(keys::LOSS, 1.0).build()));
        assert!(table.observe(&watched(0, "fc2.weight", "weight", keys::NORM, 2.0)));
        table.observe(&watched(0, "fc1.weight", "weight", keys::NORM, 3.0));
        table.observe(&watched(0, "fc2.weight", "grad", keys::NORM, 0.5));
        table.observe(&watched(
            1,
            "fc2.weight",
            "update",
            keys::UPDATE_RATIO,
            0.01,
        ));
        table.observe(&watched(100, "fc2.weight", "weight", keys::NORM, 2.5));
        let rows = table.rows();
        assert_eq!(rows.len(), 2);
        assert_eq!(
            rows[0],
            ParamStat {
                param: "fc2.weight".to_owned(),
                step: 100,
                weight_norm: Some(2.5),
                grad_norm: Some(0.5),
                update_ratio: Some(0.01),
                nonfinite: 0,
            }
        );
        assert_eq!(
            (rows[1].param.as_str(), rows[1].weight_norm),
            ("fc1.weight", Some(3.0))
        );
    }

    #[test]
    fn an_activation_is_a_row_named_by_its_selector_with_its_norm() {
        let mut table = WatchTable::default();
        table.observe(&watched(0, "Cnn.forward > x [1]", "act", keys::NORM, 7.5));
        let row = &table.rows()[0];
        assert_eq!(
            (row.param.as_str(), row.weight_norm, row.grad_norm),
            ("Cnn.forward > x [1]", Some(7.5), None)
        );
    }

    #[test]
    fn non_finite_counts_add_up_within_a_step_and_start_over_at_the_next() {
        let mut table = WatchTable::default();
        table.observe(&watched(10, "fc1.weight", "weight", keys::NANS, 3.0));
        table.observe(&watched(10, "fc1.weight", "grad", keys::INFS, 2.0));
        assert_eq!(table.rows()[0].nonfinite, 5);
        table.observe(&watched(20, "fc1.weight", "weight", keys::NANS, 0.0));
        assert_eq!(table.rows()[0].nonfinite, 0);
    }
}

//! [`Histograms`]: a model watch's histograms over time, per watched tensor
//! (`grad/fc1.weight`), at a bounded size, and the columns each client lacks: what the page's
//! "histogram over time" draws (TensorBoard's Distributions and Histograms tabs show the same
//! data: one histogram per step of one tag).

use std::collections::HashMap;

use giving::Event;
use giving::vocab::{WatchEvent, keys};
use serde_json::{Value as Json, json};

/// Columns (watched steps) kept per tensor: past it, every other column is dropped, so the
/// view spans the whole run at half the resolution (as a chart line is thinned).
const MAX_COLUMNS: usize = 128;
/// Tensors kept at most (a model with more parameters shows the first ones watched).
const MAX_TRACKS: usize = 256;
/// Bins kept per histogram at most (the watch's default is 30).
const MAX_BINS: usize = 512;

/// One watched step's histogram of one tensor: its finite elements counted in equal bins from
/// `min` to `max`.
#[derive(Debug, Clone, PartialEq)]
struct Column {
    /// Its place in the track's sequence, for the clients' cursors.
    seq: u64,
    step: u64,
    min: f64,
    max: f64,
    counts: Vec<f64>,
}

/// The histograms of one tensor, in step order.
#[derive(Debug, Clone)]
struct Track {
    label: String,
    columns: Vec<Column>,
    next_seq: u64,
    /// Bumped when columns are dropped: a client of an older generation gets them all again.
    generation: u64,
}

/// What a client was sent of one track: its generation and the next sequence number it lacks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HistCursor {
    generation: u64,
    next_seq: u64,
}

/// Every watched tensor's histograms over time; see the module doc.
#[derive(Debug, Clone, Default)]
pub(crate) struct Histograms {
    tracks: Vec<Track>,
    index: HashMap<String, usize>,
    /// Histograms not kept: of tensors past [`MAX_TRACKS`], or unreadable (the value is not a
    /// list of numbers, its range is not finite, or it has too many bins).
    refused: u64,
}

impl Histograms {
    /// Keeps the event's histogram if it is a model watch's (`{param, watch, hist, min,
    /// max}`); returns whether it was one.
    pub(crate) fn observe(&mut self, event: &Event) -> bool {
        let Some(watched) = WatchEvent::of(event) else {
            return false;
        };
        if !event.has(keys::HIST) {
            return false;
        }
        let Some(column) = read_column(event, watched.step) else {
            self.refused += 1;
            return true;
        };
        let label = watched.label();
        let index = match self.index.get(&label) {
            Some(&index) => index,
            None if self.tracks.len() < MAX_TRACKS => {
                self.tracks.push(Track {
                    label: label.clone(),
                    columns: Vec::new(),
                    next_seq: 0,
                    generation: 0,
                });
                self.index.insert(label, self.tracks.len() - 1);
                self.tracks.len() - 1
            }
            None => {
                self.refused += 1;
                return true;
            }
        };
        self.tracks[index].push(column);
        true
    }

    /// Histograms not kept: of tensors past the cap, or unreadable (shown in the page header).
    pub(crate) fn refused(&self) -> u64 {
        self.refused
    }

    /// The columns `cursors` (one per track, grown as tracks come) lack, as JSON, and moves
    /// them past; an empty list when the client has everything.
    pub(crate) fn delta(&self, cursors: &mut Vec<Option<HistCursor>>) -> Vec<Json> {
        cursors.resize(self.tracks.len(), None);
        let mut out = Vec::new();
        for (track, cursor) in self.tracks.iter().zip(cursors.iter_mut()) {
            let replace = cursor.is_none_or(|c| c.generation != track.generation);
            let from = if replace {
                0
            } else {
                cursor.map_or(0, |c| c.next_seq)
            };
            let columns: Vec<Json> = track
                .columns
                .iter()
                .filter(|c| c.seq >= from)
                .map(|c| json!({"step": c.step, "min": c.min, "max": c.max, "counts": c.counts}))
                .collect();
            if !replace && columns.is_empty() {
                continue;
            }
            out.push(json!({"label": track.label, "replace": replace, "columns": columns}));
            *cursor = Some(HistCursor {
                generation: track.generation,
                next_seq: track.next_seq,
            });
        }
        out
    }

    /// The steps kept of `label`'s histograms.
    #[cfg(test)]
    pub(crate) fn steps(&self, label: &str) -> Vec<u64> {
        self.index.get(label).map_or_else(Vec::new, |&i| {
            self.tracks[i].columns.iter().map(|c| c.step).collect()
        })
    }
}

impl Track {
    fn push(&mut self, mut column: Column) {
        if self.columns.len() == MAX_COLUMNS {
            // Every other one, the first kept; the newest follows below.
            let mut at = 0;
            self.columns.retain(|_| {
                at += 1;
                at % 2 == 1
            });
            self.generation += 1;
        }
        column.seq = self.next_seq;
        self.next_seq += 1;
        self.columns.push(column);
    }
}

/// The histogram of a watch event (its lazy values read here, off the training thread), or
/// `None` when it is not a readable one.
fn read_column(event: &Event, step: u64) -> Option<Column> {
    let counts = event.get_as::<Vec<f64>>(keys::HIST).ok()?;
    let min = event.get_as::<f64>(keys::MIN).ok()?;
    let max = event.get_as::<f64>(keys::MAX).ok()?;
    let readable = !counts.is_empty()
        && counts.len() <= MAX_BINS
        && counts.iter().all(|c| c.is_finite() && *c >= 0.0)
        && min.is_finite()
        && max.is_finite()
        && min <= max;
    readable.then_some(Column {
        seq: 0,
        step,
        min,
        max,
        counts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use giving::Value;

    fn watched(step: u64, param: &str, hist: Vec<f64>, min: f64, max: f64) -> Event {
        Event::new([
            (keys::GLOBAL_STEP, Value::from(step)),
            (keys::PARAM, Value::from(param)),
            (keys::WATCH, Value::from("grad")),
            (keys::MIN, Value::from(min)),
            (keys::MAX, Value::from(max)),
            (keys::HIST, Value::from(hist)),
        ])
    }

    #[test]
    fn a_client_gets_each_column_once_then_all_again_after_a_thinning() {
        let mut hists = Histograms::default();
        let mut client = Vec::new();
        assert!(hists.observe(&watched(0, "fc1.weight", vec![1.0, 3.0], -1.0, 1.0)));
        assert!(hists.observe(&watched(0, "fc2.weight", vec![2.0, 2.0], 0.0, 2.0)));
        let first = hists.delta(&mut client);
        assert_eq!(first.len(), 2);
        assert_eq!(first[0]["label"], "grad/fc1.weight");
        assert_eq!(first[0]["replace"], true);
        assert_eq!(first[0]["columns"][0]["counts"], json!([1.0, 3.0]));
        assert_eq!(first[0]["columns"][0]["min"], -1.0);
        assert!(hists.delta(&mut client).is_empty());
        hists.observe(&watched(100, "fc1.weight", vec![0.0, 4.0], -2.0, 2.0));
        let second = hists.delta(&mut client);
        assert_eq!(second.len(), 1);
        assert_eq!(second[0]["replace"], false);
        assert_eq!(second[0]["columns"].as_array().unwrap().len(), 1);
        assert_eq!(second[0]["columns"][0]["step"], 100);
        // Filled up: every other column goes, the client is sent the track whole.
        for step in 2..=MAX_COLUMNS as u64 {
            hists.observe(&watched(step * 100, "fc1.weight", vec![1.0, 1.0], 0.0, 1.0));
        }
        let steps = hists.steps("grad/fc1.weight");
        assert_eq!(steps.len(), MAX_COLUMNS / 2 + 1);
        assert_eq!(&steps[..3], [0, 200, 400]);
        assert_eq!(*steps.last().unwrap(), MAX_COLUMNS as u64 * 100);
        let third = hists.delta(&mut client);
        assert_eq!(third[0]["replace"], true);
        assert_eq!(
            third[0]["columns"].as_array().unwrap().len(),
            MAX_COLUMNS / 2 + 1
        );
    }

    #[test]
    fn unreadable_histograms_are_counted_and_other_events_ignored() {
        let mut hists = Histograms::default();
        assert!(!hists.observe(&Event::new([("loss", 0.5)])));
        assert!(hists.observe(&watched(0, "w", vec![1.0], f64::NAN, 1.0)));
        assert!(hists.observe(&watched(0, "w", vec![], 0.0, 1.0)));
        assert!(hists.observe(&watched(0, "w", vec![1.0], 2.0, 1.0)));
        assert_eq!(hists.refused(), 3);
        assert!(hists.delta(&mut Vec::new()).is_empty());
    }
}

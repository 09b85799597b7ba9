//! PredTuner's QoS models, which predict a configuration's QoS without running it.
//!
//! Both are built in an initialisation stage that applies each searched knob alone to each
//! layer (the exact activations entering each layer are computed once, so a pair costs a pass
//! of the layers from it onwards only):
//!
//! - `qos_p1` ([`QosPredictor::P1`]) records the change each pair makes to the network's output
//!   (the logits of every tuning image); a configuration's output is predicted as the exact
//!   output plus the sum of its layers' changes, and its QoS is the accuracy of that output.
//! - `qos_p2` ([`QosPredictor::P2`]) records each pair's QoS; a configuration's QoS is predicted
//!   as the exact QoS plus the sum of its layers' QoS changes (PredTuner's `QoSModelP2`).
//!
//! Either profile can be stored ([`ProfileStore`]): a later session loads it and runs only the
//! pairs it lacks, then stores the completed profile (PredTuner's `storage` argument).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use burn::prelude::Backend;
use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::network::{Dataset, Network, accuracy};
use crate::settings::QosModel;
use crate::tunable::Tunable;

/// Where a session's QoS-model profiles are stored: a folder, and a key naming the network,
/// its weights and the tuning data, so that a profile is reused only for the same three.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileStore {
    /// The folder of the profiles.
    pub dir: PathBuf,
    /// The key of the network, its weights and the tuning data.
    pub key: String,
}

impl ProfileStore {
    /// The file of `model`'s profile: `<dir>/<qos_p1|qos_p2>-<key>.json`.
    pub fn path(&self, model: QosModel) -> PathBuf {
        self.dir
            .join(format!("{}-{}.json", model_name(model), self.key))
    }
}

/// How a session got its QoS-model profile, as `configs.json` records it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProfileReport {
    /// The stored profile's file, if the session stores them.
    pub path: Option<PathBuf>,
    /// Whether a stored profile was loaded.
    pub loaded: bool,
    /// The (layer, knob) pairs run to build the profile (0 when everything was loaded).
    pub built: usize,
}

/// PredTuner's name of a QoS model.
fn model_name(model: QosModel) -> &'static str {
    match model {
        QosModel::Empirical => "empirical",
        QosModel::P1 => "qos_p1",
        QosModel::P2 => "qos_p2",
    }
}

/// A profile as stored: the exact network's entry and, per layer, each knob's (by id).
/// For P1 an entry is logits (the exact ones; a knob's change to them), for P2 a QoS.
#[derive(Debug, Serialize, Deserialize)]
struct Stored<E> {
    model: String,
    key: String,
    exact: E,
    layers: Vec<BTreeMap<String, E>>,
}

/// A QoS model with its profile.
#[derive(Debug, Clone)]
pub enum QosPredictor {
    /// `qos_p1`: logits changes summed.
    P1 {
        /// The exact network's logits.
        exact: Vec<f32>,
        /// `deltas[layer][knob]`: the change of the logits with that knob alone on that
        /// layer (empty for the baseline and for knobs not searched).
        deltas: Vec<Vec<Vec<f32>>>,
        /// The tuning set's labels.
        labels: Vec<u32>,
        /// Number of classes.
        classes: usize,
    },
    /// `qos_p2`: QoS changes summed.
    P2 {
        /// The exact network's QoS.
        exact: f64,
        /// `qos[layer][knob]`: the QoS with that knob alone on that layer.
        qos: Vec<Vec<f64>>,
    },
}

impl QosPredictor {
    /// The initialisation stage of `model` (P1 or P2) for the knobs `searched` (indices into
    /// the network's knobs): loads the stored profile if `store` has one, runs the missing
    /// (layer, knob) pairs on `data`, and stores the profile if it ran any.
    pub fn init<B: Backend, M: Tunable<B>>(
        model: QosModel,
        net: &Network<B, M>,
        data: &Dataset<B>,
        searched: &[usize],
        store: Option<&ProfileStore>,
    ) -> Result<(Self, ProfileReport), Error> {
        match model {
            QosModel::P1 => {
                let labels = data.labels().to_vec();
                let classes = data.classes();
                let (exact, deltas, report) = build(
                    model,
                    net,
                    data,
                    searched,
                    store,
                    |logits| Ok(logits.to_vec()),
                    |logits, exact| logits.iter().zip(exact).map(|(a, e)| a - e).collect(),
                )?;
                Ok((
                    QosPredictor::P1 {
                        exact,
                        deltas,
                        labels,
                        classes,
                    },
                    report,
                ))
            }
            QosModel::P2 => {
                let (labels, classes) = (data.labels(), data.classes());
                let qos_of = |logits: &[f32]| accuracy(logits, labels, classes);
                let (exact, qos, report) = build(
                    model,
                    net,
                    data,
                    searched,
                    store,
                    |logits| Ok(qos_of(logits)),
                    |logits, _| qos_of(logits),
                )?;
                Ok((QosPredictor::P2 { exact, qos }, report))
            }
            QosModel::Empirical => Err(Error::InvalidSetting(
                "the empirical QoS model has no profile".into(),
            )),
        }
    }

    /// The predicted QoS (accuracy in percent) of `config`.
    pub fn predict(&self, config: &[usize]) -> f64 {
        match self {
            QosPredictor::P1 {
                exact,
                deltas,
                labels,
                classes,
            } => {
                let mut logits = exact.clone();
                for (layer, &knob) in config.iter().enumerate() {
                    for (l, d) in logits.iter_mut().zip(&deltas[layer][knob]) {
                        *l += d;
                    }
                }
                accuracy(&logits, labels, *classes)
            }
            QosPredictor::P2 { exact, qos } => {
                let change: f64 = config
                    .iter()
                    .enumerate()
                    .filter(|(_, k)| **k != 0)
                    .map(|(layer, &knob)| qos[layer][knob] - exact)
                    .sum();
                exact + change
            }
        }
    }
}

/// The profile entries of the exact network and of every (layer, searched knob) pair: the
/// stored ones where `store` has them (for the same model and key), the others computed —
/// `exact_entry` of the exact logits, `entry` of a pair's logits and the exact entry — and
/// the whole stored again if any was computed. Entries of knobs not searched are defaults.
#[allow(clippy::type_complexity)]
fn build<B: Backend, M: Tunable<B>, E: Clone + Default + Serialize + for<'de> Deserialize<'de>>(
    model: QosModel,
    net: &Network<B, M>,
    data: &Dataset<B>,
    searched: &[usize],
    store: Option<&ProfileStore>,
    exact_entry: impl Fn(&[f32]) -> Result<E, Error>,
    entry: impl Fn(&[f32], &E) -> E,
) -> Result<(E, Vec<Vec<E>>, ProfileReport), Error> {
    let layers = net.layer_count();
    let knobs = net.knobs();
    let path = store.map(|s| s.path(model));
    let key = store.map(|s| s.key.clone()).unwrap_or_default();
    let stored: Option<Stored<E>> = match &path {
        Some(path) if path.is_file() => load(path)?
            .filter(|s: &Stored<E>| s.model == model_name(model) && s.key == key)
            .filter(|s| s.layers.len() == layers),
        _ => None,
    };
    let loaded = stored.is_some();
    let mut stored = match stored {
        Some(s) => s,
        None => {
            let baseline = vec![0; layers];
            Stored {
                model: model_name(model).to_owned(),
                key,
                exact: exact_entry(&net.logits(&baseline, data)?)?,
                layers: vec![BTreeMap::new(); layers],
            }
        }
    };
    let mut built = 0;
    for layer in 0..layers {
        let missing: Vec<usize> = searched
            .iter()
            .copied()
            .filter(|&k| k != 0 && !stored.layers[layer].contains_key(&knobs[k].id()))
            .collect();
        if missing.is_empty() {
            continue;
        }
        let inputs = net.inputs_at(layer, data);
        for knob in missing {
            let mut config = vec![0; layers];
            config[layer] = knob;
            let logits = net.logits_from(layer, &inputs, &config)?;
            let e = entry(&logits, &stored.exact);
            stored.layers[layer].insert(knobs[knob].id(), e);
            built += 1;
        }
    }
    if let Some(path) = &path
        && (built > 0 || !loaded)
    {
        save(path, &stored)?;
    }
    let table = stored
        .layers
        .iter()
        .map(|per_knob| {
            knobs
                .iter()
                .map(|k| per_knob.get(&k.id()).cloned().unwrap_or_default())
                .collect()
        })
        .collect();
    Ok((
        stored.exact,
        table,
        ProfileReport {
            path,
            loaded,
            built,
        },
    ))
}

/// A stored profile, or `None` if the file is not one (it is then rebuilt and overwritten).
fn load<E: for<'de> Deserialize<'de>>(path: &Path) -> Result<Option<Stored<E>>, Error> {
    let text = crate::error::read_text(path)?;
    Ok(serde_json::from_str(&text).ok())
}

fn save<E: Serialize>(path: &Path, stored: &Stored<E>) -> Result<(), Error> {
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let json = serde_json::to_string(stored).map_err(|e| Error::BadConfigs {
        path: path.to_path_buf(),
        what: format!("cannot encode the profile: {e}"),
    })?;
    // Written whole then renamed: a session stopped midway leaves no half profile behind.
    let partial = path.with_extension("json.partial");
    std::fs::write(&partial, json).map_err(io)?;
    std::fs::rename(&partial, path).map_err(io)
}

/// A stable 64-bit FNV-1a hash of `bytes` as 16 hex digits: the key of a stored profile
/// (stable across builds and Rust versions, unlike `std`'s hasher).
pub fn fnv1a_hex(parts: &[&[u8]]) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for &b in part.iter().chain(&[0xff]) {
            hash ^= u64::from(b);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    format!("{hash:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn p2_adds_the_qos_changes_of_each_layer() {
        // Exact 90; layer 0 knob 1 alone: 88; layer 1 knob 2 alone: 85.
        let model = QosPredictor::P2 {
            exact: 90.0,
            qos: vec![vec![0.0, 88.0, 0.0], vec![0.0, 0.0, 85.0]],
        };
        assert_eq!(model.predict(&[0, 0]), 90.0);
        assert_eq!(model.predict(&[1, 0]), 88.0);
        assert_eq!(model.predict(&[1, 2]), 83.0);
    }

    #[test]
    fn the_key_hash_is_fnv1a_and_separates_parts() {
        // FNV-1a 64 of the empty input is its offset basis; with the 0xff separator the
        // parts ("ab") and ("a", "b") differ.
        assert_ne!(fnv1a_hex(&[b"ab"]), fnv1a_hex(&[b"a", b"b"]));
        assert_eq!(fnv1a_hex(&[b"x"]), fnv1a_hex(&[b"x"]));
        assert_eq!(fnv1a_hex(&[]), "cbf29ce484222325");
    }
}

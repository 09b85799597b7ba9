//! How a burn-train metric's name becomes a giving key.

use burn_train::metric::store::Split;
use giving::vocab::keys;

/// The giving key of burn-train metric `name` reported for `split`.
///
/// The metrics the bundled loops give keep their vocabulary key (docs/events.md), so the
/// dashboard and the sinks treat a Learner run as they treat the bundled loops: `Loss` is
/// `loss` on the training split and `val_loss` on the validation split (the bundled loops'
/// validation loss), `Accuracy` is `accuracy` on the validation split and `train_accuracy`
/// on the others (the vocabulary's `accuracy` is validation accuracy; see [`metric_value`]
/// for its scale), `Learning Rate` is `lr`. Any other name is
/// lower-cased with every run of characters other than letters and digits made one `_`
/// (`CPU Usage` is `cpu_usage`).
///
/// ```
/// use burn_train::metric::store::Split;
/// use giving_burn::train::metric_key;
///
/// assert_eq!(metric_key("Loss", &Split::Train), "loss");
/// assert_eq!(metric_key("Loss", &Split::Valid), "val_loss");
/// assert_eq!(metric_key("Top-5 Accuracy", &Split::Train), "top_5_accuracy");
/// ```
pub fn metric_key(name: &str, split: &Split) -> String {
    match (name, split) {
        ("Loss", Split::Valid) => keys::VAL_LOSS.to_string(),
        ("Loss", _) => keys::LOSS.to_string(),
        ("Accuracy", Split::Valid) => keys::ACCURACY.to_string(),
        ("Accuracy", _) => keys::TRAIN_ACCURACY.to_string(),
        ("Learning Rate", _) => keys::LR.to_string(),
        _ => snake_case(name),
    }
}

/// `name` lower-cased, each run of non-alphanumeric characters one `_`, none at the ends.
fn snake_case(name: &str) -> String {
    let mut key = String::with_capacity(name.len());
    let mut gap = false;
    for c in name.chars() {
        if c.is_alphanumeric() {
            if gap && !key.is_empty() {
                key.push('_');
            }
            gap = false;
            key.extend(c.to_lowercase());
        } else {
            gap = true;
        }
    }
    key
}

/// The value giving gives for burn-train metric `name`'s value `value`: burn-train's
/// accuracies are percentages and the vocabulary's a fraction in `0..=1`, so `Accuracy` is
/// divided by 100; every other value is given as burn-train logs it.
///
/// ```
/// use giving_burn::train::metric_value;
///
/// assert_eq!(metric_value("Accuracy", 87.5), 0.875);
/// assert_eq!(metric_value("Loss", 0.25), 0.25);
/// ```
pub fn metric_value(name: &str, value: f64) -> f64 {
    match name {
        "Accuracy" => value / 100.0,
        _ => value,
    }
}

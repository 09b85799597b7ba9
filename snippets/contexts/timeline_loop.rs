//! A loop over epochs and batches with its step loss, and a model to evaluate.

pub struct Model;

pub fn evaluate(model: &Model) -> f64 {
    0.9
}

pub fn snippet() {
    let (epochs, batches, model) = (2, vec![1u32, 2, 3], Model);
    let step_loss = 0.5;
    // SNIPPET
}

#[test]
fn runs() {
    snippet();
}

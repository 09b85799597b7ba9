//! burn-train's Learner made with a watched optimiser: the snippet makes `learner` from the
//! context's `model`; the context trains it one epoch and counts the watch's statistics.

pub fn snippet(dir: &std::path::Path) -> anyhow::Result<usize> {
    use giving::prelude::*;

    let device = Default::default();
    let model = crate::support::Classifier::<crate::support::Train>::new(&device);
    let gv = giving::given();
    let norms = gv.spawn(gv.stream().where_(["norm"]).count());
    // SNIPPET
    let learner: burn_train::Learner<crate::support::ComponentsWith<_>> = learner;
    let train_loader = crate::support::loader::<crate::support::Train>(24, 4);
    let valid_loader = crate::support::loader::<burn::backend::Flex>(8, 4);
    burn_train::SupervisedTraining::new(dir, train_loader, valid_loader)
        .num_epochs(1)
        .with_application_logger(None)
        .launch(learner);
    gv.finish()?;
    Ok(norms.join()?)
}

#[test]
fn runs() {
    let dir = std::env::temp_dir().join(format!("giving-snippet-learner-{}", std::process::id()));
    let norms = snippet(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    // 6 steps, watched at step 0: the linear layer's weight and bias, weights and gradients.
    assert_eq!(norms.unwrap(), 4);
}

//! burn-train's Learner: a tiny classifier, its loaders and a directory for burn-train's files
//! (the Learner tests' own, `burn/tests/support`).

pub fn snippet(dir: &std::path::Path) -> anyhow::Result<()> {
    let device = Default::default();
    let train_loader = crate::support::loader::<crate::support::Train>(24, 4);
    let valid_loader = crate::support::loader::<burn::backend::Flex>(8, 4);
    let learner: burn_train::Learner<crate::support::Components> = burn_train::Learner::new(
        crate::support::Classifier::new(&device),
        burn::optim::SgdConfig::new().init(),
        0.05,
    );
    // SNIPPET
    Ok(())
}

//! For the runner's unit tests: a benchmark loaded from a one-entry YAML text.

use crate::config::{Bench, Placeholders, Suite};

/// The first benchmark of `yaml`, loaded as a file on a 1-CPU machine without GPUs.
pub(crate) fn bench(yaml: &str) -> Bench {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.yaml");
    std::fs::write(&file, yaml).unwrap();
    let placeholders = Placeholders {
        n_gpu: 0,
        n_cpu: 1,
        data: "d".into(),
        runs: "r".into(),
        giving: "giving".into(),
        ..Default::default()
    };
    Suite::load(&file, &placeholders).unwrap().benches.remove(0)
}

//! The bundled suites (`suites/*.yaml`) load, with the benchmarks the README promises.

use std::path::Path;

use giving_suite::config::{Placeholders, Plan, Selection, Suite};

fn load(name: &str, n_gpu: usize) -> Suite {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../suites")
        .join(name);
    let system = Placeholders {
        n_gpu,
        n_cpu: 2,
        data: "data".into(),
        runs: "runs".into(),
        giving: "/bin/giving".into(),
        ..Default::default()
    };
    Suite::load(file, &system).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn standard_runs_the_bundled_models_and_a_batch_size_matrix() {
    let suite = load("standard.yaml", 0);
    let names: Vec<_> = suite
        .selected(&Selection::default())
        .map(|b| b.name.as_str())
        .collect();
    assert_eq!(
        names,
        ["mlp", "cnn", "charlm", "mlp-bs16", "mlp-bs64", "mlp-bs256"]
    );
    let bs64 = &suite.benches[4];
    assert_eq!(bs64.command, ["/bin/giving", "train", "mlp"]);
    assert!(
        bs64.argv.windows(2).any(|w| w == ["--batch-size", "64"]),
        "{:?}",
        bs64.argv
    );
    assert_eq!(bs64.weight, 0.5);
    assert_eq!(bs64.early_stop.stop, Some(60));
    assert_eq!(bs64.plan, Plan::PerGpu);
    let vision: Vec<_> = suite
        .selected(&Selection::new(["vision"], [""; 0]))
        .map(|b| b.name.as_str())
        .collect();
    assert_eq!(vision, ["cnn"]);
}

#[test]
fn dev_is_one_short_mlp_run() {
    let suite = load("dev.yaml", 0);
    assert_eq!(suite.benches.len(), 1);
    assert_eq!(suite.benches[0].early_stop.stop, Some(3));
}

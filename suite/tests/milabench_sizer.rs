//! milabench's batch sizer: every benchmark of milabench's `config/scaling/default.yaml`
//! (copied unchanged) sized for three GPU memories, with a multiple of 8, none, and powers of
//! 2, equals what milabench's own `Sizer.auto_size` gives (`tests/data/milabench/sizes.json`,
//! recorded once; see the README there). Then the sizer through a suite: `auto_batch(…)` with
//! `options.sizer.auto`.

use std::path::{Path, PathBuf};

use giving_suite::config::{Placeholders, Scaling, Suite, SystemConfig, to_octet};

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/milabench")
}

/// One size milabench gave: benchmark, memory, multiple, power, batch size.
type Case = (String, String, Option<u64>, Option<u64>, i64);

#[test]
fn batch_sizes_equal_milabench_sizer() {
    let scaling = Scaling::load(&data().join("config/scaling/default.yaml")).unwrap();
    let text = std::fs::read_to_string(data().join("sizes.json")).unwrap();
    let cases: Vec<Case> = serde_json::from_str(&text).unwrap();
    assert!(cases.len() > 100, "{}", cases.len());
    let mut differences = Vec::new();
    for (bench, capacity, multiple, power, want) in cases {
        let got = scaling.size(&bench, to_octet(&capacity).unwrap(), multiple, power);
        if got != want {
            differences.push(format!(
                "{bench} {capacity} {multiple:?} {power:?}: milabench {want}, ours {got}"
            ));
        }
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

#[test]
fn auto_batch_is_sized_from_the_table_beside_the_suite() {
    let dir = tempfile::tempdir().unwrap();
    let system = dir.path().join("system.yaml");
    std::fs::write(
        &system,
        "system:\n  gpu: {capacity: 81920 MiB}\n  options: {sizer: {auto: 1}}\n  nodes: [{name: a, ip: 127.0.0.1}]\n",
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("scaling")).unwrap();
    std::fs::copy(
        data().join("config/scaling/default.yaml"),
        dir.path().join("scaling/default.yaml"),
    )
    .unwrap();
    let file = dir.path().join("s.yaml");
    std::fs::write(
        &file,
        "bert-fp16:\n  command: [x]\n  argv: {--batch-size: auto_batch(32)}\nunmeasured:\n  command: [x]\n  argv: [bs=auto_batch(32)]\n",
    )
    .unwrap();
    let placeholders = Placeholders {
        n_gpu: 1,
        n_cpu: 1,
        system: Some(SystemConfig::load(&system).unwrap()),
        ..Default::default()
    };
    let suite = Suite::load(&file, &placeholders).unwrap();
    // milabench: 104 for bert-fp16 on 80 GiB (sizes.json); 1 without measures.
    assert_eq!(suite.benches[0].argv, ["--batch-size", "104"]);
    assert_eq!(suite.benches[1].argv, ["bs=1"]);
}

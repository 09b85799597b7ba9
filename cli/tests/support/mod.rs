//! What the CLI's test binaries share: running the `giving` binary and reading what it printed.
// Each test binary includes this module and uses a part of it.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

/// The settings of a bundled MLP run small enough for a test: batches of 8 of 64 training
/// items, 16 validated.
pub const TINY_MLP: [&str; 7] = [
    "mlp",
    "--batch-size",
    "8",
    "--train-size",
    "64",
    "--valid-size",
    "16",
];

fn run(args: &[&str]) -> (Output, String) {
    run_in(args, Path::new("."))
}

fn run_in(args: &[&str], cwd: &Path) -> (Output, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_giving"))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("run the giving binary");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out, text)
}

/// Runs `giving ARGS`: whether it succeeded, and its stdout then stderr.
pub fn giving(args: &[&str]) -> (bool, String) {
    let (out, text) = run(args);
    (out.status.success(), text)
}

/// Runs `giving ARGS` in the folder `cwd`: whether it succeeded, and its stdout then stderr.
pub fn giving_in(args: &[&str], cwd: &Path) -> (bool, String) {
    let (out, text) = run_in(args, cwd);
    (out.status.success(), text)
}

/// Runs `giving ARGS`: its exit code (`None` if a signal ended it), and its stdout then stderr.
pub fn giving_code(args: &[&str]) -> (Option<i32>, String) {
    let (out, text) = run(args);
    (out.status.code(), text)
}

/// Runs `giving ARGS`, which must succeed: its stdout then stderr.
pub fn giving_ok(args: &[&str]) -> String {
    let (ok, text) = giving(args);
    assert!(ok, "giving {args:?}:\n{text}");
    text
}

/// Whether a Vulkan driver is installed (Mesa's software one in CI) for the wgpu tests.
pub fn vulkan_available() -> bool {
    ["/usr/share/vulkan/icd.d", "/etc/vulkan/icd.d"]
        .iter()
        .any(|dir| std::fs::read_dir(dir).is_ok_and(|mut entries| entries.next().is_some()))
}

/// `{stem}.json` of a suite run folder: how a benchmark process ended, as the runner wrote it.
pub fn outcome(dir: &Path, stem: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join(format!("{stem}.json"))).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The run folder `runs/{name}.{time}` of a suite run named `name` (there must be one).
pub fn run_folder(runs: &Path, name: &str) -> std::path::PathBuf {
    let prefix = format!("{name}.");
    let found: Vec<_> = std::fs::read_dir(runs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(&prefix)
        })
        .collect();
    assert_eq!(
        found.len(),
        1,
        "one run folder named {name} in {runs:?}: {found:?}"
    );
    found.into_iter().next().unwrap()
}

/// The knobs a tuning session searched, as its `configs.json` records them (`settings.knobs`).
pub fn searched_knobs(configs: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(configs).unwrap();
    let file: serde_json::Value = serde_json::from_str(&text).unwrap();
    file["settings"]["knobs"]
        .as_array()
        .expect("settings.knobs in configs.json")
        .iter()
        .map(|k| k.as_str().unwrap().to_owned())
        .collect()
}

//! Every crate of the workspace imports its modules one way: no module uses, directly or
//! through others, a module that uses it. A cycle fails its crate's test, naming each use that
//! closes it with its `file:line`.
//!
//! The sources are parsed with syn (docs/architecture.md, Crates): every `use` and every path
//! in code is followed through `crate::`, `super::`, `self::`, child modules, imported names
//! and re-exports down to the module that defines the name. A parent's `pub use` of its own
//! descendant is the facade pattern, not a use. Each crate also gets a test that plants a
//! cycle in memory and sees it reported, so a checker that found nothing cannot pass.

mod cycles;
mod graph;
mod rules;
mod tree;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use graph::{Edge, edges};
use tree::{ModulePath, Tree, read_crate};

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read_from_disk(file: &Path) -> Option<String> {
    std::fs::read_to_string(file).ok()
}

/// The crate rooted at `root` (relative to the workspace), read from disk.
fn crate_tree(root: &str) -> Tree {
    read_crate(&workspace().join(root), &workspace(), &read_from_disk)
        .unwrap_or_else(|e| panic!("{root}: {e}"))
}

fn assert_no_cycle(root: &str) {
    let tree = crate_tree(root);
    let edges = edges(&tree);
    let report = cycles::report(&edges);
    assert!(report.is_empty(), "{root}:\n{report}");
}

/// The modules that own a file (the first module read from it), the root first.
fn file_modules(tree: &Tree) -> Vec<(ModulePath, String)> {
    let mut seen = BTreeSet::new();
    let mut found: Vec<(ModulePath, String)> = tree
        .iter()
        .filter(|(_, module)| seen.insert(module.file.clone()))
        .map(|(path, module)| (path.clone(), module.file.clone()))
        .collect();
    found.sort_by_key(|(path, _)| path.len());
    found
}

fn use_line(target: &ModulePath) -> String {
    let mut path = vec!["crate".to_owned()];
    path.extend(target.iter().cloned());
    path.push("planted_by_the_test".to_owned());
    format!("\nuse {};\n", path.join("::"))
}

/// Plants `a uses b` and `b uses a` between two modules of the crate, in memory, and checks
/// that the cycle is reported with both places.
fn assert_planted_cycle_is_reported(root: &str) {
    let clean = crate_tree(root);
    let modules = file_modules(&clean);
    assert!(
        modules.len() >= 2,
        "{root} has {} module files",
        modules.len()
    );
    // Two modules deepest first, so the plant is not a parent and its own facade.
    let (a, a_file) = modules[modules.len() - 1].clone();
    let (b, b_file) = modules[modules.len() - 2].clone();
    let workspace = workspace();
    let planted = |file: &Path| {
        let text = read_from_disk(file)?;
        let relative = file.strip_prefix(&workspace).ok()?.display().to_string();
        Some(if relative == a_file {
            text + &use_line(&b)
        } else if relative == b_file {
            text + &use_line(&a)
        } else {
            text
        })
    };
    let tree = read_crate(&workspace.join(root), &workspace, &planted).expect("the crate reads");
    let report = cycles::report(&edges(&tree));
    let a_name = cycles::module_name(&a);
    let b_name = cycles::module_name(&b);
    assert!(
        report.contains(&format!("{a_name} uses {b_name} at {a_file}:"))
            && report.contains(&format!("{b_name} uses {a_name} at {b_file}:")),
        "the planted cycle between {a_name} and {b_name} was not reported:\n{report}"
    );
}

/// One pair of tests per crate: its graph is one-way, and a cycle planted in it is found.
macro_rules! crates {
    ($($name:ident: $root:literal),* $(,)?) => {
        const CHECKED_ROOTS: &[&str] = &[$($root),*];
        $(
            mod $name {
                #[test]
                fn imports_its_modules_without_cycles() {
                    super::assert_no_cycle($root);
                }

                #[test]
                fn a_planted_cycle_is_reported() {
                    super::assert_planted_cycle_is_reported($root);
                }
            }
        )*
    };
}

crates! {
    giving: "src/lib.rs",
    giving_operators: "operators/src/lib.rs",
    giving_macros: "macros/src/lib.rs",
    giving_log: "log/src/lib.rs",
    giving_instruments: "instruments/src/lib.rs",
    giving_burn: "burn/src/lib.rs",
    giving_models: "models/src/lib.rs",
    giving_suite: "suite/src/lib.rs",
    giving_nats: "nats/src/lib.rs",
    giving_tuner: "tuner/src/lib.rs",
    giving_cli: "cli/src/main.rs",
}

/// Crates of one module file (the snippets' crate: its modules are generated into a test):
/// nothing in them can form a cycle. Checked to stay so; one that grows moves to `crates!`.
const SINGLE_FILE_ROOTS: &[&str] = &["snippets/src/lib.rs"];

#[test]
fn single_file_crates_have_one_module_file() {
    for root in SINGLE_FILE_ROOTS {
        let modules = file_modules(&crate_tree(root));
        assert_eq!(modules.len(), 1, "{root}: move it to crates! ({modules:?})");
    }
}

/// The library and binary roots of every workspace member, as `cargo metadata` lists them.
fn workspace_roots() -> BTreeSet<String> {
    let output = std::process::Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--offline",
        ])
        .current_dir(workspace())
        .output()
        .expect("cargo metadata runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    let mut roots = BTreeSet::new();
    for package in metadata["packages"].as_array().expect("packages") {
        for target in package["targets"].as_array().expect("targets") {
            let kinds = target["kind"].as_array().expect("kinds");
            let is_root = kinds
                .iter()
                .any(|k| matches!(k.as_str(), Some("lib" | "proc-macro" | "bin")));
            if is_root {
                let path = Path::new(target["src_path"].as_str().expect("src_path"));
                let relative = path.strip_prefix(workspace()).unwrap_or(path);
                roots.insert(relative.display().to_string());
            }
        }
    }
    roots
}

#[test]
fn every_crate_of_the_workspace_is_checked() {
    let checked: BTreeSet<String> = CHECKED_ROOTS
        .iter()
        .chain(SINGLE_FILE_ROOTS)
        .map(|r| r.to_string())
        .collect();
    assert_eq!(
        workspace_roots(),
        checked,
        "add the new crate to crates! in this file"
    );
}

#[test]
fn a_parents_reexport_of_its_child_is_not_a_use_but_a_siblings_use_goes_to_the_definition() {
    let files = [
        ("lib.rs", "mod a;\nmod b;\npub use a::Thing;\n"),
        ("a.rs", "pub struct Thing;\n"),
        (
            "b.rs",
            "use crate::Thing;\nfn f() -> super::a::Thing { Thing }\n",
        ),
    ];
    let dir = std::env::temp_dir().join(format!("module-graph-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    for (name, text) in files {
        std::fs::write(dir.join(name), text).expect("a source file");
    }
    let tree = read_crate(&dir.join("lib.rs"), &dir, &read_from_disk).expect("reads");
    let found: Vec<(ModulePath, ModulePath)> = edges(&tree)
        .into_iter()
        .map(|Edge { from, to, .. }| (from, to))
        .collect();
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(found, vec![(vec!["b".to_owned()], vec!["a".to_owned()])]);
}

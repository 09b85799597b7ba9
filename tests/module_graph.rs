//! The core's modules import each other without cycles: the subscriber queue is a leaf, scope
//! state knows queues, routing knows scopes, and the public types sit on top. A `use` that
//! closes a cycle fails here, naming it.
//!
//! Imports are read from the sources: `crate::module` paths, and the root's re-exported names
//! (`crate::Event`) mapped back to the module that defines them through `lib.rs`'s `pub use`
//! lines. Comments are skipped (intra-doc links are not imports).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

fn code_lines(text: &str) -> String {
    text.lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The top-level module a source file belongs to (`keyed/where_.rs` → `keyed`).
fn module_of(relative: &Path) -> String {
    let first = relative.components().next().unwrap();
    let name = first.as_os_str().to_string_lossy();
    name.trim_end_matches(".rs").to_owned()
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Names re-exported by `lib.rs` → the module defining them.
fn reexports(lib: &str) -> BTreeMap<String, String> {
    let mut names = BTreeMap::new();
    let code = code_lines(lib);
    for statement in code.split(';') {
        let statement = statement.trim();
        let Some(rest) = statement.strip_prefix("pub use ") else {
            continue;
        };
        let Some((module, items)) = rest.split_once("::") else {
            continue;
        };
        let items = items.trim_matches(|c| c == '{' || c == '}');
        for item in items.split(',') {
            let item = item.trim();
            if !item.is_empty() {
                names.insert(item.to_owned(), module.trim().to_owned());
            }
        }
    }
    names
}

/// The top-level modules `code` imports through `crate::`.
fn imports(
    code: &str,
    modules: &BTreeSet<String>,
    names: &BTreeMap<String, String>,
) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        let mut idents = Vec::new();
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            idents.extend(
                group[..end]
                    .split(',')
                    .map(|s| s.trim().split("::").next().unwrap_or("").to_owned()),
            );
        } else {
            let end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            idents.push(rest[..end].to_owned());
        }
        for ident in idents {
            if modules.contains(&ident) {
                found.insert(ident);
            } else if let Some(module) = names.get(&ident) {
                found.insert(module.clone());
            }
        }
    }
    found
}

fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut cycle = path[at..].to_vec();
            cycle.push(node.to_owned());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    for node in graph.keys() {
        if let Some(cycle) = visit(node, graph, &mut Vec::new(), &mut done) {
            return Some(cycle);
        }
    }
    None
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    let names = reexports(&lib);
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let modules: BTreeSet<String> = files
        .iter()
        .map(|f| module_of(f.strip_prefix(&src).unwrap()))
        .filter(|m| m != "lib")
        .collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let module = module_of(file.strip_prefix(&src).unwrap());
        if module == "lib" {
            continue;
        }
        let code = code_lines(&std::fs::read_to_string(file).unwrap());
        let entry = graph.entry(module.clone()).or_default();
        entry.extend(
            imports(&code, &modules, &names)
                .into_iter()
                .filter(|m| *m != module),
        );
    }
    graph
}

#[test]
fn the_core_modules_import_each_other_without_cycles() {
    let graph = graph();
    assert!(graph.len() > 10, "the sources were not found: {graph:?}");
    if let Some(cycle) = find_cycle(&graph) {
        panic!("import cycle between core modules: {}", cycle.join(" -> "));
    }
}

#[test]
fn the_queue_is_a_leaf_and_routing_owns_the_registry() {
    let graph = graph();
    let queue = &graph["queue"];
    assert!(
        queue.iter().all(|m| m == "event"),
        "the subscriber queue must know events only, it imports {queue:?}"
    );
    assert!(
        !graph["scope"].contains("routing"),
        "scope state must not route: {:?}",
        graph["scope"]
    );
    assert!(!graph["scope"].contains("stream"), "{:?}", graph["scope"]);
}

#[test]
fn a_cycle_is_found_when_there_is_one() {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    graph.entry("a".into()).or_default().insert("b".into());
    graph.entry("b".into()).or_default().insert("c".into());
    graph.entry("c".into()).or_default().insert("a".into());
    assert_eq!(find_cycle(&graph).unwrap(), ["a", "b", "c", "a"]);
}

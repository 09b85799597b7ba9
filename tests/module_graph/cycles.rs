//! Cycles of the module graph: its strongly connected components (Tarjan's algorithm), each
//! written as the edges that close it, with the place each use is written.

use std::collections::BTreeMap;

use crate::graph::Edge;
use crate::tree::ModulePath;

/// The groups of modules that use each other, directly or not; each group has two modules or
/// more, and its modules are sorted.
pub fn cycles(edges: &[Edge]) -> Vec<Vec<ModulePath>> {
    let mut next: BTreeMap<&ModulePath, Vec<&ModulePath>> = BTreeMap::new();
    for edge in edges {
        next.entry(&edge.from).or_default().push(&edge.to);
        next.entry(&edge.to).or_default();
    }
    let mut search = Tarjan {
        next: &next,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        counter: 0,
        groups: Vec::new(),
    };
    for node in next.keys() {
        if !search.index.contains_key(node) {
            search.visit(node);
        }
    }
    let mut groups: Vec<Vec<ModulePath>> = search
        .groups
        .into_iter()
        .filter(|g| g.len() > 1)
        .map(|g| {
            let mut group: Vec<ModulePath> = g.into_iter().cloned().collect();
            group.sort();
            group
        })
        .collect();
    groups.sort();
    groups
}

struct Tarjan<'a> {
    next: &'a BTreeMap<&'a ModulePath, Vec<&'a ModulePath>>,
    index: BTreeMap<&'a ModulePath, usize>,
    low: BTreeMap<&'a ModulePath, usize>,
    stack: Vec<&'a ModulePath>,
    counter: usize,
    groups: Vec<Vec<&'a ModulePath>>,
}

impl<'a> Tarjan<'a> {
    fn visit(&mut self, node: &'a ModulePath) {
        self.index.insert(node, self.counter);
        self.low.insert(node, self.counter);
        self.counter += 1;
        self.stack.push(node);
        for &successor in &self.next[node] {
            if !self.index.contains_key(successor) {
                self.visit(successor);
                let low = self.low[node].min(self.low[successor]);
                self.low.insert(node, low);
            } else if self.stack.contains(&successor) {
                let low = self.low[node].min(self.index[successor]);
                self.low.insert(node, low);
            }
        }
        if self.low[node] == self.index[node] {
            let mut group = Vec::new();
            while let Some(member) = self.stack.pop() {
                group.push(member);
                if member == node {
                    break;
                }
            }
            self.groups.push(group);
        }
    }
}

/// `crate::a::b` for a module path.
pub fn module_name(path: &ModulePath) -> String {
    std::iter::once("crate")
        .chain(path.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join("::")
}

/// One paragraph per cycle: each use between its modules, `X uses Y at file:line`.
pub fn report(edges: &[Edge]) -> String {
    let mut text = String::new();
    for group in cycles(edges) {
        let names: Vec<String> = group.iter().map(module_name).collect();
        text.push_str(&format!("cycle between {}:\n", names.join(", ")));
        for edge in edges {
            if group.contains(&edge.from) && group.contains(&edge.to) {
                text.push_str(&format!(
                    "  {} uses {} at {}:{}\n",
                    module_name(&edge.from),
                    module_name(&edge.to),
                    edge.site.file,
                    edge.site.line
                ));
            }
        }
    }
    text
}

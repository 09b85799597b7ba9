//! The docs link only what the repository holds: every relative markdown link in README.md and
//! docs/ names a file that exists (and, with `#anchor`, a heading of that file), and every
//! `NAME.md` that a doc, a source file or a manifest mentions is a file of the repository.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Files under `dir` (recursively) whose name ends with one of `suffixes`, skipping build
/// output and hidden folders.
fn files_under(dir: &Path, suffixes: &[&str], found: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if !name.starts_with('.') && name != "target" {
                files_under(&path, suffixes, found);
            }
        } else if suffixes.iter().any(|s| name.ends_with(s)) {
            found.push(path);
        }
    }
}

fn markdown_files() -> Vec<PathBuf> {
    let root = workspace();
    let mut found = vec![root.join("README.md")];
    files_under(&root.join("docs"), &[".md"], &mut found);
    found
}

/// The text outside fenced code blocks, line by line with 1-based line numbers.
fn prose_lines(text: &str) -> Vec<(usize, &str)> {
    let mut fenced = false;
    let mut lines = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            lines.push((index + 1, line));
        }
    }
    lines
}

/// GitHub's anchor for a heading: lower case, punctuation other than `-` and `_` dropped,
/// spaces turned into `-`.
fn anchor_of(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

fn anchors(markdown: &str) -> BTreeSet<String> {
    prose_lines(markdown)
        .into_iter()
        .filter_map(|(_, line)| line.strip_prefix('#'))
        .map(|rest| anchor_of(rest.trim_start_matches('#')))
        .collect()
}

/// The targets of inline links `[text](target)` on one line.
fn link_targets(line: &str) -> Vec<&str> {
    let mut targets = Vec::new();
    let mut rest = line;
    while let Some(start) = rest.find("](") {
        let after = &rest[start + 2..];
        let Some(end) = after.find(')') else { break };
        targets.push(after[..end].trim());
        rest = &after[end..];
    }
    targets
}

/// Checks one link of `file`; returns the problem, if any.
fn check_link(file: &Path, target: &str) -> Option<String> {
    if target.contains("://") || target.starts_with("mailto:") {
        return None;
    }
    let (path_part, anchor) = match target.split_once('#') {
        Some((path, anchor)) => (path, Some(anchor)),
        None => (target, None),
    };
    let linked = if path_part.is_empty() {
        file.to_path_buf()
    } else {
        file.parent()?.join(path_part)
    };
    if !linked.exists() {
        return Some(format!("links {target}, which is not in the repository"));
    }
    let anchor = anchor.filter(|a| !a.is_empty())?;
    if linked.extension().is_some_and(|e| e == "md") {
        let text = fs::read_to_string(&linked).ok()?;
        if !anchors(&text).contains(anchor) {
            return Some(format!(
                "links {target}, but that file has no heading #{anchor}"
            ));
        }
    }
    None
}

fn relative(path: &Path) -> String {
    path.strip_prefix(workspace())
        .unwrap_or(path)
        .display()
        .to_string()
}

/// Every relative link of README.md and docs/ reaches a file (and heading) of the repository.
fn broken_links() -> Vec<String> {
    let mut problems = Vec::new();
    for file in markdown_files() {
        let text = fs::read_to_string(&file).expect("a doc reads");
        for (number, line) in prose_lines(&text) {
            for target in link_targets(line) {
                if let Some(problem) = check_link(&file, target) {
                    problems.push(format!("{}:{number} {problem}", relative(&file)));
                }
            }
        }
    }
    problems
}

#[test]
fn every_relative_link_of_the_docs_reaches_a_file_of_the_repository() {
    let problems = broken_links();
    assert!(
        problems.is_empty(),
        "broken links:\n{}",
        problems.join("\n")
    );
}

/// Words ending in `.md` in `text` (a path such as `docs/events.md` or a bare `DESIGN.md`).
fn mentioned_markdown(text: &str) -> Vec<String> {
    let is_path_char = |c: char| c.is_alphanumeric() || matches!(c, '/' | '_' | '-' | '.');
    text.split(|c: char| !is_path_char(c))
        .map(|word| word.trim_end_matches('.'))
        .filter(|word| word.len() > 3 && word.ends_with(".md") && !word.starts_with('.'))
        .map(str::to_owned)
        .collect()
}

/// Whether a mention names a file of the repository: as written from the workspace root, from
/// the mentioning file's folder, or (a bare name) as a file anywhere in it.
fn mention_resolves(mention: &str, mentioned_in: &Path, all_markdown: &BTreeSet<String>) -> bool {
    let root = workspace();
    if root.join(mention).exists()
        || mentioned_in
            .parent()
            .is_some_and(|dir| dir.join(mention).exists())
    {
        return true;
    }
    !mention.contains('/') && all_markdown.contains(mention)
}

#[test]
fn every_markdown_file_the_repository_mentions_is_in_it() {
    let root = workspace();
    let mut markdown = Vec::new();
    files_under(&root, &[".md"], &mut markdown);
    let names: BTreeSet<String> = markdown
        .iter()
        .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    let mut sources = Vec::new();
    files_under(
        &root,
        &[".md", ".rs", ".toml", ".sh", ".yaml"],
        &mut sources,
    );
    sources.push(root.join(".ci/run"));
    // This file names missing files on purpose, to show they are reported.
    sources.retain(|file| !file.ends_with("tests/doc_links.rs"));
    let mut problems = Vec::new();
    for file in sources {
        let Ok(text) = fs::read_to_string(&file) else {
            continue;
        };
        for (number, line) in text.lines().enumerate() {
            for mention in mentioned_markdown(line) {
                if !mention_resolves(&mention, &file, &names) {
                    problems.push(format!(
                        "{}:{} mentions {mention}, which is not in the repository",
                        relative(&file),
                        number + 1
                    ));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn a_missing_file_and_a_missing_heading_are_reported() {
    let readme = workspace().join("README.md");
    assert!(check_link(&readme, "docs/architecture.md").is_none());
    assert!(check_link(&readme, "docs/architecture.md#crates").is_none());
    let missing = check_link(&readme, "docs/nowhere.md").expect("a missing file is reported");
    assert!(missing.contains("docs/nowhere.md"), "{missing}");
    let heading = check_link(&readme, "docs/architecture.md#no-such-heading")
        .expect("a missing heading is reported");
    assert!(heading.contains("#no-such-heading"), "{heading}");
    assert_eq!(
        mentioned_markdown("see DESIGN.md, and docs/events.md."),
        vec!["DESIGN.md", "docs/events.md"]
    );
    assert_eq!(
        anchor_of(" Settings, and how: to add one"),
        "settings-and-how-to-add-one"
    );
}

//! `--select` and `--exclude`: choosing benchmarks by name or tag.

use super::Bench;

/// Which benchmarks run: those named or tagged by one of `select` (every one when it is
/// empty), minus those named or tagged by one of `exclude`.
///
/// ```
/// use giving_suite::config::Selection;
///
/// let selection = Selection::new(["vision", "mlp"], ["slow"]);
/// assert!(!selection.is_everything());
/// ```
#[derive(Debug, Clone, Default)]
pub struct Selection {
    select: Vec<String>,
    exclude: Vec<String>,
}

impl Selection {
    /// Names or tags to keep and to leave out; a comma-separated item counts as several.
    pub fn new<S: AsRef<str>, E: AsRef<str>>(
        select: impl IntoIterator<Item = S>,
        exclude: impl IntoIterator<Item = E>,
    ) -> Self {
        fn split<T: AsRef<str>>(items: impl IntoIterator<Item = T>) -> Vec<String> {
            items
                .into_iter()
                .flat_map(|s| {
                    s.as_ref()
                        .split(',')
                        .map(|p| p.trim().to_owned())
                        .collect::<Vec<_>>()
                })
                .filter(|s| !s.is_empty())
                .collect()
        }
        Self {
            select: split(select),
            exclude: split(exclude),
        }
    }

    /// Whether nothing is selected or excluded.
    pub fn is_everything(&self) -> bool {
        self.select.is_empty() && self.exclude.is_empty()
    }

    /// Whether `bench` runs: a word matches its name, a tag, or, as milabench's
    /// `selection_keys`, its group, install group or definition folder's name.
    pub fn accepts(&self, bench: &Bench) -> bool {
        let folder = bench
            .definition
            .as_ref()
            .and_then(|d| d.file_name())
            .map(|n| n.to_string_lossy());
        let matches = |word: &String| {
            bench.name == *word
                || bench.tags.contains(word)
                || bench.group == *word
                || bench.install_group == *word
                || folder.as_deref() == Some(word.as_str())
        };
        (self.select.is_empty() || self.select.iter().any(matches))
            && !self.exclude.iter().any(matches)
    }
}

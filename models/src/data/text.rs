//! The bundled public-domain text and a character-level vocabulary.

use crate::rng::Rng;

/// The bundled training text (`models/data/corpus.txt`): six of Shakespeare's sonnets and the
/// Gettysburg Address, all in the public domain (about 5 KB).
pub const CORPUS: &str = include_str!("../../data/corpus.txt");

/// A character vocabulary: the sorted distinct characters of a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CharVocab {
    chars: Vec<char>,
}

impl CharVocab {
    /// Builds the vocabulary of `text`.
    pub fn from_text(text: &str) -> Self {
        let mut chars: Vec<char> = text.chars().collect();
        chars.sort_unstable();
        chars.dedup();
        Self { chars }
    }

    /// Number of distinct characters.
    pub fn len(&self) -> usize {
        self.chars.len()
    }

    /// Whether the vocabulary is empty.
    pub fn is_empty(&self) -> bool {
        self.chars.is_empty()
    }

    /// The token of `c`, if `c` is in the vocabulary.
    pub fn token(&self, c: char) -> Option<u32> {
        self.chars.binary_search(&c).ok().map(|i| i as u32)
    }

    /// Encodes `text`, skipping characters outside the vocabulary.
    pub fn encode(&self, text: &str) -> Vec<u32> {
        text.chars().filter_map(|c| self.token(c)).collect()
    }

    /// Decodes tokens; out-of-range tokens become `?`.
    pub fn decode(&self, tokens: &[u32]) -> String {
        tokens
            .iter()
            .map(|&t| self.chars.get(t as usize).copied().unwrap_or('?'))
            .collect()
    }
}

/// A tokenised text split into a training part and a validation tail.
#[derive(Debug, Clone)]
pub struct TextData {
    /// The vocabulary of the whole text.
    pub vocab: CharVocab,
    /// Tokens of the training part.
    pub train: Vec<u32>,
    /// Tokens of the validation part (the last `val_fraction` of the text).
    pub valid: Vec<u32>,
}

impl TextData {
    /// Tokenises `text` and keeps its last `val_fraction` (clamped to `[0, 0.5]`) for validation.
    pub fn new(text: &str, val_fraction: f64) -> Self {
        let vocab = CharVocab::from_text(text);
        let tokens = vocab.encode(text);
        let n_val = (tokens.len() as f64 * val_fraction.clamp(0.0, 0.5)) as usize;
        let split = tokens.len() - n_val;
        Self {
            vocab,
            train: tokens[..split].to_vec(),
            valid: tokens[split..].to_vec(),
        }
    }

    /// The bundled corpus, with its last 10% for validation.
    pub fn bundled() -> Self {
        Self::new(CORPUS, 0.1)
    }
}

/// Cuts `batch` windows of `seq_len + 1` tokens from `tokens`, at offsets drawn from `rng`
/// (or evenly spread when `rng` is `None`), and returns `(inputs, targets)`, both
/// `batch × seq_len` row-major, the targets being the inputs shifted by one.
///
/// Returns `None` if `tokens` is shorter than `seq_len + 1`.
pub fn windows(
    tokens: &[u32],
    batch: usize,
    seq_len: usize,
    rng: Option<&mut Rng>,
) -> Option<(Vec<i64>, Vec<i64>)> {
    let span = tokens.len().checked_sub(seq_len + 1)? + 1;
    let mut inputs = Vec::with_capacity(batch * seq_len);
    let mut targets = Vec::with_capacity(batch * seq_len);
    let mut rng = rng;
    for b in 0..batch {
        let start = match rng.as_deref_mut() {
            Some(rng) => rng.below(span),
            None => b * span / batch.max(1),
        };
        let w = &tokens[start..start + seq_len + 1];
        inputs.extend(w[..seq_len].iter().map(|&t| i64::from(t)));
        targets.extend(w[1..].iter().map(|&t| i64::from(t)));
    }
    Some((inputs, targets))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corpus_round_trips() {
        let data = TextData::bundled();
        assert!(CORPUS.len() > 4000);
        assert!(data.vocab.len() > 30 && data.vocab.len() < 80);
        let all: Vec<u32> = data.train.iter().chain(&data.valid).copied().collect();
        assert_eq!(data.vocab.decode(&all), CORPUS);
    }

    #[test]
    fn windows_shift_by_one() {
        let tokens: Vec<u32> = (0..100).collect();
        let (x, y) = windows(&tokens, 4, 8, Some(&mut Rng::new(1))).unwrap();
        assert_eq!(x.len(), 32);
        for (a, b) in x.iter().zip(&y) {
            assert_eq!(a + 1, *b);
        }
        assert!(windows(&tokens[..5], 1, 8, None).is_none());
        let (x, _) = windows(&tokens, 2, 99, None).unwrap();
        assert_eq!(x[0], 0);
    }
}

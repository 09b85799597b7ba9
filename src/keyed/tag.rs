use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use super::KeyedOp;
use crate::event::Fields;
use crate::vocab::keys::{TAG_GROUP, TAG_WORD};
use crate::{Event, Key, Value};

/// Operator of [`tag`](super::EventStreamOps::tag) and
/// [`tag_group`](super::EventStreamOps::tag_group): adds a unique word to each event.
#[derive(Debug, Clone)]
pub struct Tag {
    group: Option<Value>,
    counter: Arc<AtomicU64>,
}

impl Tag {
    pub(crate) fn new(group: &str) -> Self {
        Self {
            group: (!group.is_empty()).then(|| Value::from(group)),
            counter: group_counter(group),
        }
    }
}

/// The word sequence of a group, shared by every `tag` of that group in the process, so words
/// are unique within a group (as breakword's groups in Python giving).
fn group_counter(group: &str) -> Arc<AtomicU64> {
    static GROUPS: OnceLock<Mutex<HashMap<String, Arc<AtomicU64>>>> = OnceLock::new();
    let mut groups = GROUPS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    Arc::clone(groups.entry(group.to_owned()).or_default())
}

const CONSONANTS: &[u8; 16] = b"bdfghjklmnprstvz";
const VOWELS: &[u8; 5] = b"aeiou";
const SYLLABLES: u64 = 80;

/// The `n`-th word of a sequence: three syllables (`"kavomi"`) for the first 512 000, then
/// four, and so on. Distinct `n` give distinct words; consecutive `n` give unrelated words, so
/// that nearby events are easy to tell apart.
pub(crate) fn tag_word(n: u64) -> String {
    let mut syllables = 3u32;
    let mut n = n;
    while let Some(space) = SYLLABLES.checked_pow(syllables) {
        if n < space {
            // A bijection of 0..space: multiplication by a number prime to 80 (2⁴·5).
            n = ((u128::from(n) * 48_271) % u128::from(space)) as u64;
            break;
        }
        n -= space;
        syllables += 1;
    }
    let mut word = Vec::with_capacity(2 * syllables as usize);
    for _ in 0..syllables {
        let syllable = (n % SYLLABLES) as usize;
        n /= SYLLABLES;
        word.push(CONSONANTS[syllable % 16]);
        word.push(VOWELS[syllable / 16]);
    }
    String::from_utf8(word).expect("ASCII")
}

impl KeyedOp<Event> for Tag {
    type Out = Event;

    fn apply(&mut self, event: Event) -> Option<Event> {
        let word = tag_word(self.counter.fetch_add(1, Ordering::Relaxed));
        let mut fields = Fields::new();
        fields.push((Key::from_static(TAG_WORD), Value::from(word)));
        for (key, value) in event.fields() {
            if key != TAG_WORD && !(self.group.is_some() && key == TAG_GROUP) {
                fields.push((key.clone(), value.clone()));
            }
        }
        if let Some(group) = &self.group {
            fields.push((Key::from_static(TAG_GROUP), group.clone()));
        }
        Some(Event::from_parts(fields, event.time(), event.origin()))
    }
}

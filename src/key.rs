//! [`Key`]: a field's name in two words, a `&'static str` or a shared `Arc<str>`.

use std::borrow::{Borrow, Cow};
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;
use std::ops::Deref;
use std::ptr::NonNull;
use std::sync::Arc;

/// The length's top bit: set when the name is an `Arc<str>` this key holds a count of. A
/// `str` is never longer than `isize::MAX` bytes, so the bit is free.
const SHARED: usize = 1 << (usize::BITS - 1);

/// A field name: the names that [`give!`](macro@crate::give) takes from source code are
/// `&'static str` and cost no allocation; a name made at run time (a `String`) is kept in an
/// `Arc<str>`, so cloning a key — and the event that holds it — never copies the text.
///
/// Two words (16 bytes) where a `Cow<'static, str>` takes three: a field is 48 bytes, and an
/// event of two fields fits its header and fields on two cache lines
/// (docs/architecture.md, "A compact event"). It reads as a `str` (`Deref`), compares, hashes
/// and orders as its text, and converts from what a `Cow<'static, str>` did (a
/// `&'static str`, a `String`, a `Cow<'static, str>`) and from an `Arc<str>`.
///
/// ```
/// use giving::Key;
///
/// let given = Key::from_static("loss");
/// let made = Key::from(format!("lo{}", "ss"));
/// assert_eq!(given, made);
/// assert_eq!(made, "loss");
/// assert_eq!(made.len(), 4);
/// assert!(given.is_static() && !made.is_static());
/// assert_eq!(std::mem::size_of::<Key>(), 16);
/// ```
pub struct Key {
    /// The text's first byte: a `&'static str`'s, or the data of an `Arc<str>` (its
    /// `Arc::into_raw`) when the length has [`SHARED`] set.
    ptr: NonNull<u8>,
    /// The text's length in bytes, with [`SHARED`] set for an `Arc<str>`.
    tagged_len: usize,
    /// Owns (a count of) an `Arc<str>`: `Send`/`Sync` follow from it.
    _owns: PhantomData<Arc<str>>,
}

impl Key {
    /// A key naming `text`, with no allocation (what `give!` makes of its field names).
    #[inline(always)]
    pub const fn from_static(text: &'static str) -> Self {
        // SAFETY: a reference's address is never null.
        let ptr = unsafe { NonNull::new_unchecked(text.as_ptr().cast_mut()) };
        Self {
            ptr,
            tagged_len: text.len(),
            _owns: PhantomData,
        }
    }

    /// A key holding (a count of) `text`.
    pub fn from_shared(text: Arc<str>) -> Self {
        let len = text.len();
        let raw = Arc::into_raw(text).cast::<u8>().cast_mut();
        // SAFETY: `Arc::into_raw` never returns null.
        let ptr = unsafe { NonNull::new_unchecked(raw) };
        Self {
            ptr,
            tagged_len: len | SHARED,
            _owns: PhantomData,
        }
    }

    /// Whether the text is a `&'static str` (the key owns nothing: dropping it frees nothing).
    #[inline(always)]
    pub const fn is_static(&self) -> bool {
        self.tagged_len & SHARED == 0
    }

    /// The text.
    #[inline(always)]
    pub fn as_str(&self) -> &str {
        let len = self.tagged_len & !SHARED;
        // SAFETY: `ptr` and `len` are those of a `&'static str` or of an `Arc<str>` this key
        // holds a count of, alive as long as `self`; either is valid UTF-8.
        unsafe { std::str::from_utf8_unchecked(std::slice::from_raw_parts(self.ptr.as_ptr(), len)) }
    }

    /// The `*const str` that `Arc::into_raw` gave, for a shared key.
    fn shared_ptr(&self) -> *const str {
        std::ptr::slice_from_raw_parts(self.ptr.as_ptr().cast_const(), self.tagged_len & !SHARED)
            as *const str
    }
}

// SAFETY: a key is a `&'static str` or a counted `Arc<str>`, both `Send` and `Sync`; the
// count is only changed through `Arc`'s own (atomic) functions.
unsafe impl Send for Key {}
// SAFETY: as for `Send`: `&Key` only reads the text.
unsafe impl Sync for Key {}

impl Clone for Key {
    #[inline]
    fn clone(&self) -> Self {
        if !self.is_static() {
            // SAFETY: this key holds a count of the `Arc<str>` at `shared_ptr`, so it is alive;
            // the new key holds the count added here.
            unsafe { Arc::increment_strong_count(self.shared_ptr()) };
        }
        Self {
            ptr: self.ptr,
            tagged_len: self.tagged_len,
            _owns: PhantomData,
        }
    }
}

impl Drop for Key {
    #[inline]
    fn drop(&mut self) {
        if !self.is_static() {
            // SAFETY: this key holds one count of the `Arc<str>` at `shared_ptr`, given back
            // once, here.
            unsafe { Arc::decrement_strong_count(self.shared_ptr()) };
        }
    }
}

impl Deref for Key {
    type Target = str;

    #[inline(always)]
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Key {
    #[inline(always)]
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl Borrow<str> for Key {
    #[inline(always)]
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl Default for Key {
    /// The empty name.
    fn default() -> Self {
        Self::from_static("")
    }
}

impl From<&'static str> for Key {
    #[inline(always)]
    fn from(text: &'static str) -> Self {
        Self::from_static(text)
    }
}

impl From<String> for Key {
    fn from(text: String) -> Self {
        Self::from_shared(Arc::from(text))
    }
}

impl From<Arc<str>> for Key {
    fn from(text: Arc<str>) -> Self {
        Self::from_shared(text)
    }
}

impl From<Cow<'static, str>> for Key {
    fn from(text: Cow<'static, str>) -> Self {
        match text {
            Cow::Borrowed(text) => Self::from_static(text),
            Cow::Owned(text) => Self::from(text),
        }
    }
}

impl From<Key> for String {
    fn from(key: Key) -> Self {
        key.as_str().to_owned()
    }
}

impl PartialEq for Key {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        same_text(self.as_str(), other.as_str())
    }
}

impl Eq for Key {}

impl PartialEq<str> for Key {
    #[inline]
    fn eq(&self, other: &str) -> bool {
        same_text(self.as_str(), other)
    }
}

impl PartialEq<&str> for Key {
    #[inline]
    fn eq(&self, other: &&str) -> bool {
        same_text(self.as_str(), other)
    }
}

impl PartialEq<String> for Key {
    #[inline]
    fn eq(&self, other: &String) -> bool {
        same_text(self.as_str(), other)
    }
}

impl PartialEq<Key> for str {
    #[inline]
    fn eq(&self, other: &Key) -> bool {
        same_text(self, other.as_str())
    }
}

impl PartialEq<Key> for &str {
    #[inline]
    fn eq(&self, other: &Key) -> bool {
        same_text(self, other.as_str())
    }
}

/// Whether two names are the same text. A lookup by name (`Event::get`, a keyed operator)
/// compares the name asked for with each field's key in turn; through `str`'s `==` each
/// comparison of equal lengths is a call to libc's `memcmp` (about 20 instructions: a
/// two-field lookup cost a reader ~100 instructions, more than taking the event). Here the
/// same address (a literal that `give!` and the reader share) is equal at once, and a name of
/// up to 16 bytes is compared in two loads per side, inline.
#[inline(always)]
fn same_text(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let len = a.len();
    if len != b.len() {
        return false;
    }
    if a.as_ptr() == b.as_ptr() {
        return true;
    }
    // Two loads that may overlap cover every byte: the first and the last word of each.
    match len {
        0 => true,
        1..=3 => a[0] == b[0] && a[len / 2] == b[len / 2] && a[len - 1] == b[len - 1],
        4..=7 => {
            let load = |bytes: &[u8], at: usize| u32::from_ne_bytes(word(bytes, at));
            load(a, 0) == load(b, 0) && load(a, len - 4) == load(b, len - 4)
        }
        8..=16 => {
            let load = |bytes: &[u8], at: usize| u64::from_ne_bytes(word(bytes, at));
            load(a, 0) == load(b, 0) && load(a, len - 8) == load(b, len - 8)
        }
        _ => a == b,
    }
}

/// The `N` bytes of `bytes` from `at`, as one array (one load; `at + N <= bytes.len()`).
#[inline(always)]
fn word<const N: usize>(bytes: &[u8], at: usize) -> [u8; N] {
    let mut word = [0; N];
    word.copy_from_slice(&bytes[at..at + N]);
    word
}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Key {
    fn cmp(&self, other: &Self) -> Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl Hash for Key {
    /// As its text hashes, so that maps keyed by `Key` can be looked up by `&str`.
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.as_str(), f)
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl serde::Serialize for Key {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for Key {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(Key::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn a_shared_key_counts_its_text_and_gives_the_count_back() {
        let text: Arc<str> = Arc::from("learning_rate");
        let key = Key::from(text.clone());
        assert_eq!(Arc::strong_count(&text), 2);
        let copy = key.clone();
        assert_eq!(Arc::strong_count(&text), 3);
        assert_eq!(copy.as_str(), "learning_rate");
        drop(key);
        drop(copy);
        assert_eq!(Arc::strong_count(&text), 1);
    }

    #[test]
    fn keys_compare_hash_and_order_as_their_text_whatever_holds_it() {
        let given = Key::from_static("loss");
        let made = Key::from(String::from("loss"));
        assert_eq!(given, made);
        assert_eq!(made, "loss");
        assert_eq!("loss", made);
        let mut sorted = vec![Key::from(String::from("b")), Key::from_static("a")];
        sorted.sort();
        assert_eq!(sorted, ["a", "b"]);
        let mut map = HashMap::new();
        map.insert(made, 1);
        assert_eq!(map.get("loss"), Some(&1), "looked up by &str");
        assert_eq!(format!("{given} {given:?}"), "loss \"loss\"");
    }

    #[test]
    fn a_key_converts_from_what_a_cow_did_and_an_empty_name_is_fine() {
        let borrowed = Key::from(Cow::Borrowed("step"));
        let owned = Key::from(Cow::<'static, str>::Owned("step".to_owned()));
        assert!(borrowed.is_static());
        assert!(!owned.is_static());
        assert_eq!(borrowed, owned);
        assert_eq!(Key::default().as_str(), "");
        assert_eq!(Key::from(String::new()).as_str(), "");
    }

    #[test]
    fn names_of_every_length_are_equal_only_when_every_byte_is() {
        // Every comparison's branch (0, 1–3, 4–7, 8–16 bytes, longer) is reached by 24 bytes;
        // Miri, which runs these tests in CI, takes 17 s up to 24 (the cases grow with the
        // square of the length).
        let longest = if cfg!(miri) { 24 } else { 40 };
        for len in 0..longest {
            let name: String = (0..len)
                .map(|i| char::from(b'a' + (i % 26) as u8))
                .collect();
            let copy = name.clone();
            assert!(same_text(&name, &copy), "{name}");
            let (made, other_made) = (Key::from(name.clone()), Key::from(copy.clone()));
            assert!(made == *copy.as_str() && made == other_made);
            for at in 0..len {
                let mut other = name.clone().into_bytes();
                other[at] = b'_';
                let other = String::from_utf8(other).unwrap();
                assert!(!same_text(&name, &other), "{name} vs {other}");
                let (differing, made) = (Key::from(other.clone()), Key::from(name.clone()));
                assert!(differing != made && made != *other.as_str());
            }
            assert!(!same_text(&name, &format!("{name}a")));
        }
    }
}

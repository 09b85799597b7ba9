//! Probe selectors as users type them (`--probe "fit(epoch=1) > loss"`): parsing never panics,
//! and a selector that parses prints as text that parses to the same selector. Run:
//! `cargo +nightly fuzz run -s none selector`.
#![no_main]

use giving::probe::Selector;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    if let Ok(selector) = Selector::parse(text) {
        let printed = selector.to_string();
        let again = Selector::parse(&printed)
            .unwrap_or_else(|e| panic!("{text:?} printed as {printed:?}, which fails: {e}"));
        assert_eq!(again.to_string(), printed, "{text:?}");
    }
});

//! The Perfetto trace reader (`giving trace`, the tests' decoder) on hostile bytes: never
//! panics, always ends. Seeds: `fuzz/seeds/trace_reader/` (traces giving wrote). Run:
//! `cargo +nightly fuzz run -s none trace_reader fuzz/seeds/trace_reader`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let _ = giving_instruments::timeline::decode(bytes);
});

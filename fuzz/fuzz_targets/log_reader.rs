//! The MessagePack log reader on hostile files: never panics, always ends, memory bounded by
//! the file. Run: `cargo +nightly fuzz run log_reader -- -runs=10000000`.
#![no_main]

use giving_fuzz::{Case, read_all};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|case: Case| {
    // tmpfs where there is one: a file per case, without a disk behind it.
    let dir = if std::path::Path::new("/dev/shm").is_dir() {
        std::path::PathBuf::from("/dev/shm")
    } else {
        std::env::temp_dir()
    };
    let scratch = dir.join(format!("giving-fuzz-{}.msgpack", std::process::id()));
    let bytes = case.bytes(&scratch);
    read_all(&scratch, &bytes);
});

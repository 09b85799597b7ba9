//! Suite configurations and `system.yaml` files, milabench-shaped or not, loaded and planned
//! as `giving suite plan` does: never panics (a bad file is an error naming it), always ends.
//! Run: `cargo +nightly fuzz run -s none suite_config`.
#![no_main]

use giving_fuzz::suite::SuiteCase;
use giving_suite::config::{Placeholders, Selection, Suite, SystemConfig};
use giving_suite::runner::plan_suite;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|case: SuiteCase| {
    let dir = if std::path::Path::new("/dev/shm").is_dir() {
        std::path::PathBuf::from("/dev/shm")
    } else {
        std::env::temp_dir()
    };
    let stem = dir.join(format!("giving-fuzz-suite-{}", std::process::id()));
    let suite_file = stem.with_extension("suite.yaml");
    let system_file = stem.with_extension("system.yaml");
    if std::fs::write(&suite_file, case.suite_yaml()).is_err() {
        return;
    }
    let system = case.system_yaml().and_then(|text| {
        std::fs::write(&system_file, text).ok()?;
        SystemConfig::load(&system_file).ok()
    });
    let placeholders = Placeholders {
        n_gpu: 8,
        n_cpu: 16,
        system: system.clone(),
        ..Placeholders::default()
    };
    if let Ok(suite) = Suite::load(&suite_file, &placeholders) {
        let none: [&str; 0] = [];
        let selection = Selection::new(none, none);
        let _ = plan_suite(&suite, &selection, 8, system.as_ref(), &stem);
    }
});

//! Keyed pipelines end to end (filled by the keyed-operators work of issue 3).
fn main() {}

//! Every Rust block of README.md and docs/*.md, each in the context its
//! `<!-- snippet: NAME -->` line names (see `build.rs`): compiled here, and run where its
//! context has a `runs` test.

#[path = "../../burn/tests/support/mod.rs"]
#[allow(dead_code)]
mod support;

include!(concat!(env!("OUT_DIR"), "/snippets.rs"));

//! The Rust blocks of the README and of `docs/`, compiled as a user's crate would compile
//! them: `build.rs` puts each block into the context its `<!-- snippet: NAME -->` line names
//! (`contexts/NAME.rs`: the stubs a block leaves to the reader, such as a model or a loader),
//! and `tests/snippets.rs` compiles them all and runs those a context can run. A block that
//! leaves out a `use` line, or uses an API that changed, fails `cargo test`.

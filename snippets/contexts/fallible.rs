//! Statements in a function that returns a `Result` (compiled, not run: it sets process-wide
//! state, such as the global `tracing` subscriber).

pub fn snippet() -> anyhow::Result<()> {
    // SNIPPET
    Ok(())
}

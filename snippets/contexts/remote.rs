//! A training function on each rank, and the watcher's giver (an async context).

pub fn train() {}

pub async fn snippet(giver: giving::Giver) -> anyhow::Result<()> {
    // SNIPPET
    Ok(())
}

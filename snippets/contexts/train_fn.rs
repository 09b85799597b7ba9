//! The user's own training function and its configuration.

pub struct Config;

pub fn train(config: &Config) {}

pub fn snippet(config: Config) -> anyhow::Result<()> {
    // SNIPPET
    Ok(())
}

//! `giving train --publish nats://HOST:PORT --run NAME [--rank R]`: the rank's events to NATS.

use anyhow::{Context, Result};
use clap::Args;
use giving_nats::{Identity, NatsPublisher};

use crate::nats_auth::NatsAuthArgs;

/// Options of `train` that publish its events to a NATS server.
#[derive(Debug, Clone, Args)]
pub(crate) struct PublishArgs {
    /// Publish every event to the NATS server at URL (`nats://HOST:PORT`, `tls://HOST:PORT`,
    /// `nats://USER:PASSWORD@HOST:PORT`; see the `--nats-*` options) on
    /// `giving.<run>.<rank>`, fail-open: events are dropped and counted, never waited for,
    /// when the server is unreachable.
    #[arg(long, value_name = "URL", requires = "run", env = giving_nats::PUBLISH_ENV)]
    publish: Option<String>,
    /// The run's name, shared by its ranks (one subject token: no `.`, `*`, `>` or spaces).
    #[arg(long, value_name = "NAME", env = giving_nats::RUN_ENV)]
    run: Option<String>,
    /// This process's rank [default: `RANK`, else 0]; `LOCAL_RANK` and `WORLD_SIZE` are read
    /// from the environment.
    #[arg(long, value_name = "R", requires = "publish")]
    rank: Option<u64>,
    /// Events kept while the server is unreachable; beyond, the oldest are dropped and counted.
    #[arg(long, value_name = "N", requires = "publish", default_value_t = giving_nats::DEFAULT_CAPACITY)]
    publish_buffer: usize,
    /// Keep the run in a JetStream stream (`GIVING_<run>`; the server runs with `-js`), so that
    /// `giving watch --replay` started later sees it from its first event.
    #[arg(long, requires = "publish")]
    publish_store: bool,
    #[command(flatten)]
    auth: NatsAuthArgs,
}

impl PublishArgs {
    /// The publisher these options ask for, if any.
    pub(crate) fn publisher(&self) -> Result<Option<NatsPublisher>> {
        let (Some(url), Some(run)) = (&self.publish, &self.run) else {
            return Ok(None);
        };
        let mut identity = Identity::from_env(run).context("--run")?;
        if let Some(rank) = self.rank {
            identity = identity.rank(rank);
        }
        if self.publish_buffer == 0 {
            anyhow::bail!("invalid setting: --publish-buffer must be at least 1, not 0");
        }
        // A bad address or an unreadable credentials file is refused now, before training,
        // not when the publisher first connects.
        let auth = self.auth.auth();
        auth.check(url).context("--publish")?;
        Ok(Some(
            NatsPublisher::new(url, identity)
                .auth(auth)
                .capacity(self.publish_buffer)
                .store(self.publish_store),
        ))
    }
}

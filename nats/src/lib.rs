//! # giving-nats
//!
//! Beyond one machine: every rank of a distributed run publishes its events to
//! [NATS](https://nats.io) ([`NatsPublisher`], an instrument), and a watcher fans them in as
//! one stream ([`FanIn`]) that it gives into a scope of its own, where the usual instruments
//! (log, trace, dashboard) take them.
//!
//! - Subjects: `giving.<run>.<rank>` ([`rank_subject`]); a watcher subscribes to
//!   `giving.<run>.>` ([`run_subjects`]).
//! - Payload: one record of the MessagePack log's format per message (`docs/log-format.md`),
//!   tagged with the rank's [`Identity`] (run, host, rank, local rank, world size, from `RANK`,
//!   `LOCAL_RANK`, `WORLD_SIZE` or given); the run ends with the log's end record.
//! - Fail-open: a bounded buffer that drops its oldest records when the server is unreachable,
//!   counts them and reports the count in the stream ([`NATS_DROPPED`](giving::vocab::keys::NATS_DROPPED)); the client
//!   reconnects by itself; the training loop never waits for the network.
//!
//! - Late joiners: with [`NatsPublisher::store`], the run is kept in a JetStream stream
//!   ([`stream_name`]) and [`FanIn::replay`] replays it from its first event.
//!
//! - Fan-in at scale: [`bench`](mod@bench) measures one watcher against N simulated ranks.
//!
//! See `docs/remote.md`.

mod auth;
pub mod bench;
mod buffer;
mod connect;
mod error;
mod fanin;
mod identity;
mod publish;
mod pump;
mod ranks;
mod reception;
mod store;
mod subject;

pub use auth::{NatsAuth, env};
pub use connect::check_url;
pub use error::NatsError;
pub use fanin::{FanIn, Until};
pub use identity::{Identity, LOCAL_RANK_ENV, PUBLISH_ENV, RANK_ENV, RUN_ENV, WORLD_SIZE_ENV};
pub use publish::{DEFAULT_CAPACITY, DEFAULT_FINISH_WITHIN, NatsPublisher};
pub use pump::PublishSummary;
pub use ranks::Ranks;
pub use reception::Reception;
pub use store::{DEFAULT_MAX_AGE, stream_name};
pub use subject::{PREFIX, rank_subject, run_subjects};

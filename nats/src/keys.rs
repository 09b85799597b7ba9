//! The keys giving-nats adds to the event vocabulary (`docs/events.md`). The rank identity
//! uses the core's keys: [`RUN`](giving::vocab::keys::RUN), [`RANK`](giving::vocab::keys::RANK),
//! [`LOCAL_RANK`](giving::vocab::keys::LOCAL_RANK), [`WORLD_SIZE`](giving::vocab::keys::WORLD_SIZE),
//! [`HOST`](giving::vocab::keys::HOST).

/// `u64`: how many events the NATS publisher of this rank has dropped so far (its buffer was
/// full while the server was unreachable). Given with
/// [`INSTRUMENT`](giving::vocab::keys::INSTRUMENT) `= "nats"` into the rank's own scope, at
/// most once a second while the count grows, so the local log and dashboard show it and the
/// watcher receives it once the server is back.
pub const NATS_DROPPED: &str = "nats_dropped";

/// `u64`: a rank's run ended, having published this many events; given by the fan-in with the
/// rank's identity and [`NATS_DROPPED`] (its publisher's final drop count) when the rank's
/// end record arrives.
pub const RANK_END: &str = "rank_end";

//! What the integration tests share: a real `nats-server` on a loopback port, or `None` with
//! `SKIPPED` printed when it is not installed.

use giving_nats::bench::{BenchError, NatsServer};

/// A server started for one test; `None` (the test says SKIPPED) without `nats-server`.
pub fn nats_server() -> Option<NatsServer> {
    match NatsServer::start() {
        Ok(server) => Some(server),
        Err(BenchError::ServerMissing) => {
            println!("SKIPPED: nats-server is not installed");
            None
        }
        Err(error) => panic!("{error}"),
    }
}

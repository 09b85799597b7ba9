//! The client options the publisher and the fan-in share.

use std::time::Duration;

/// Reconnection: unlimited attempts, 100 ms apart growing to 1 s, so a restarted server is
/// found again within a second.
pub(crate) fn options(url: &str) -> async_nats::ConnectOptions {
    async_nats::ConnectOptions::new()
        .name(format!("giving {}", std::process::id()))
        .max_reconnects(None)
        .reconnect_delay_callback(|attempts| {
            Duration::from_millis((attempts as u64).saturating_mul(100).min(1000))
        })
        .connection_timeout(Duration::from_secs(2))
        .event_callback({
            let url = url.to_owned();
            move |event| {
                let url = url.clone();
                async move {
                    if let async_nats::Event::ServerError(error) = event {
                        eprintln!("giving: nats: `{url}`: {error}");
                    }
                }
            }
        })
}

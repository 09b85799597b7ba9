//! The client options the publisher and the fan-in share.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use giving_log::redact_url;

use crate::auth::NatsAuth;
use crate::error::NatsError;

/// Checks that `url` is a server address a client can connect to (`nats://`, `tls://`, `ws://`,
/// `wss://` or a bare `host:port`), naming the address (its password masked) when it is not:
/// a command refuses it before it starts, rather than when it first connects.
///
/// ```
/// assert!(giving_nats::check_url("nats://127.0.0.1:4222").is_ok());
/// let error = giving_nats::check_url("nats://ann:pw@[bad").unwrap_err().to_string();
/// assert!(error.contains("nats://ann:***@[bad") && !error.contains("pw@"), "{error}");
/// ```
pub fn check_url(url: &str) -> Result<(), NatsError> {
    url.parse::<async_nats::ServerAddr>()
        .map(|_| ())
        .map_err(|e| NatsError::Connect {
            url: redact_url(url),
            message: e.to_string(),
        })
}

impl NatsAuth {
    /// Checks, before anything connects, that `url` is an address and that every file these
    /// settings name can be read: the error names the address (masked) or the file.
    ///
    /// ```
    /// use giving_nats::NatsAuth;
    ///
    /// assert!(NatsAuth::default().check("nats://127.0.0.1:4222").is_ok());
    /// let error = NatsAuth::default().nkey("/no/such.nk").check("nats://h:1").unwrap_err();
    /// assert!(error.to_string().contains("/no/such.nk"));
    /// ```
    pub fn check(&self, url: &str) -> Result<(), NatsError> {
        options(url, self).map(|_| ())
    }
}

/// The client options for `url` with `auth` and the URL's own credentials, and the reconnection
/// policy: unlimited attempts, 100 ms apart growing to 1 s, so a restarted server is found
/// again within a second.
pub(crate) fn options(url: &str, auth: &NatsAuth) -> Result<async_nats::ConnectOptions, NatsError> {
    options_counting(url, auth, None)
}

/// [`options`], with the messages the client drops for a slow consumer (a subscriber that
/// fell behind: the fan-in) counted in `lost`.
pub(crate) fn options_counting(
    url: &str,
    auth: &NatsAuth,
    lost: Option<Arc<AtomicU64>>,
) -> Result<async_nats::ConnectOptions, NatsError> {
    check_url(url)?;
    let shown = redact_url(url);
    let options = async_nats::ConnectOptions::new()
        .name(format!("giving {}", std::process::id()))
        .max_reconnects(None)
        .reconnect_delay_callback(|attempts| {
            Duration::from_millis((attempts as u64).saturating_mul(100).min(1000))
        })
        .connection_timeout(Duration::from_secs(2))
        .event_callback({
            // A refused login is retried every second for as long as the run lasts: each
            // distinct complaint is said once, not once a second.
            let said = Arc::new(Mutex::new(HashSet::new()));
            move |event| {
                let url = shown.clone();
                let said = said.clone();
                let lost = lost.clone();
                async move {
                    // A refused login or a failed TLS handshake comes as a client error of
                    // the connection attempt; a denied publish as a server error.
                    let message = match event {
                        async_nats::Event::ServerError(error) => error.to_string(),
                        async_nats::Event::ClientError(error) => error.to_string(),
                        // One report per message the client could not queue for a subscriber.
                        async_nats::Event::SlowConsumer(_) => {
                            let Some(lost) = &lost else { return };
                            lost.fetch_add(1, Ordering::Relaxed);
                            format!(
                                "the watcher fell behind and the client dropped messages \
                                 (counted as `{}`)",
                                giving::vocab::keys::NATS_LOST
                            )
                        }
                        _ => return,
                    };
                    let first = said
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .insert(message.clone());
                    if first {
                        eprintln!("giving: nats: `{url}`: {message}");
                    }
                }
            }
        });
    auth.apply(url, options)
}

//! [`Web`]: a live dashboard of the run in a browser, served by the process itself.
//!
//! - `state`: [`WebState`], what the page shows, folded from events at a
//!   bounded size, and each client's batch of what it lacks;
//! - `histograms`: a model watch's histograms over time, per watched tensor, bounded, and
//!   the columns each client lacks;
//! - `series`: a chart line over the whole run, thinned with `lttb` (downsampling with
//!   buckets of equal width);
//! - `server`: the HTTP/1 server on its own thread (connection cap, request limits);
//! - `shared`: what the server and the run's pipeline share (state, limits, shutdown);
//! - `routes`: what each path answers, and the guarded stop;
//! - `sse`: one client's Server-Sent Events stream;
//! - `assets`: the page, embedded.

mod assets;
mod histograms;
mod lttb;
mod routes;
mod series;
mod server;
mod shared;
mod sse;
mod state;

use std::net::{SocketAddr, TcpListener, ToSocketAddrs};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use futures::StreamExt;
use giving::{Delivery, Timestamp};

use crate::error::InstrumentError;
use crate::overseer::{Instrument, Start};
use server::Server;
use shared::Shared;
use state::{RunInfo, Status, WebState};

/// Why the web dashboard cannot serve.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WebError {
    /// The address cannot be bound (in use, not this machine's, not an address).
    #[error("cannot listen on {address}: {source}")]
    Bind {
        /// The address asked for.
        address: String,
        /// The system's error.
        source: std::io::Error,
    },
    /// A non-loopback address was asked for without saying it may be public.
    #[error(
        "{address} is reachable from other machines; bind it with \
         `Web::bind_public` (`--web-public`), or use 127.0.0.1 and an ssh tunnel"
    )]
    NotLoopback {
        /// The address asked for.
        address: String,
    },
}

/// The live web dashboard instrument: serves one page on an address of this machine that
/// shows the run as it goes — its header (command, host, start, status), the run's and each
/// task's progress with ETA and rate, a chart per numeric key (`loss` first, log scale on a
/// click, one line per `rank` or `bench` with a legend), GPU and CPU panels when monitors run,
/// problems and dropped events — and keeps the final state on the page when the run ends.
///
/// It costs the training thread only the giving: a bounded subscription feeds a pipeline that
/// folds events into a state of bounded size (each chart line thinned with LTTB to at most
/// 4000 points over the whole run), and a `giving-web` thread serves it. Each browser gets a
/// batch of what changed every 250 ms over Server-Sent Events, built only when its connection
/// can take it: a stalled browser misses intermediate states (its next batch carries what it
/// lacks), never queues them, and never slows the run.
///
/// It is read-only unless [`allow_stop`](Web::allow_stop): then the page has a stop button,
/// honoured only with the token of the page served and from that page (not cross-site).
/// Connections past [`max_connections`](Web::max_connections) get a 503; oversized or
/// malformed requests and unknown paths get HTTP errors.
///
/// ```
/// use giving::iterate;
/// use giving_instruments::{Overseer, Web};
///
/// let web = Web::bind("127.0.0.1:0").unwrap().banner(false);
/// let url = web.url();
/// assert!(url.starts_with("http://127.0.0.1:"));
/// let run = Overseer::new().with(web).run(|| {
///     for step in iterate("train", 0..100) {
///         let loss = 1.0 / (step as f64 + 1.0);
///         giving::give!(loss);
///     }
/// });
/// assert!(run.problems.is_empty());
/// ```
#[derive(Debug)]
pub struct Web {
    listener: Option<TcpListener>,
    address: SocketAddr,
    public: bool,
    allow_stop: bool,
    title: String,
    every: Duration,
    capacity: usize,
    max_connections: usize,
    linger: Duration,
    banner: bool,
    /// The run's start the page shows; `None`: when the instrument starts.
    started: Option<Timestamp>,
    running: Option<Running>,
}

/// What a started dashboard holds.
struct Running {
    shared: Arc<Shared>,
    server: Server,
    interrupted: Arc<AtomicBool>,
}

impl std::fmt::Debug for Running {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Running")
            .field("connections", self.shared.connections())
            .finish()
    }
}

impl Web {
    /// A dashboard listening on `address` of the loopback interface (`127.0.0.1:0` picks a
    /// free port: see [`url`](Web::url)). A non-loopback address is an error: see
    /// [`bind_public`](Web::bind_public).
    pub fn bind(address: impl ToSocketAddrs + std::fmt::Display) -> Result<Self, WebError> {
        // Checked before binding: a public port is never opened, even for a moment.
        let resolved: Vec<SocketAddr> = address
            .to_socket_addrs()
            .map_err(|source| WebError::Bind {
                address: address.to_string(),
                source,
            })?
            .collect();
        if resolved.iter().any(|a| !a.ip().is_loopback()) {
            return Err(WebError::NotLoopback {
                address: address.to_string(),
            });
        }
        Self::listen(&resolved[..], address.to_string())
    }

    /// A dashboard listening on any `address`, other machines' reach included (the banner
    /// says so). The page shows the run to whoever reaches the address.
    pub fn bind_public(address: impl ToSocketAddrs + std::fmt::Display) -> Result<Self, WebError> {
        let shown = address.to_string();
        Self::listen(address, shown)
    }

    /// Listens on `address`, named `shown` in errors.
    fn listen(address: impl ToSocketAddrs, shown: String) -> Result<Self, WebError> {
        let bind_error = |source| WebError::Bind {
            address: shown.clone(),
            source,
        };
        let listener = TcpListener::bind(address).map_err(bind_error)?;
        let local = listener.local_addr().map_err(bind_error)?;
        Ok(Self {
            listener: Some(listener),
            address: local,
            public: !local.ip().is_loopback(),
            allow_stop: false,
            title: "giving".to_owned(),
            every: Duration::from_millis(250),
            capacity: 1 << 16,
            max_connections: 64,
            linger: Duration::ZERO,
            banner: true,
            started: None,
            running: None,
        })
    }

    /// The address it listens on, its port chosen.
    pub fn local_addr(&self) -> SocketAddr {
        self.address
    }

    /// The page's URL.
    pub fn url(&self) -> String {
        format!("http://{}/", self.address)
    }

    /// The run's title in the page's header (the command line, say).
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = title.into();
        self
    }

    /// Shows a stop button on the page, which stops the loop cleanly as Ctrl-C does (default
    /// off: the page is read-only). Only requests from the page served, carrying its per-run
    /// token, are honoured.
    pub fn allow_stop(mut self, allow: bool) -> Self {
        self.allow_stop = allow;
        self
    }

    /// How often a browser gets what changed (default 250 ms; at least 20 ms).
    pub fn every(mut self, period: Duration) -> Self {
        self.every = period.max(Duration::from_millis(20));
        self
    }

    /// Events the subscription holds before it drops the oldest (default 65536); drops are
    /// shown on the page.
    pub fn capacity(mut self, events: usize) -> Self {
        self.capacity = events.max(1);
        self
    }

    /// Connections served at once (default 64); past it, a connection gets a 503 and is closed.
    pub fn max_connections(mut self, connections: usize) -> Self {
        self.max_connections = connections.max(1);
        self
    }

    /// Keeps serving the final state for `linger` after the run (default none), so the page
    /// can be read or loaded once training is over; Ctrl-C ends it sooner.
    /// `Duration::MAX` serves until Ctrl-C.
    pub fn linger(mut self, linger: Duration) -> Self {
        self.linger = linger;
        self
    }

    /// The run's start the page shows (default: when the run starts): a replay of finished
    /// logs (`giving log serve`) shows when they were written, not when they are replayed.
    pub fn started(mut self, at: Timestamp) -> Self {
        self.started = Some(at);
        self
    }

    /// What the page's header says of the run.
    fn run_info(&self) -> RunInfo {
        RunInfo {
            title: self.title.clone(),
            host: host_name(),
            started: self.started.unwrap_or_else(Timestamp::now),
        }
    }

    /// Prints the page's address on stderr at start (default on).
    pub fn banner(mut self, banner: bool) -> Self {
        self.banner = banner;
        self
    }

    fn print_banner(&self) {
        eprintln!("giving web: the dashboard is at {}", self.url());
        if self.public {
            eprintln!(
                "giving web: listening on {}, reachable from other machines: anyone who reaches \
                 it sees this run{}",
                self.address,
                if self.allow_stop {
                    " (stopping it takes the page's token)"
                } else {
                    ""
                }
            );
        }
        if self.allow_stop {
            eprintln!("giving web: the page can stop the run");
        }
        if self.linger > Duration::ZERO {
            eprintln!("giving web: the final state stays served after the run (Ctrl-C ends it)");
        }
    }

    fn shut_down(&mut self) {
        if let Some(mut running) = self.running.take() {
            running.server.stop();
        }
    }
}

impl Instrument for Web {
    fn name(&self) -> &str {
        "web"
    }

    fn start(&mut self, start: &mut Start<'_>) -> Result<(), InstrumentError> {
        let Some(listener) = self.listener.take() else {
            return Err(InstrumentError::other(
                "the web dashboard was already started",
            ));
        };
        let info = self.run_info();
        let stop = self
            .allow_stop
            .then(|| (token(), start.given().stop_token()));
        let shared = Arc::new(Shared::new(
            WebState::new(info),
            stop,
            self.every,
            self.max_connections,
        ));
        let server =
            Server::spawn(listener, shared.clone()).map_err(|source| InstrumentError::Thread {
                thread: "giving-web".to_owned(),
                source,
            })?;
        let interrupted = Arc::new(AtomicBool::new(false));
        let flag = interrupted.clone();
        start.on_interrupt(move || flag.store(true, Ordering::SeqCst));

        let events = start
            .given()
            .stream_with(Delivery::Bounded(self.capacity))
            .paced(crate::SINK_PACE);
        let lag = events.lag();
        let folding = shared.clone();
        // A chunk of what is ready at once takes the lock once: a browser reading the state
        // waits less, and so does the pipeline.
        let mut chunks = events.ready_chunks(256);
        start.spawn(async move {
            while let Some(chunk) = chunks.next().await {
                let mut state = folding.state();
                for event in &chunk {
                    state.observe(event);
                }
                state.set_dropped(lag.dropped());
            }
            let mut state = folding.state();
            state.set_dropped(lag.dropped());
            state.set_status(Status::Finished);
        });
        if self.banner {
            self.print_banner();
        }
        self.running = Some(Running {
            shared,
            server,
            interrupted,
        });
        Ok(())
    }

    fn finish(&mut self) -> Result<(), InstrumentError> {
        if let Some(running) = &self.running {
            running.shared.state().set_status(Status::Finished);
            if self.banner
                && let Some(notice) = linger_notice(&self.url(), self.linger)
            {
                eprintln!("{notice}");
            }
            let until = Instant::now().checked_add(self.linger);
            while !running.interrupted.load(Ordering::SeqCst)
                && until.is_none_or(|until| Instant::now() < until)
            {
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        self.shut_down();
        Ok(())
    }
}

impl Drop for Web {
    fn drop(&mut self) {
        self.shut_down();
    }
}

/// What `finish` prints before it keeps serving the final state: training is over, where the
/// page is and for how long the run will still wait (`None` without a linger). Without it, a
/// run that lingers looks hung after its last step.
fn linger_notice(url: &str, linger: Duration) -> Option<String> {
    if linger.is_zero() {
        return None;
    }
    let how_long = if Instant::now().checked_add(linger).is_none() || linger == Duration::MAX {
        "until Ctrl-C".to_owned()
    } else if linger >= Duration::from_secs(1) {
        format!(
            "for {:.0} s more (Ctrl-C ends it sooner)",
            linger.as_secs_f64()
        )
    } else {
        format!("for {} ms more (Ctrl-C ends it sooner)", linger.as_millis())
    };
    Some(format!(
        "giving web: training is over; the final state stays served at {url} {how_long}"
    ))
}

/// The page's stop token: 128 random bits in hex, from the system's random source where
/// there is one, else from the standard library's per-process random hash keys.
fn token() -> String {
    use std::io::Read;
    let mut bytes = [0u8; 16];
    let read = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes));
    if read.is_err() {
        use std::hash::{BuildHasher, Hasher};
        for half in bytes.chunks_mut(8) {
            let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
            hasher.write_u128(Timestamp::now().as_nanos().into());
            half.copy_from_slice(&hasher.finish().to_le_bytes());
        }
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// This machine's name, for the page's header.
fn host_name() -> String {
    ["/proc/sys/kernel/hostname", "/etc/hostname"]
        .iter()
        .find_map(|path| std::fs::read_to_string(path).ok())
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "localhost".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_public_address_must_be_asked_for() {
        assert!(matches!(
            Web::bind("0.0.0.0:0"),
            Err(WebError::NotLoopback { .. })
        ));
        let web = Web::bind_public("0.0.0.0:0").unwrap();
        assert!(web.public);
        assert!(matches!(
            Web::bind("not an address"),
            Err(WebError::Bind { .. })
        ));
    }

    #[test]
    fn a_lingering_run_says_it_is_over_where_and_for_how_long() {
        let url = "http://127.0.0.1:8080/";
        assert_eq!(linger_notice(url, Duration::ZERO), None);
        assert_eq!(
            linger_notice(url, Duration::from_secs(600)).unwrap(),
            "giving web: training is over; the final state stays served at \
             http://127.0.0.1:8080/ for 600 s more (Ctrl-C ends it sooner)"
        );
        assert!(
            linger_notice(url, Duration::from_millis(250))
                .unwrap()
                .ends_with("for 250 ms more (Ctrl-C ends it sooner)")
        );
        assert!(
            linger_notice(url, Duration::MAX)
                .unwrap()
                .ends_with(" until Ctrl-C")
        );
    }

    #[test]
    fn the_page_shows_the_start_it_is_given_else_now() {
        let written = Timestamp::from_nanos(1_700_000_000_000_000_000);
        let web = Web::bind("127.0.0.1:0").unwrap().started(written);
        assert_eq!(web.run_info().started, written);
        let before = Timestamp::now();
        let now = Web::bind("127.0.0.1:0").unwrap().run_info().started;
        assert!(now.as_nanos() >= before.as_nanos());
    }

    #[test]
    fn tokens_are_hex_and_differ() {
        let (a, b) = (token(), token());
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }
}

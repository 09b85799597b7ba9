//! Receiving a remote process's events through NATS: the process publishes them under a run
//! name of its own (`GIVING_PUBLISH`, `GIVING_RUN`), and a thread of the runner subscribes to
//! that run before the process starts, so that nothing it publishes is missed.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use giving::vocab::keys;
use giving::vocab::keys::RANK_END;
use giving_nats::{FanIn, NatsAuth};

use crate::protocol::Incoming;

/// How often the receiving thread looks whether it was told to stop.
const POLL: Duration = Duration::from_millis(100);

/// Where a remote process's events come from, when its node reports through NATS.
#[derive(Debug, Clone, PartialEq)]
pub struct NatsRoute {
    /// The server (`nats://HOST:PORT`), for the process and the runner.
    pub url: String,
    /// The run name the process publishes under: one per process, so that its ranks'
    /// subjects are its own.
    pub run: String,
}

/// The runner's subscription to one process's run.
pub(crate) struct NatsSource {
    stop: Arc<AtomicBool>,
    ended: Arc<AtomicBool>,
    thread: JoinHandle<()>,
}

impl NatsSource {
    /// Subscribes to `route.run` and sends what arrives to `tx` as a data pipe's items would
    /// be: the header (as soon as the process's log header arrives), its events, its end.
    /// Fails, naming the server, when it cannot be reached.
    pub(crate) fn subscribe(route: &NatsRoute, tx: Sender<Incoming>) -> Result<Self, String> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the NATS receiver: {e}"))?;
        let mut fan_in = runtime
            // The credentials the `nats` CLI's variables hold (the processes, started with the
            // runner's environment, publish with the same).
            .block_on(FanIn::connect_with(
                &route.url,
                &route.run,
                &NatsAuth::from_env(),
            ))
            .map_err(|e| e.to_string())?;
        let stop = Arc::new(AtomicBool::new(false));
        let ended = Arc::new(AtomicBool::new(false));
        let (thread_stop, thread_ended) = (stop.clone(), ended.clone());
        let thread = std::thread::spawn(move || {
            runtime.block_on(async {
                let mut header_sent = false;
                loop {
                    let event = match tokio::time::timeout(POLL, fan_in.next()).await {
                        Ok(Some(event)) => event,
                        Ok(None) => return,
                        Err(_) if thread_stop.load(Ordering::Relaxed) => return,
                        Err(_) => continue,
                    };
                    if !header_sent && let Some(header) = fan_in.header(0) {
                        header_sent = true;
                        let _ = tx.send(Incoming::Header(Box::new(header.clone())));
                    }
                    if event.has(RANK_END) && event.has(keys::DONE) {
                        let _ = tx.send(Incoming::End);
                        thread_ended.store(true, Ordering::Relaxed);
                        return;
                    }
                    let _ = tx.send(Incoming::Event(event));
                }
            });
        });
        Ok(Self {
            stop,
            ended,
            thread,
        })
    }

    /// After the process has exited: waits up to `within` for its end record (what it
    /// published last may still be on its way), then stops receiving. Whether the end came.
    pub(crate) fn finish(self, within: Duration) -> bool {
        let started = Instant::now();
        while !self.ended.load(Ordering::Relaxed) && started.elapsed() < within {
            std::thread::sleep(Duration::from_millis(20));
        }
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.thread.join();
        self.ended.load(Ordering::Relaxed)
    }
}

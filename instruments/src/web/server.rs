//! The HTTP server: hyper's HTTP/1 on a tokio runtime of its own thread, so neither the
//! training thread nor the run's pipelines ever wait on a browser. It caps connections (those
//! past the cap get a 503 and are closed), bounds request heads (hyper answers 431 or 400),
//! and drops a connection whose head does not arrive within a few seconds.

use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::thread::JoinHandle;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::AsyncWriteExt;

use super::routes;
use super::shared::Shared;

/// A request head larger than this is refused (hyper answers 431).
const MAX_HEAD: usize = 16 * 1024;
/// A connection whose request head is not complete within this is closed.
const HEAD_TIMEOUT: Duration = Duration::from_secs(5);

/// The server thread; stopping it closes every connection.
pub(crate) struct Server {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl Server {
    /// Serves `listener` on a `giving-web` thread.
    pub(crate) fn spawn(listener: TcpListener, shared: Arc<Shared>) -> std::io::Result<Self> {
        listener.set_nonblocking(true)?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let serving = shared.clone();
        let thread = std::thread::Builder::new()
            .name("giving-web".to_owned())
            .spawn(move || {
                runtime.block_on(async move {
                    let listener = match tokio::net::TcpListener::from_std(listener) {
                        Ok(listener) => listener,
                        Err(error) => {
                            eprintln!("giving web: cannot serve: {error}");
                            return;
                        }
                    };
                    tokio::select! {
                        () = accept(listener, serving.clone()) => {}
                        () = serving.shutdown.cancelled() => {}
                    }
                });
                // Dropping the runtime cancels the connections still open.
            })?;
        Ok(Self {
            shared,
            thread: Some(thread),
        })
    }

    /// Closes every connection and joins the thread.
    pub(crate) fn stop(&mut self) {
        self.shared.shutdown.cancel();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

async fn accept(listener: tokio::net::TcpListener, shared: Arc<Shared>) {
    loop {
        let socket = match listener.accept().await {
            Ok((socket, _)) => socket,
            // Out of file descriptors, a connection reset before it was accepted: the
            // listener itself is fine; wait a little rather than spin.
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let Some(guard) = Slot::take(&shared) else {
            tokio::spawn(refuse(socket));
            continue;
        };
        let serving = shared.clone();
        tokio::spawn(async move {
            let _guard = guard;
            let service = service_fn(move |request| {
                let shared = serving.clone();
                async move { Ok::<_, std::convert::Infallible>(routes::route(request, &shared)) }
            });
            // A client that goes away or sends garbage ends its own connection only.
            let _ = http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEAD_TIMEOUT)
                .max_buf_size(MAX_HEAD)
                .serve_connection(TokioIo::new(socket), service)
                .await;
        });
    }
}

/// Answers a connection past the cap with a 503 and closes it, giving up after a second.
async fn refuse(mut socket: tokio::net::TcpStream) {
    const BODY: &str = "too many connections\n";
    let answer = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\ncontent-length: {}\r\n\
         connection: close\r\nretry-after: 5\r\n\r\n{BODY}",
        BODY.len()
    );
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        socket.write_all(answer.as_bytes()).await?;
        socket.shutdown().await
    })
    .await;
}

/// One of the server's connection slots, given back when dropped.
struct Slot(Arc<Shared>);

impl Slot {
    fn take(shared: &Arc<Shared>) -> Option<Self> {
        shared
            .connections()
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |open| {
                (open < shared.max_connections).then_some(open + 1)
            })
            .ok()
            .map(|_| Slot(shared.clone()))
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.connections().fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::web::shared::tests::shared;

    #[test]
    fn slots_stop_at_the_cap_and_come_back() {
        let shared = shared();
        let slots: Vec<Slot> = (0..8).map(|_| Slot::take(&shared).unwrap()).collect();
        assert!(Slot::take(&shared).is_none());
        assert_eq!(shared.connections().load(Ordering::Relaxed), 8);
        drop(slots);
        assert_eq!(shared.connections().load(Ordering::Relaxed), 0);
        assert!(Slot::take(&shared).is_some());
    }
}

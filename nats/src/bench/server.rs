//! [`NatsServer`]: a `nats-server` on a free loopback port, started for a measurement and
//! killed when dropped.

use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::error::BenchError;

/// How long a started server has to accept connections.
const LISTEN_WITHIN: Duration = Duration::from_secs(10);

/// A `nats-server` process listening on 127.0.0.1 only, killed (and reaped) when dropped.
#[derive(Debug)]
pub struct NatsServer {
    child: Child,
    port: u16,
}

impl NatsServer {
    /// Starts `nats-server` (found on `PATH`) on a free loopback port and waits until it
    /// accepts connections. [`BenchError::ServerMissing`] when it is not installed.
    pub fn start() -> Result<Self, BenchError> {
        let installed = Command::new("nats-server")
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|status| status.success());
        if !installed {
            return Err(BenchError::ServerMissing);
        }
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .map_err(BenchError::Server)?
            .port();
        let child = Command::new("nats-server")
            .args(["-a", "127.0.0.1", "-p", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(BenchError::Server)?;
        // Owned from here: dropped (killed) on every early return.
        let server = Self { child, port };
        let start = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if start.elapsed() > LISTEN_WITHIN {
                return Err(BenchError::NotListening { port });
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(server)
    }

    /// `nats://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// The server's process id (to read its CPU time).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for NatsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

//! Real servers for the remote tests (NATS, MLflow), each on a free loopback port, killed when
//! dropped; and the check that a tool is installed (a test prints `SKIPPED: <why>` and returns
//! when it is not).
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A free TCP port on 127.0.0.1.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
        .port()
}

/// Whether `program --version` (or `args`) runs.
pub fn installed(program: &str, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Whether python3 can import `module`.
pub fn python_has(module: &str) -> bool {
    installed("python3", &["-c", &format!("import {module}")])
}

/// Waits up to `timeout` for something to accept connections on `port`.
pub fn wait_for_port(port: u16, timeout: Duration) -> bool {
    let start = Instant::now();
    while start.elapsed() < timeout {
        if TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

/// A server process, killed (and reaped) when dropped.
pub struct Server {
    child: Option<Child>,
    /// Its port.
    pub port: u16,
}

impl Server {
    /// A server started by the caller, listening on `port`.
    pub fn adopt(child: Child, port: u16) -> Self {
        Self {
            child: Some(child),
            port,
        }
    }

    /// Kills it now (SIGKILL) and waits for it. A server started as the leader of its own
    /// process group (every one here) is killed with its whole group: `mlflow server` runs
    /// uvicorn and a job consumer as children, which would outlive it.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let pid = child.id() as libc::pid_t;
            // SAFETY: getpgid and kill take plain numbers; the child is not reaped yet, so
            // its pid (and group id) is not reused.
            unsafe {
                if libc::getpgid(pid) == pid {
                    libc::kill(-pid, libc::SIGKILL);
                }
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

/// `nats-server` on `port` (127.0.0.1 only), once it accepts connections; `None` when
/// `nats-server` is not installed.
pub fn nats_on(port: u16) -> Option<Server> {
    nats_with(port, &[])
}

/// `nats-server` with JetStream, its store in `dir`.
pub fn nats_jetstream(port: u16, dir: &Path) -> Option<Server> {
    nats_with(port, &["-js", "-sd", &dir.display().to_string()])
}

/// `nats-server` on a free port with the configuration `body` (authorization, tls, …), written
/// with its `listen` line to `dir/nats.conf`; `None` when `nats-server` is not installed.
pub fn nats_configured(body: &str, dir: &Path) -> Option<Server> {
    let port = free_port();
    let conf = dir.join("nats.conf");
    std::fs::write(&conf, format!("listen: 127.0.0.1:{port}\n{body}\n")).unwrap();
    nats_with(port, &["-c", &conf.display().to_string()])
}

fn nats_with(port: u16, extra: &[&str]) -> Option<Server> {
    if !installed("nats-server", &["--version"]) {
        return None;
    }
    let mut command = Command::new("nats-server");
    command.process_group(0);
    // A configuration file says where to listen; flags would override it.
    if !extra.contains(&"-c") {
        command.args(["-a", "127.0.0.1", "-p", &port.to_string()]);
    }
    let child = command
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start nats-server");
    let server = Server {
        child: Some(child),
        port,
    };
    assert!(
        wait_for_port(port, Duration::from_secs(10)),
        "nats-server did not listen on {port}"
    );
    Some(server)
}

/// `mlflow server` with a SQLite store in `dir`, once its health endpoint answers; `None` when
/// mlflow is not installed.
pub fn mlflow_in(dir: &Path) -> Option<Server> {
    mlflow_with(dir, &[], &[])
}

/// `mlflow server --app-name basic-auth` (MLflow's own authentication app) with an admin user
/// `admin` whose password is `password`; `None` when mlflow or its auth extra (Flask-WTF) is
/// not installed.
pub fn mlflow_basic_auth(dir: &Path, password: &str) -> Option<Server> {
    if !python_has("flask_wtf") {
        return None;
    }
    let config = dir.join("basic_auth.ini");
    let users = dir.join("basic_auth.db");
    std::fs::write(
        &config,
        format!(
            "[mlflow]\ndefault_permission = NO_PERMISSIONS\ndatabase_uri = sqlite:///{}\n\
             admin_username = admin\nauthorization_function = \
             mlflow.server.auth:authenticate_request_basic_auth\n",
            users.display()
        ),
    )
    .unwrap();
    let config = config.display().to_string();
    mlflow_with(
        dir,
        &["--app-name", "basic-auth"],
        &[
            ("MLFLOW_AUTH_CONFIG_PATH", config.as_str()),
            // At least 12 characters, or the app refuses to start.
            ("MLFLOW_AUTH_ADMIN_PASSWORD", password),
            // The app's CSRF protection refuses to start without one.
            ("MLFLOW_FLASK_SERVER_SECRET_KEY", "giving-test-csrf-key"),
        ],
    )
}

fn mlflow_with(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Option<Server> {
    if !installed("mlflow", &["--version"]) {
        return None;
    }
    let port = free_port();
    let store = format!("sqlite:///{}", dir.join("mlflow.db").display());
    let artifacts = dir.join("artifacts");
    let child = Command::new("mlflow")
        .process_group(0)
        .args(["server", "--backend-store-uri", &store])
        .arg("--default-artifact-root")
        .arg(&artifacts)
        .args([
            "--host",
            "127.0.0.1",
            "--port",
            &port.to_string(),
            "--workers",
            "1",
        ])
        .args(args)
        .envs(env.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start mlflow server");
    let server = Server {
        child: Some(child),
        port,
    };
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(180) {
        if health(port) {
            return Some(server);
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    panic!("mlflow server did not answer /health on {port} within 180 s");
}

/// Whether `GET /health` answers 200.
fn health(port: u16) -> bool {
    use std::io::{Read, Write};
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let request = format!("GET /health HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\n\r\n");
    if stream.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer.starts_with("HTTP/1.") && answer.contains(" 200 ")
}

/// The `giving` binary as a command.
pub fn giving_command() -> Command {
    Command::new(env!("CARGO_BIN_EXE_giving"))
}

/// Lines a child prints, read on threads of their own.
pub struct Lines {
    rx: mpsc::Receiver<String>,
    /// Every line received so far.
    pub seen: Vec<String>,
}

impl Lines {
    /// Reads the child's stdout and stderr.
    pub fn of(stdout: ChildStdout, stderr: ChildStderr) -> Self {
        let (tx, rx) = mpsc::channel();
        let tx2 = tx.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = tx2.send(line);
            }
        });
        Self {
            rx,
            seen: Vec::new(),
        }
    }

    /// Waits up to `timeout` for a line containing `text`.
    pub fn wait_for(&mut self, text: &str, timeout: Duration) -> bool {
        if self.seen.iter().any(|l| l.contains(text)) {
            return true;
        }
        let deadline = Instant::now() + timeout;
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.rx.recv_timeout(left) {
                Ok(line) => {
                    let found = line.contains(text);
                    self.seen.push(line);
                    if found {
                        return true;
                    }
                }
                Err(_) => return false,
            }
        }
        false
    }

    /// Takes every line already printed.
    pub fn drain(&mut self) -> &[String] {
        self.seen.extend(self.rx.try_iter());
        &self.seen
    }
}

/// The one file with extension `ext` in `dir`.
pub fn only_file(dir: &Path, ext: &str) -> PathBuf {
    let files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == ext))
        .collect();
    assert_eq!(
        files.len(),
        1,
        "one .{ext} file in {}: {files:?}",
        dir.display()
    );
    files[0].clone()
}

/// `(global_step, loss)` of every loss event in the one log under `dir`, in order.
pub fn logged_losses(dir: &Path) -> Vec<(i64, f64)> {
    use giving::vocab::keys;
    giving_log::LogReader::open(only_file(dir, "msgpack"))
        .unwrap()
        .map(Result::unwrap)
        .filter(|e| e.has(keys::LOSS) && e.has(keys::GLOBAL_STEP))
        .map(|e| {
            let step = e.get_as::<u64>(keys::GLOBAL_STEP).unwrap() as i64;
            (step, e.get_as::<f64>(keys::LOSS).unwrap())
        })
        .collect()
}

/// Asserts that a tracker read back the `logged` losses: `read` is its `[[step, value], …]`,
/// the same steps and, as trackers keep scalars as 32-bit floats, the same values as f32.
pub fn assert_same_losses(read: &serde_json::Value, logged: &[(i64, f64)]) {
    let read: Vec<(i64, f64)> = read
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p[0].as_i64().unwrap(), p[1].as_f64().unwrap()))
        .collect();
    assert_eq!(read.len(), logged.len(), "{read:?}");
    for ((read_step, read_loss), (step, loss)) in read.iter().zip(logged) {
        assert_eq!(read_step, step);
        let expected = f64::from(*loss as f32);
        assert!(
            (read_loss - expected).abs() <= 1e-6 * expected.abs(),
            "step {step}: read {read_loss}, logged {loss}"
        );
    }
}

/// Every event of the one MessagePack log in `dir`.
pub fn events_in(dir: &Path) -> Vec<giving::Event> {
    giving_log::LogReader::open(only_file(dir, "msgpack"))
        .unwrap()
        .map(|e| e.expect("a readable event"))
        .collect()
}

/// Starts `watch` (a `giving watch …` command) with its output read, once it has subscribed.
pub fn start_watch(watch: &mut Command) -> (Child, Lines) {
    spawn_until(watch, "subscribed to", Duration::from_secs(30))
}

/// Starts `command` with its output read, once it has printed `text` (within `within`).
pub fn spawn_until(command: &mut Command, text: &str, within: Duration) -> (Child, Lines) {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = Lines::of(child.stdout.take().unwrap(), child.stderr.take().unwrap());
    assert!(lines.wait_for(text, within), "{:?}", lines.seen);
    (child, lines)
}

/// Every file under `dir`, at any depth.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(files_under(&path));
        } else {
            files.push(path);
        }
    }
    files
}

/// Fails if a file under `dir` (but those named in `inputs`: the server's own configuration and
/// keys, which hold the secrets by design) or any of `outputs` contains one of `secrets`.
pub fn assert_no_secret(dir: &Path, inputs: &[&str], outputs: &[&[u8]], secrets: &[&str]) {
    let holds =
        |bytes: &[u8], secret: &str| bytes.windows(secret.len()).any(|w| w == secret.as_bytes());
    for path in files_under(dir)
        .iter()
        .filter(|p| !inputs.iter().any(|name| p.ends_with(name)))
    {
        let bytes = std::fs::read(path).unwrap();
        for secret in secrets {
            assert!(
                !holds(&bytes, secret),
                "{secret} found in {}",
                path.display()
            );
        }
    }
    for output in outputs {
        for secret in secrets {
            assert!(
                !holds(output, secret),
                "{secret} printed: {}",
                String::from_utf8_lossy(output)
            );
        }
    }
}

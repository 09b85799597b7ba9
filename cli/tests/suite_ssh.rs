//! A suite on two nodes: the main one runs its processes here, the other is reached over ssh
//! (a real `sshd`, started by the test on a loopback port with keys it generates), and both
//! land in one run folder and one report. Skipped, saying so, where sshd is not installed
//! (.ci/run installs openssh-server).

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use giving_log::LogReader;

mod servers;
mod support;
use servers::{Server, free_port, nats_on, wait_for_port};
use support::{giving_in as giving, outcome, run_folder};

/// A suite of two benchmarks that run on both nodes: the bundled MLP, and one that hangs until
/// its `max_duration`.
const SUITE: &str = r#"
mlp:
  command: ["{giving}", train, mlp]
  num_machines: 2
  max_duration: 300
  voir: {options: {stop: 3}}
  argv: {--device: flex, --steps: 400, --batch-size: 64, --every: 0, --rate-skip: 1}
hang:
  command: [sleep, "4242"]
  num_machines: 2
  max_duration: 2
"#;

/// Where the OpenSSH daemon is, if installed (it must be started by its absolute path).
fn sshd() -> Option<PathBuf> {
    ["/usr/sbin/sshd", "/usr/local/sbin/sshd", "/usr/bin/sshd"]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
}

fn keygen(path: &Path) {
    let status = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(path)
        .stdout(Stdio::null())
        .status()
        .expect("ssh-keygen runs");
    assert!(status.success(), "ssh-keygen -f {}", path.display());
}

/// An sshd on a free loopback port that accepts `client_key` for the current user.
fn start_sshd(sshd: &Path, dir: &Path, client_key: &Path) -> Option<Server> {
    // sshd refuses to start without its privilege separation folder.
    if std::fs::create_dir_all("/run/sshd").is_err() && !Path::new("/run/sshd").is_dir() {
        eprintln!("SKIPPED: cannot create /run/sshd (sshd needs it; run as root)");
        return None;
    }
    keygen(&dir.join("host_key"));
    std::fs::copy(
        client_key.with_extension("pub"),
        dir.join("authorized_keys"),
    )
    .unwrap();
    let port = free_port();
    let config = dir.join("sshd_config");
    std::fs::write(
        &config,
        format!(
            "Port {port}\nListenAddress 127.0.0.1\nHostKey {dir}/host_key\n\
             AuthorizedKeysFile {dir}/authorized_keys\nPidFile {dir}/sshd.pid\n\
             StrictModes no\nUsePAM no\nPasswordAuthentication no\n\
             KbdInteractiveAuthentication no\nPubkeyAuthentication yes\n\
             PermitRootLogin prohibit-password\nLogLevel ERROR\n",
            dir = dir.display()
        ),
    )
    .unwrap();
    // Its log (`-e`: to stderr) goes to a file: the port probe below is logged as a closed
    // connection, which is not a failure.
    let log = std::fs::File::create(dir.join("sshd.log")).unwrap();
    let child = Command::new(sshd)
        .process_group(0)
        .args(["-D", "-e", "-f"])
        .arg(&config)
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("sshd starts");
    let server = Server::adopt(child, port);
    assert!(
        wait_for_port(port, Duration::from_secs(20)),
        "sshd did not listen on {port}"
    );
    Some(server)
}

/// Processes whose command line is exactly `sleep 4242` (the hanging benchmark).
fn hanging_sleeps() -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| std::fs::read(e.ok()?.path().join("cmdline")).ok())
        .filter(|c| c.as_slice() == b"sleep\x004242\x00")
        .count()
}

/// `giving suite run suite.yaml --system SYSTEM --select BENCH` and `more`, in `dir`.
fn run_on(dir: &Path, system: &str, bench: &str, more: &[&str]) -> (bool, String) {
    let mut args = vec![
        "suite",
        "run",
        "suite.yaml",
        "--system",
        system,
        "--select",
        bench,
    ];
    args.extend_from_slice(more);
    giving(&args, dir)
}

#[test]
fn a_suite_runs_on_two_nodes_one_over_ssh() {
    let Some(sshd) = sshd() else {
        eprintln!("SKIPPED: sshd is not installed (apt-get install openssh-server)");
        return;
    };
    if Command::new("ssh-keygen").arg("-?").output().is_err() {
        eprintln!("SKIPPED: ssh-keygen is not installed (apt-get install openssh-client)");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let keys = tmp.path().join("keys");
    std::fs::create_dir(&keys).unwrap();
    let client_key = keys.join("client");
    keygen(&client_key);
    let Some(server) = start_sshd(&sshd, &keys, &client_key) else {
        return;
    };
    std::fs::write(tmp.path().join("suite.yaml"), SUITE).unwrap();
    std::fs::write(
        tmp.path().join("system.yaml"),
        format!(
            "system:\n  sshkey: {key}\n  ssh_options: [-o, UserKnownHostsFile=/dev/null, -o, LogLevel=ERROR]\n  nodes:\n    - {{name: here, ip: 127.0.0.1, main: true, port: 29500}}\n    - {{name: far, ip: 127.0.0.1, sshport: {port}}}\n",
            key = client_key.display(),
            port = server.port
        ),
    )
    .unwrap();

    // A node that cannot be reached stops the run before anything starts, naming it.
    let system = std::fs::read_to_string(tmp.path().join("system.yaml")).unwrap();
    std::fs::write(
        tmp.path().join("system-dead.yaml"),
        system.replace(
            &format!("name: far, ip: 127.0.0.1, sshport: {}", server.port),
            &format!("name: dead, ip: 127.0.0.1, sshport: {}", free_port()),
        ),
    )
    .unwrap();
    let (ok, out) = run_on(tmp.path(), "system-dead.yaml", "mlp", &[]);
    assert!(!ok, "{out}");
    assert!(
        out.contains("node `dead` (127.0.0.1:") && out.contains("cannot be reached over ssh"),
        "{out}"
    );
    assert!(!tmp.path().join("runs").exists(), "nothing ran: {out}");

    let (ok, out) = run_on(tmp.path(), "system.yaml", "mlp", &["--name", "two"]);
    assert!(ok, "{out}");
    assert!(out.contains("mlp.here.D0: ok"), "{out}");
    assert!(out.contains("mlp.far.D0: ok"), "{out}");
    let dir = run_folder(&tmp.path().join("runs"), "two");
    // The remote child's events came through ssh's stdout, smuggled: its log header (meta)
    // and its rates, in a log as readable as the local one's.
    for node in ["here", "far"] {
        let stem = format!("mlp.{node}.D0");
        let o = outcome(&dir, &stem);
        assert_eq!(o["node"], node, "{o}");
        assert!(o["rates"].as_array().unwrap().len() >= 3, "{o}");
        assert_eq!(o["meta"]["versions"]["giving"], env!("CARGO_PKG_VERSION"));
        assert!(o["protocol_errors"].as_array().unwrap().is_empty(), "{o}");
        let mut reader = LogReader::open(dir.join(format!("{stem}.giving"))).unwrap();
        let events: Vec<_> = reader.by_ref().map(Result::unwrap).collect();
        assert!(events.iter().any(|e| e.has("loss")), "{stem}");
        let stdout = std::fs::read_to_string(dir.join(format!("{stem}.stdout"))).unwrap();
        assert!(stdout.contains("(stopped early)"), "{stem}: {stdout}");
    }
    // The report counts both processes of the benchmark.
    let (ok, report) = giving(&["suite", "report", dir.to_str().unwrap()], tmp.path());
    assert!(ok, "{report}");
    let row = report
        .lines()
        .find(|l| l.starts_with("mlp "))
        .unwrap_or_else(|| panic!("{report}"));
    let cols: Vec<&str> = row.split_whitespace().collect();
    assert_eq!((cols[1], cols[2]), ("0", "2"), "fail, n: {row}");

    // A benchmark past its max_duration is stopped on both nodes: the remote one when its
    // connection closes, without a terminal.
    let (ok, out) = run_on(tmp.path(), "system.yaml", "hang", &["--grace", "1"]);
    assert!(!ok, "{out}");
    assert!(out.contains("hang.far.D0: KILLED at max_duration"), "{out}");
    let started = Instant::now();
    while hanging_sleeps() > 0 && started.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(hanging_sleeps(), 0, "a remote benchmark outlived its stop");

    // With a NATS server in the system, the remote giving program publishes its events there
    // (it has no DATA_FD at all), and the runner receives them into the same files.
    let Some(nats) = nats_on(free_port()) else {
        eprintln!("SKIPPED (the NATS part): nats-server is not installed");
        return;
    };
    let system = std::fs::read_to_string(tmp.path().join("system.yaml")).unwrap();
    std::fs::write(
        tmp.path().join("system-nats.yaml"),
        system.replace(
            "  nodes:",
            &format!("  nats: nats://127.0.0.1:{}\n  nodes:", nats.port),
        ),
    )
    .unwrap();
    let (ok, out) = run_on(
        tmp.path(),
        "system-nats.yaml",
        "mlp",
        &["--name", "via-nats"],
    );
    assert!(ok, "{out}");
    let dir = run_folder(&tmp.path().join("runs"), "via-nats");
    let far = outcome(&dir, "mlp.far.D0");
    assert!(far["rates"].as_array().unwrap().len() >= 3, "{far}");
    assert!(
        far["protocol_errors"].as_array().unwrap().is_empty(),
        "{far}"
    );
    assert_eq!(far["meta"]["versions"]["giving"], env!("CARGO_PKG_VERSION"));
    let mut reader = LogReader::open(dir.join("mlp.far.D0.giving")).unwrap();
    let events: Vec<_> = reader.by_ref().map(Result::unwrap).collect();
    assert!(
        events
            .iter()
            .filter(|e| e.has("rate"))
            .all(|e| e.has("rank")),
        "the publisher's tags show the way they came"
    );
    let here = std::fs::read_to_string(dir.join("mlp.here.D0.stdout")).unwrap();
    assert!(here.contains("(stopped early)"), "{here}");
    drop(server);
}

//! Authenticated NATS, against a real `nats-server` started with a configuration file on a free
//! loopback port: a token, users with per-run publish permissions, TLS with a CA the test makes.
//! Ranks with the right credentials fan in; one without is refused, says so once and trains
//! on; a publisher outside its permissions or claiming a rank outside the run reaches nothing
//! the watcher keeps; no secret is in any file a run writes or in what it prints.
//! SKIPPED when `nats-server` (or, for TLS, `openssl`) is not installed.

mod servers;

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use giving::Event;
use giving::vocab::keys;
use giving_instruments::Overseer;
use giving_nats::{FanIn, Identity, NatsAuth, NatsPublisher};
use servers::{Lines, assert_no_secret, events_in, giving_command, installed, nats_configured};

const TOKEN: &str = "tok-Zq81-SECRET";
const RANK_PASSWORD: &str = "pw-rank-Kx4-SECRET";
const WATCH_PASSWORD: &str = "pw-watch-Jr9-SECRET";
const INTRUDER_PASSWORD: &str = "pw-intruder-Vb2-SECRET";

/// `giving watch URL --run RUN --world-size 2 --until-done --log DIR …`, once subscribed.
fn start_watch(
    url: &str,
    run: &str,
    log: &Path,
    auth: &[&str],
    env: &[(&str, &str)],
) -> (Child, Lines) {
    servers::start_watch(
        giving_command()
            .args([
                "watch",
                url,
                "--run",
                run,
                "--world-size",
                "2",
                "--until-done",
            ])
            .args(["--idle", "120", "--log"])
            .arg(log)
            .arg("--trace")
            .arg(log.join("watch.pftrace"))
            .args(auth)
            .envs(env.iter().copied()),
    )
}

/// A short MLP run of rank `rank` of 2 publishing to `url`, logging under `log`.
fn rank_command(url: &str, run: &str, rank: u64, log: &Path) -> Command {
    let mut command = giving_command();
    command
        .args(["train", "mlp", "--batch-size", "16", "--valid-size", "32"])
        .args(["--window", "5", "--rate-skip", "0", "--steps", "30"])
        .args(["--train-size", "480", "--publish", url, "--run", run])
        .args(["--rank", &rank.to_string(), "--log"])
        .arg(log)
        .env("WORLD_SIZE", "2")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// Runs `command` to its end, successfully.
fn run_ok(mut command: Command) -> Output {
    let output = command.output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// How many `rate` events of each rank `events` holds.
fn rates_of(events: &[Event], rank: u64) -> usize {
    events
        .iter()
        .filter(|e| e.has(keys::RATE) && e.get_as::<u64>(keys::RANK).ok() == Some(rank))
        .count()
}

/// The files that hold the test's secrets by design: the server's configuration and keys.
const SERVER_FILES: [&str; 3] = ["nats.conf", "ca.key", "server.key"];

/// Lines of `stderr` that say the server refused the client.
fn refusals(stderr: &[u8]) -> usize {
    String::from_utf8_lossy(stderr)
        .lines()
        .filter(|l| l.contains("authorization violation") || l.contains("Authorization Violation"))
        .count()
}

#[test]
fn token_ranks_fan_in_and_a_rank_without_it_is_refused_once_and_trains_on() {
    let dir = tempfile::tempdir().unwrap();
    let body = format!("authorization {{ token: \"{TOKEN}\" }}");
    let Some(server) = nats_configured(&body, dir.path()) else {
        println!("SKIPPED: nats-server is not installed");
        return;
    };
    let url = format!("nats://127.0.0.1:{}", server.port);
    let watch_log = dir.path().join("watch");
    let (watch, mut lines) = start_watch(&url, "tok", &watch_log, &["--nats-token", TOKEN], &[]);
    // Rank 0 takes the token from the `nats` CLI's variable, rank 1 from the URL.
    let mut rank0 = rank_command(&url, "tok", 0, &dir.path().join("rank0"));
    rank0.env("NATS_TOKEN", TOKEN);
    let url_with_token = format!("nats://{TOKEN}@127.0.0.1:{}", server.port);
    let rank1 = rank_command(&url_with_token, "tok", 1, &dir.path().join("rank1"));
    let refused = rank_command(&url, "tok", 1, &dir.path().join("refused"));
    let (out0, out1, refused) = (run_ok(rank0), run_ok(rank1), run_ok(refused));
    let watched = watch.wait_with_output().unwrap();
    assert!(watched.status.success(), "{:?}", lines.drain());

    let events = events_in(&watch_log);
    assert!(
        rates_of(&events, 0) > 0 && rates_of(&events, 1) > 0,
        "both ranks fanned in"
    );
    // The refused rank trained to its end, and said so once.
    let refused_text = String::from_utf8_lossy(&refused.stdout);
    assert!(refused_text.contains("done: 30 steps"), "{refused_text}");
    assert_eq!(
        refusals(&refused.stderr),
        1,
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    assert_eq!(refusals(&out0.stderr), 0);
    let printed: Vec<&[u8]> = vec![&out0.stdout, &out0.stderr, &out1.stdout, &out1.stderr];
    let banner = lines.drain().join("\n");
    assert_no_secret(
        dir.path(),
        &SERVER_FILES,
        &[&printed[..], &[banner.as_bytes()]].concat(),
        &[TOKEN],
    );
}

/// Users of run `perm`: ranks may publish on `giving.perm.>` only, the watcher may subscribe
/// to it only, the intruder may publish on another run's subjects only.
fn permissions() -> String {
    format!(
        r#"authorization {{
  users = [
    {{ user: rank, password: "{RANK_PASSWORD}", permissions: {{ publish: "giving.perm.>", subscribe: "_INBOX.>" }} }}
    {{ user: watcher, password: "{WATCH_PASSWORD}", permissions: {{ publish: "_INBOX.>", subscribe: ["giving.perm.>", "_INBOX.>"] }} }}
    {{ user: intruder, password: "{INTRUDER_PASSWORD}", permissions: {{ publish: "giving.other.>", subscribe: "_INBOX.>" }} }}
  ]
}}"#
    )
}

/// Publishes ten events `{loss: 999, host}` as rank `rank` of run `perm` with `auth`.
fn inject(url: &str, auth: NatsAuth, rank: u64, host: &str) {
    let me = Identity::new("perm")
        .unwrap()
        .rank(rank)
        .world_size(2)
        .host(host);
    let publisher = NatsPublisher::new(url, me)
        .auth(auth)
        .finish_within(Duration::from_secs(2));
    let run = Overseer::new().with(publisher).run(|| {
        for step in 0..10u64 {
            giving::give!(loss = 999.0, step);
        }
    });
    assert!(run.problems.is_empty(), "{:?}", run.problems);
}

#[test]
fn per_run_permissions_keep_intruders_out_and_foreign_ranks_are_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let Some(server) = nats_configured(&permissions(), dir.path()) else {
        println!("SKIPPED: nats-server is not installed");
        return;
    };
    let url = format!("nats://127.0.0.1:{}", server.port);
    let watch_log = dir.path().join("watch");
    let watcher_env = [("NATS_USER", "watcher"), ("NATS_PASSWORD", WATCH_PASSWORD)];
    let (watch, mut lines) = start_watch(&url, "perm", &watch_log, &[], &watcher_env);
    // The intruder publishes on run `perm`'s subjects: the server denies it.
    inject(
        &url,
        NatsAuth::default().user("intruder", INTRUDER_PASSWORD),
        0,
        "intruder",
    );
    // A client of the run claims a rank the run does not have: the watcher rejects it.
    inject(
        &url,
        NatsAuth::default().user("rank", RANK_PASSWORD),
        7,
        "foreign",
    );
    let user_url = format!("nats://rank:{RANK_PASSWORD}@127.0.0.1:{}", server.port);
    let rank0 = rank_command(&user_url, "perm", 0, &dir.path().join("rank0"));
    let mut rank1 = rank_command(&url, "perm", 1, &dir.path().join("rank1"));
    rank1.args(["--nats-user", "rank", "--nats-password", RANK_PASSWORD]);
    let (out0, out1) = (run_ok(rank0), run_ok(rank1));
    let watched = watch.wait_with_output().unwrap();
    assert!(watched.status.success(), "{:?}", lines.drain());

    let events = events_in(&watch_log);
    assert!(
        rates_of(&events, 0) > 0 && rates_of(&events, 1) > 0,
        "both ranks fanned in"
    );
    let host_of = |e: &Event| e.get_as::<String>(keys::HOST).ok();
    assert!(
        !events
            .iter()
            .any(|e| host_of(e).as_deref() == Some("intruder")),
        "the server let the intruder publish into run perm"
    );
    assert!(
        !events
            .iter()
            .any(|e| host_of(e).as_deref() == Some("foreign")),
        "the watcher kept a rank outside the run"
    );
    let rejected: Vec<u64> = events
        .iter()
        .filter_map(|e| e.get_as::<u64>(keys::NATS_REJECTED).ok())
        .collect();
    assert!(
        rejected.first() == Some(&1) && rejected.last().is_some_and(|n| *n >= 10),
        "rejections reported: {rejected:?}"
    );
    let said = lines.drain();
    let stderr_rejections = said
        .iter()
        .filter(|l| l.contains("rejected a record"))
        .count();
    assert_eq!(stderr_rejections, 1, "{said:?}");
    let printed: Vec<&[u8]> = vec![&out0.stdout, &out0.stderr, &out1.stdout, &out1.stderr];
    let banner = said.join("\n");
    assert_no_secret(
        dir.path(),
        &SERVER_FILES,
        &[&printed[..], &[banner.as_bytes()]].concat(),
        &[RANK_PASSWORD, WATCH_PASSWORD, INTRUDER_PASSWORD],
    );
}

/// A CA and a server certificate for 127.0.0.1 it signed, made with `openssl` in `dir`.
fn certificates(dir: &Path) -> bool {
    let run = |args: &[&str]| {
        Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    std::fs::write(dir.join("san.ext"), "subjectAltName=IP:127.0.0.1\n").unwrap();
    run(&[
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-days",
        "2",
        "-subj",
        "/CN=giving test CA",
    ]) && run(&[
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
        "-subj",
        "/CN=127.0.0.1",
    ]) && run(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "server.pem",
        "-days",
        "2",
        "-extfile",
        "san.ext",
    ])
}

#[test]
fn tls_with_the_run_ca_fans_in_and_a_client_without_it_is_refused() {
    if !installed("openssl", &["version"]) {
        println!("SKIPPED: openssl is not installed (it makes the test's certificates)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let certs = dir.path().join("certs");
    std::fs::create_dir(&certs).unwrap();
    assert!(
        certificates(&certs),
        "openssl could not make the certificates"
    );
    let body = format!(
        "tls {{ cert_file: \"{}\", key_file: \"{}\" }}\nauthorization {{ token: \"{TOKEN}\" }}",
        certs.join("server.pem").display(),
        certs.join("server.key").display()
    );
    let Some(server) = nats_configured(&body, dir.path()) else {
        println!("SKIPPED: nats-server is not installed");
        return;
    };
    let url = format!("tls://127.0.0.1:{}", server.port);
    let ca = certs.join("ca.pem").display().to_string();
    let auth = ["--nats-ca", &ca, "--nats-token", TOKEN];
    let watch_log = dir.path().join("watch");
    let (watch, mut lines) = start_watch(&url, "tls", &watch_log, &auth, &[]);
    let mut rank0 = rank_command(&url, "tls", 0, &dir.path().join("rank0"));
    rank0.args(auth);
    let mut rank1 = rank_command(&url, "tls", 1, &dir.path().join("rank1"));
    rank1.env("NATS_CA", &ca).env("NATS_TOKEN", TOKEN);
    // Without the CA, the server's certificate is not trusted: refused, trains on.
    let mut untrusting = rank_command(&url, "tls", 1, &dir.path().join("untrusting"));
    untrusting.args(["--nats-token", TOKEN]);
    let (out0, out1, untrusting) = (run_ok(rank0), run_ok(rank1), run_ok(untrusting));
    let watched = watch.wait_with_output().unwrap();
    assert!(watched.status.success(), "{:?}", lines.drain());

    let events = events_in(&watch_log);
    assert!(
        rates_of(&events, 0) > 0 && rates_of(&events, 1) > 0,
        "both ranks fanned in"
    );
    let said = String::from_utf8_lossy(&untrusting.stderr);
    let complaints = said.lines().filter(|l| l.contains("giving: nats:")).count();
    assert_eq!(complaints, 1, "one report of the refused handshake: {said}");
    assert!(String::from_utf8_lossy(&untrusting.stdout).contains("done: 30 steps"));
    let printed: Vec<&[u8]> = vec![&out0.stdout, &out0.stderr, &out1.stdout, &out1.stderr];
    assert_no_secret(dir.path(), &SERVER_FILES, &printed, &[TOKEN]);
}

#[test]
fn a_fan_in_with_wrong_credentials_fails_naming_the_server_without_its_password() {
    let dir = tempfile::tempdir().unwrap();
    let Some(server) = nats_configured(&permissions(), dir.path()) else {
        println!("SKIPPED: nats-server is not installed");
        return;
    };
    let url = format!(
        "nats://watcher:wrong-{WATCH_PASSWORD}@127.0.0.1:{}",
        server.port
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let error = runtime
        .block_on(FanIn::connect(&url, "perm"))
        .unwrap_err()
        .to_string();
    assert!(error.contains("watcher:***@127.0.0.1"), "{error}");
    assert!(!error.contains(WATCH_PASSWORD), "{error}");
    assert!(error.to_lowercase().contains("authorization"), "{error}");
}

#[test]
fn an_nkey_seed_file_authenticates_a_rank_and_its_watcher() {
    let dir = tempfile::tempdir().unwrap();
    let user = nkeys::KeyPair::new_user();
    let seed = user.seed().unwrap();
    let body = format!(
        "authorization {{ users = [ {{ nkey: \"{}\" }} ] }}",
        user.public_key()
    );
    let Some(server) = nats_configured(&body, dir.path()) else {
        println!("SKIPPED: nats-server is not installed");
        return;
    };
    let seed_file = dir.path().join("user.nk");
    std::fs::write(&seed_file, format!("{seed}\n")).unwrap();
    let url = format!("nats://127.0.0.1:{}", server.port);
    let auth = NatsAuth::default().nkey(&seed_file);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut fan_in = runtime
        .block_on(FanIn::connect_with(&url, "nk", &auth))
        .unwrap();
    // Without the seed, the server refuses the watcher.
    assert!(runtime.block_on(FanIn::connect(&url, "nk")).is_err());
    let me = Identity::new("nk").unwrap().rank(0).world_size(1);
    let publisher = NatsPublisher::new(&url, me).auth(auth.clone());
    let run = Overseer::new().with(publisher).run(|| {
        for step in 0..5u64 {
            giving::give!(loss = 0.25, step);
        }
    });
    assert!(run.problems.is_empty(), "{:?}", run.problems);
    let losses = runtime.block_on(async {
        let mut losses = 0;
        while let Ok(Some(event)) =
            tokio::time::timeout(Duration::from_secs(20), fan_in.next()).await
        {
            losses += usize::from(event.has(keys::LOSS));
            if event.has(keys::RANK_END) {
                break;
            }
        }
        losses
    });
    assert_eq!(losses, 5, "every loss of the rank arrived");
}

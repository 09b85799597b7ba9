//! `giving train --mlflow URI --experiment NAME` against a local `mlflow server` (SQLite
//! store), read back with MLflow's Python client (SKIPPED when mlflow is not installed).

mod servers;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use servers::{
    assert_no_secret, assert_same_losses, giving_command, logged_losses, mlflow_basic_auth,
    mlflow_in,
};

const READ_BACK: &str = r#"
import json, sys
from mlflow.tracking import MlflowClient
client = MlflowClient(tracking_uri=sys.argv[1])
experiment = client.get_experiment_by_name(sys.argv[2])
runs = []
for run in client.search_runs([experiment.experiment_id]):
    loss = client.get_metric_history(run.info.run_id, "loss")
    runs.append({"name": run.info.run_name, "status": run.info.status,
                 "params": run.data.params,
                 "loss": [[m.step, m.value] for m in sorted(loss, key=lambda m: m.step)]})
print(json.dumps(runs))
"#;

/// The runs of `experiment`, as MLflow's client reads them.
fn read_back(uri: &str, experiment: &str) -> Vec<serde_json::Value> {
    read_back_as(uri, experiment, &[])
}

/// As [`read_back`], the client given the variables `env` (MLflow's credentials).
fn read_back_as(uri: &str, experiment: &str, env: &[(&str, &str)]) -> Vec<serde_json::Value> {
    let python = Command::new("python3")
        .args(["-c", READ_BACK, uri, experiment])
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&python.stderr);
    assert!(python.status.success(), "{stderr}");
    serde_json::from_slice::<serde_json::Value>(&python.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

fn train_args(uri: &str, name: &str, steps: &str, log: &Path) -> Command {
    let mut command = giving_command();
    command
        .args([
            "train",
            "mlp",
            "--steps",
            steps,
            "--batch-size",
            "16",
            "--valid-size",
            "32",
        ])
        .args([
            "--mlflow",
            uri,
            "--experiment",
            "giving-test",
            "--mlflow-run-name",
            name,
        ])
        .arg("--log")
        .arg(log);
    command
}

#[test]
fn mlflow_reads_the_params_the_losses_at_their_steps_and_the_final_status() {
    let dir = tempfile::tempdir().unwrap();
    let Some(server) = mlflow_in(dir.path()) else {
        println!("SKIPPED: mlflow is not installed");
        return;
    };
    let uri = format!("http://127.0.0.1:{}", server.port);

    // A run that ends by itself: FINISHED.
    let log = dir.path().join("finished");
    let out = train_args(&uri, "finished", "12", &log)
        .args(["--train-size", "192", "--every", "0"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // A run stopped with Ctrl-C: KILLED.
    let (mut child, mut lines) = servers::spawn_until(
        train_args(&uri, "killed", "100000", &dir.path().join("killed")).args(["--every", "5"]),
        "epoch 0 step",
        Duration::from_secs(60),
    );
    // SAFETY: kill(2) on our own child's pid.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{:?}", lines.drain());

    let runs = read_back(&uri, "giving-test");
    let run = |name: &str| {
        runs.iter()
            .find(|r| r["name"] == name)
            .unwrap_or_else(|| panic!("run {name} in {runs:?}"))
    };
    let finished = run("finished");
    assert_eq!(finished["status"], "FINISHED");
    assert_eq!(finished["params"]["batch_size"], "16");
    assert_eq!(finished["params"]["model"], "mlp");
    assert_eq!(finished["params"]["steps"], "12");
    let logged = logged_losses(&log);
    assert_eq!(logged.len(), 12);
    assert_same_losses(&finished["loss"], &logged);
    assert_eq!(run("killed")["status"], "KILLED");
}

#[test]
fn an_unreachable_server_is_reported_once_and_training_goes_on() {
    let port = servers::free_port();
    let dir = tempfile::tempdir().unwrap();
    let out = train_args(
        &format!("http://127.0.0.1:{port}"),
        "nowhere",
        "6",
        &dir.path().join("log"),
    )
    .args(["--train-size", "96", "--every", "0"])
    .output()
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("done: 6 steps"),
        "training went on: {stdout}{stderr}"
    );
    assert_eq!(
        stderr.matches("MLflow server unreachable").count(),
        1,
        "{stderr}"
    );
}

const ADMIN_PASSWORD: &str = "adm-Pw7-SECRET-mlflow";

#[test]
fn a_server_behind_basic_auth_gets_the_run_and_wrong_credentials_are_reported_once() {
    let dir = tempfile::tempdir().unwrap();
    let Some(server) = mlflow_basic_auth(dir.path(), ADMIN_PASSWORD) else {
        println!(
            "SKIPPED: mlflow or its basic-auth app (pip install mlflow[auth]) is not installed"
        );
        return;
    };
    let uri = format!("http://127.0.0.1:{}", server.port);
    let admin = [
        ("MLFLOW_TRACKING_USERNAME", "admin"),
        ("MLFLOW_TRACKING_PASSWORD", ADMIN_PASSWORD),
    ];
    let runs_dir = dir.path().join("runs");
    let log = runs_dir.join("authed");
    let out = train_args(&uri, "authed", "12", &log)
        .args(["--train-size", "192", "--every", "0"])
        .envs(admin)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let refused = train_args(&uri, "refused", "6", &runs_dir.join("refused"))
        .args(["--train-size", "96", "--every", "0"])
        .env("MLFLOW_TRACKING_USERNAME", "admin")
        .env("MLFLOW_TRACKING_PASSWORD", "wrong-password")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&refused.stdout);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stdout.contains("done: 6 steps"),
        "training went on: {stdout}{stderr}"
    );
    let reports = stderr.lines().filter(|l| l.contains("401")).count();
    assert_eq!(reports, 1, "the refusal is reported once: {stderr}");

    let runs = read_back_as(&uri, "giving-test", &admin);
    let names: Vec<&str> = runs.iter().filter_map(|r| r["name"].as_str()).collect();
    assert_eq!(names, ["authed"], "{runs:?}");
    assert_eq!(runs[0]["status"], "FINISHED");
    assert_same_losses(&runs[0]["loss"], &logged_losses(&log));
    // No file of either run, nor what they printed, holds the password.
    let printed = [&out.stdout, &out.stderr, &refused.stdout, &refused.stderr].map(Vec::as_slice);
    assert_no_secret(&runs_dir, &[], &printed, &[ADMIN_PASSWORD]);
}

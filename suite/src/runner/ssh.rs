//! Starting a benchmark process on another node: the `ssh` command line, and the remote shell
//! script that runs the benchmark there and stops it when the connection goes.
//!
//! ssh forwards only stdout and stderr, so a remote child gets `DATA_FD=1` and writes its
//! events into stdout in the smuggled form (giving's and voir's), which the runner decodes as
//! it does a local child's stdout.
//!
//! Without a terminal, sshd does not signal the remote command when the connection closes.
//! So the script keeps the channel's stdin open in a watcher, `cat`, which reads until the
//! local ssh is gone (its stdin closes with it: the runner stopped it at `max_duration`, on
//! Ctrl-C, or it died), and then sends SIGTERM to the benchmark. That is how a stop of the
//! local process reaches the remote one without a tty, whose line discipline would rewrite the
//! benchmark's output.

use std::path::Path;

use crate::config::{Node, SystemConfig};

/// The shell script run on the node: `cd` to the runner's folder, start the benchmark with
/// its variables in the background, stop it when stdin (the connection) closes, and exit with
/// its status.
pub(crate) fn remote_script(
    cwd: &Path,
    env: &[(String, String)],
    argv: &[String],
) -> Result<String, String> {
    let quote = |word: &str| {
        shlex::try_quote(word).map(|q| q.into_owned()).map_err(|e| {
            format!(
                "cannot pass `{}` to a remote shell: {e}",
                word.escape_debug()
            )
        })
    };
    let mut command = vec!["env".to_owned()];
    for (name, value) in env {
        let valid = !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(format!("`{name}` is not a variable name a shell accepts"));
        }
        command.push(format!("{name}={}", quote(value)?));
    }
    for word in argv {
        command.push(quote(word)?);
    }
    let cwd = quote(&cwd.display().to_string())?;
    let command = command.join(" ");
    // fd 9 keeps the connection's stdin for the watcher: a background job's stdin is
    // /dev/null in a non-interactive shell, unless it is redirected explicitly. `wait`'s
    // stderr goes: the shell's "Terminated" notice is not the benchmark's output.
    Ok(format!(
        "cd {cwd} || exit 127\n\
         exec 9<&0\n\
         {command} </dev/null 9<&- &\n\
         pid=$!\n\
         {{ cat >/dev/null; kill -TERM \"$pid\"; }} <&9 >/dev/null 2>&1 &\n\
         watcher=$!\n\
         exec 9<&-\n\
         wait \"$pid\" 2>/dev/null\n\
         status=$?\n\
         kill \"$watcher\" 2>/dev/null\n\
         exit \"$status\"\n"
    ))
}

/// `ssh` and its options up to the destination, for `node`: batch mode (never a password
/// prompt), milabench's host-key options, the system's key and extra options, a 10 s connect
/// timeout.
pub(crate) fn ssh_argv(system: &SystemConfig, node: &Node) -> Vec<String> {
    let mut argv: Vec<String> = [
        "ssh",
        "-o",
        "BatchMode=yes",
        "-o",
        "CheckHostIP=no",
        "-o",
        "StrictHostKeyChecking=no",
        "-p",
    ]
    .map(str::to_owned)
    .into();
    argv.push(node.sshport.to_string());
    if let Some(key) = &system.sshkey {
        argv.push("-i".to_owned());
        argv.push(key.display().to_string());
    }
    if let Some(user) = &node.user {
        argv.push("-l".to_owned());
        argv.push(user.clone());
    }
    argv.extend(system.ssh_options.iter().cloned());
    // After the system's options: ssh keeps the first value it is given for an option, so a
    // `ConnectTimeout` of the system's wins over this default. Without one, a node that does
    // not answer would hold the run for the system's TCP timeout (minutes).
    argv.extend(["-o".to_owned(), "ConnectTimeout=10".to_owned()]);
    // Options end here: a node whose address starts with `-` is not taken for one.
    argv.push("--".to_owned());
    argv.push(node.ip.clone());
    argv
}

/// How many NVIDIA GPUs `node` has (`/proc/driver/nvidia/gpus`, as this machine's count is
/// read), asked over ssh before anything runs: the node's plan uses it, and a node that cannot
/// be reached stops the run at once, with what ssh said, rather than failing every benchmark.
pub(crate) fn probe_gpus(system: &SystemConfig, node: &Node) -> Result<usize, String> {
    let argv = ssh_argv(system, node);
    let output = std::process::Command::new(&argv[0])
        .args(&argv[1..])
        .arg("ls /proc/driver/nvidia/gpus 2>/dev/null | wc -l")
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", argv[0]))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    match (output.status.success(), stdout.trim().parse::<usize>()) {
        (true, Ok(n)) => Ok(n),
        _ => Err(format!(
            "node `{}` ({}:{}) cannot be reached over ssh: {}",
            node.name,
            node.ip,
            node.sshport,
            String::from_utf8_lossy(&output.stderr).trim()
        )),
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::process::Command;

    use super::*;

    #[test]
    fn the_script_runs_the_command_with_its_variables_and_exit_status() {
        let dir = tempfile::tempdir().unwrap();
        let script = remote_script(
            dir.path(),
            &[("A_B".to_owned(), "it's $HOME; `x`".to_owned())],
            &[
                "sh".to_owned(),
                "-c".to_owned(),
                "printf '%s|%s' \"$A_B\" \"$(pwd)\"; exit 3".to_owned(),
            ],
        )
        .unwrap();
        // The runner keeps ssh's stdin open while the benchmark runs: so does this test.
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(&script)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let mut stdout = String::new();
        std::io::Read::read_to_string(child.stdout.as_mut().unwrap(), &mut stdout).unwrap();
        let status = child.wait().unwrap();
        drop(stdin);
        assert_eq!(status.code(), Some(3), "{script}");
        let pwd = std::fs::canonicalize(dir.path()).unwrap();
        assert_eq!(stdout, format!("it's $HOME; `x`|{}", pwd.display()));
    }

    #[test]
    fn closing_stdin_stops_the_remote_command() {
        let script =
            remote_script(Path::new("/"), &[], &["sleep".to_owned(), "30".to_owned()]).unwrap();
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(&script)
            .stdin(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdin.take());
        // sleep got SIGTERM: the shell reports 128 + 15.
        assert_eq!(child.wait().unwrap().code(), Some(143));
    }

    #[test]
    fn bad_names_and_values_are_refused_with_what_is_wrong() {
        let e =
            remote_script(Path::new("/"), &[("A B".to_owned(), "x".to_owned())], &[]).unwrap_err();
        assert!(e.contains("`A B`"), "{e}");
        let e = remote_script(Path::new("/"), &[], &["a\0b".to_owned()]).unwrap_err();
        assert!(e.contains("a\\0b"), "{e}");
    }

    #[test]
    fn ssh_gets_the_port_key_user_and_options_before_the_address() {
        let node = Node {
            name: "n1".to_owned(),
            ip: "10.0.0.2".to_owned(),
            port: None,
            main: false,
            user: Some("bench".to_owned()),
            sshport: 2222,
            hostname: None,
        };
        let system = SystemConfig {
            file: PathBuf::from("system.yaml"),
            sshkey: Some(PathBuf::from("/k")),
            ssh_options: vec!["-o".to_owned(), "ConnectTimeout=5".to_owned()],
            nats: None,
            nodes: vec![node.clone()],
            ..Default::default()
        };
        let argv = ssh_argv(&system, &node);
        let tail: Vec<&str> = argv[7..].iter().map(String::as_str).collect();
        assert_eq!(
            tail,
            [
                "-p",
                "2222",
                "-i",
                "/k",
                "-l",
                "bench",
                "-o",
                "ConnectTimeout=5",
                "-o",
                "ConnectTimeout=10",
                "--",
                "10.0.0.2"
            ]
        );
    }
}

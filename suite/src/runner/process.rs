//! Running one benchmark process: the `DATA_FD` pipe, captured output, `max_duration`.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use giving::vocab::keys;
use giving::{Event, Giver, Value};
use giving_instruments::child::{DATA_FD, STOP_AFTER};
use giving_log::{LogHeader, LogWriter};
use serde::Serialize;

use crate::RunError;
use crate::protocol::{DataDecoder, Incoming, OutOfBand, Unsmuggler};

use super::data_lines::DataLines;
use super::nats::{NatsRoute, NatsSource};
use super::preamble::Preamble;
use super::wait::{Cause, wait};

/// The descriptor number a child finds its pipe at (`DATA_FD=3`), as voir's.
const CHILD_FD: i32 = 3;

/// What to run, and where its files go.
#[derive(Debug, Clone)]
pub struct ProcessSpec {
    /// The program and its arguments.
    pub argv: Vec<String>,
    /// Variables set for it.
    pub env: Vec<(String, String)>,
    /// `voir.options.stop`, passed as `GIVING_STOP`.
    pub stop: Option<u64>,
    /// When it is sent SIGTERM.
    pub max_duration: Duration,
    /// How long after SIGTERM it is sent SIGKILL.
    pub grace: Duration,
    /// `{bench}.{tag}`: the stem of its files in the run folder.
    pub stem: PathBuf,
    /// The `config` and `meta` lines at the top of its `.data` file.
    pub preamble: Preamble,
    /// When set (Ctrl-C in the runner), the process is stopped as at `max_duration`.
    pub interrupt: Option<Arc<AtomicBool>>,
    /// Where its events are given again, tagged [`BENCH`](keys::BENCH) with the name.
    pub forward: Option<(Giver, String)>,
    /// When set, the process runs on another node, started over ssh.
    pub remote: Option<Remote>,
}

/// How a process on another node is reached.
#[derive(Debug, Clone)]
pub struct Remote {
    /// `ssh` and its options, up to the node's address (the script follows).
    pub ssh: Vec<String>,
    /// The folder the process starts in there (the runner's: nodes share the layout, as
    /// milabench assumes).
    pub cwd: PathBuf,
    /// When set, the process publishes its events to NATS instead of smuggling them into its
    /// stdout, and the runner receives them there.
    pub nats: Option<NatsRoute>,
}

/// How long the runner waits, after a process published through NATS exited, for its last
/// records to arrive.
const NATS_DRAIN: Duration = Duration::from_secs(10);

/// How a process ended, written to `{bench}.{tag}.json`.
#[derive(Debug, Clone, Serialize)]
pub struct ProcessOutcome {
    /// The command line run.
    pub argv: Vec<String>,
    /// The exit code (`None` when a signal ended it).
    pub exit_code: Option<i32>,
    /// The signal that ended it.
    pub signal: Option<i32>,
    /// How the runner ended it, when it did: `"sigterm"` when it ended on SIGTERM, `"sigkill"`
    /// when it had to be killed after the grace period; `None` when it ended on its own. The
    /// runner ends a process when `max_duration` passed, when the run is interrupted, or when
    /// the process asked to be ended (then `stopped` says so).
    pub killed: Option<&'static str>,
    /// Why the process was ended as a success, when it asked to be (`{"$event": "stop"}`,
    /// voir's early stop: `"voir early stop"`): the runner terminated it, or it ended by itself
    /// after asking; milabench counts it a success whatever its exit status.
    pub stopped: Option<String>,
    /// Whether it was stopped because the runner was interrupted (then `killed` says how).
    pub interrupted: bool,
    /// Seconds from start to exit.
    pub duration_s: f64,
    /// Events read from its pipe and stdout.
    pub events: u64,
    /// Rates among them, whatever their task (the report counts only the training ones:
    /// `task: "train"`, or no task, which the `.data` file writes as `train`).
    pub rates: Vec<f64>,
    /// What could not be read from its pipe (reported, skipped).
    pub protocol_errors: Vec<String>,
    /// What the process said about itself: its log header (command line, host, pid, crate
    /// versions) or its last `meta` event; `None` when it said nothing.
    pub meta: Option<serde_json::Value>,
    /// The errors it reported (`{"$event": "error"}`: voir's, when the script raised), as
    /// `{type}: {message}`. One fails the process, unless it was `stopped`.
    pub error_events: Vec<String>,
    /// The voir phases it went through (`{"$event": "phase"}`), in order: the last is the one
    /// it was in when it ended.
    pub phases: Vec<String>,
    /// Whether it succeeded: it asked to be stopped, or it exited 0 without being killed and
    /// without reporting an error (milabench's rule).
    pub success: bool,
}

/// Runs one process to its end (or its kill), writing `{stem}.data` (milabench's JSON lines),
/// `.giving` (its events as a giving log), `.stdout`, `.stderr`.
pub fn run_process(spec: &ProcessSpec) -> Result<ProcessOutcome, RunError> {
    let log_path = file(&spec.stem, "giving");
    let data_path = file(&spec.stem, "data");
    let stderr_path = file(&spec.stem, "stderr");
    let stdout_path = file(&spec.stem, "stdout");
    let stderr = File::create(&stderr_path).map_err(io("create", &stderr_path))?;
    let stdout_file = File::create(&stdout_path).map_err(io("create", &stdout_path))?;
    let mut header = LogHeader::for_this_process();
    header.extra.insert(
        "bench_argv".to_owned(),
        Value::List(spec.argv.iter().map(|a| Value::from(a.as_str())).collect()),
    );
    let log = LogWriter::create(&log_path, &header)?;
    let mut lines = DataLines::create(&data_path).map_err(io("create", &data_path))?;
    lines
        .runner("config", &spec.preamble.config)
        .and_then(|()| lines.runner("meta", &spec.preamble.meta))
        .map_err(io("write", &data_path))?;

    let (mut command, pipe) = match command(spec) {
        Ok(built) => built,
        Err(message) => return Ok(not_started(spec, &stderr_path, log, lines, message)),
    };
    command.stderr(stderr);
    let (tx, rx) = std::sync::mpsc::channel::<Incoming>();
    // Subscribed before the process starts, so that nothing it publishes is missed.
    let nats = match spec.remote.as_ref().and_then(|r| r.nats.as_ref()) {
        Some(route) => match NatsSource::subscribe(route, tx.clone()) {
            Ok(source) => Some(source),
            Err(message) => return Ok(not_started(spec, &stderr_path, log, lines, message)),
        },
        None => None,
    };
    let started = Instant::now();
    let spawned = command.spawn();
    // The write end must close here, or the pipe never ends.
    let pipe_read = pipe.map(|(read, _write)| read);
    let mut child = match spawned {
        Ok(child) => child,
        Err(e) => {
            let message = format!("cannot start {}: {e}", command.get_program().display());
            return Ok(not_started(spec, &stderr_path, log, lines, message));
        }
    };
    // Not fatal: the child runs already, and must be waited for.
    let start_error = lines.start(&spec.argv).err();
    // A remote process is stopped when its connection closes (see `ssh.rs`): ssh's stdin
    // stays open until the process has ended.
    let ssh_stdin = child.stdin.take();
    let data_reader = pipe_read.map(|pipe| reader_thread(pipe, tx.clone(), None));
    let stdout = child
        .stdout
        .take()
        .map(|out| reader_thread(out, tx, Some(stdout_file)));
    let forward = spec.forward.clone();
    // Set by the writer when the child asks to be ended; the wait below watches it.
    let stop_asked = Arc::new(AtomicBool::new(false));
    let asked = stop_asked.clone();
    let writer = std::thread::spawn(move || sink(log, lines, rx, forward, &asked));

    let (status, ending) = wait(
        &mut child,
        spec.max_duration,
        spec.grace,
        spec.interrupt.as_deref(),
        &stop_asked,
    )
    .map_err(io("wait for", &spec.stem))?;
    let duration_s = started.elapsed().as_secs_f64();
    drop(ssh_stdin);
    let nats_ended = nats.map(|source| source.finish(NATS_DRAIN));
    if let Some(reader) = data_reader {
        let _ = reader.join();
    }
    if let Some(stdout) = stdout {
        let _ = stdout.join();
    }
    let Received {
        events,
        rates,
        errors: mut protocol_errors,
        meta,
        stopped,
        error_events,
        phases,
        lines,
    } = writer.join().unwrap_or_else(|_| Received {
        errors: vec!["the log writer panicked".to_owned()],
        ..Received::default()
    });
    // Python's `Popen.returncode`: the exit code, or minus the signal that ended it.
    let return_code = status
        .code()
        .map(i64::from)
        .or_else(|| status.signal().map(|s| -i64::from(s)));
    let ended = match lines {
        Some(lines) => Ok(lines),
        None => DataLines::append(&data_path),
    }
    .and_then(|mut lines| lines.end(&spec.argv, return_code));
    if let Some(e) = start_error {
        protocol_errors.push(format!("cannot write the start of the data file: {e}"));
    }
    if let Err(e) = ended {
        protocol_errors.push(format!("cannot write the end of the data file: {e}"));
    }
    if nats_ended == Some(false) {
        protocol_errors.push(format!(
            "no end record arrived through NATS within {} s of the exit: the run may be cut",
            NATS_DRAIN.as_secs()
        ));
    }
    // A stop counts when the runner ended the process for it, or the process ended by
    // itself after asking: not when it came while the runner was ending it for another reason.
    let stopped = stopped.filter(|_| matches!(ending.cause, None | Some(Cause::Stop)));
    let killed = ending.killed;
    Ok(ProcessOutcome {
        argv: spec.argv.clone(),
        exit_code: status.code(),
        signal: status.signal(),
        killed,
        interrupted: ending.cause == Some(Cause::Interrupt),
        duration_s,
        events,
        rates,
        success: stopped.is_some()
            || (status.success() && killed.is_none() && error_events.is_empty()),
        stopped,
        protocol_errors,
        meta,
        error_events,
        phases,
    })
}

/// The command that starts `spec`'s process, and for a local one the `DATA_FD` pipe it writes
/// to (the runner keeps the read end; the write end closes once the child has it).
#[allow(clippy::type_complexity)]
fn command(
    spec: &ProcessSpec,
) -> Result<(Command, Option<(std::io::PipeReader, std::io::PipeWriter)>), String> {
    let Some((program, args)) = spec.argv.split_first() else {
        return Err("empty command".to_owned());
    };
    let stop = spec
        .stop
        .map(|stop| (STOP_AFTER.to_owned(), stop.to_string()));
    if let Some(remote) = &spec.remote {
        // ssh forwards only stdout: the events come smuggled into it (`DATA_FD=1`), or
        // through NATS.
        let channel = match &remote.nats {
            None => vec![(DATA_FD.to_owned(), "1".to_owned())],
            Some(route) => vec![
                (giving_nats::PUBLISH_ENV.to_owned(), route.url.clone()),
                (giving_nats::RUN_ENV.to_owned(), route.run.clone()),
            ],
        };
        let env: Vec<(String, String)> = spec
            .env
            .iter()
            .cloned()
            .chain(channel)
            .chain(stop)
            .collect();
        let script = super::ssh::remote_script(&remote.cwd, &env, &spec.argv)?;
        let (ssh, ssh_args) = remote.ssh.split_first().ok_or("empty ssh command")?;
        let mut command = Command::new(ssh);
        command.args(ssh_args).arg(script);
        // Its own process group: a timeout or an interrupt reaches it and what it started.
        command.process_group(0);
        command.stdin(Stdio::piped()).stdout(Stdio::piped());
        return Ok((command, None));
    }
    let (pipe_read, pipe_write) =
        std::io::pipe().map_err(|e| format!("cannot create a pipe: {e}"))?;
    let mut command = Command::new(program);
    command
        .args(args)
        .envs(spec.env.iter().cloned())
        .env(DATA_FD, CHILD_FD.to_string());
    command.env_remove(STOP_AFTER);
    if let Some((name, value)) = stop {
        command.env(name, value);
    }
    // Its own process group: a timeout or an interrupt reaches what it started, too.
    command.process_group(0);
    command.stdin(Stdio::null()).stdout(Stdio::piped());
    let fd = pipe_write.as_raw_fd();
    // SAFETY: between fork and exec only async-signal-safe calls (dup2, fcntl) are made, on a
    // descriptor that is open in the child (inherited from this process).
    unsafe {
        command.pre_exec(move || {
            let ok = if fd == CHILD_FD {
                libc::fcntl(fd, libc::F_SETFD, 0) != -1
            } else {
                libc::dup2(fd, CHILD_FD) != -1
            };
            if ok {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
    Ok((command, Some((pipe_read, pipe_write))))
}

/// The outcome of a process that could not be started: `message` is appended to its stderr
/// file and recorded as its protocol error.
fn not_started(
    spec: &ProcessSpec,
    stderr_path: &Path,
    log: LogWriter,
    mut lines: DataLines,
    message: String,
) -> ProcessOutcome {
    let _ = File::options()
        .append(true)
        .open(stderr_path)
        .and_then(|mut f| writeln!(f, "{message}"));
    let _ = log.close(0);
    // milabench reads a run only with its `start` and `end`: no return code, a failure.
    let _ = lines
        .format_error(&message)
        .and_then(|()| lines.start(&spec.argv))
        .and_then(|()| lines.end(&spec.argv, None));
    ProcessOutcome {
        argv: spec.argv.clone(),
        exit_code: None,
        signal: None,
        killed: None,
        stopped: None,
        interrupted: false,
        duration_s: 0.0,
        events: 0,
        rates: Vec::new(),
        protocol_errors: vec![message],
        meta: None,
        error_events: Vec::new(),
        phases: Vec::new(),
        success: false,
    }
}

/// `{stem}.{ext}` (`mlp.D0` + `data`: `with_extension` would replace the tag).
pub(crate) fn file(stem: &Path, ext: &str) -> PathBuf {
    PathBuf::from(format!("{}.{ext}", stem.display()))
}

/// An I/O error of the runner on `path`.
fn io<'a>(action: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> RunError + 'a {
    move |source| RunError::Io {
        action,
        path: path.to_path_buf(),
        source,
    }
}

/// Reads a pipe to its end, decoding: the data pipe (`plain` is `None`) in either form;
/// stdout through the unsmuggler, its plain output copied to `plain`.
fn reader_thread(
    mut pipe: impl Read + Send + 'static,
    tx: std::sync::mpsc::Sender<Incoming>,
    mut plain: Option<File>,
) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 64 * 1024];
        let mut data = DataDecoder::new();
        let mut smuggled = Unsmuggler::new();
        let mut text = Vec::new();
        let mut items = Vec::new();
        loop {
            let n = match pipe.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            match plain.as_mut() {
                Some(file) => {
                    text.clear();
                    smuggled.push(&buf[..n], &mut text, &mut items);
                    let _ = file.write_all(&text);
                }
                None => items.extend(data.push(&buf[..n])),
            }
            for item in items.drain(..) {
                let _ = tx.send(item);
            }
        }
        if plain.is_none()
            && let Some(item) = data.finish()
        {
            let _ = tx.send(item);
        }
    })
}

/// What [`sink`] read from a process.
#[derive(Default)]
struct Received {
    events: u64,
    rates: Vec<f64>,
    errors: Vec<String>,
    meta: Option<serde_json::Value>,
    /// Set when the child asked to be ended (`$event: stop`).
    stopped: Option<String>,
    /// The errors it reported (`$event: error`), as `{type}: {message}`.
    error_events: Vec<String>,
    /// The voir phases it entered (`$event: phase`), in order.
    phases: Vec<String>,
    /// The `.data` writer, handed back for the `end` line (`None` after a panic).
    lines: Option<DataLines>,
}

/// Why a process that asked to be ended was, in its record.
const STOP_REASON: &str = "voir early stop";

/// Writes what the readers decode to the `.giving` log and the `.data` lines; protocol errors
/// become `problem` events in the log and `format_error` lines. voir's out-of-band events are kept there as they came, and acted on: a
/// `stop` sets `stop_asked` (the runner then ends the process), an `error` and a `phase` are
/// recorded, and a `phase` is given again with [`PHASE`](keys::PHASE) for the dashboard.
fn sink(
    mut log: LogWriter,
    mut lines: DataLines,
    rx: std::sync::mpsc::Receiver<Incoming>,
    forward: Option<(Giver, String)>,
    stop_asked: &AtomicBool,
) -> Received {
    let mut out = Received::default();
    for item in rx {
        // A protocol error is the runner's `format_error` line, not a `data` line.
        let (event, from_child) = match item {
            Incoming::Event(event) => (event, true),
            Incoming::Header(header) => {
                out.meta = Some(serde_json::json!({
                    "command_line": header.command_line,
                    "host": header.host,
                    "pid": header.pid,
                    "versions": header.crate_versions,
                }));
                continue;
            }
            Incoming::End => continue,
            Incoming::Garbage(message) => {
                let event = Event::new([
                    (keys::PROBLEM, Value::from(message.as_str())),
                    (keys::INSTRUMENT, Value::from("suite-protocol")),
                ]);
                if let Err(e) = lines.format_error(&message) {
                    out.errors.push(format!("cannot write the data file: {e}"));
                }
                out.errors.push(message);
                (event, false)
            }
        };
        if let Some(rate) = event.get(keys::RATE).and_then(Value::as_f64) {
            out.rates.push(rate);
        }
        if let Some(meta) = event.get(keys::META)
            && let Ok(meta) = serde_json::to_value(meta)
        {
            out.meta = Some(meta);
        }
        let mut phase = None;
        match OutOfBand::of(&event) {
            Some(OutOfBand::Stop) => {
                out.stopped = Some(STOP_REASON.to_owned());
                stop_asked.store(true, Ordering::Relaxed);
            }
            Some(error @ OutOfBand::Error { .. }) => {
                out.error_events.extend(error.error_text());
            }
            Some(OutOfBand::Phase(name)) => {
                out.phases.push(name.clone());
                phase = Some(name);
            }
            Some(OutOfBand::Other(_)) | None => {}
        }
        out.events += 1;
        if let Some((giver, name)) = &forward {
            let given = event.with(keys::BENCH, name.as_str());
            giver.give(match phase {
                Some(phase) => given.with(keys::PHASE, phase.as_str()),
                None => given,
            });
        }
        if let Err(e) = log.write(&event) {
            out.errors.push(format!("cannot write the giving log: {e}"));
            break;
        }
        if from_child && let Err(e) = lines.child(&event) {
            out.errors.push(format!("cannot write the data file: {e}"));
            break;
        }
    }
    if let Err(e) = log.close(0) {
        out.errors.push(format!("cannot close the giving log: {e}"));
    }
    out.lines = Some(lines);
    if let Some((giver, name)) = &forward {
        giver.give(Event::new([
            (keys::BENCH, Value::from(name.as_str())),
            (keys::DONE, Value::Bool(true)),
        ]));
    }
    out
}

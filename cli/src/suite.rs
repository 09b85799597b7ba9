//! `giving suite run CONFIG`: runs a milabench-style suite (docs/suite.md).

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use giving::Giver;
use giving_instruments::{Dash, Instrument, Overseer, WebArgs};
use giving_suite::config::{Placeholders, Selection, Suite, SystemConfig};
use giving_suite::report::{
    Report, RunData, html, load_run, load_runs, load_summary, summary_json,
};
use giving_suite::runner::{ProcessResult, RunOptions, RunSummary, SystemFacts, run_suite};
use giving_suite::validation::{Layer, Severity, validate};

/// `giving suite …`
#[derive(Debug, Subcommand)]
pub(crate) enum SuiteCommand {
    /// Run a suite's benchmarks; write runs/{name}.{time}/ with each process's events
    /// ({bench}.{tag}.data, milabench's JSON lines; {bench}.{tag}.giving, a giving log), output,
    /// exit status, the resolved config and the system's facts, then runs the validation layers.
    /// Exits 1 when a benchmark failed or a layer found an error.
    Run(RunArgs),
    /// Print milabench's report of a run folder: System, Breakdown (bench, fail, n, ngpu, perf,
    /// sem%, std%, peak_memory, score, weight) and Scores (failure rate, PASS/FAIL, global
    /// score). Exits 1 when the failure rate is over 1% or a validation layer finds an error.
    Report(ReportArgs),
    /// Write milabench's summary JSON of run folders (`milabench summary`: per benchmark n,
    /// ngpu, successes, failures, train_rate, walltime, per_gpu, gpu_load, weight, energy,
    /// perf_watt …), readable by `giving suite report --compare` and milabench's tools.
    Summary(SummaryArgs),
    /// Print, per process, the command line and variables `suite run` would start (with
    /// `--json`, one JSON object a line, to diff with what milabench plans); starts nothing.
    /// Benchmarks whose requires_capabilities this system does not meet are listed as skipped.
    Plan(PlanArgs),
}

#[derive(Debug, Args)]
pub(crate) struct SummaryArgs {
    /// The run folders (runs/{name}.{time}); several are summarised as one run.
    #[arg(required = true)]
    runs: Vec<PathBuf>,
    /// Where to write it [default: stdout].
    #[arg(short, long, value_name = "FILE")]
    out: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub(crate) struct PlanArgs {
    /// The suite's YAML configuration (milabench's format).
    config: PathBuf,
    /// Plan only these benchmarks, by name or tag.
    #[arg(long)]
    select: Vec<String>,
    /// Leave out these benchmarks, by name or tag.
    #[arg(long)]
    exclude: Vec<String>,
    /// milabench's system configuration (nodes, arch, docker, options, gpu, dirs).
    #[arg(long, value_name = "FILE")]
    system: Option<PathBuf>,
    /// Where run folders are made.
    #[arg(long, default_value = "runs")]
    runs: PathBuf,
    /// `{data}` in the configuration.
    #[arg(long, default_value = "data")]
    data: PathBuf,
    /// milabench's base folder (`{milabench_base}`; venv/, extra/, cache/ under it)
    /// [default: the folder holding --runs].
    #[arg(long)]
    base: Option<PathBuf>,
    /// GPUs per node [default: this machine's].
    #[arg(long)]
    gpus: Option<usize>,
    /// CPUs per node [default: this machine's; the system's options.cpu.total_count wins].
    #[arg(long)]
    cpus: Option<usize>,
    /// One JSON object a line: bench, tag, node, ssh, argv, env.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct ReportArgs {
    /// The run folders (runs/{name}.{time}); several are reported as one run.
    #[arg(required = true)]
    runs: Vec<PathBuf>,
    /// A base to compare with, a run folder or a summary JSON (`giving suite summary`'s or
    /// milabench's): adds perf_base and perf_ratio per benchmark, and the score ratio.
    #[arg(long, value_name = "BASE")]
    compare: Option<PathBuf>,
    /// A suite configuration whose weights and `enabled` the score takes (milabench's
    /// `report --config`): its benchmarks that did not run count with score 0.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Also write the report as one self-contained HTML page, with a rate-over-time plot per
    /// benchmark and each process's output.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    #[command(flatten)]
    validations: ValidationArgs,
}

#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    /// The suite's YAML configuration (milabench's format).
    config: PathBuf,
    /// Run only these benchmarks, by name or tag (repeatable, or comma-separated).
    #[arg(long)]
    select: Vec<String>,
    /// Leave out these benchmarks, by name or tag.
    #[arg(long)]
    exclude: Vec<String>,
    /// Where run folders are made.
    #[arg(long, default_value = "runs")]
    runs: PathBuf,
    /// The run's name [default: the configuration's file name].
    #[arg(long)]
    name: Option<String>,
    /// `{data}` in the configuration.
    #[arg(long, default_value = "data")]
    data: PathBuf,
    /// Run every selected benchmark N times, in rounds (milabench's --repeat).
    #[arg(long, default_value_t = 1)]
    repeat: u32,
    /// Show a live dashboard of every running benchmark (a row each: progress toward its early
    /// stop, rate, loss; their total rate; the GPU panel from their gpudata); plain lines when
    /// stdout is not a terminal. `q` stops the run as Ctrl-C does.
    #[arg(long)]
    dash: bool,
    /// `--web [ADDR]`: a live web dashboard of the run (a row per benchmark process with its
    /// rate, a chart line per process).
    #[command(flatten)]
    web: WebArgs,
    /// milabench's system configuration (`system: {sshkey, nodes: [{name, ip, port, user,
    /// main, sshport}]}`): a benchmark runs on its `num_machines` first nodes, the main one
    /// here and the others over ssh, each process's events smuggled into its stdout.
    #[arg(long, value_name = "FILE")]
    system: Option<PathBuf>,
    /// Seconds a benchmark may go on after SIGTERM (sent at its max_duration) before SIGKILL.
    #[arg(long, default_value_t = 5.0)]
    grace: f64,
    #[command(flatten)]
    validations: ValidationArgs,
}

#[derive(Debug, Args)]
pub(crate) struct ValidationArgs {
    /// Validation layers: error, ensure_rate, loss, planning, usage, version (comma-separated),
    /// or all.
    #[arg(long, default_value = "error,ensure_rate,version", value_parser = Layer::parse_list)]
    // Spelled out so that clap parses one list, not repeated values.
    validations: ::std::vec::Vec<Layer>,
}

impl ValidationArgs {
    /// Prints the findings under a heading; whether none is an error.
    fn check(&self, run: &RunData) -> bool {
        let findings = validate(run, &self.validations);
        let names: Vec<_> = self.validations.iter().map(|l| l.name()).collect();
        println!();
        println!("Validation ({})", names.join(", "));
        println!("----------");
        for finding in &findings {
            println!("{finding}");
        }
        let errors = findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .count();
        println!("{errors} error(s), {} warning(s)", findings.len() - errors);
        errors == 0
    }
}

pub(crate) fn suite(command: SuiteCommand) -> Result<ExitCode> {
    match command {
        SuiteCommand::Run(args) => run(args),
        SuiteCommand::Report(args) => report(args),
        SuiteCommand::Summary(args) => summary(args),
        SuiteCommand::Plan(args) => plan(args),
    }
}

fn plan(args: PlanArgs) -> Result<ExitCode> {
    let facts = SystemFacts::detect();
    let system = args
        .system
        .as_ref()
        .map(SystemConfig::load)
        .transpose()
        .context("--system")?;
    let n_gpu = args.gpus.unwrap_or(facts.n_gpu);
    let placeholders = Placeholders {
        n_gpu,
        n_cpu: args.cpus.unwrap_or(facts.n_cpu),
        data: args.data,
        runs: args.runs.clone(),
        giving: std::env::current_exe().context("cannot find the giving program")?,
        base: args.base.or_else(|| default_base(&args.runs)),
        system: system.clone(),
        arch: facts.gpu_arch.clone(),
    };
    let suite = Suite::load(&args.config, &placeholders)?;
    for warning in &suite.warnings {
        eprintln!("warning: {warning}");
    }
    let selection = Selection::new(&args.select, &args.exclude);
    let name = args
        .config
        .file_stem()
        .map_or_else(|| "suite".into(), |s| s.to_string_lossy());
    // The run's folder is named when it starts.
    let run_dir = args.runs.join(format!("{name}.{{time}}"));
    let plan =
        giving_suite::runner::plan_suite(&suite, &selection, n_gpu, system.as_ref(), &run_dir)?;
    if args.json {
        for line in plan.skipped_json_lines() {
            println!("{line}");
        }
        for p in &plan.processes {
            println!("{}", p.json_line());
        }
        return Ok(ExitCode::SUCCESS);
    }
    for (bench, why) in &plan.skipped {
        println!("# {bench}: skipped, {why}\n");
    }
    for p in &plan.processes {
        let node = p
            .node
            .as_ref()
            .map_or_else(String::new, |n| format!(" on {n}"));
        println!("# {}.{}{node}", p.bench, p.tag);
        if let Some((path, config)) = &p.voir_config {
            println!("# {} ← {config}", path.display());
        }
        let env: Vec<String> = p
            .env
            .iter()
            .map(|(k, v)| match k.as_str() {
                // The whole configuration as JSON: `--json` shows it.
                "MILABENCH_CONFIG" => format!("{k}='{{…{} bytes…}}'", v.len()),
                _ => format!("{k}={}", quoted(v)),
            })
            .collect();
        let argv: Vec<String> = p.argv.iter().map(|a| quoted(a)).collect();
        let ssh: Vec<String> = p.ssh.iter().map(|a| quoted(a)).collect();
        let ssh = if ssh.is_empty() {
            String::new()
        } else {
            format!("{} ", ssh.join(" "))
        };
        println!("{ssh}env {} {}\n", env.join(" "), argv.join(" "));
    }
    Ok(ExitCode::SUCCESS)
}

/// milabench's base folder by default: the one holding the runs, made absolute as milabench
/// makes its base.
fn default_base(runs: &std::path::Path) -> Option<PathBuf> {
    std::path::absolute(runs)
        .ok()
        .and_then(|r| r.parent().map(PathBuf::from))
}

/// `arg` as a shell word: as it is when it needs no quoting, else in single quotes.
fn quoted(arg: &str) -> String {
    let plain = !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@+%".contains(c));
    if plain {
        arg.to_owned()
    } else {
        format!("'{}'", arg.replace('\'', "'\\''"))
    }
}

fn summary(args: SummaryArgs) -> Result<ExitCode> {
    let text = summary_json(&load_runs(&args.runs)?);
    match &args.out {
        Some(path) => std::fs::write(path, text)
            .with_context(|| format!("-o: cannot write {}", path.display()))?,
        None => print!("{text}"),
    }
    Ok(ExitCode::SUCCESS)
}

fn report(args: ReportArgs) -> Result<ExitCode> {
    let run = load_runs(&args.runs)?;
    let mut report = Report::new(&run);
    if let Some(file) = &args.config {
        let suite = Suite::load(
            file,
            &placeholders(PathBuf::from("data"), PathBuf::from("runs"))?,
        )
        .with_context(|| format!("--config {}", file.display()))?;
        let configured: Vec<(String, f64, bool)> = suite
            .benches
            .iter()
            .map(|b| (b.name.clone(), b.weight, b.enabled))
            .collect();
        report = report.with_config(&configured);
    }
    if let Some(base) = &args.compare {
        let context = || format!("--compare {}", base.display());
        let base = if base.is_dir() {
            Report::new(&load_run(base).with_context(context)?)
        } else {
            load_summary(base).with_context(context)?
        };
        report = report.compared_to(&base);
    }
    print!("{report}");
    if let Some(path) = &args.html {
        std::fs::write(path, html(&report, &run))
            .with_context(|| format!("--html: cannot write {}", path.display()))?;
        println!("\nHTML report: {}", path.display());
    }
    let valid = args.validations.check(&run);
    Ok(if report.passes() && valid {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

impl RunArgs {
    /// The rules of `suite run`'s settings, checked before anything runs; a refusal names the
    /// setting and its value (docs/architecture.md, "Sizes").
    fn validate(&self) -> Result<Duration> {
        if self.repeat == 0 {
            anyhow::bail!("invalid setting: --repeat must be at least 1, not 0");
        }
        // 0: no grace, SIGKILL follows SIGTERM at once.
        Duration::try_from_secs_f64(self.grace).map_err(|_| {
            anyhow::anyhow!(
                "invalid setting: --grace must be a number of seconds, at least 0, not {}",
                self.grace
            )
        })
    }
}

fn run(args: RunArgs) -> Result<ExitCode> {
    let grace = args.validate()?;
    let facts = SystemFacts::detect();
    let giving =
        std::env::current_exe().context("cannot find the giving program for `{giving}`")?;
    let system = args
        .system
        .as_ref()
        .map(SystemConfig::load)
        .transpose()
        .context("--system")?;
    let placeholders = Placeholders {
        n_gpu: facts.n_gpu,
        n_cpu: facts.n_cpu,
        data: args.data,
        runs: args.runs.clone(),
        giving,
        base: default_base(&args.runs),
        system: system.clone(),
        arch: facts.gpu_arch.clone(),
    };
    let suite = Suite::load(&args.config, &placeholders)?;
    for warning in &suite.warnings {
        eprintln!("warning: {warning}");
    }
    let selection = Selection::new(&args.select, &args.exclude);
    for (bench, why) in suite.skipped(&selection) {
        println!("skipped {}: {why}", bench.name);
    }
    let chosen = suite.selected(&selection).count();
    if chosen == 0 {
        anyhow::bail!(
            "{}: no benchmark selected (of {})",
            args.config.display(),
            suite.benches.len()
        );
    }
    // Ctrl-C (or SIGTERM) stops the running benchmarks as at their max_duration, and the
    // run ends there: the run folder keeps what was done.
    let interrupt = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(signal, interrupt.clone())
            .context("cannot install the Ctrl-C handler")?;
    }
    let options = RunOptions {
        interrupt: Some(interrupt.clone()),
        runs: args.runs,
        name: args.name,
        grace,
        n_gpu: facts.n_gpu,
        repeat: args.repeat,
        forward: None,
        system,
    };
    let times = match args.repeat {
        1 => String::new(),
        n => format!(", {n} times"),
    };
    println!(
        "running {chosen} benchmark(s) of {}{times} ({} GPU)",
        args.config.display(),
        facts.n_gpu
    );
    let web = match args.web.web {
        Some(_) => args.web.web(&command_line())?,
        None => None,
    };
    let summary = if args.dash || web.is_some() {
        let dash = args
            .dash
            .then(|| Box::new(Dash::new()) as Box<dyn Instrument>);
        let watchers = dash.into_iter().chain(web).collect();
        run_watched(&suite, &selection, options, &interrupt, watchers, args.dash)?
    } else {
        run_suite(&suite, &selection, &options, print_result)?
    };
    if interrupt.load(Ordering::Relaxed) {
        println!("interrupted: run folder {}", summary.dir.display());
        return Ok(ExitCode::from(130));
    }
    let valid = args.validations.check(&load_run(&summary.dir)?);
    println!("run folder: {}", summary.dir.display());
    Ok(if summary.success() && valid {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// The placeholders a configuration is loaded with on this machine.
fn placeholders(data: PathBuf, runs: PathBuf) -> Result<Placeholders> {
    let facts = SystemFacts::detect();
    let giving =
        std::env::current_exe().context("cannot find the giving program for `{giving}`")?;
    Ok(Placeholders {
        n_gpu: facts.n_gpu,
        n_cpu: facts.n_cpu,
        base: default_base(&runs),
        data,
        runs,
        giving,
        system: None,
        arch: facts.gpu_arch.clone(),
    })
}

/// Runs the suite under dashboards (`--dash`, `--web`): the runner gives every child's events
/// again, tagged with `bench`, into the scope they watch. The dashboard's `q` or the web
/// page's stop (the scope's stop token) interrupts the run as Ctrl-C does. The per-process
/// lines are printed when the terminal dashboard is done, or as they come when there is none
/// or it prints plain lines.
fn run_watched(
    suite: &Suite,
    selection: &Selection,
    mut options: RunOptions,
    interrupt: &Arc<AtomicBool>,
    watchers: Vec<Box<dyn Instrument>>,
    dash: bool,
) -> Result<RunSummary> {
    let done = Arc::new(AtomicBool::new(false));
    let (watch_done, watch_interrupt) = (done.clone(), interrupt.clone());
    let plain = !dash || !std::io::stdout().is_terminal();
    let run = Overseer::new()
        .with_all(watchers)
        .instrument_fn("suite-stop", move |start| {
            let token = start.given().stop_token();
            let (watch_done, watch_interrupt) = (watch_done.clone(), watch_interrupt.clone());
            std::thread::spawn(move || {
                while !watch_done.load(Ordering::Relaxed) {
                    if token.is_stopped() {
                        watch_interrupt.store(true, Ordering::Relaxed);
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
            });
            Ok(())
        })
        .run(|| {
            options.forward = Some(Giver::current());
            run_suite(suite, selection, &options, |result| {
                if plain {
                    print_result(result);
                }
            })
        });
    done.store(true, Ordering::Relaxed);
    let summary = match run.output {
        Ok(summary) => summary?,
        Err(panic) => anyhow::bail!("the runner panicked: {panic}"),
    };
    if !plain {
        summary.processes.iter().for_each(print_result);
    }
    Ok(summary)
}

/// The command line, for the web page's header.
fn command_line() -> String {
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|arg| arg.to_string_lossy().into_owned())
        .collect();
    format!("giving {}", args.join(" "))
}

/// One line per finished process.
fn print_result(result: &ProcessResult) {
    let o = &result.outcome;
    let status = match (o.killed, o.exit_code, o.signal) {
        // It asked to be ended (voir's early stop): a success however it ended.
        _ if o.stopped.is_some() => format!(
            "ok (stopped: {}{})",
            o.stopped.as_deref().unwrap_or_default(),
            o.killed.map_or_else(String::new, |how| format!(", {how}"))
        ),
        (Some(how), _, _) if o.interrupted => format!("INTERRUPTED ({how})"),
        (Some(how), _, _) => format!("KILLED at max_duration ({how})"),
        // It exited 0 but reported an error (`$event: error`).
        (None, Some(0), _) if !o.success => format!("FAILED ({})", o.error_events.join("; ")),
        (None, Some(0), _) => "ok".to_owned(),
        (None, Some(code), _) => format!("FAILED (exit {code})"),
        (None, None, Some(signal)) => format!("FAILED (signal {signal})"),
        (None, None, None) => "FAILED (did not start)".to_owned(),
    };
    let rate = match o.rates.len() {
        0 => "no rate".to_owned(),
        n => format!(
            "{n} rates, mean {:.1}",
            o.rates.iter().sum::<f64>() / n as f64
        ),
    };
    let problems = match o.protocol_errors.len() {
        0 => String::new(),
        n => format!(", {n} protocol error(s): {}", o.protocol_errors[0]),
    };
    // What a failed voir benchmark said (it exited non-zero after its error event), and the
    // voir phase it ended in.
    let errors = match (&o.error_events[..], o.exit_code) {
        ([], _) | (_, Some(0)) => String::new(),
        (errors, _) => format!(", error: {}", errors.join("; ")),
    };
    let phase = o
        .phases
        .last()
        .map_or_else(String::new, |p| format!(", phase {p}"));
    println!(
        "  {}.{}: {status}, {} events, {rate}, {:.1}s{errors}{phase}{problems}",
        result.bench, result.tag, o.events, o.duration_s
    );
}

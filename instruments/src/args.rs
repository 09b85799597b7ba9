//! The command-line options of the instruments, as clap `Args` a binary flattens into its
//! `train` command.

use std::path::PathBuf;
use std::time::Duration;

use crate::error::InstrumentError;
use crate::monitor::seconds;
use crate::overseer::Instrument;
use crate::timeline::TraceFormat;
use crate::{EarlyStop, KeySelection, MsgpackLog, Rate, StopOnNonFinite, Trace};

/// `--log DIR [--log-keys KEYS]`: write a MessagePack log of the run into `DIR`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct LogArgs {
    /// Write every event to a MessagePack log in DIR (`giving log dump|stats FILE` reads it).
    #[arg(long, value_name = "DIR")]
    pub log: Option<PathBuf>,
    /// Log only these keys: comma-separated patterns, `gpu*` to keep, `+task` kept as context
    /// of a kept event, `!batch` to drop (e.g. `loss,rate,+task`).
    #[arg(long, value_name = "KEYS", requires = "log")]
    pub log_keys: Option<KeySelection>,
}

/// `--stop N`: stop the loop cleanly after N rate observations (60 if N is omitted);
/// `--stop-on-nonfinite`: at the first NaN or infinity.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct StopArgs {
    /// Stop training cleanly after N rate measurements (default N: 60, as milabench).
    #[arg(long, value_name = "N", num_args = 0..=1, default_missing_value = "60")]
    pub stop: Option<u64>,
    /// Stop training cleanly at the first non-finite loss or watched parameter, naming the
    /// first parameter that went NaN or infinite (with `--watch N`) and the step.
    #[arg(long)]
    pub stop_on_nonfinite: bool,
}

/// `--rate-skip N` (or voir's spelling, `--skip N`): warm-up windows skipped by the rate
/// instrument.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct RateArgs {
    /// Warm-up windows skipped before rates are given (default: 5, or what a suite asks in
    /// GIVING_RATE_SKIP); `--skip` as in voir's options.
    #[arg(long, value_name = "N", visible_alias = "skip")]
    pub rate_skip: Option<u64>,
}

/// `--gpu-poll SECS`: monitor the GPUs every SECS seconds (1 if omitted).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct GpuArgs {
    /// Give `gpudata` every SECS seconds through NVML (default SECS: 1).
    #[arg(long, value_name = "SECS", num_args = 0..=1, default_missing_value = "1")]
    pub gpu_poll: Option<f64>,
}

/// `--cpu-poll SECS`: monitor CPU and memory every SECS seconds (1 if omitted).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct CpuArgs {
    /// Give `cpudata` and `process` every SECS seconds (default SECS: 1).
    #[arg(long, value_name = "SECS", num_args = 0..=1, default_missing_value = "1")]
    pub cpu_poll: Option<f64>,
}

/// `--dash`, `--plot KEY` and `--dash-hold`: the live terminal dashboard.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct DashArgs {
    /// Show a live dashboard (plain lines when stdout is not a terminal); `q` stops cleanly.
    #[arg(long)]
    pub dash: bool,
    /// Chart KEY on the dashboard besides the loss (repeatable).
    #[arg(long, value_name = "KEY")]
    pub plot: Vec<String>,
    /// Keep the dashboard's final screen until a key is pressed.
    #[arg(long, requires = "dash")]
    pub dash_hold: bool,
}

/// `--trace FILE [--trace-format perfetto|json]`: the run's timeline ([`Trace`]).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct TraceArgs {
    /// Write the run's timeline to FILE (a new file): epochs, steps, sync windows,
    /// validation, spans and counters; open it in ui.perfetto.dev.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// The trace's format: `perfetto` (protobuf, default) or `json` (Chrome trace events).
    #[arg(
        long,
        value_name = "FORMAT",
        requires = "trace",
        default_value = "perfetto"
    )]
    pub trace_format: TraceFormat,
}

/// `--tensorboard DIR [--tensorboard-step KEY]`: numeric keys as TensorBoard scalars.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct TensorBoardArgs {
    /// Write every numeric key as a TensorBoard scalar series to an event file in DIR
    /// (`tensorboard --logdir DIR` shows it).
    #[arg(long, value_name = "DIR")]
    pub tensorboard: Option<PathBuf>,
    /// The key whose value is each scalar's step [default: global_step, else the event count].
    #[arg(long, value_name = "KEY", requires = "tensorboard")]
    pub tensorboard_step: Option<String>,
}

/// `--mlflow URI --experiment NAME [--mlflow-run-name NAME]`: the run in an MLflow server.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct MlflowArgs {
    /// Send the run (parameters, numeric keys as metrics, final status) to the MLflow tracking
    /// server at URI (`http://HOST:PORT`); fail-open: an unreachable server is reported once.
    #[arg(long, value_name = "URI", requires = "experiment")]
    pub mlflow: Option<String>,
    /// The MLflow experiment the run goes in (created if needed).
    #[arg(long, value_name = "NAME", requires = "mlflow")]
    pub experiment: Option<String>,
    /// The MLflow run's name [default: MLflow makes one up].
    #[arg(long, value_name = "NAME", requires = "mlflow")]
    pub mlflow_run_name: Option<String>,
}

/// `--web [ADDR]` and its companions: the live web dashboard ([`Web`](crate::Web), feature
/// `web`).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct WebArgs {
    /// Serve a live dashboard of the run in a browser on ADDR (default 127.0.0.1:0: a free
    /// port of this machine, printed at start; open it through `ssh -L` from elsewhere).
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "127.0.0.1:0")]
    pub web: Option<String>,
    /// Let `--web` listen on an address other machines reach (0.0.0.0:8080): anyone who
    /// reaches it sees the run.
    #[arg(long, requires = "web")]
    pub web_public: bool,
    /// Show a stop button on the web page (honoured only from the page served, with its
    /// per-run token).
    #[arg(long, requires = "web")]
    pub web_allow_stop: bool,
    /// Keep serving the final state SECS seconds after the run (`inf`: until Ctrl-C; Ctrl-C
    /// ends it sooner).
    #[arg(long, value_name = "SECS", requires = "web")]
    pub web_linger: Option<f64>,
}

impl WebArgs {
    /// The dashboard these options ask for, titled `title` (the command line), or `None`
    /// without `--web`. Fails when the address cannot be bound or is not loopback without
    /// `--web-public`.
    pub fn web(&self, title: &str) -> Result<Option<Box<dyn Instrument>>, InstrumentError> {
        match &self.web {
            Some(address) => web(address, title, self).map(Some),
            None => Ok(None),
        }
    }
}

/// Every instrument option, to flatten into a `train` command; [`instruments`] builds what
/// they ask for: [`Rate`] always, then [`EarlyStop`], [`MsgpackLog`], [`GpuMonitor`](crate::GpuMonitor) and
/// [`CpuMonitor`](crate::CpuMonitor) when their option is given, [`Dash`](crate::Dash) with `--dash`, then
/// [`Trace`], `TensorBoard` (feature `tensorboard`), `MlflowRun` (feature `mlflow`, logging
/// [`params`](InstrumentArgs::params)) and `Web` (feature `web`, `--web`) when asked.
///
/// [`instruments`]: InstrumentArgs::instruments
///
/// ```
/// use clap::Parser;
/// use giving_instruments::{InstrumentArgs, Overseer};
///
/// #[derive(Parser)]
/// struct Train {
///     #[command(flatten)]
///     instruments: InstrumentArgs,
/// }
///
/// let args = Train::parse_from(["train", "--stop", "--rate-skip", "0"]);
/// assert_eq!(args.instruments.stop.stop, Some(60));
/// let instruments = args.instruments.instruments().unwrap();
/// let names: Vec<&str> = instruments.iter().map(|i| i.name()).collect();
/// assert_eq!(names, ["rate", "early-stop"]);
/// let run = Overseer::new().with_all(instruments).run(|| 42);
/// assert_eq!(run.output, Ok(42));
///
/// // voir's option names: `--skip` is `--rate-skip`.
/// let voir = Train::parse_from(["train", "--stop", "20", "--skip", "3"]);
/// assert_eq!((voir.instruments.stop.stop, voir.instruments.rate.rate_skip), (Some(20), Some(3)));
/// ```
#[derive(Debug, Clone, Default, clap::Args)]
pub struct InstrumentArgs {
    /// `--log DIR`.
    #[command(flatten)]
    pub log: LogArgs,
    /// `--stop N`.
    #[command(flatten)]
    pub stop: StopArgs,
    /// `--rate-skip N`.
    #[command(flatten)]
    pub rate: RateArgs,
    /// `--gpu-poll SECS`.
    #[command(flatten)]
    pub gpu: GpuArgs,
    /// `--cpu-poll SECS`.
    #[command(flatten)]
    pub cpu: CpuArgs,
    /// `--dash`, `--plot KEY`.
    #[command(flatten)]
    pub dash: DashArgs,
    /// `--trace FILE`, `--trace-format FORMAT`.
    #[command(flatten)]
    pub trace: TraceArgs,
    /// `--tensorboard DIR`.
    #[command(flatten)]
    pub tensorboard: TensorBoardArgs,
    /// `--mlflow URI --experiment NAME`.
    #[command(flatten)]
    pub mlflow: MlflowArgs,
    /// `--web [ADDR]`.
    #[command(flatten)]
    pub web: WebArgs,
    /// The run's configuration as `(name, value)`, set by the program rather than an option
    /// (the learning rate, the batch size): the MLflow run logs them as its params.
    #[arg(skip)]
    pub params: Vec<(String, String)>,
}

impl InstrumentArgs {
    /// The instruments these options ask for. Fails with a message naming the option when a
    /// value is unusable (the log directory cannot be created, an interval is not positive).
    pub fn instruments(&self) -> Result<Vec<Box<dyn Instrument>>, InstrumentError> {
        let mut instruments: Vec<Box<dyn Instrument>> = Vec::new();
        // Without --rate-skip, the rate skips what a suite asks (GIVING_RATE_SKIP) or its default.
        let rate = match self.rate.rate_skip {
            Some(skip) => Rate::new().skip(skip),
            None => Rate::new(),
        };
        instruments.push(Box::new(rate));
        if let Some(n) = self.stop.stop {
            if n == 0 {
                return Err(option(
                    "--stop",
                    "must be at least 1 (or omit N for 60), not 0",
                ));
            }
            instruments.push(Box::new(EarlyStop::new(n)));
        }
        if self.stop.stop_on_nonfinite {
            instruments.push(Box::new(StopOnNonFinite::new()));
        }
        if let Some(dir) = &self.log.log {
            let mut log = MsgpackLog::in_dir(dir).map_err(|e| option("--log", e))?;
            if let Some(keys) = &self.log.log_keys {
                log = log.keys(keys.clone());
            }
            instruments.push(Box::new(log));
        }
        if let Some(secs) = self.gpu.gpu_poll {
            let interval: Duration = seconds(secs).map_err(|e| option("--gpu-poll", e))?;
            instruments.push(gpu_monitor(interval)?);
        }
        if let Some(secs) = self.cpu.cpu_poll {
            let interval: Duration = seconds(secs).map_err(|e| option("--cpu-poll", e))?;
            instruments.push(cpu_monitor(interval)?);
        }
        if self.dash.dash {
            instruments.push(dash(&self.dash)?);
        }
        if let Some(path) = &self.trace.trace {
            let trace =
                Trace::create(path, self.trace.trace_format).map_err(|e| option("--trace", e))?;
            instruments.push(Box::new(trace));
        }
        if let Some(dir) = &self.tensorboard.tensorboard {
            instruments.push(tensorboard(dir, &self.tensorboard)?);
        }
        if let (Some(uri), Some(experiment)) = (&self.mlflow.mlflow, &self.mlflow.experiment) {
            instruments.push(mlflow(uri, experiment, self)?);
        }
        if self.web.web.is_some() {
            instruments.extend(self.web.web(&command_line())?);
        }
        Ok(instruments)
    }
}

fn option(option: &'static str, message: impl ToString) -> InstrumentError {
    InstrumentError::Option {
        option,
        message: message.to_string(),
    }
}

#[cfg_attr(
    all(
        feature = "dash",
        feature = "gpu",
        feature = "cpu",
        feature = "tensorboard",
        feature = "mlflow",
        feature = "web"
    ),
    allow(dead_code)
)]
fn not_built(flag: &'static str, feature: &str) -> InstrumentError {
    option(
        flag,
        format!("this build of giving-instruments has no `{feature}` feature"),
    )
}

#[cfg(feature = "gpu")]
fn gpu_monitor(interval: Duration) -> Result<Box<dyn Instrument>, InstrumentError> {
    Ok(Box::new(crate::GpuMonitor::new().interval(interval)))
}

#[cfg(not(feature = "gpu"))]
fn gpu_monitor(_interval: Duration) -> Result<Box<dyn Instrument>, InstrumentError> {
    Err(not_built("--gpu-poll", "gpu"))
}

#[cfg(feature = "cpu")]
fn cpu_monitor(interval: Duration) -> Result<Box<dyn Instrument>, InstrumentError> {
    Ok(Box::new(crate::CpuMonitor::new().interval(interval)))
}

#[cfg(not(feature = "cpu"))]
fn cpu_monitor(_interval: Duration) -> Result<Box<dyn Instrument>, InstrumentError> {
    Err(not_built("--cpu-poll", "cpu"))
}

#[cfg(feature = "dash")]
fn dash(args: &DashArgs) -> Result<Box<dyn Instrument>, InstrumentError> {
    let dash = crate::Dash::new().hold(args.dash_hold);
    Ok(Box::new(args.plot.iter().fold(dash, |d, key| d.plot(key))))
}

#[cfg(not(feature = "dash"))]
fn dash(_args: &DashArgs) -> Result<Box<dyn Instrument>, InstrumentError> {
    Err(not_built("--dash", "dash"))
}

/// The command line, for the web page's header: the program's file name and its arguments
/// (lossily, as arguments need not be UTF-8).
fn command_line() -> String {
    let mut args = std::env::args_os().map(|arg| arg.to_string_lossy().into_owned());
    let program = args.next().unwrap_or_default();
    let program = std::path::Path::new(&program)
        .file_name()
        .map_or(program.clone(), |name| name.to_string_lossy().into_owned());
    std::iter::once(program)
        .chain(args)
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(feature = "web")]
fn web(address: &str, title: &str, args: &WebArgs) -> Result<Box<dyn Instrument>, InstrumentError> {
    let web = if args.web_public {
        crate::Web::bind_public(address)
    } else {
        crate::Web::bind(address)
    }
    .map_err(|e| option("--web", e))?;
    let linger = match args.web_linger {
        // `inf`: until Ctrl-C.
        Some(secs) if secs == f64::INFINITY => Duration::MAX,
        Some(secs) => Duration::try_from_secs_f64(secs).map_err(|_| {
            option(
                "--web-linger",
                format!("must be a number of seconds (or inf), not {secs}"),
            )
        })?,
        None => Duration::ZERO,
    };
    Ok(Box::new(
        web.title(title)
            .allow_stop(args.web_allow_stop)
            .linger(linger),
    ))
}

#[cfg(not(feature = "web"))]
fn web(
    _address: &str,
    _title: &str,
    _args: &WebArgs,
) -> Result<Box<dyn Instrument>, InstrumentError> {
    Err(not_built("--web", "web"))
}

#[cfg(feature = "tensorboard")]
fn tensorboard(
    dir: &std::path::Path,
    args: &TensorBoardArgs,
) -> Result<Box<dyn Instrument>, InstrumentError> {
    let mut tensorboard = crate::TensorBoard::in_dir(dir)?;
    if let Some(key) = &args.tensorboard_step {
        tensorboard = tensorboard.step_key(key);
    }
    Ok(Box::new(tensorboard))
}

#[cfg(not(feature = "tensorboard"))]
fn tensorboard(
    _dir: &std::path::Path,
    _args: &TensorBoardArgs,
) -> Result<Box<dyn Instrument>, InstrumentError> {
    Err(not_built("--tensorboard", "tensorboard"))
}

#[cfg(feature = "mlflow")]
fn mlflow(
    uri: &str,
    experiment: &str,
    args: &InstrumentArgs,
) -> Result<Box<dyn Instrument>, InstrumentError> {
    if experiment.is_empty() {
        return Err(option("--experiment", "must not be empty"));
    }
    let mut run = crate::MlflowRun::new(uri, experiment).params(args.params.iter().cloned());
    if let Some(name) = &args.mlflow.mlflow_run_name {
        run = run.run_name(name);
    }
    if !(uri.starts_with("http://") || uri.starts_with("https://")) {
        return Err(option(
            "--mlflow",
            format!("{uri:?}: expected an http:// or https:// tracking server URL"),
        ));
    }
    Ok(Box::new(run))
}

#[cfg(not(feature = "mlflow"))]
fn mlflow(
    _uri: &str,
    _experiment: &str,
    _args: &InstrumentArgs,
) -> Result<Box<dyn Instrument>, InstrumentError> {
    Err(not_built("--mlflow", "mlflow"))
}

//! [`MlflowRun`]: the run in an MLflow tracking server — its parameters, its numeric values as
//! metrics, its final status — sent from a thread of its own.

mod api;
mod auth;
mod batch;
mod error;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use giving::vocab::keys;
use giving::{Event, EventStream, Timestamp, Value};

use api::Api;
pub use auth::{MlflowAuth, env as mlflow_env};
use batch::{MAX_METRICS, Metric, batches};
pub use error::MlflowError;

use crate::drain::{self, FileSink};
use crate::error::InstrumentError;
use crate::overseer::{Instrument, Reporter, Start, TRAINING};
use crate::scalars::Scalars;
use crate::threaded::{SinkControl, SinkThread};

/// How long metrics wait before they are sent (fewer, larger requests).
const SEND_EVERY: Duration = Duration::from_secs(1);
/// How long a Ctrl-C waits for pending metrics to be sent: longer than a file sink's
/// ([`INTERRUPT_FLUSH`](crate::threaded::INTERRUPT_FLUSH)), since it waits for a server.
const SEND_ON_INTERRUPT: Duration = Duration::from_secs(5);

/// Sends the run to an MLflow tracking server over its REST API: gets or creates the
/// experiment, creates a run, logs the [`params`](MlflowRun::param) (the run's
/// configuration), logs every numeric key as a metric with its step (the
/// [`step key`](MlflowRun::step_key), default [`GLOBAL_STEP`](keys::GLOBAL_STEP), else the last
/// step seen, else the event count) and timestamp, in `runs/log-batch` requests within
/// MLflow's limits (1000 metrics, 100 params, 1000 items per request), and ends the run
/// `FINISHED`, `FAILED` (training panicked) or `KILLED` (Ctrl-C, SIGTERM, SIGHUP).
///
/// Everything happens on a thread of its own (`giving-mlflow`), with a blocking HTTP client;
/// the training loop only pays for a queue push. **Fail-open**: a server that cannot be
/// reached or refuses a request is reported once (a [`Problem`](crate::Problem), and
/// `{problem, instrument: "mlflow"}` in the stream); the sink stops sending and training goes
/// on.
///
/// **Authentication** comes from MLflow's own variables, as its clients read them
/// (`MLFLOW_TRACKING_TOKEN`, `MLFLOW_TRACKING_USERNAME`/`PASSWORD`,
/// `MLFLOW_TRACKING_SERVER_CERT_PATH`, `MLFLOW_TRACKING_INSECURE_TLS`), or from
/// [`auth`](MlflowRun::auth); credentials are never logged.
///
/// ```no_run
/// use giving::give;
/// use giving_instruments::{MlflowRun, Overseer};
///
/// let mlflow = MlflowRun::new("http://127.0.0.1:5000", "demo").param("lr", "0.01");
/// let run = Overseer::new().with(mlflow).run(|| {
///     for global_step in 0..10u64 {
///         give!(global_step, loss = 1.0 / (global_step + 1) as f64);
///     }
/// });
/// assert!(run.problems.is_empty());
/// ```
pub struct MlflowRun {
    uri: String,
    experiment: String,
    run_name: Option<String>,
    params: Vec<(String, String)>,
    step_key: String,
    auth: Option<MlflowAuth>,
    thread: Option<SinkThread<()>>,
    run_id: Arc<Mutex<Option<String>>>,
}

impl MlflowRun {
    /// A run of experiment `experiment` on the tracking server at `uri` (`http://host:port`).
    pub fn new(uri: &str, experiment: &str) -> Self {
        Self {
            uri: uri.to_owned(),
            experiment: experiment.to_owned(),
            run_name: None,
            params: Vec::new(),
            step_key: keys::GLOBAL_STEP.to_owned(),
            auth: None,
            thread: None,
            run_id: Arc::default(),
        }
    }

    /// Names the run (MLflow makes up a name otherwise).
    pub fn run_name(mut self, name: &str) -> Self {
        self.run_name = Some(name.to_owned());
        self
    }

    /// Adds a parameter of the run (its configuration: learning rate, batch size, …).
    pub fn param(mut self, key: &str, value: impl ToString) -> Self {
        self.params.push((key.to_owned(), value.to_string()));
        self
    }

    /// Adds parameters.
    pub fn params<K: ToString, V: ToString>(
        mut self,
        params: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        self.params.extend(
            params
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string())),
        );
        self
    }

    /// Authenticates with `auth` instead of MLflow's environment variables (read by default
    /// when the run starts, as MLflow's own clients do: see [`MlflowAuth::from_env`]).
    pub fn auth(mut self, auth: MlflowAuth) -> Self {
        self.auth = Some(auth);
        self
    }

    /// The key whose value is each metric's step (default [`GLOBAL_STEP`](keys::GLOBAL_STEP)).
    pub fn step_key(mut self, key: &str) -> Self {
        self.step_key = key.to_owned();
        self
    }

    /// The run's id once created (for tools that read the run back).
    pub fn run_id(&self) -> Arc<Mutex<Option<String>>> {
        self.run_id.clone()
    }
}

/// The sink's state on its thread.
struct Sink {
    api: Api,
    run_id: Option<String>,
    scalars: Scalars,
    pending: Vec<Metric>,
    first_pending: Option<Instant>,
    /// Training panicked (the Overseer said so in the stream).
    training_failed: bool,
    reporter: Reporter,
}

impl Sink {
    /// Reports `error` once and stops sending.
    fn fail(&mut self, error: MlflowError) {
        self.reporter.report(&format!(
            "{error}; metrics are no longer sent, training goes on"
        ));
        self.run_id = None;
        self.pending.clear();
        self.first_pending = None;
    }

    /// Sends `params` and the pending metrics.
    fn send(&mut self, params: Vec<(String, String)>) {
        let metrics = std::mem::take(&mut self.pending);
        self.first_pending = None;
        let Some(run_id) = self.run_id.clone() else {
            return;
        };
        for batch in batches(metrics, params) {
            if let Err(error) = self.api.log_batch(&run_id, &batch) {
                self.fail(error);
                return;
            }
        }
    }
}

impl FileSink for Sink {
    fn write(&mut self, event: &Event) {
        if event.get(keys::INSTRUMENT).and_then(Value::as_str) == Some(TRAINING)
            && event.has(keys::PROBLEM)
        {
            self.training_failed = true;
        }
        if self.run_id.is_none() {
            return;
        }
        let (step, values) = self.scalars.of(event);
        let timestamp = event.time().as_nanos() / 1_000_000;
        for (key, value) in values {
            // JSON has no NaN or infinity: such values are not metrics.
            if value.is_finite() {
                self.pending.push(Metric {
                    key,
                    value: f64::from(value),
                    timestamp,
                    step,
                });
            }
        }
        if !self.pending.is_empty() {
            self.first_pending.get_or_insert_with(Instant::now);
        }
        if self.pending.len() >= MAX_METRICS {
            self.send(Vec::new());
        }
    }

    fn flush(&mut self) {
        self.send(Vec::new());
    }

    fn write_out_deadline(&self) -> Option<Instant> {
        self.first_pending.map(|first| first + SEND_EVERY)
    }
}

/// The thread: set the run up, drain the stream, end the run.
struct Setup {
    experiment: String,
    run_name: Option<String>,
    params: Vec<(String, String)>,
    interrupted: Arc<AtomicBool>,
    run_id: Arc<Mutex<Option<String>>>,
}

fn now_ms() -> u64 {
    Timestamp::now().as_nanos() / 1_000_000
}

fn run_thread(
    mut sink: Sink,
    setup: Setup,
    mut stream: EventStream,
    control: &SinkControl,
) -> Result<(), InstrumentError> {
    let started = now_ms();
    let created = sink
        .api
        .experiment(&setup.experiment)
        .and_then(|id| sink.api.create_run(&id, setup.run_name.as_deref(), started));
    match created {
        Ok(run_id) => {
            *setup.run_id.lock().unwrap_or_else(PoisonError::into_inner) = Some(run_id.clone());
            sink.run_id = Some(run_id);
            sink.send(setup.params);
        }
        Err(error) => sink.fail(error),
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .map_err(|source| InstrumentError::Thread {
            thread: "giving-mlflow".to_owned(),
            source,
        })?;
    runtime.block_on(drain::run(&mut sink, &mut stream, control));
    drop(stream);
    sink.send(Vec::new());
    let status = if sink.training_failed {
        "FAILED"
    } else if setup.interrupted.load(Ordering::SeqCst) {
        "KILLED"
    } else {
        "FINISHED"
    };
    if let Some(run_id) = sink.run_id.clone()
        && let Err(error) = sink.api.end_run(&run_id, status, now_ms())
    {
        sink.fail(error);
    }
    Ok(())
}

impl Instrument for MlflowRun {
    fn name(&self) -> &str {
        "mlflow"
    }

    fn start(&mut self, start: &mut Start<'_>) -> Result<(), InstrumentError> {
        let auth = self.auth.clone().unwrap_or_else(MlflowAuth::from_env);
        let api = Api::new(&self.uri, &auth).map_err(InstrumentError::other)?;
        let stream = start.given().stream().paced(crate::WRITER_PACE);
        let sink = Sink {
            api,
            run_id: None,
            scalars: Scalars::new(&self.step_key),
            pending: Vec::new(),
            first_pending: None,
            training_failed: false,
            reporter: start.reporter(),
        };
        let interrupted = Arc::new(AtomicBool::new(false));
        let setup = Setup {
            experiment: self.experiment.clone(),
            run_name: self.run_name.clone(),
            params: std::mem::take(&mut self.params),
            interrupted: interrupted.clone(),
            run_id: self.run_id.clone(),
        };
        let thread = SinkThread::spawn("giving-mlflow", move |control| {
            run_thread(sink, setup, stream, control)
        })?;
        let flush = thread.flusher(SEND_ON_INTERRUPT);
        start.on_interrupt(move || {
            interrupted.store(true, Ordering::SeqCst);
            flush();
        });
        self.thread = Some(thread);
        Ok(())
    }

    fn finish(&mut self) -> Result<(), InstrumentError> {
        SinkThread::join_started(&mut self.thread)
    }
}

impl std::fmt::Debug for MlflowRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MlflowRun")
            .field("uri", &giving_log::redact_url(&self.uri))
            .field("experiment", &self.experiment)
            .finish_non_exhaustive()
    }
}

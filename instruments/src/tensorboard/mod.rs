//! [`TensorBoard`]: the run's numeric values as TensorBoard scalars, and a model watch's
//! histograms, in an event file written on a thread of its own.

mod histogram;
mod proto;
mod record;
mod writer;

use std::path::{Path, PathBuf};
use std::time::Instant;

use giving::vocab::keys;
use giving::{Event, EventStream};

use crate::drain::{self, FileSink};
use crate::error::InstrumentError;
use crate::overseer::{Instrument, Reporter, Start};
use crate::scalars::Scalars;
use crate::threaded::{INTERRUPT_FLUSH, SinkControl, SinkThread};
use writer::EventFile;

/// Writes one TensorBoard scalar series per numeric key of the run's events into an event file
/// (`DIR/events.out.tfevents.<time>.<host>.<pid>`, TFRecords of TensorFlow `Event` messages
/// with masked CRC-32C checksums), readable by TensorBoard (`tensorboard --logdir DIR`).
///
/// Each event's step is its [`step key`](TensorBoard::step_key) (default
/// [`GLOBAL_STEP`](keys::GLOBAL_STEP)) when it has one, else the last step seen, else the number
/// of events so far. Identifying keys (`rank`, `step`, `tid`, …) are not series; an event
/// fanned in from a rank tags its series `key/rank<R>`. A model watch's event
/// (`giving_burn::ModelWatch`: `{param, watch, norm, …, hist}`) tags its scalars
/// `grad/fc1.weight/norm` and writes its histogram as a `HistogramProto` tagged
/// `grad/fc1.weight`, for TensorBoard's Histograms and Distributions tabs. Events are taken, lazy values read and
/// records written on a thread (`giving-tensorboard`), as the MessagePack log does: the
/// training loop only pays for a queue push. The file is written out every 500 ms, on Ctrl-C
/// and when the run ends; a failed write is reported and the run goes on.
///
/// ```
/// use giving::give;
/// use giving_instruments::{Overseer, TensorBoard};
///
/// let dir = tempfile::tempdir().unwrap();
/// let tensorboard = TensorBoard::in_dir(dir.path()).unwrap();
/// let file = tensorboard.path().to_path_buf();
/// let run = Overseer::new().with(tensorboard).run(|| {
///     for global_step in 0..10u64 {
///         let loss = 1.0 / (global_step + 1) as f64;
///         give!(global_step, loss);
///     }
/// });
/// assert!(run.problems.is_empty());
/// assert!(file.file_name().unwrap().to_str().unwrap().starts_with("events.out.tfevents."));
/// assert!(std::fs::metadata(&file).unwrap().len() > 10 * 16);
/// ```
pub struct TensorBoard {
    file: Option<EventFile>,
    path: PathBuf,
    step_key: String,
    thread: Option<SinkThread<()>>,
}

impl TensorBoard {
    /// A new event file in `dir` (created if needed). Fails, naming the file, when it cannot
    /// be created.
    pub fn in_dir(dir: impl AsRef<Path>) -> Result<Self, InstrumentError> {
        let file = EventFile::create(dir.as_ref())?;
        Ok(Self {
            path: file.path().to_path_buf(),
            file: Some(file),
            step_key: keys::GLOBAL_STEP.to_owned(),
            thread: None,
        })
    }

    /// The key whose value is each scalar's step (default [`GLOBAL_STEP`](keys::GLOBAL_STEP)).
    pub fn step_key(mut self, key: &str) -> Self {
        self.step_key = key.to_owned();
        self
    }

    /// The event file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// The event file, as the drain loop drives it.
struct Sink {
    file: EventFile,
    scalars: Scalars,
    failed: bool,
    reporter: Reporter,
}

impl Sink {
    fn fail(&mut self, error: std::io::Error) {
        let path = self.file.path().display();
        self.reporter.report(&format!(
            "cannot write `{path}`: {error}; scalars are no longer written"
        ));
        self.failed = true;
    }
}

impl FileSink for Sink {
    fn write(&mut self, event: &Event) {
        if self.failed {
            return;
        }
        let (step, values) = self.scalars.of(event);
        let histogram = histogram::of(event);
        if values.is_empty() && histogram.is_none() {
            return;
        }
        self.file.summary(event.time(), step, values, histogram);
        if self.file.is_due() {
            self.flush();
        }
    }

    fn flush(&mut self) {
        if !self.failed
            && let Err(error) = self.file.write_out()
        {
            self.fail(error);
        }
    }

    fn write_out_deadline(&self) -> Option<Instant> {
        if self.failed {
            None
        } else {
            self.file.deadline()
        }
    }
}

fn write_loop(
    mut sink: Sink,
    mut stream: EventStream,
    control: &SinkControl,
) -> Result<(), InstrumentError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .map_err(|source| InstrumentError::Thread {
            thread: "giving-tensorboard".to_owned(),
            source,
        })?;
    runtime.block_on(drain::run(&mut sink, &mut stream, control));
    drop(stream);
    if sink.failed {
        return Ok(()); // reported when it happened
    }
    let path = sink.file.path().to_path_buf();
    sink.file.close().map_err(|e| InstrumentError::Option {
        option: "--tensorboard",
        message: format!("cannot write `{}`: {e}", path.display()),
    })
}

impl Instrument for TensorBoard {
    fn name(&self) -> &str {
        "tensorboard"
    }

    fn start(&mut self, start: &mut Start<'_>) -> Result<(), InstrumentError> {
        let Some(file) = self.file.take() else {
            return Err(InstrumentError::other(
                "this TensorBoard sink was already started",
            ));
        };
        let stream = start.given().stream().paced(crate::WRITER_PACE);
        let sink = Sink {
            file,
            scalars: Scalars::new(&self.step_key),
            failed: false,
            reporter: start.reporter(),
        };
        let thread = SinkThread::spawn("giving-tensorboard", move |control| {
            write_loop(sink, stream, control)
        })?;
        start.on_interrupt(thread.flusher(INTERRUPT_FLUSH));
        self.thread = Some(thread);
        Ok(())
    }

    fn finish(&mut self) -> Result<(), InstrumentError> {
        SinkThread::join_started(&mut self.thread)
    }
}

impl std::fmt::Debug for TensorBoard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TensorBoard")
            .field("path", &self.path)
            .field("step_key", &self.step_key)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use giving::give;
    use prost::Message;

    use super::proto::TfEvent;
    use super::record::unframe;
    use super::*;
    use crate::Overseer;

    #[test]
    fn the_file_holds_the_version_then_one_event_per_step_with_its_scalars() {
        let dir = tempfile::tempdir().unwrap();
        let tensorboard = TensorBoard::in_dir(dir.path()).unwrap();
        let path = tensorboard.path().to_path_buf();
        let run = Overseer::new().quiet(true).with(tensorboard).run(|| {
            for global_step in 0..5u64 {
                let loss = 0.5 / (global_step + 1) as f64;
                give!(global_step, loss);
            }
            give!(task = "train");
        });
        assert!(run.problems.is_empty(), "{:?}", run.problems);
        let records = unframe(&std::fs::read(&path).unwrap()).unwrap();
        let events: Vec<TfEvent> = records
            .iter()
            .map(|r| TfEvent::decode(r.as_slice()).unwrap())
            .collect();
        assert_eq!(events[0].file_version.as_deref(), Some("brain.Event:2"));
        assert_eq!(events.len(), 6, "the event with no number is not written");
        for (i, event) in events[1..].iter().enumerate() {
            assert_eq!(event.step, i as i64);
            let value = &event.summary.as_ref().unwrap().value;
            assert_eq!(value.len(), 1);
            assert_eq!(value[0].tag, "loss");
            assert_eq!(value[0].simple_value, Some((0.5 / (i + 1) as f64) as f32));
        }
    }
}

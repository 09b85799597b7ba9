//! [`EventFile`]: an event file being written (`events.out.tfevents.<time>.<host>.<pid>`).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use giving::Timestamp;
use prost::Message;

use super::proto::{HistogramProto, Summary, SummaryValue, TfEvent};
use super::record::frame;
use crate::error::InstrumentError;

/// Buffered bytes are written out once there are this many.
const BUFFER: usize = 64 << 10;
/// …or when the first of them has waited this long.
pub(crate) const WRITE_OUT_EVERY: Duration = Duration::from_millis(500);

/// An event file: TFRecords of `Event` messages, the first one `file_version`.
pub(crate) struct EventFile {
    path: PathBuf,
    file: File,
    buf: Vec<u8>,
    first_buffered: Option<Instant>,
    scratch: Vec<u8>,
}

impl EventFile {
    /// A new event file in `dir` (created if needed), named as TensorFlow names them.
    pub(crate) fn create(dir: &Path) -> Result<Self, InstrumentError> {
        let io = |action: &str, path: &Path, e: std::io::Error| {
            option(format!("cannot {action} `{}`: {e}", path.display()))
        };
        std::fs::create_dir_all(dir).map_err(|e| io("create directory", dir, e))?;
        let now = Timestamp::now();
        let host = crate::log::LogHeader::for_this_process().host;
        let host = if host.is_empty() {
            "localhost".to_owned()
        } else {
            host
        };
        let name = format!(
            "events.out.tfevents.{}.{host}.{}",
            now.as_nanos() / 1_000_000_000,
            std::process::id()
        );
        let path = dir.join(name);
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| io("create", &path, e))?;
        let mut this = Self {
            path,
            file,
            buf: Vec::new(),
            first_buffered: None,
            scratch: Vec::new(),
        };
        this.push(&TfEvent {
            wall_time: now.as_secs_f64(),
            step: 0,
            file_version: Some("brain.Event:2".to_owned()),
            summary: None,
        });
        this.write_out().map_err(|e| io("write", &this.path, e))?;
        Ok(this)
    }

    /// The file.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Buffers one `Event` with the scalars `values` and the histogram `histogram` at `step`.
    pub(crate) fn summary(
        &mut self,
        time: Timestamp,
        step: i64,
        values: Vec<(String, f32)>,
        histogram: Option<(String, HistogramProto)>,
    ) {
        let scalars = values.into_iter().map(|(tag, x)| SummaryValue {
            tag,
            simple_value: Some(x),
            histo: None,
        });
        let histograms = histogram.map(|(tag, histo)| SummaryValue {
            tag,
            simple_value: None,
            histo: Some(histo),
        });
        let value = scalars.chain(histograms).collect();
        self.push(&TfEvent {
            wall_time: time.as_secs_f64(),
            step,
            file_version: None,
            summary: Some(Summary { value }),
        });
    }

    fn push(&mut self, event: &TfEvent) {
        self.scratch.clear();
        // Encoding into a Vec cannot fail.
        let _ = event.encode(&mut self.scratch);
        frame(&self.scratch, &mut self.buf);
        self.first_buffered.get_or_insert_with(Instant::now);
    }

    /// Whether the buffer is due to be written out.
    pub(crate) fn is_due(&self) -> bool {
        self.buf.len() >= BUFFER
    }

    /// When the buffer is due to be written out (`None` when empty).
    pub(crate) fn deadline(&self) -> Option<Instant> {
        self.first_buffered.map(|first| first + WRITE_OUT_EVERY)
    }

    /// Writes the buffer to the file.
    pub(crate) fn write_out(&mut self) -> std::io::Result<()> {
        self.first_buffered = None;
        let result = self.file.write_all(&self.buf);
        self.buf.clear();
        result
    }

    /// Writes the buffer out and syncs the file.
    pub(crate) fn close(mut self) -> std::io::Result<()> {
        self.write_out()?;
        self.file.sync_data()
    }
}

fn option(message: String) -> InstrumentError {
    InstrumentError::Option {
        option: "--tensorboard",
        message,
    }
}

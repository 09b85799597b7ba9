//! [`TraceFormat`] and the encoder that writes it.

use std::str::FromStr;

use giving::Timestamp;

use super::error::TraceError;
use super::json::JsonEncoder;
use super::model::{Args, Counter, Output, Process, Track};
use super::perfetto::PerfettoEncoder;

/// The file format of a trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TraceFormat {
    /// Perfetto's native protobuf trace (`.pftrace`): open it in <https://ui.perfetto.dev>.
    #[default]
    Perfetto,
    /// Chrome's trace-event JSON (`.json`): Perfetto, `chrome://tracing`, Speedscope.
    Json,
}

impl TraceFormat {
    /// The file extension of this format, without the dot.
    ///
    /// ```
    /// use giving_instruments::timeline::TraceFormat;
    /// assert_eq!("json".parse::<TraceFormat>().unwrap().extension(), "json");
    /// assert_eq!(TraceFormat::default().extension(), "pftrace");
    /// ```
    pub fn extension(self) -> &'static str {
        match self {
            TraceFormat::Perfetto => "pftrace",
            TraceFormat::Json => "json",
        }
    }
}

impl FromStr for TraceFormat {
    type Err = TraceError;

    fn from_str(name: &str) -> Result<Self, TraceError> {
        match name {
            "perfetto" | "pftrace" | "protobuf" => Ok(TraceFormat::Perfetto),
            "json" | "chrome" => Ok(TraceFormat::Json),
            other => Err(TraceError::Format(other.to_owned())),
        }
    }
}

/// One of the encoders, chosen by format (boxed: one is made per trace, and their sizes
/// differ).
pub(crate) enum Encoder {
    Perfetto(Box<PerfettoEncoder>),
    Json(Box<JsonEncoder>),
}

impl Encoder {
    pub(crate) fn new(format: TraceFormat) -> Self {
        match format {
            TraceFormat::Perfetto => Encoder::Perfetto(Box::default()),
            TraceFormat::Json => Encoder::Json(Box::default()),
        }
    }

    fn output(&mut self) -> &mut dyn Output {
        match self {
            Encoder::Perfetto(encoder) => encoder.as_mut(),
            Encoder::Json(encoder) => encoder.as_mut(),
        }
    }

    /// Takes the bytes encoded so far.
    pub(crate) fn take(&mut self) -> Vec<u8> {
        match self {
            Encoder::Perfetto(encoder) => encoder.take(),
            Encoder::Json(encoder) => encoder.take(),
        }
    }

    /// Bytes encoded and not yet taken.
    pub(crate) fn buffered(&self) -> usize {
        match self {
            Encoder::Perfetto(encoder) => encoder.buffered(),
            Encoder::Json(encoder) => encoder.buffered(),
        }
    }

    /// What ends the file (the JSON array's `]`; nothing for Perfetto).
    pub(crate) fn close(&mut self) {
        if let Encoder::Json(encoder) = self {
            encoder.close();
        }
    }
}

impl Output for Encoder {
    fn process(&mut self, process: &Process) {
        self.output().process(process);
    }

    fn begin(&mut self, at: Timestamp, track: &Track, name: &str, args: &Args) {
        self.output().begin(at, track, name, args);
    }

    fn end(&mut self, at: Timestamp, track: &Track) {
        self.output().end(at, track);
    }

    fn instant(&mut self, at: Timestamp, track: &Track, name: &str, args: &Args) {
        self.output().instant(at, track, name, args);
    }

    fn counter(&mut self, at: Timestamp, counter: &Counter, value: f64) {
        self.output().counter(at, counter, value);
    }
}

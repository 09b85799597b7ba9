//! [`convert`]: MessagePack logs to one trace, a process track per log, on their absolute
//! times (the `giving trace` command).

use std::path::{Path, PathBuf};

use super::encoder::TraceFormat;
use super::error::TraceError;
use super::writer::{TraceSummary, TraceWriter};
use crate::log::{LogError, LogReader};

/// What [`convert`] read and wrote.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Conversion {
    /// Events read and bytes written.
    pub trace: TraceSummary,
    /// The logs that were cut (a killed run): everything before the cut was converted.
    pub cut: Vec<PathBuf>,
    /// Damaged regions skipped, over every log.
    pub damaged: u64,
}

/// Converts MessagePack logs into one new trace at `out`: each log becomes a process (its pid
/// and program from the log's header) whose loop slices go on its main thread, and events
/// keep their absolute times, so runs of several processes or ranks line up. A cut log is
/// converted up to its cut; damaged regions are skipped and counted.
///
/// ```
/// use giving::{give, iterate};
/// use giving_instruments::Overseer;
/// use giving_instruments::log::MsgpackLog;
/// use giving_instruments::timeline::{TraceFormat, convert, read};
///
/// let dir = tempfile::tempdir().unwrap();
/// let log = MsgpackLog::in_dir(dir.path()).unwrap();
/// let path = log.path().to_path_buf();
/// Overseer::new().with(log).run(|| {
///     for _ in iterate("train", 0..5) {
///         give!(loss = 0.5);
///     }
/// });
/// let out = dir.path().join("run.pftrace");
/// let done = convert(&[path], &out, TraceFormat::Perfetto).unwrap();
/// assert_eq!(done.trace.events, 6 + 5); // iterate's start and steps, the losses
/// assert!(done.cut.is_empty());
/// assert!(read(&out).unwrap().packets.len() > 11);
/// ```
pub fn convert(
    logs: &[PathBuf],
    out: &Path,
    format: TraceFormat,
) -> Result<Conversion, TraceError> {
    // Every log is opened before the output is created: a bad argument leaves no file.
    let mut readers = Vec::with_capacity(logs.len());
    for path in logs {
        let reader = LogReader::open(path).map_err(|source| TraceError::Log {
            path: path.clone(),
            source,
        })?;
        readers.push(reader);
    }
    let mut writer = TraceWriter::create(out, format)?;
    let mut conversion = Conversion::default();
    for (path, mut reader) in logs.iter().zip(readers) {
        let header = reader.header();
        let pid = u32::try_from(header.pid).unwrap_or(u32::MAX);
        let program = header
            .command_line
            .first()
            .and_then(|program| Path::new(program).file_name())
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_else(|| "run".to_owned());
        let file = path.file_name().map(|f| f.to_string_lossy().into_owned());
        let name = match file {
            Some(file) => format!("{program} ({file})"),
            None => program,
        };
        // On Linux the main thread's id is the process id: the loop of a `giving train` run,
        // and the thread its tracepoints name.
        let index = writer.process(pid, &name, u64::from(pid), "main");
        for item in reader.by_ref() {
            match item {
                Ok(event) => writer.event(index, &event),
                Err(LogError::Truncated { .. }) => conversion.cut.push(path.clone()),
                Err(_) => conversion.damaged += 1,
            }
            writer.write_out_if_due()?;
        }
    }
    conversion.trace = writer.close()?;
    Ok(conversion)
}

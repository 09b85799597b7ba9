//! `giving log dump` and `giving log stats` as library functions (the clap subcommand is in
//! `command`, behind the `cli` feature).

use std::collections::BTreeMap;
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};

use giving::{Timestamp, Value};

use super::error::LogError;
use super::header::{FORMAT_NAME, LogHeader};
use super::reader::LogReader;
use super::time_fmt::utc;

/// What [`dump`] printed.
#[derive(Debug)]
pub struct DumpSummary {
    /// Events printed.
    pub events: u64,
    /// Why the log ended early, if it did (every complete event before was printed).
    pub cut: Option<LogError>,
}

pub(crate) fn output_error(source: std::io::Error) -> LogError {
    LogError::Io {
        action: "write",
        path: PathBuf::from("<output>"),
        source,
    }
}

/// Prints a log: its header, then one line per event — `+SECONDS  key=value …` relative to
/// the start, or with `json`, JSON lines (`{"header": …}` first, then
/// `{"time": ns, "data": {…}}`).
///
/// ```
/// use giving::event;
/// use giving_instruments::log::{dump, LogHeader, LogWriter};
///
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("run.msgpack");
/// let mut writer = LogWriter::create(&path, &LogHeader::for_this_process()).unwrap();
/// writer.write(&event!(loss = 0.5, step = 3u64)).unwrap();
/// writer.close(0).unwrap();
///
/// let mut out = Vec::new();
/// dump(&path, true, &mut out).unwrap();
/// let text = String::from_utf8(out).unwrap();
/// assert!(text.lines().nth(1).unwrap().ends_with(r#""data":{"loss":0.5,"step":3}}"#));
/// ```
pub fn dump(
    path: impl AsRef<Path>,
    json: bool,
    out: &mut impl Write,
) -> Result<DumpSummary, LogError> {
    let reader = LogReader::open(path)?;
    let header = reader.header().clone();
    if json {
        let line = serde_json::json!({ "header": header_json(&header) });
        writeln!(out, "{line}").map_err(output_error)?;
    } else {
        writeln!(out, "# {}", HeaderLine(&header)).map_err(output_error)?;
    }
    let mut summary = DumpSummary {
        events: 0,
        cut: None,
    };
    for item in reader {
        let event = match item {
            Ok(event) => event,
            Err(error @ (LogError::Truncated { .. } | LogError::Corrupt { .. })) => {
                summary.cut = Some(error);
                break;
            }
            Err(error) => return Err(error),
        };
        if json {
            // Written by hand so that `time` comes first and the fields keep their order.
            let data = serde_json::to_string(&event).map_err(|e| LogError::Corrupt {
                path: PathBuf::from("<output>"),
                offset: 0,
                records: summary.events,
                reason: format!("event cannot be written as JSON: {e}"),
            })?;
            writeln!(
                out,
                r#"{{"time":{},"data":{data}}}"#,
                event.time().as_nanos()
            )
            .map_err(output_error)?;
        } else {
            let since = event.time().duration_since(header.start_time).as_secs_f64();
            writeln!(out, "+{since:.6}s  {event}").map_err(output_error)?;
        }
        summary.events += 1;
    }
    Ok(summary)
}

fn header_json(header: &LogHeader) -> serde_json::Value {
    serde_json::json!({
        "format": FORMAT_NAME,
        "version": header.version,
        "start_time": header.start_time.as_nanos(),
        "command_line": header.command_line,
        "host": header.host,
        "pid": header.pid,
        "crate_versions": header.crate_versions,
        "extra": header.extra,
    })
}

/// One line describing a header.
struct HeaderLine<'a>(&'a LogHeader);

impl fmt::Display for HeaderLine<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let h = self.0;
        write!(
            f,
            "{FORMAT_NAME} v{} started {} on {} (pid {}): {}",
            h.version,
            utc(h.start_time),
            if h.host.is_empty() { "?" } else { &h.host },
            h.pid,
            h.command_line.join(" ")
        )?;
        let versions: Vec<String> = h
            .crate_versions
            .iter()
            .map(|(name, version)| format!("{name} {version}"))
            .collect();
        if !versions.is_empty() {
            write!(f, " [{}]", versions.join(", "))?;
        }
        Ok(())
    }
}

/// Count, minimum, maximum and mean of one numeric key.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NumericStats {
    /// How many numeric values the key had.
    pub count: u64,
    /// The smallest.
    pub min: f64,
    /// The largest.
    pub max: f64,
    /// The mean.
    pub mean: f64,
}

impl NumericStats {
    fn add(&mut self, x: f64) {
        self.count += 1;
        self.min = self.min.min(x);
        self.max = self.max.max(x);
        self.mean += (x - self.mean) / self.count as f64;
    }
}

/// What [`stats`] found in a log; its `Display` is the report `giving log stats` prints.
#[derive(Debug)]
pub struct LogStats {
    /// The file.
    pub path: PathBuf,
    /// Its header.
    pub header: LogHeader,
    /// How many events it holds.
    pub events: u64,
    /// Time of the first and the last event.
    pub span: Option<(Timestamp, Timestamp)>,
    /// How many events have each key.
    pub keys: BTreeMap<String, u64>,
    /// Statistics of every numeric field, nested map fields named with dots
    /// (`gpudata.0.load`).
    pub numeric: BTreeMap<String, NumericStats>,
    /// Why the log ended early, if it did.
    pub cut: Option<LogError>,
}

/// Reads a whole log and summarises it: counts per key, time span, min/max/mean of numeric
/// keys.
///
/// ```
/// use giving::event;
/// use giving_instruments::log::{stats, LogHeader, LogWriter};
///
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("run.msgpack");
/// let mut writer = LogWriter::create(&path, &LogHeader::for_this_process()).unwrap();
/// for loss in [1.0, 0.5, 0.25] {
///     writer.write(&event!(loss)).unwrap();
/// }
/// writer.close(0).unwrap();
///
/// let stats = stats(&path).unwrap();
/// assert_eq!(stats.keys["loss"], 3);
/// assert_eq!(stats.numeric["loss"].max, 1.0);
/// assert!(stats.to_string().contains("loss"));
/// ```
pub fn stats(path: impl AsRef<Path>) -> Result<LogStats, LogError> {
    let reader = LogReader::open(path)?;
    let mut stats = LogStats {
        path: reader.path().to_path_buf(),
        header: reader.header().clone(),
        events: 0,
        span: None,
        keys: BTreeMap::new(),
        numeric: BTreeMap::new(),
        cut: None,
    };
    for item in reader {
        let event = match item {
            Ok(event) => event,
            Err(error @ (LogError::Truncated { .. } | LogError::Corrupt { .. })) => {
                stats.cut = Some(error);
                break;
            }
            Err(error) => return Err(error),
        };
        stats.events += 1;
        let t = event.time();
        stats.span = Some(match stats.span {
            None => (t, t),
            Some((first, last)) => (first.min(t), last.max(t)),
        });
        for (key, value) in event.iter() {
            match stats.keys.get_mut(key) {
                Some(count) => *count += 1,
                None => {
                    stats.keys.insert(key.to_owned(), 1);
                }
            }
            add_numeric(&mut stats.numeric, key, value, 0);
        }
    }
    Ok(stats)
}

fn add_numeric(
    numeric: &mut BTreeMap<String, NumericStats>,
    name: &str,
    value: &Value,
    depth: usize,
) {
    match value {
        Value::I64(_) | Value::U64(_) | Value::F64(_) => {
            let Some(x) = value.as_f64() else { return };
            if !numeric.contains_key(name) {
                numeric.insert(
                    name.to_owned(),
                    NumericStats {
                        count: 0,
                        min: f64::INFINITY,
                        max: f64::NEG_INFINITY,
                        mean: 0.0,
                    },
                );
            }
            if let Some(entry) = numeric.get_mut(name) {
                entry.add(x);
            }
        }
        Value::Map(map) if depth < 4 => {
            for (key, item) in map {
                add_numeric(numeric, &format!("{name}.{key}"), item, depth + 1);
            }
        }
        _ => {}
    }
}

impl fmt::Display for LogStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.path.display())?;
        writeln!(f, "  {}", HeaderLine(&self.header))?;
        match self.span {
            Some((first, last)) => writeln!(
                f,
                "  {} events over {:.3} s, {} to {}",
                self.events,
                last.duration_since(first).as_secs_f64(),
                utc(first),
                utc(last)
            )?,
            None => writeln!(f, "  no events")?,
        }
        if let Some(cut) = &self.cut {
            writeln!(f, "  warning: {cut}")?;
        }
        if !self.keys.is_empty() {
            let width = self.keys.keys().map(String::len).max().unwrap_or(0).max(3);
            writeln!(f, "\n  {:<width$}  {:>10}", "key", "events")?;
            for (key, count) in &self.keys {
                writeln!(f, "  {key:<width$}  {count:>10}")?;
            }
        }
        if !self.numeric.is_empty() {
            let width = self
                .numeric
                .keys()
                .map(String::len)
                .max()
                .unwrap_or(0)
                .max(7);
            writeln!(
                f,
                "\n  {:<width$}  {:>10}  {:>12}  {:>12}  {:>12}",
                "numeric", "count", "min", "max", "mean"
            )?;
            for (key, s) in &self.numeric {
                writeln!(
                    f,
                    "  {key:<width$}  {:>10}  {:>12.6}  {:>12.6}  {:>12.6}",
                    s.count, s.min, s.max, s.mean
                )?;
            }
        }
        Ok(())
    }
}

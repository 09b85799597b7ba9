//! `giving log dump` and `giving log stats` as library functions (the clap subcommand is in
//! `command`, behind the `cli` feature).

use std::collections::BTreeMap;
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};

use giving::{Timestamp, Value};

use crate::error::LogError;
use crate::format::FORMAT_NAME;
use crate::header::LogHeader;
use crate::reader::{LogDamage, LogEnd, LogReader};
use crate::time_fmt::utc;

/// How whole a log is, from [`DumpSummary::health`] or [`LogStats::health`]; `giving log`
/// exits with [`exit_code`](LogHealth::exit_code).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogHealth {
    /// The log was closed cleanly: every record reads, the end record is there and counts
    /// the events read.
    Clean,
    /// The log ends early: no end record (its writer was killed or is still writing), or an
    /// incomplete record after the last complete one. Every complete event was read.
    Cut,
    /// The log is damaged: bytes that are not records were skipped, or the end record counts
    /// other events than were read.
    Corrupt,
}

impl LogHealth {
    /// The exit code of `giving log dump` and `giving log stats`: 0 clean, 3 cut, 4 corrupt
    /// (1 is for a file that cannot be read as a log at all, 2 for a usage error).
    pub fn exit_code(self) -> u8 {
        match self {
            LogHealth::Clean => 0,
            LogHealth::Cut => 3,
            LogHealth::Corrupt => 4,
        }
    }
}

/// What [`dump`] printed.
#[derive(Debug)]
pub struct DumpSummary {
    /// Events printed.
    pub events: u64,
    /// Why the log ended early, if it did ([`LogError::Truncated`]; every complete event
    /// before was printed).
    pub cut: Option<LogError>,
    /// The end record, if the log has one.
    pub end: Option<LogEnd>,
    /// The damaged regions skipped (the first 100).
    pub damage: Vec<LogDamage>,
    /// How many bytes were skipped as damaged, in all.
    pub skipped_bytes: u64,
    /// How many damaged regions were found, in all.
    pub damaged_regions: u64,
}

impl DumpSummary {
    /// Whether the end record counts as many events as were read (`None` without one).
    pub fn end_matches(&self) -> Option<bool> {
        self.end.map(|end| end.events == self.events)
    }

    /// Clean, cut or corrupt.
    pub fn health(&self) -> LogHealth {
        self.integrity().health()
    }

    /// One line per problem found, for warnings (none for a clean log).
    pub fn problems(&self) -> Vec<String> {
        self.integrity().problems()
    }

    fn integrity(&self) -> Integrity<'_> {
        Integrity {
            events: self.events,
            end: self.end,
            cut: self.cut.as_ref(),
            damage: &self.damage,
            skipped_bytes: self.skipped_bytes,
            damaged_regions: self.damaged_regions,
        }
    }
}

/// What a log's reading found about its wholeness, to judge and describe it.
struct Integrity<'a> {
    events: u64,
    end: Option<LogEnd>,
    cut: Option<&'a LogError>,
    damage: &'a [LogDamage],
    skipped_bytes: u64,
    damaged_regions: u64,
}

/// Offsets of damaged regions listed in a report line.
const OFFSETS_SHOWN: usize = 10;

impl Integrity<'_> {
    fn health(&self) -> LogHealth {
        let miscounted = self.end.is_some_and(|end| end.events != self.events);
        if self.damaged_regions > 0 || miscounted {
            LogHealth::Corrupt
        } else if self.end.is_none() || self.cut.is_some() {
            LogHealth::Cut
        } else {
            LogHealth::Clean
        }
    }

    /// `end record: N events written, M dropped`, or why there is none.
    fn end_line(&self) -> String {
        match (self.end, self.cut) {
            (Some(end), _) => format!(
                "end record: {} events written, {} dropped",
                end.events, end.dropped
            ),
            (None, Some(cut)) => format!(
                "no end record: the log was cut at byte {} (the run was killed or is still \
                 running)",
                cut_at(cut)
            ),
            (None, None) => "no end record: the log ends in damaged bytes".to_owned(),
        }
    }

    fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        if self.end.is_none() {
            problems.push(self.end_line());
        }
        if let (Some(end), Some(cut)) = (self.end, self.cut) {
            problems.push(format!(
                "the log goes on after its end record ({} events) and is cut at byte {}",
                end.events,
                cut_at(cut)
            ));
        }
        if let Some(end) = self.end.filter(|end| end.events != self.events) {
            problems.push(format!(
                "the end record counts {} events, {} were read",
                end.events, self.events
            ));
        }
        if self.damaged_regions > 0 {
            problems.push(self.damage_line());
        }
        problems
    }

    /// `damaged: N bytes skipped at offsets a, b, …`.
    fn damage_line(&self) -> String {
        let mut offsets: Vec<String> = self
            .damage
            .iter()
            .take(OFFSETS_SHOWN)
            .map(|d| d.offset.to_string())
            .collect();
        if self.damaged_regions > offsets.len() as u64 {
            offsets.push(format!("… ({} regions in all)", self.damaged_regions));
        }
        let first = self
            .damage
            .first()
            .map(|d| format!(" (at byte {}: {})", d.offset, d.reason))
            .unwrap_or_default();
        format!(
            "damaged: {} bytes skipped at offsets {}{first}",
            self.skipped_bytes,
            offsets.join(", ")
        )
    }
}

/// Where a cut log ends.
fn cut_at(cut: &LogError) -> u64 {
    match cut {
        LogError::Truncated {
            offset, partial, ..
        } => offset + partial,
        _ => 0,
    }
}

/// What reading all of a log found: its events go to `each`, the rest is returned.
struct Reading {
    cut: Option<LogError>,
    end: Option<LogEnd>,
    damage: Vec<LogDamage>,
    skipped_bytes: u64,
    damaged_regions: u64,
}

/// Reads every event of `reader` into `each`, going on after damage; stops at a cut, or at
/// the first error `each` returns or a hard read error.
fn read_all(
    reader: &mut LogReader,
    mut each: impl FnMut(giving::Event) -> Result<(), LogError>,
) -> Result<Reading, LogError> {
    let mut cut = None;
    for item in reader.by_ref() {
        match item {
            Ok(event) => each(event)?,
            Err(error @ LogError::Truncated { .. }) => cut = Some(error),
            // Counted by the reader, which goes on after it.
            Err(LogError::Corrupt { .. }) => {}
            Err(error) => return Err(error),
        }
    }
    Ok(Reading {
        cut,
        end: reader.end(),
        damage: reader.damage().to_vec(),
        skipped_bytes: reader.skipped_bytes(),
        damaged_regions: reader.damaged_regions(),
    })
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
/// `{"time": ns, "data": {…}}`). Reading goes on after damaged bytes; the summary says how
/// whole the log is ([`DumpSummary::health`]).
///
/// ```
/// use giving::event;
/// use giving_log::{dump, LogHeader, LogWriter};
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
    let mut reader = LogReader::open(path)?;
    let header = reader.header().clone();
    if json {
        let line = serde_json::json!({ "header": header_json(&header) });
        writeln!(out, "{line}").map_err(output_error)?;
    } else {
        writeln!(out, "# {}", HeaderLine(&header)).map_err(output_error)?;
    }
    let mut events = 0;
    let reading = read_all(&mut reader, |event| {
        if json {
            // Written by hand so that `time` comes first and the fields keep their order.
            let data = serde_json::to_string(&event)
                .map_err(|e| output_error(std::io::Error::other(e)))?;
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
        events += 1;
        Ok(())
    })?;
    Ok(DumpSummary {
        events,
        cut: reading.cut,
        end: reading.end,
        damage: reading.damage,
        skipped_bytes: reading.skipped_bytes,
        damaged_regions: reading.damaged_regions,
    })
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
    /// Why the log ended early, if it did ([`LogError::Truncated`]).
    pub cut: Option<LogError>,
    /// The end record, if the log has one.
    pub end: Option<LogEnd>,
    /// The damaged regions skipped (the first 100).
    pub damage: Vec<LogDamage>,
    /// How many bytes were skipped as damaged, in all.
    pub skipped_bytes: u64,
    /// How many damaged regions were found, in all.
    pub damaged_regions: u64,
}

impl LogStats {
    /// Whether the end record counts as many events as were read (`None` without one).
    pub fn end_matches(&self) -> Option<bool> {
        self.end.map(|end| end.events == self.events)
    }

    /// Clean, cut or corrupt.
    pub fn health(&self) -> LogHealth {
        self.integrity().health()
    }

    /// One line per problem found, for warnings (none for a clean log).
    pub fn problems(&self) -> Vec<String> {
        self.integrity().problems()
    }

    fn integrity(&self) -> Integrity<'_> {
        Integrity {
            events: self.events,
            end: self.end,
            cut: self.cut.as_ref(),
            damage: &self.damage,
            skipped_bytes: self.skipped_bytes,
            damaged_regions: self.damaged_regions,
        }
    }

    /// Counts an event's keys and numeric values.
    fn add(&mut self, event: &giving::Event) {
        self.events += 1;
        let t = event.time();
        self.span = Some(match self.span {
            None => (t, t),
            Some((first, last)) => (first.min(t), last.max(t)),
        });
        for (key, value) in event.iter() {
            match self.keys.get_mut(key) {
                Some(count) => *count += 1,
                None => {
                    self.keys.insert(key.to_owned(), 1);
                }
            }
            add_numeric(&mut self.numeric, key, value, 0);
        }
    }
}

/// Reads a whole log and summarises it: counts per key, time span, min/max/mean of numeric
/// keys, and how whole it is (end record, cut, damage: [`LogStats::health`]). Reading goes on
/// after damaged bytes.
///
/// ```
/// use giving::event;
/// use giving_log::{stats, LogHeader, LogWriter};
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
    let mut reader = LogReader::open(path)?;
    let mut stats = LogStats {
        path: reader.path().to_path_buf(),
        header: reader.header().clone(),
        events: 0,
        span: None,
        keys: BTreeMap::new(),
        numeric: BTreeMap::new(),
        cut: None,
        end: None,
        damage: Vec::new(),
        skipped_bytes: 0,
        damaged_regions: 0,
    };
    let reading = read_all(&mut reader, |event| {
        stats.add(&event);
        Ok(())
    })?;
    stats.cut = reading.cut;
    stats.end = reading.end;
    stats.damage = reading.damage;
    stats.skipped_bytes = reading.skipped_bytes;
    stats.damaged_regions = reading.damaged_regions;
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
        let integrity = self.integrity();
        if self.end.is_some() {
            writeln!(f, "  {}", integrity.end_line())?;
        }
        for problem in integrity.problems() {
            writeln!(f, "  warning: {problem}")?;
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

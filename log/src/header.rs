//! The first record of a log: what wrote it, when, where and how.

use std::collections::BTreeMap;

use giving::{Timestamp, Value};

use crate::encode::{Encoder, FieldRefusal};
use crate::format::{FORMAT_NAME, FORMAT_VERSION, MAX_HEADER};

/// The fields every header has: an extra field of the same name would replace them when read.
const RESERVED: [&str; 7] = [
    "format",
    "version",
    "start_time",
    "command_line",
    "host",
    "pid",
    "crate_versions",
];

/// The header record that starts every log (see `docs/log-format.md`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LogHeader {
    /// The format version ([`FORMAT_VERSION`] for logs written by this crate).
    pub version: u64,
    /// When the log was opened.
    pub start_time: Timestamp,
    /// The command line of the process that wrote it, secrets masked ([`redact_args`](crate::redact_args)).
    pub command_line: Vec<String>,
    /// The host name of the machine that wrote it.
    pub host: String,
    /// The id of the process that wrote it.
    pub pid: u64,
    /// Versions of the crates involved (`giving`, `giving-instruments`, …).
    pub crate_versions: BTreeMap<String, String>,
    /// Fields of the header this version does not know, kept as read.
    pub extra: BTreeMap<String, Value>,
}

impl LogHeader {
    /// A header for a log written now by this process.
    pub fn for_this_process() -> Self {
        let mut crate_versions = BTreeMap::new();
        // The workspace versions its crates together: `giving` has this crate's version.
        crate_versions.insert("giving".to_owned(), env!("CARGO_PKG_VERSION").to_owned());
        crate_versions.insert(
            "giving-instruments".to_owned(),
            env!("CARGO_PKG_VERSION").to_owned(),
        );
        Self {
            version: FORMAT_VERSION,
            start_time: Timestamp::now(),
            // Lossy: an argument that is not UTF-8 (a path) must not panic the run. Secrets
            // (`--nats-token T`, a URL's password) are masked: a log is shared.
            command_line: crate::redact_args(
                std::env::args_os().map(|arg| arg.to_string_lossy().into_owned()),
            ),
            host: host_name(),
            pid: u64::from(std::process::id()),
            crate_versions,
            extra: BTreeMap::new(),
        }
    }

    /// Appends the header record to `out`, or says which field a reader would refuse (then
    /// `out` is left as it was).
    pub(crate) fn encode(&self, out: &mut Vec<u8>) -> Result<(), FieldRefusal> {
        let start = out.len();
        let encoded = self.encode_fields(out, start);
        if encoded.is_err() {
            out.truncate(start);
        }
        encoded
    }

    fn encode_fields(&self, out: &mut Vec<u8>, start: usize) -> Result<(), FieldRefusal> {
        if let Some(key) = self
            .extra
            .keys()
            .find(|key| RESERVED.contains(&key.as_str()))
        {
            return Err((
                key.clone(),
                "an extra header field cannot have the name of a standard one".to_owned(),
            ));
        }
        let mut enc = Encoder::new(out);
        enc.map_len(7 + self.extra.len());
        enc.str("format");
        enc.str(FORMAT_NAME);
        enc.str("version");
        enc.uint(self.version);
        enc.str("start_time");
        enc.uint(self.start_time.as_nanos());
        enc.str("command_line");
        enc.array_len(self.command_line.len());
        for arg in &self.command_line {
            enc.str(arg);
        }
        within_header(enc.out, start, "command_line")?;
        enc.str("host");
        enc.str(&self.host);
        enc.str("pid");
        enc.uint(self.pid);
        enc.str("crate_versions");
        enc.map_len(self.crate_versions.len());
        for (name, version) in &self.crate_versions {
            enc.str(name);
            enc.str(version);
        }
        within_header(enc.out, start, "crate_versions")?;
        for (key, value) in &self.extra {
            enc.str(key);
            enc.value(value, 1)
                .map_err(|reason| (key.clone(), reason.into_message()))?;
            within_header(enc.out, start, key)?;
        }
        Ok(())
    }

    /// Reads a header from the fields of the first record; `Err` says what is missing.
    pub(crate) fn from_fields(mut fields: BTreeMap<String, Value>) -> Result<Self, String> {
        match fields.remove("format") {
            Some(Value::Str(name)) if &*name == FORMAT_NAME => {}
            Some(Value::Str(name)) => return Err(format!("its format is `{name}`")),
            Some(other) => return Err(format!("its `format` field is a {}", other.kind())),
            None => return Err("its first record has no `format` field".to_owned()),
        }
        let version = match fields.remove("version") {
            Some(Value::U64(v)) => v,
            Some(Value::I64(v)) if v >= 0 => v as u64,
            _ => return Err("its header has no integer `version`".to_owned()),
        };
        let start_time = match fields.remove("start_time") {
            Some(Value::U64(t)) => Timestamp::from_nanos(t),
            _ => Timestamp::default(),
        };
        let command_line = match fields.remove("command_line") {
            Some(Value::List(args)) => args.iter().map(ToString::to_string).collect(),
            _ => Vec::new(),
        };
        let host = fields
            .remove("host")
            .map(|h| h.to_string())
            .unwrap_or_default();
        let pid = match fields.remove("pid") {
            Some(Value::U64(p)) => p,
            _ => 0,
        };
        let crate_versions = match fields.remove("crate_versions") {
            Some(Value::Map(map)) => map.into_iter().map(|(k, v)| (k, v.to_string())).collect(),
            _ => BTreeMap::new(),
        };
        Ok(Self {
            version,
            start_time,
            command_line,
            host,
            pid,
            crate_versions,
            extra: fields,
        })
    }
}

/// Refuses a header that has grown past [`MAX_HEADER`] with the field `key`.
fn within_header(out: &[u8], start: usize, key: &str) -> Result<(), FieldRefusal> {
    let len = out.len() - start;
    if len > MAX_HEADER {
        return Err((
            key.to_owned(),
            format!(
                "the header would be {len} bytes or more; a reader looks for it in the first \
                 {} MiB only",
                MAX_HEADER >> 20
            ),
        ));
    }
    Ok(())
}

/// This machine's name, for the header.
#[cfg(feature = "sysinfo")]
fn host_name() -> String {
    sysinfo::System::host_name().unwrap_or_default()
}

/// This machine's name, for the header (without sysinfo: the kernel's, where it tells).
#[cfg(not(feature = "sysinfo"))]
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|name| name.trim().to_owned())
        .or_else(|_| std::env::var("HOSTNAME"))
        .unwrap_or_default()
}

//! [`Trace::from_env`]: tracing switched on from outside, as libpvti's `PVTI_OPTIONS`.

use std::path::PathBuf;

use super::encoder::TraceFormat;
use super::error::TraceError;
use super::sink::Trace;

/// The environment variable that switches tracing on for programs run by an
/// [`Overseer`](crate::Overseer): `GIVING_TRACE='{"enable": true, "directory": "traces"}'`
/// (`"format": "json"` for Chrome JSON; `"channels": ["io"]` to enable only those channels, as
/// libpvti's option). One file per run, named by time and process id.
pub const TRACE_ENV: &str = "GIVING_TRACE";

/// What [`TRACE_ENV`] asks for.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TraceOptions {
    /// Whether to trace (`"enable"`: `true` or `"true"`, as libpvti writes it).
    pub enable: bool,
    /// Where the trace files go (`"directory"`, default the working directory).
    pub directory: PathBuf,
    /// Their format (`"format"`: `"perfetto"`, the default, or `"json"`).
    pub format: TraceFormat,
    /// The only channels to enable (`"channels"`: a list of names; libpvti's option): see
    /// [`giving::timeline::enable_only_channels`]. `None` (absent) leaves the channels as the
    /// program set them; an empty list enables them all.
    pub channels: Option<Vec<String>>,
}

impl TraceOptions {
    /// Parses the variable's JSON text.
    ///
    /// ```
    /// use giving_instruments::timeline::{TraceFormat, TraceOptions};
    ///
    /// let options = TraceOptions::parse(r#"{"enable":"true", "directory": "mydirectory"}"#).unwrap();
    /// assert!(options.enable);
    /// assert_eq!(options.directory, std::path::Path::new("mydirectory"));
    /// assert_eq!(options.format, TraceFormat::Perfetto);
    /// let error = TraceOptions::parse(r#"{"enable": 1}"#).unwrap_err();
    /// assert!(error.to_string().contains("`enable`"));
    /// ```
    pub fn parse(text: &str) -> Result<Self, TraceError> {
        let bad = |message: String| TraceError::Env {
            variable: TRACE_ENV,
            message,
        };
        let json: serde_json::Value =
            serde_json::from_str(text).map_err(|e| bad(format!("not JSON: {e}")))?;
        let serde_json::Value::Object(fields) = json else {
            return Err(bad("not a JSON object".to_owned()));
        };
        let mut options = TraceOptions {
            directory: PathBuf::from("."),
            ..TraceOptions::default()
        };
        for (key, value) in fields {
            match (key.as_str(), value) {
                ("enable", serde_json::Value::Bool(b)) => options.enable = b,
                ("enable", serde_json::Value::String(s)) if s == "true" || s == "false" => {
                    options.enable = s == "true";
                }
                ("directory", serde_json::Value::String(dir)) => options.directory = dir.into(),
                ("format", serde_json::Value::String(format)) => {
                    options.format = format.parse().map_err(|e: TraceError| bad(e.to_string()))?;
                }
                ("channels", serde_json::Value::Array(names))
                    if names.iter().all(serde_json::Value::is_string) =>
                {
                    let names = names.iter().filter_map(|n| n.as_str()).map(str::to_owned);
                    options.channels = Some(names.collect());
                }
                ("enable" | "directory" | "format" | "channels", value) => {
                    return Err(bad(format!("`{key}` cannot be {value}")));
                }
                (other, _) => return Err(bad(format!("unknown option `{other}`"))),
            }
        }
        Ok(options)
    }
}

impl Trace {
    /// The trace [`TRACE_ENV`] asks for: `Ok(None)` when it is unset or not enabled, an error
    /// naming the variable when it cannot be used. The [`Overseer`](crate::Overseer) calls
    /// this for every run.
    pub fn from_env() -> Result<Option<Trace>, TraceError> {
        let Some(text) = std::env::var_os(TRACE_ENV) else {
            return Ok(None);
        };
        let text = text.into_string().map_err(|_| TraceError::Env {
            variable: TRACE_ENV,
            message: "not UTF-8".to_owned(),
        })?;
        Trace::from_options(&TraceOptions::parse(&text)?)
    }

    /// The trace `options` ask for (`Ok(None)` when not enabled), its channels switched as
    /// they say: only those listed are enabled, process-wide, from now on (see
    /// [`giving::timeline::enable_only_channels`]).
    ///
    /// ```
    /// use giving_instruments::timeline::{Trace, TraceOptions};
    ///
    /// let off = TraceOptions::parse(r#"{"enable": false, "channels": ["io"]}"#).unwrap();
    /// assert!(Trace::from_options(&off).unwrap().is_none());
    /// ```
    pub fn from_options(options: &TraceOptions) -> Result<Option<Trace>, TraceError> {
        if !options.enable {
            return Ok(None);
        }
        let trace = Trace::in_dir(&options.directory, options.format)?;
        if let Some(channels) = &options.channels {
            giving::timeline::enable_only_channels(Some(channels.as_slice()));
        }
        Ok(Some(trace))
    }
}

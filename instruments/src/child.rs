//! The child side of the suite's child-process protocol (`docs/protocol.md`): a program run by
//! `giving suite run` finds an inherited pipe's number in `DATA_FD` and the [`Overseer`]
//! streams every event to it in the log's record format, with no change to the program.
//!
//! [`Overseer`]: crate::Overseer

use std::fs::OpenOptions;
use std::path::PathBuf;

use crate::{EarlyStop, Instrument, InstrumentError, MsgpackLog};

/// The environment variable holding the number of the inherited file descriptor (a pipe's
/// write end) where a child writes its events, as voir's.
pub const DATA_FD: &str = "DATA_FD";

/// The environment variable asking a child to stop after that many rates (the suite's
/// `voir.options.stop`): the [`Overseer`](crate::Overseer) adds an [`EarlyStop`].
pub const STOP_AFTER: &str = "GIVING_STOP";

/// The environment variable asking a child's [`Rate`](crate::Rate) to skip that many warm-up
/// windows (the suite's `voir.options.skip`), unless the program chose its own with
/// [`Rate::skip`](crate::Rate::skip).
pub const RATE_SKIP: &str = "GIVING_RATE_SKIP";

/// What the environment asks of this process as a suite's child: the instruments to add.
/// Empty when the process was not started by a suite. A `DATA_FD` that is not an open
/// descriptor is an error (the caller reports it; training goes on).
pub(crate) fn from_env() -> Vec<Result<Box<dyn Instrument>, InstrumentError>> {
    let mut out: Vec<Result<Box<dyn Instrument>, InstrumentError>> = Vec::new();
    if let Some(fd) = std::env::var_os(DATA_FD) {
        out.push(data_log(&fd.to_string_lossy()));
    }
    if let Some(stop) = std::env::var_os(STOP_AFTER) {
        let stop = stop.to_string_lossy();
        out.push(match stop.trim().parse::<u64>() {
            Ok(n) if n > 0 => Ok(Box::new(EarlyStop::new(n))),
            _ => Err(InstrumentError::other(format!(
                "{STOP_AFTER}={stop:?}: expected a number of rates from 1"
            ))),
        });
    }
    out
}

/// The log on `DATA_FD`. The descriptor is reopened through `/dev/fd/N` (a new handle on the
/// same pipe), so no descriptor is taken over and no unsafe code is needed; each run of an
/// Overseer in the process writes a header, its events and an end record. `DATA_FD=1` is
/// stdout, shared with the program's own output (a launcher such as ssh forwards nothing
/// else): the records are smuggled into it as voir does, in escape sequences terminals ignore.
fn data_log(fd: &str) -> Result<Box<dyn Instrument>, InstrumentError> {
    let n: u32 = fd.trim().parse().map_err(|_| {
        InstrumentError::other(format!(
            "{DATA_FD}={fd:?}: expected a file descriptor number"
        ))
    })?;
    let path = PathBuf::from(format!("/dev/fd/{n}"));
    let file = OpenOptions::new().write(true).open(&path).map_err(|e| {
        InstrumentError::other(format!("{DATA_FD}={n}: cannot open the descriptor: {e}"))
    })?;
    let name = PathBuf::from(format!("{DATA_FD} (fd {n})"));
    let log = MsgpackLog::to_open_file(name, file, n == 1)?;
    Ok(Box::new(log.header_field("data_fd", u64::from(n))))
}

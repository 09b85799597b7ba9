//! [`replay`]: feeding a log back into a scope, so that the pipelines of a run work offline.

use std::path::Path;

use giving::Given;

use crate::error::LogError;
use crate::reader::{LogDamage, LogReader};

/// What a replay gave.
#[derive(Debug)]
pub struct ReplaySummary {
    /// Events given.
    pub events: u64,
    /// Why the replay stopped before the end of the log, if it did: the log is cut
    /// ([`LogError::Truncated`]), or ends in damaged bytes ([`LogError::Corrupt`]). Every
    /// complete event before that was given.
    pub cut: Option<LogError>,
    /// Damaged regions of the log that were skipped (the first 100): the events after each
    /// were given.
    pub damage: Vec<LogDamage>,
}

/// Gives every event of the log at `path` into the scope `gv`, in order and with its original
/// timestamp, as fast as the pipelines take them. Timestamp-based instruments such as
/// giving-instruments' `Rate` compute the same values as during the run.
///
/// ```
/// use giving::prelude::*;
/// use giving::{event, given};
/// use giving_log::{LogHeader, LogWriter, replay};
///
/// // A run's log (giving-instruments' `MsgpackLog` writes one the same way).
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("run.msgpack");
/// let mut writer = LogWriter::create(&path, &LogHeader::for_this_process()).unwrap();
/// for loss in [0.9, 0.3, 0.5] {
///     writer.write(&event!(loss)).unwrap();
/// }
/// writer.close(0).unwrap();
///
/// // Offline: the same pipeline, fed by the log.
/// let gv = given();
/// let best = gv.spawn(gv.stream().key::<f64>("loss").min());
/// let summary = replay(&path, &gv).unwrap();
/// gv.finish().unwrap();
/// assert_eq!(summary.events, 3);
/// assert_eq!(best.join().unwrap(), Some(0.3));
/// ```
pub fn replay(path: impl AsRef<Path>, gv: &Given) -> Result<ReplaySummary, LogError> {
    let mut reader = LogReader::open(path)?;
    let giver = gv.giver();
    let mut summary = ReplaySummary {
        events: 0,
        cut: None,
        damage: Vec::new(),
    };
    while let Some(item) = reader.next() {
        match item {
            Ok(event) => {
                giver.give(event);
                summary.events += 1;
            }
            Err(error @ LogError::Truncated { .. }) => summary.cut = Some(error),
            // The reader goes on after damage, unless no record follows it.
            Err(error @ LogError::Corrupt { .. }) if reader.ends_in_damage() => {
                summary.cut = Some(error);
            }
            Err(LogError::Corrupt { .. }) => {}
            Err(error) => return Err(error),
        }
    }
    summary.damage = reader.damage().to_vec();
    Ok(summary)
}

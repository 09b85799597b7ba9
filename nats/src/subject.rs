//! The subjects: `giving.<run>.<rank>` for a rank's events, `giving.<run>.>` for all of them.

use crate::error::NatsError;

/// The first token of every subject giving publishes on.
pub const PREFIX: &str = "giving";

/// Checks that `value` can be one token of a subject: not empty, no `.`, `*`, `>` or
/// whitespace.
pub(crate) fn token(what: &'static str, value: &str) -> Result<(), NatsError> {
    let reason = if value.is_empty() {
        "it is empty"
    } else if value.contains('.') {
        "it contains `.` (the subject separator)"
    } else if value.contains(['*', '>']) {
        "it contains a wildcard (`*` or `>`)"
    } else if value.chars().any(char::is_whitespace) {
        "it contains whitespace"
    } else {
        return Ok(());
    };
    Err(NatsError::Subject {
        what,
        value: value.to_owned(),
        reason,
    })
}

/// `giving.<run>.<rank>`: where rank `rank` of run `run` publishes.
///
/// ```
/// assert_eq!(giving_nats::rank_subject("exp1", 3).unwrap(), "giving.exp1.3");
/// assert!(giving_nats::rank_subject("a.b", 0).is_err());
/// ```
pub fn rank_subject(run: &str, rank: u64) -> Result<String, NatsError> {
    token("run name", run)?;
    Ok(format!("{PREFIX}.{run}.{rank}"))
}

/// `giving.<run>.>`: every rank of run `run`.
///
/// ```
/// assert_eq!(giving_nats::run_subjects("exp1").unwrap(), "giving.exp1.>");
/// ```
pub fn run_subjects(run: &str) -> Result<String, NatsError> {
    token("run name", run)?;
    Ok(format!("{PREFIX}.{run}.>"))
}

/// The rank a subject `giving.<run>.<rank>` names, if its last token is a number.
pub(crate) fn rank_of(subject: &str) -> Option<u64> {
    subject.rsplit('.').next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_run_names_are_refused_with_the_reason() {
        for (run, reason) in [
            ("", "empty"),
            ("a.b", "separator"),
            ("a*", "wildcard"),
            ("a>", "wildcard"),
            ("a b", "whitespace"),
        ] {
            let error = rank_subject(run, 0).unwrap_err().to_string();
            assert!(error.contains(reason), "{run:?}: {error}");
            assert!(error.contains("run name"), "{error}");
        }
    }

    #[test]
    fn the_rank_is_read_back_from_the_subject() {
        assert_eq!(rank_of(&rank_subject("r", 12).unwrap()), Some(12));
        assert_eq!(rank_of("giving.r.x"), None);
    }
}

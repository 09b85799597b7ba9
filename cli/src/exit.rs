//! How a command ends: every command returns `Result<ExitCode>` to `run()` (main.rs), which
//! turns an error into `error: …` lines on stderr and exit code 1; a usage error is clap's
//! message and code 2. Nothing calls `process::exit` (not even clap, through `try_parse`), so
//! destructors (log flushes, terminal restores) always run.

use std::process::ExitCode;

/// An exit code as an [`ExitCode`]: an Overseer run's
/// ([`Run::exit_code`](giving_instruments::Run::exit_code): 0, 1, or 128 + a signal's number)
/// or clap's (0 after `--help`, 2 for a usage error); a code outside `0..=255`, which neither
/// gives, is reported as 1.
pub(crate) fn exit_code(code: i32) -> ExitCode {
    u8::try_from(code).map_or(ExitCode::FAILURE, ExitCode::from)
}

/// Prints an error as a command-line tool should: `error: <message>`, then its causes, and
/// never a backtrace (even with `RUST_BACKTRACE=1`, which `anyhow`'s `Debug` would honour).
///
/// A cause whose text the line above already contains is skipped: `cannot open X: No such
/// file or directory (os error 2)` is not followed by `caused by: No such file or directory
/// (os error 2)`.
pub(crate) fn report(error: &anyhow::Error) {
    for line in lines(error) {
        eprintln!("{line}");
    }
}

/// The lines [`report`] prints.
fn lines(error: &anyhow::Error) -> Vec<String> {
    let mut previous = error.to_string();
    let mut lines = vec![format!("error: {previous}")];
    for cause in error.chain().skip(1) {
        let text = cause.to_string();
        if !previous.contains(&text) {
            lines.push(format!("  caused by: {text}"));
        }
        previous = text;
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An error that writes its source into its own message, as many do.
    #[derive(Debug)]
    struct Open {
        path: &'static str,
        source: std::io::Error,
    }

    impl std::fmt::Display for Open {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "cannot open {}: {}", self.path, self.source)
        }
    }

    impl std::error::Error for Open {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.source)
        }
    }

    fn not_found() -> std::io::Error {
        std::io::Error::from(std::io::ErrorKind::NotFound)
    }

    #[test]
    fn a_cause_already_in_the_line_above_is_printed_once() {
        let error = anyhow::Error::new(Open {
            path: "x.log",
            source: not_found(),
        });
        assert_eq!(
            lines(&error),
            [format!("error: cannot open x.log: {}", not_found())]
        );
    }

    #[test]
    fn a_cause_with_new_text_is_printed_under_its_error() {
        let error = anyhow::Error::new(not_found()).context("reading the suite");
        assert_eq!(
            lines(&error),
            [
                "error: reading the suite".to_owned(),
                format!("  caused by: {}", not_found()),
            ]
        );
    }

    #[test]
    fn exit_codes_keep_their_number_and_an_impossible_one_is_a_failure() {
        assert_eq!(exit_code(0), ExitCode::SUCCESS);
        assert_eq!(exit_code(130), ExitCode::from(130));
        assert_eq!(exit_code(-1), ExitCode::FAILURE);
        assert_eq!(exit_code(256), ExitCode::FAILURE);
    }
}

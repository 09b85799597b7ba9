//! The message of a caught panic, for the writer's `$error` field: a lazy value that panics
//! while being read is written as nil with that message.

use std::any::Any;

/// The message of a caught panic (what `catch_unwind` returned): its `&str` or `String`, or
/// `(no message)`, worded as giving-instruments' `PanicPayload` words it.
pub(crate) fn panic_message(payload: Box<dyn Any + Send>) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_is_the_string_given_to_panic() {
        let caught = std::panic::catch_unwind(|| panic!("device {}", "lost")).unwrap_err();
        assert_eq!(panic_message(caught), "device lost");
        let caught = std::panic::catch_unwind(|| panic!("literal")).unwrap_err();
        assert_eq!(panic_message(caught), "literal");
        let caught = std::panic::catch_unwind(|| std::panic::panic_any(7u8)).unwrap_err();
        assert_eq!(panic_message(caught), "(no message)");
    }
}

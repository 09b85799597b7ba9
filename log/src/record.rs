//! One record at a time, for transports that carry the log's records one per message (NATS):
//! [`encode_header`], [`encode_event`] and [`encode_end`] write exactly the bytes a log file
//! holds for its header, an event and its end record; [`StreamDecoder`](crate::StreamDecoder) reads them back.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;

use giving::{Event, Timestamp};

use crate::encode::Encoder;
use crate::error::LogError;
use crate::header::LogHeader;
use giving::panic_message;

/// Appends the log's header record (`header`: command line, host, pid, crate versions, extra
/// fields) to `out`, read back as [`StreamItem::Header`](crate::StreamItem::Header): what a
/// transport sends first so that the receiver knows who is speaking. A header the reader
/// would refuse leaves `out` as it was and is an error naming `name` and the field.
///
/// ```
/// use giving_log::{LogHeader, StreamDecoder, StreamItem, encode_header};
///
/// let mut bytes = Vec::new();
/// encode_header(&LogHeader::for_this_process(), &mut bytes, "example").unwrap();
/// let mut decoder = StreamDecoder::new();
/// decoder.push(&bytes);
/// let Some(StreamItem::Header(header)) = decoder.next_item() else { panic!() };
/// assert_eq!(header.pid, u64::from(std::process::id()));
/// ```
pub fn encode_header(header: &LogHeader, out: &mut Vec<u8>, name: &str) -> Result<(), LogError> {
    let start = out.len();
    header.encode(out).map_err(|(key, reason)| {
        out.truncate(start);
        LogError::Refused {
            path: PathBuf::from(name),
            record: "the header".to_owned(),
            key,
            reason,
        }
    })
}

/// Appends the log record of `event` to `out` (lazy values are resolved here: call it off the
/// training thread). A lazy value that panics is written as nil with an `$error` field, as the
/// log does. An event the reader would refuse leaves `out` as it was and is an error
/// ([`LogError::Refused`]) naming `name` (the transport: a subject, a pipe) and the field.
///
/// ```
/// use giving::event;
/// use giving_log::{StreamDecoder, StreamItem, encode_event};
///
/// let mut bytes = Vec::new();
/// encode_event(&event!(loss = 0.5), &mut bytes, "example").unwrap();
/// let mut decoder = StreamDecoder::new();
/// decoder.push(&bytes);
/// let Some(StreamItem::Event(event)) = decoder.next_item() else { panic!() };
/// assert_eq!(event.get_as::<f64>("loss").unwrap(), 0.5);
/// ```
pub fn encode_event(event: &Event, out: &mut Vec<u8>, name: &str) -> Result<(), LogError> {
    let start = out.len();
    let mut enc = Encoder::new(out);
    let encoded = catch_unwind(AssertUnwindSafe(|| enc.event(event)));
    let refusal = match encoded {
        Ok(Ok(())) => return Ok(()),
        Ok(Err(refusal)) => refusal,
        Err(payload) => {
            let panicked = enc.field;
            let message = panic_message(payload.as_ref());
            out.truncate(start);
            match Encoder::new(out).event_after_panic(event, panicked, &message) {
                Ok(()) => return Ok(()),
                Err(refusal) => refusal,
            }
        }
    };
    out.truncate(start);
    let (key, reason) = refusal;
    Err(LogError::Refused {
        path: PathBuf::from(name),
        record: "an event".to_owned(),
        key,
        reason,
    })
}

/// Appends an end record (`events` written, `dropped` lost) to `out`: the mark that a writer
/// closed cleanly, read back as [`StreamItem::End`](crate::StreamItem::End).
///
/// ```
/// use giving_log::{StreamDecoder, StreamItem, encode_end};
///
/// let mut bytes = Vec::new();
/// encode_end(10, 2, &mut bytes);
/// let mut decoder = StreamDecoder::new();
/// decoder.push(&bytes);
/// assert!(matches!(decoder.next_item(), Some(StreamItem::End { events: 10, dropped: 2 })));
/// ```
pub fn encode_end(events: u64, dropped: u64, out: &mut Vec<u8>) {
    let mut enc = Encoder::new(out);
    enc.map_len(3);
    enc.str("end");
    enc.uint(Timestamp::now().as_nanos());
    enc.str("events");
    enc.uint(events);
    enc.str("dropped");
    enc.uint(dropped);
}

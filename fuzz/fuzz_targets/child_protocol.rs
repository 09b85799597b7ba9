//! What a benchmark child sends the runner — voir's JSON lines or a giving log on `DATA_FD`,
//! or either smuggled into stdout — decoded as the runner decodes it: never panics, always
//! ends, plain output never grows beyond the input, and every event is read as the runner
//! reads it (voir's `$event`s, rates). Run: `cargo +nightly fuzz run -s none child_protocol`.
#![no_main]

use giving::vocab::RateEvent;
use giving_fuzz::protocol::ChildCase;
use giving_log::protocol::{DataDecoder, Incoming, OutOfBand, Unsmuggler};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|case: ChildCase| {
    let bytes = case.bytes();
    let mut items = Vec::new();
    if case.smuggled.is_some() {
        let mut unsmuggler = Unsmuggler::new();
        let mut plain = Vec::new();
        for part in case.split(&bytes) {
            unsmuggler.push(part, &mut plain, &mut items);
        }
        assert!(plain.len() <= bytes.len(), "plain output grew");
    } else {
        let mut decoder = DataDecoder::new();
        for part in case.split(&bytes) {
            items.extend(decoder.push(part));
        }
        items.extend(decoder.finish());
    }
    for item in &items {
        if let Incoming::Event(event) = item {
            if let Some(out_of_band) = OutOfBand::of(event) {
                let _ = out_of_band.error_text();
            }
            let _ = RateEvent::of(event);
        }
    }
});

//! Messages a watcher receives from NATS — records as ranks publish them, damaged ones, bytes
//! from anyone the server lets publish — read by the fan-in's own [`Reception`]: never
//! panics, every message is taken, and every event it keeps names a rank of the run below
//! the world size. Run: `cargo +nightly fuzz run -s none nats_records`.
#![no_main]

use giving::vocab::keys;
use giving_fuzz::protocol::NatsCase;
use giving_nats::Reception;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|case: NatsCase| {
    let mut reception = Reception::new("nats://127.0.0.1:4222", "r").world_size(2);
    for (subject, payload) in case.messages() {
        reception.take(subject, &payload);
    }
    while let Some(event) = reception.pop() {
        if let Ok(rank) = event.get_as::<u64>(keys::RANK) {
            assert!(rank < 2, "a rank outside the world size was kept: {event:?}");
        }
    }
    let _ = reception.final_report();
});

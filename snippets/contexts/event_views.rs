//! An event read off a stream, a giver and the time of what it gives.

pub fn snippet(event: giving::Event, giver: giving::Giver, time: giving::Timestamp) {
    // SNIPPET
}

#[test]
fn runs() {
    let event = giving::Event::builder().field("step", 3u64).field("synced", true).build();
    snippet(event, giving::given().giver(), giving::Timestamp::now());
}

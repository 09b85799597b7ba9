//! A watcher that falls behind: the NATS client drops what its queue cannot hold, and the
//! fan-in counts and says so instead of losing it silently. Against a real `nats-server`
//! (SKIPPED when it is not installed).

use giving::vocab::keys::{INSTRUMENT, NATS_LOST};
mod support;

use giving_nats::FanIn;

/// More than the client's queue for one subscription (65,536 messages).
const FLOOD: usize = 100_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watcher_that_falls_behind_counts_the_messages_the_client_dropped() {
    let Some(server) = support::nats_server() else {
        return;
    };
    let url = server.url();
    let mut fan_in = FanIn::connect(&url, "slow").await.unwrap();
    assert_eq!(fan_in.lost(), 0);
    // Nobody reads the fan-in while a publisher floods its subject: its client's queue fills.
    let flood = async_nats::connect(&url).await.unwrap();
    for i in 0..FLOOD {
        flood
            .publish("giving.slow.0", format!("not a record {i}").into())
            .await
            .unwrap();
    }
    flood.flush().await.unwrap();
    // The client reports each drop through its event callback, a task of its own.
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    while fan_in.lost() == 0 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let lost = fan_in.lost();
    assert!(lost > 0, "the client dropped messages of a full queue");
    assert!(lost as usize <= FLOOD - 65_536, "{lost} counted");
    // Reading on, the first thing the stream says is the count (the flood itself is bytes
    // that are not records, counted as rejected). The client may still be reporting drops
    // (CI saw 11 read above and 12 given), so the count given lies between what was read
    // before and what is read after.
    let event = fan_in.next().await.unwrap();
    assert_eq!(event.get_as::<String>(INSTRUMENT).unwrap(), "nats");
    let given = event.get_as::<u64>(NATS_LOST).unwrap();
    assert!(
        (lost..=fan_in.lost()).contains(&given),
        "{given} given, {lost} read before, {} after",
        fan_in.lost()
    );
}

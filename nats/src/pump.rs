//! The publisher's loop: takes events from the rank's scope, encodes them (tagged with the
//! rank's identity) into a bounded [`DropOldest`] buffer, and sends them while the server is
//! reachable. Generic over the [`Link`] so that tests drive it without a server.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::time::Duration;

use futures::{Stream, StreamExt};
use giving::Event;
use giving_instruments::LazyWindow;
use giving_log::{LogHeader, encode_end, encode_event, encode_header};

use crate::buffer::DropOldest;
use crate::identity::Identity;

/// How often a growing drop count is given into the rank's scope.
pub(crate) const REPORT_EVERY: Duration = Duration::from_secs(1);
/// How often a sender that finds the server down looks again.
const RETRY_EVERY: Duration = Duration::from_millis(50);

/// Where records go: a NATS client, or a test's fake.
pub(crate) trait Link {
    /// Whether the server is connected now.
    fn is_up(&self) -> bool;
    /// Sends one record; whether it was handed to the connection.
    fn send(&self, record: Vec<u8>) -> impl Future<Output = bool>;
}

/// How the pump is set up.
pub(crate) struct PumpConfig {
    pub(crate) identity: Identity,
    /// Records buffered while the server is down (the oldest go first).
    pub(crate) capacity: usize,
    /// How long the pump may keep sending after the scope ended.
    pub(crate) finish_within: Duration,
}

/// Resolves at `deadline`, never without one.
async fn until(deadline: Option<std::time::Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(tokio::time::Instant::from_std(deadline)).await,
        None => std::future::pending().await,
    }
}

/// What a pump did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PublishSummary {
    /// Events taken from the scope.
    pub events: u64,
    /// Records handed to the connection (the end record included, the header not).
    pub published: u64,
    /// Events dropped: the buffer was full while the server was down, the subscription lagged,
    /// an event could not be encoded, or the server was still down when the run ended.
    pub dropped: u64,
}

/// Runs until `events` ends and the buffer is sent (or `finish_within` passed): see the
/// module doc. `lagged` counts the subscription's own drops; `report` is called with the
/// total drop count every [`REPORT_EVERY`] while it grows.
pub(crate) async fn pump<L: Link>(
    link: &L,
    events: impl Stream<Item = Event> + Unpin,
    lagged: impl Fn() -> u64,
    report: impl Fn(u64),
    config: PumpConfig,
) -> PublishSummary {
    let buffer = RefCell::new(DropOldest::new(config.capacity));
    let wake = tokio::sync::Notify::new();
    let ended = Cell::new(false);
    let taken = Cell::new(0u64);
    let refused = Cell::new(0u64);
    let subject = config.identity.subject();
    let dropped = || buffer.borrow().dropped() + lagged() + refused.get();

    let drain = async {
        let mut events = events;
        let mut ticker = tokio::time::interval(REPORT_EVERY);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut reported = 0;
        // Lazy values (losses on the device) are read once per sync window, as the log does.
        let mut window = LazyWindow::default();
        let encode = |event: &Event| {
            let mut record = Vec::new();
            match encode_event(&config.identity.tag(event), &mut record, &subject) {
                Ok(()) => buffer.borrow_mut().push(record),
                Err(_) => refused.set(refused.get() + 1),
            }
            wake.notify_one();
        };
        loop {
            let due = window.deadline();
            tokio::select! {
                event = events.next() => {
                    let Some(event) = event else { break };
                    taken.set(taken.get() + 1);
                    window.push(event, encode);
                }
                () = until(due) => window.release(encode),
                _ = ticker.tick() => {
                    let now = dropped();
                    if now > reported {
                        reported = now;
                        report(now);
                    }
                }
            }
        }
        window.release(encode);
        let mut end = Vec::new();
        encode_end(taken.get(), dropped(), &mut end);
        buffer.borrow_mut().push(end);
        ended.set(true);
        wake.notify_one();
    };

    let published = Cell::new(0u64);
    // The log's header goes first, once the server is up: who is speaking (command line,
    // host, pid, crate versions), as a log file starts. It is not an event: neither counted
    // nor dropped with them.
    let mut header = Vec::new();
    let mut header = encode_header(&LogHeader::for_this_process(), &mut header, &subject)
        .ok()
        .map(|()| header);
    let send = async {
        let mut deadline = None;
        loop {
            if ended.get() && deadline.is_none() {
                deadline = Some(tokio::time::Instant::now() + config.finish_within);
            }
            let past = deadline.is_some_and(|d| tokio::time::Instant::now() >= d);
            if past {
                buffer.borrow_mut().discard();
                return;
            }
            if !link.is_up() {
                tokio::time::sleep(RETRY_EVERY).await;
                continue;
            }
            if let Some(record) = header.take() {
                let _ = link.send(record).await;
                continue;
            }
            let next = buffer.borrow_mut().pop();
            match next {
                Some(record) => {
                    let sent = match deadline {
                        Some(d) => tokio::time::timeout_at(d, link.send(record))
                            .await
                            .unwrap_or(false),
                        None => link.send(record).await,
                    };
                    if sent {
                        published.set(published.get() + 1);
                    } else {
                        refused.set(refused.get() + 1);
                    }
                }
                None if ended.get() => return,
                None => wake.notified().await,
            }
        }
    };
    tokio::join!(drain, send);
    PublishSummary {
        events: taken.get(),
        published: published.get(),
        dropped: dropped(),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use futures::channel::mpsc;
    use giving_log::{StreamDecoder, StreamItem};

    use super::*;

    /// A link that is up or down as the test says and keeps what it was sent.
    #[derive(Default, Clone)]
    struct Fake {
        up: Arc<std::sync::atomic::AtomicBool>,
        sent: Arc<Mutex<Vec<Vec<u8>>>>,
    }

    impl Link for Fake {
        fn is_up(&self) -> bool {
            self.up.load(std::sync::atomic::Ordering::SeqCst)
        }
        async fn send(&self, record: Vec<u8>) -> bool {
            self.sent.lock().unwrap().push(record);
            true
        }
    }

    impl Fake {
        fn set_up(&self, up: bool) {
            self.up.store(up, std::sync::atomic::Ordering::SeqCst);
        }
        fn items(&self) -> Vec<StreamItem> {
            let mut decoder = StreamDecoder::new();
            for record in self.sent.lock().unwrap().iter() {
                decoder.push(record);
            }
            std::iter::from_fn(|| decoder.next_item()).collect()
        }
    }

    fn config(capacity: usize) -> PumpConfig {
        PumpConfig {
            identity: Identity::new("t").unwrap().rank(2),
            capacity,
            finish_within: Duration::from_secs(2),
        }
    }

    fn event(i: u64) -> Event {
        Event::builder().field("i", i).build()
    }

    fn index(item: &StreamItem) -> Option<u64> {
        match item {
            StreamItem::Event(e) => e.get_as::<u64>("i").ok(),
            _ => None,
        }
    }

    #[tokio::test(start_paused = true)]
    async fn while_the_server_is_down_the_oldest_go_and_are_counted_then_sending_resumes() {
        let local = tokio::task::LocalSet::new();
        local.run_until(down_then_up()).await;
    }

    async fn down_then_up() {
        let link = Fake::default();
        let (tx, rx) = mpsc::unbounded();
        let reports = Arc::new(Mutex::new(Vec::new()));
        let seen = reports.clone();
        let task = {
            let link = link.clone();
            tokio::task::spawn_local(async move {
                pump(
                    &link,
                    rx,
                    || 0,
                    move |n| seen.lock().unwrap().push(n),
                    config(4),
                )
                .await
            })
        };
        for i in 0..10 {
            tx.unbounded_send(event(i)).unwrap();
        }
        tokio::time::sleep(Duration::from_millis(1500)).await;
        assert!(link.sent.lock().unwrap().is_empty(), "sent while down");
        assert_eq!(*reports.lock().unwrap(), [6], "one report of the 6 dropped");
        link.set_up(true);
        tokio::time::sleep(Duration::from_millis(100)).await;
        tx.unbounded_send(event(10)).unwrap();
        drop(tx);
        let summary = task.await.unwrap();
        assert_eq!(
            summary,
            PublishSummary {
                events: 11,
                published: 6,
                dropped: 6
            }
        );
        let items = link.items();
        assert!(
            matches!(&items[0], StreamItem::Header(h) if h.pid == u64::from(std::process::id())),
            "the header goes first: {items:?}"
        );
        let items = &items[1..];
        let kept: Vec<u64> = items.iter().filter_map(index).collect();
        assert_eq!(kept, [6, 7, 8, 9, 10], "the newest were kept, in order");
        let StreamItem::Event(first) = &items[0] else {
            panic!("{items:?}")
        };
        assert_eq!(first.get_as::<u64>(giving::vocab::keys::RANK).unwrap(), 2);
        assert!(matches!(
            items.last(),
            Some(StreamItem::End {
                events: 11,
                dropped: 6
            })
        ));
    }

    #[tokio::test(start_paused = true)]
    async fn a_server_still_down_at_the_end_does_not_hold_the_run() {
        let link = Fake::default();
        let (tx, rx) = mpsc::unbounded();
        for i in 0..3 {
            tx.unbounded_send(event(i)).unwrap();
        }
        drop(tx);
        let start = tokio::time::Instant::now();
        let summary = pump(&link, rx, || 5, |_| {}, config(100)).await;
        let waited = start.elapsed();
        assert!(waited >= Duration::from_secs(2) && waited <= Duration::from_millis(2100));
        assert_eq!(summary.published, 0);
        // 5 lost by the subscription, 3 events and the end record never sent.
        assert_eq!(summary.dropped, 9);
        assert_eq!(summary.events, 3);
    }

    struct OnDevice(f64);

    impl giving::Resolve for OnDevice {
        fn resolve(&self) -> Result<giving::Value, giving::ResolveError> {
            Ok(giving::Value::F64(self.0))
        }
    }

    #[tokio::test(start_paused = true)]
    async fn lazy_losses_are_read_per_sync_window_and_published_in_order() {
        let link = Fake::default();
        link.set_up(true);
        let (tx, rx) = mpsc::unbounded();
        let loss = Event::builder()
            .field("loss", giving::Value::lazy(OnDevice(0.25)))
            .build();
        let synced = Event::builder()
            .field("step", 1u64)
            .field("synced", true)
            .build();
        for event in [event(0), loss, event(1), synced] {
            tx.unbounded_send(event).unwrap();
        }
        drop(tx);
        let summary = pump(&link, rx, || 0, |_| {}, config(16)).await;
        assert_eq!((summary.published, summary.dropped), (5, 0));
        let items = link.items();
        let items = &items[1..];
        let StreamItem::Event(loss) = &items[1] else {
            panic!("{items:?}")
        };
        assert_eq!(
            loss.get_as::<f64>("loss").unwrap(),
            0.25,
            "read, then published"
        );
        let order: Vec<Option<u64>> = items.iter().map(index).collect();
        assert_eq!(order[..3], [Some(0), None, Some(1)]);
    }
}

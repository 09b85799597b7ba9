use futures::stream;
use giving_operators::StreamOps;

use super::{at, ms, stamped, timed};

// ---- throttle -------------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn throttle_passes_the_first_item_of_each_window_without_delay() {
    let v = stamped(at(&[0, 40, 90, 110, 150, 260]).throttle(ms(100))).await;
    assert_eq!(v, vec![(0, 0), (110, 110), (260, 260)]);
}

#[tokio::test(start_paused = true)]
async fn throttle_window_is_half_open() {
    // The window opened at 0 ends at 100: an item exactly at 100 passes.
    let v: Vec<u64> = at(&[0, 99, 100, 150, 200])
        .throttle(ms(100))
        .collect()
        .await;
    assert_eq!(v, vec![0, 100, 200]);
}

#[tokio::test(start_paused = true)]
async fn throttle_window_starts_at_the_emitted_item_not_at_a_fixed_grid() {
    let v: Vec<u64> = at(&[30, 120, 140, 230]).throttle(ms(100)).collect().await;
    assert_eq!(v, vec![30, 140]);
}

#[tokio::test(start_paused = true)]
async fn throttle_edges() {
    let empty: Vec<u64> = at(&[]).throttle(ms(100)).collect().await;
    assert!(empty.is_empty());
    // A burst of ready items: only the first passes.
    let burst: Vec<i32> = stream::iter(0..1000).throttle(ms(1)).collect().await;
    assert_eq!(burst, vec![0]);
    // A zero period lets everything through.
    let all: Vec<i32> = stream::iter(0..5).throttle(ms(0)).collect().await;
    assert_eq!(all, vec![0, 1, 2, 3, 4]);
}

#[test]
fn throttle_needs_no_tokio_runtime() {
    let v = super::collect(stream::iter(0..5).throttle(ms(60_000)));
    assert_eq!(v, vec![0]);
}

// ---- throttle_latest ------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn throttle_latest_emits_the_newest_item_of_each_window_when_it_ends() {
    let v = stamped(at(&[0, 40, 90, 110, 150, 260]).throttle_latest(ms(100))).await;
    assert_eq!(v, vec![(0, 0), (100, 90), (200, 150), (260, 260)]);
}

#[tokio::test(start_paused = true)]
async fn throttle_latest_leads_after_a_quiet_window_and_flushes_at_completion() {
    // The window opened by emitting 10 (at 100) ends at 200 with nothing held: 500 leads.
    let v = stamped(at(&[0, 10, 500, 520]).throttle_latest(ms(100))).await;
    assert_eq!(v, vec![(0, 0), (100, 10), (500, 500), (520, 520)]);
}

#[tokio::test(start_paused = true)]
async fn throttle_latest_edges() {
    let empty: Vec<u64> = at(&[]).throttle_latest(ms(100)).collect().await;
    assert!(empty.is_empty());
    // A burst of ready items: the first leads, the last is flushed at completion.
    let burst: Vec<i32> = stream::iter(0..1000).throttle_latest(ms(1)).collect().await;
    assert_eq!(burst, vec![0, 999]);
}

// ---- debounce -------------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn debounce_emits_after_a_quiet_period() {
    let v = stamped(at(&[0, 40, 90, 300, 320]).debounce(ms(100))).await;
    // 90 waits until 190; 320 is flushed at completion (320).
    assert_eq!(v, vec![(190, 90), (320, 320)]);
}

#[tokio::test(start_paused = true)]
async fn debounce_waits_the_full_period_before_completion() {
    let s = timed(vec![(0, 'a'), (150, 'b'), (200, 'c')], Some(1000));
    let v = stamped(s.debounce(ms(100))).await;
    assert_eq!(v, vec![(100, 'a'), (300, 'c')]);
}

#[tokio::test(start_paused = true)]
async fn debounce_flushes_the_pending_item_at_completion() {
    let s = timed(vec![(0, 1), (10, 2)], Some(50));
    let v = stamped(s.debounce(ms(100))).await;
    assert_eq!(v, vec![(50, 2)]);
    let empty: Vec<u64> = at(&[]).debounce(ms(100)).collect().await;
    assert!(empty.is_empty());
}

// ---- sample ---------------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn sample_emits_the_latest_new_item_at_each_tick() {
    let v = stamped(at(&[10, 20, 30, 250, 420]).sample(ms(100))).await;
    // Ticks at 100 (30), 200 (nothing new), 300 (250), 400 (nothing new); 420 at completion.
    assert_eq!(v, vec![(100, 30), (300, 250), (420, 420)]);
}

#[tokio::test(start_paused = true)]
async fn sample_does_not_repeat_an_item() {
    let s = timed(vec![(10, 'a')], Some(550));
    let v = stamped(s.sample(ms(100))).await;
    assert_eq!(v, vec![(100, 'a')]);
    let empty: Vec<u64> = timed(Vec::<(u64, u64)>::new(), Some(300))
        .sample(ms(100))
        .collect()
        .await;
    assert!(empty.is_empty());
}

#[test]
#[should_panic(expected = "period must be non-zero")]
fn sample_rejects_a_zero_period() {
    let _ = stream::iter([1]).sample(ms(0));
}

// ---- buffer_time ----------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn buffer_time_groups_each_period_and_skips_empty_windows() {
    let s = timed(vec![(10, 1), (20, 2), (130, 3), (350, 4)], Some(420));
    let v = stamped(s.buffer_time(ms(100))).await;
    // Windows end at 100, 200, 300 (empty: nothing), 400; completion at 420 has nothing left.
    assert_eq!(v, vec![(100, vec![1, 2]), (200, vec![3]), (400, vec![4])]);
}

#[tokio::test(start_paused = true)]
async fn buffer_time_flushes_the_partial_buffer_at_completion() {
    let s = timed(vec![(10, 1), (120, 2), (150, 3)], Some(170));
    let v = stamped(s.buffer_time(ms(100))).await;
    assert_eq!(v, vec![(100, vec![1]), (170, vec![2, 3])]);
    let empty: Vec<Vec<u64>> = timed(Vec::<(u64, u64)>::new(), Some(500))
        .buffer_time(ms(100))
        .collect()
        .await;
    assert!(empty.is_empty());
}

#[tokio::test(start_paused = true)]
async fn buffer_time_count_emits_full_buffers_at_once_and_restarts_the_window() {
    let s = at(&[10, 20, 30, 40, 120, 150]);
    let v = stamped(s.buffer_time_count(ms(100), 3)).await;
    // Full at 30; the new window runs 30..130 ([40, 120]); then 130..230: 150 flushed at the end.
    assert_eq!(
        v,
        vec![
            (30, vec![10, 20, 30]),
            (130, vec![40, 120]),
            (150, vec![150])
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn buffer_time_count_with_a_ready_burst() {
    let v: Vec<Vec<i32>> = stream::iter(1..=7)
        .buffer_time_count(ms(100), 3)
        .collect()
        .await;
    assert_eq!(v, vec![vec![1, 2, 3], vec![4, 5, 6], vec![7]]);
}

// ---- timeout --------------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn timeout_errors_once_and_completes_when_an_item_is_late() {
    let v = stamped(at(&[50, 120, 400, 450]).timeout(ms(100))).await;
    assert_eq!(v.len(), 3);
    assert_eq!((v[0].0, v[0].1), (50, Ok(50)));
    assert_eq!((v[1].0, v[1].1), (120, Ok(120)));
    // 100 ms after the last item; the stream is not polled further.
    assert_eq!(v[2].0, 220);
    let err = v[2].1.unwrap_err();
    assert_eq!(err.period(), ms(100));
    assert_eq!(err.to_string(), "no item within 100ms");
}

#[tokio::test(start_paused = true)]
async fn timeout_counts_from_the_first_poll_and_lets_completion_through() {
    let late = stamped(at(&[150]).timeout(ms(100))).await;
    assert_eq!(late.len(), 1);
    assert_eq!(late[0].0, 100);
    assert!(late[0].1.is_err());

    let fine: Vec<_> = at(&[90, 180, 270]).timeout(ms(100)).collect().await;
    assert_eq!(fine, vec![Ok(90), Ok(180), Ok(270)]);

    let empty: Vec<_> = timed(Vec::<(u64, u64)>::new(), Some(50))
        .timeout(ms(100))
        .collect()
        .await;
    assert!(empty.is_empty());
}

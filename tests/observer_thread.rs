//! Observer threads run under `SCHED_BATCH` (Linux), so that they never preempt a training
//! thread when they wake: a pipeline spawned from sync code runs on giving's background
//! runtime, whose thread yields; the giving thread itself is left as it is.

#[cfg(target_os = "linux")]
#[test]
fn pipelines_spawned_from_sync_code_run_on_a_batch_thread_and_the_loop_does_not() {
    if std::env::var(giving::OBSERVER_SCHED_ENV).as_deref() == Ok("normal") {
        eprintln!("SKIPPED: {} is normal", giving::OBSERVER_SCHED_ENV);
        return;
    }
    let gv = giving::given();
    let on_batch_thread = gv.spawn(async { giving::is_batch_thread() });
    gv.finish().unwrap();
    assert!(
        on_batch_thread.join().unwrap(),
        "the pipeline's thread is not SCHED_BATCH"
    );
    assert!(
        !giving::is_batch_thread(),
        "the loop's own thread was changed"
    );
}

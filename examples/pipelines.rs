//! Give from a training-like loop, compose two pipelines from outside it, print what they find.
//!
//! Run: `cargo run --release --example pipelines`

use giving::prelude::*;
use giving::{give, given, iterate};

/// A stand-in for a training loop: it only gives, and knows nothing of who listens.
fn train(steps: usize) {
    let mut loss = 2.5f64;
    let batches = (0..steps).map(|step| vec![step as f32; 32]);
    for (step, batch) in iterate("train", batches)
        .batch_size_with(Vec::len)
        .window(50)
        .enumerate()
    {
        let noise = ((step * 7919) % 101) as f64 / 1000.0;
        loss = loss * 0.995 + noise * 0.01;
        let lr = 0.1 / (1.0 + step as f64 / 500.0);
        give!(step, loss, lr);
        std::hint::black_box(&batch);
    }
}

fn main() -> anyhow::Result<()> {
    let gv = given();

    // Pipeline 1: a rolling average of the loss over 100 steps, reported every 250 steps.
    let report = gv
        .stream()
        .where_(["loss", "step"])
        .key::<f64>("loss")
        .average_rolling(100)
        .enumerate()
        .filter(|(i, _)| (i + 1) % 250 == 0)
        .map(|(i, avg)| format!("step {:>5}  mean loss (last 100) {avg:.4}", i + 1))
        .print();
    let report = gv.spawn(report);

    // Pipeline 2: the best loss and how many items went through, at the end.
    let best = gv.spawn(gv.stream().key::<f64>("loss").min());
    let items = gv.spawn(
        gv.stream()
            .where_(["task", "batch"])
            .key::<u64>("batch")
            .sum(),
    );

    train(2_000);
    gv.finish()?;

    report.join()?;
    println!("best loss      {:.4}", best.join()?.unwrap_or(f64::NAN));
    println!("items trained  {}", items.join()?.unwrap_or(0));
    Ok(())
}

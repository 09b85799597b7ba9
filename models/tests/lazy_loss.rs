//! The training loop never reads its own loss: only the consumer resolves the lazy tensors.
//!
//! Alone in its test binary, since it counts resolutions process-wide.

use burn::backend::{Autodiff, Flex};
use giving::Value;
use giving::prelude::*;
use giving_burn::resolution_count;
use giving_models::{MlpConfig, TrainConfig, train_mlp};

#[test]
fn the_loop_never_resolves_the_loss() {
    let cfg = TrainConfig {
        epochs: 2,
        batch_size: 16,
        lr: 1e-3,
        train_size: 96,
        valid_size: 32,
        window: 4,
        ..TrainConfig::default()
    };
    let gv = giving::given();
    // A subscriber that keeps the values without reading them.
    let kept = gv.spawn(
        gv.stream()
            .where_any(["loss", "accuracy"])
            .map(|e| {
                e.iter()
                    .filter(|(k, _)| ["loss", "val_loss", "accuracy"].contains(k))
                    .map(|(_, v)| v.clone())
                    .collect::<Vec<_>>()
            })
            .collect::<Vec<_>>(),
    );
    let before = resolution_count();
    let report = train_mlp::<Autodiff<Flex>>(
        &Default::default(),
        &cfg,
        &MlpConfig::new(784, vec![16], 10),
    )
    .unwrap();
    gv.finish().unwrap();
    let values: Vec<Value> = kept.join().unwrap().into_iter().flatten().collect();

    // 12 losses, then 2 × (val_loss, accuracy), all lazy and none read by the loop (the
    // report reads its final numbers from its own handles, after the loop).
    assert_eq!(report.steps, 12);
    assert_eq!(values.len(), 12 + 4);
    assert_eq!(
        resolution_count(),
        before,
        "the training loop resolved a lazy value"
    );
    for value in &values {
        let Value::Lazy(lazy) = value else {
            panic!("not lazy: {value:?}")
        };
        assert!(!lazy.is_resolved());
    }

    // The consumer reads each once; the cache serves later reads.
    for value in &values {
        assert!(value.resolved().unwrap().as_f64().unwrap().is_finite());
        value.resolved().unwrap();
    }
    assert_eq!(resolution_count(), before + values.len() as u64);
}

//! The bundled MLP trained by burn-train's `Learner` (feature `learner`) reports what it did
//! and gives what the hand-written loop gives.

use giving::prelude::*;
use giving::vocab::keys;
use giving::{Event, given};
use giving_models::learner::train_learner;
use giving_models::{DeviceSpec, ModelKind};

#[test]
fn the_learner_trains_the_mlp_and_gives_losses_steps_and_validation() {
    let mut config = ModelKind::Mlp.default_config();
    config.epochs = 1;
    config.train_size = 64;
    config.valid_size = 32;
    config.batch_size = 16;
    let gv = given();
    let events = gv.spawn(gv.stream().collect::<Vec<Event>>());
    let report = train_learner(&config, &DeviceSpec::Flex).unwrap();
    gv.finish().unwrap();
    let events = events.join().unwrap();

    assert_eq!((report.epochs, report.steps, report.items), (1, 4, 64));
    assert!(report.final_loss.is_finite() && report.final_loss > 0.0);
    let accuracy = report.accuracy.unwrap();
    assert!((0.0..=1.0).contains(&accuracy), "{accuracy}");
    assert!(!report.stopped);
    let losses = events.iter().filter(|e| e.has(keys::LOSS)).count();
    let steps = events
        .iter()
        .filter(|e| {
            e.has(keys::STEP) && e.get_as::<String>(keys::TASK).ok().as_deref() == Some("train")
        })
        .count();
    // Two validation batches, then the epoch's summary (`epoch_end`).
    let validations = events
        .iter()
        .filter(|e| e.has(keys::VAL_LOSS) && !e.has(keys::EPOCH_END))
        .count();
    let summaries = events.iter().filter(|e| e.has(keys::EPOCH_END)).count();
    assert_eq!((losses, steps, validations, summaries), (4, 4, 2, 1));

    config.steps = Some(3);
    assert!(train_learner(&config, &DeviceSpec::Flex).is_err());
}

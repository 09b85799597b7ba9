use giving_operators::reduce::Reducer;

use crate::Event;
use crate::event::Fields;

/// Reducer of [`kmerge`](super::EventStreamOps::kmerge) and
/// [`kscan`](super::EventStreamOps::kscan): merges the fields of every event into one.
///
/// A later value of a key replaces the earlier one in place; new keys are appended in the
/// order they first appear. The merged event carries the time and origin of the last event
/// merged into it.
#[derive(Debug, Clone, Default)]
pub struct KMerge {
    fields: Fields,
    last: Option<Event>,
}

impl KMerge {
    pub(crate) fn new() -> Self {
        Self::default()
    }
}

/// Sets the fields of `update` on `base`: replaced in place, or appended.
pub(crate) fn merge_into(base: &mut Fields, update: &Event) {
    for (key, value) in update.fields() {
        match base.iter_mut().find(|(k, _)| k == key) {
            Some(slot) => slot.1 = value.clone(),
            None => base.push((key.clone(), value.clone())),
        }
    }
}

impl Reducer<Event> for KMerge {
    type Value = Event;
    type Output = Option<Event>;

    fn push(&mut self, event: Event) {
        merge_into(&mut self.fields, &event);
        self.last = Some(event);
    }

    fn value(&mut self) -> Option<Event> {
        let last = self.last.as_ref()?;
        Some(Event::from_parts(
            self.fields.clone(),
            last.time(),
            last.origin(),
        ))
    }

    fn finish(mut self) -> Option<Event> {
        let last = self.last.take()?;
        Some(Event::from_parts(self.fields, last.time(), last.origin()))
    }

    fn output_value(output: Option<Event>) -> Option<Event> {
        output
    }
}

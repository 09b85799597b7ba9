use std::fmt;

use super::KeyedOp;
use crate::wrap::{WrapMark, WrapStep};
use crate::{Event, Key};

/// Operator of [`wmap`](super::EventStreamOps::wmap): per wrapped block, a state made from the
/// `begin` event and a result made from that state and the `end` event.
pub struct WMap<B, E, St> {
    name: Key,
    begin: B,
    end: E,
    /// States of the blocks begun and not yet ended, innermost last.
    open: Vec<(u64, St)>,
}

impl<B, E, St> WMap<B, E, St> {
    pub(crate) fn new(name: impl Into<Key>, begin: B, end: E) -> Self {
        Self {
            name: name.into(),
            begin,
            end,
            open: Vec::new(),
        }
    }
}

impl<B, E, St, T> KeyedOp<Event> for WMap<B, E, St>
where
    B: FnMut(&Event) -> St,
    E: FnMut(St, &Event) -> T,
{
    type Out = T;

    fn apply(&mut self, event: Event) -> Option<T> {
        let mark = WrapMark::of(&event)?;
        if mark.name != self.name {
            return None;
        }
        match mark.step {
            WrapStep::Begin => {
                let state = (self.begin)(&event);
                self.open.push((mark.id, state));
                None
            }
            WrapStep::End => {
                // An end whose begin was not seen (subscribed mid-block) is ignored.
                let i = self.open.iter().rposition(|(id, _)| *id == mark.id)?;
                let (_, state) = self.open.remove(i);
                Some((self.end)(state, &event))
            }
        }
    }
}

impl<B, E, St> fmt::Debug for WMap<B, E, St> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WMap")
            .field("name", &self.name)
            .field("open", &self.open.len())
            .finish_non_exhaustive()
    }
}

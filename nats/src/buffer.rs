//! [`DropOldest`]: the publisher's bounded buffer; when full, the oldest record goes and is
//! counted.

use std::collections::VecDeque;

/// A bounded FIFO that drops its oldest item when a push finds it full, and counts the drops.
#[derive(Debug)]
pub(crate) struct DropOldest<T> {
    items: VecDeque<T>,
    capacity: usize,
    dropped: u64,
}

impl<T> DropOldest<T> {
    /// A buffer of at most `capacity` items (at least 1).
    pub(crate) fn new(capacity: usize) -> Self {
        let capacity = capacity.max(1);
        Self {
            items: VecDeque::with_capacity(capacity.min(4096)),
            capacity,
            dropped: 0,
        }
    }

    /// Appends `item`, dropping (and counting) the oldest one if the buffer is full.
    pub(crate) fn push(&mut self, item: T) {
        if self.items.len() >= self.capacity {
            self.items.pop_front();
            self.dropped += 1;
        }
        self.items.push_back(item);
    }

    /// The oldest item.
    pub(crate) fn pop(&mut self) -> Option<T> {
        self.items.pop_front()
    }

    /// Items waiting.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }

    /// How many items were dropped so far.
    pub(crate) fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Drops (and counts) every item still waiting.
    pub(crate) fn discard(&mut self) {
        self.dropped += self.items.len() as u64;
        self.items.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_buffer_drops_the_oldest_and_counts() {
        let mut buffer = DropOldest::new(3);
        for i in 0..5 {
            buffer.push(i);
        }
        assert_eq!(buffer.dropped(), 2);
        assert_eq!(buffer.len(), 3);
        assert_eq!(
            std::iter::from_fn(|| buffer.pop()).collect::<Vec<_>>(),
            [2, 3, 4]
        );
        buffer.push(9);
        buffer.discard();
        assert_eq!((buffer.len(), buffer.dropped()), (0, 3));
    }

    #[test]
    fn a_capacity_of_zero_keeps_one() {
        let mut buffer = DropOldest::new(0);
        buffer.push(1);
        buffer.push(2);
        assert_eq!((buffer.pop(), buffer.dropped()), (Some(2), 1));
    }
}

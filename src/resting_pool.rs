//! A pool of freed memory that is handed out again only after it has *rested*: once a given
//! number of other pieces have been freed after it. The event arena's blocks and the feed's
//! slot arrays are freed on a reader's core, with their cache lines in that core's cache;
//! reused at once, each line the giving thread writes has to come back from there, a round
//! trip between the cores per line (docs/architecture.md, "The slow mode"). Pooled at all,
//! they spare the giving thread the page faults of fresh memory: the allocator hands memory
//! freed on another thread back to the system.

use crossbeam_queue::ArrayQueue;

/// Freed pieces, first in first out, at most twice the resting length.
pub(crate) struct RestingPool<T> {
    queue: ArrayQueue<T>,
    resting: usize,
}

impl<T> RestingPool<T> {
    /// A pool whose pieces wait behind `resting` others before reuse (`resting` ≥ 1).
    pub(crate) fn new(resting: usize) -> Self {
        Self {
            queue: ArrayQueue::new(2 * resting),
            resting,
        }
    }

    /// The oldest piece, if more than the resting length wait behind it (a fuzzy count
    /// while other threads push and pop: a piece may be reused a little early or late).
    pub(crate) fn take(&self) -> Option<T> {
        if self.queue.len() > self.resting {
            self.queue.pop()
        } else {
            None
        }
    }

    /// Keeps `piece` for reuse; hands it back when the pool is full, for the caller to free.
    pub(crate) fn give(&self, piece: T) -> Result<(), T> {
        self.queue.push(piece)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_piece_is_taken_only_once_the_resting_length_waits_behind_it_oldest_first() {
        let pool = RestingPool::new(2);
        pool.give(1).unwrap();
        pool.give(2).unwrap();
        assert_eq!(pool.take(), None, "two pieces: none has two behind it");
        pool.give(3).unwrap();
        assert_eq!(pool.take(), Some(1));
        assert_eq!(pool.take(), None);
        pool.give(4).unwrap();
        assert_eq!(pool.give(5), Ok(()));
        assert_eq!(pool.give(6), Err(6), "full at twice the resting length");
        assert_eq!(pool.take(), Some(2));
        assert_eq!(pool.take(), Some(3));
        assert_eq!(pool.take(), None);
    }
}

//! [`Ranks`]: which ranks a watcher has heard from, and which have ended.

use std::collections::BTreeSet;

/// The ranks a [`FanIn`](crate::FanIn) has seen: every rank it received an event from, those
/// whose end record arrived, and the largest world size they announced.
///
/// ```
/// use giving_nats::Ranks;
///
/// let mut ranks = Ranks::default();
/// ranks.saw(0, Some(2));
/// ranks.ended(0);
/// assert!(!ranks.all_done(), "rank 1 of 2 has not ended");
/// ranks.saw(1, Some(2));
/// ranks.ended(1);
/// assert!(ranks.all_done());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ranks {
    seen: BTreeSet<u64>,
    ended: BTreeSet<u64>,
    world_size: u64,
}

impl Ranks {
    /// Records an event from `rank`, which says the run has `world_size` ranks.
    pub fn saw(&mut self, rank: u64, world_size: Option<u64>) {
        self.seen.insert(rank);
        self.world_size = self.world_size.max(world_size.unwrap_or(0));
    }

    /// Records the end of `rank`.
    pub fn ended(&mut self, rank: u64) {
        self.seen.insert(rank);
        self.ended.insert(rank);
    }

    /// Every rank heard from.
    pub fn seen(&self) -> &BTreeSet<u64> {
        &self.seen
    }

    /// The ranks that ended.
    pub fn ended_ranks(&self) -> &BTreeSet<u64> {
        &self.ended
    }

    /// The largest world size announced (0: none was).
    pub fn world_size(&self) -> u64 {
        self.world_size
    }

    /// Whether some rank was heard from, every rank heard from has ended, and as many ended
    /// as the world size announced.
    pub fn all_done(&self) -> bool {
        !self.seen.is_empty()
            && self.ended.len() == self.seen.len()
            && self.ended.len() as u64 >= self.world_size
    }
}

//! [`Identity`]: who a rank is (run, rank, local rank, world size, host), as launchers say it.

use giving::vocab::keys;
use giving::{Event, Value};

use crate::error::NatsError;
use crate::subject;

/// `RANK`: the process's rank, as `torchrun`, `mpirun` wrappers and SLURM launchers set it.
pub const RANK_ENV: &str = "RANK";
/// `LOCAL_RANK`: the process's rank on its node.
pub const LOCAL_RANK_ENV: &str = "LOCAL_RANK";
/// `WORLD_SIZE`: how many ranks the run has.
pub const WORLD_SIZE_ENV: &str = "WORLD_SIZE";

/// `GIVING_PUBLISH`: the NATS server a giving program publishes to when no `--publish` is
/// given (`giving train` reads it; a suite runner sets it for a node that reports through NATS).
pub const PUBLISH_ENV: &str = "GIVING_PUBLISH";
/// `GIVING_RUN`: the run name a giving program publishes under when no `--run` is given.
pub const RUN_ENV: &str = "GIVING_RUN";

/// The identity a rank tags its events with: [`RUN`](keys::RUN), [`HOST`](keys::HOST),
/// [`RANK`](keys::RANK), [`LOCAL_RANK`](keys::LOCAL_RANK), [`WORLD_SIZE`](keys::WORLD_SIZE).
///
/// ```
/// use giving::{Event, vocab::keys};
/// use giving_nats::Identity;
///
/// let me = Identity::new("exp1").unwrap().rank(2).world_size(4).host("node7");
/// assert_eq!(me.subject(), "giving.exp1.2");
/// let tagged = me.tag(&Event::builder().field("loss", 0.5).build());
/// assert_eq!(tagged.get_as::<u64>(keys::RANK).unwrap(), 2);
/// assert_eq!(tagged.get_as::<String>(keys::HOST).unwrap(), "node7");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    run: String,
    rank: u64,
    local_rank: u64,
    world_size: u64,
    host: String,
}

impl Identity {
    /// Rank 0 of 1 of run `run` on this host; the run name must be one subject token (no `.`,
    /// wildcard or whitespace).
    pub fn new(run: &str) -> Result<Self, NatsError> {
        subject::token("run name", run)?;
        Ok(Self {
            run: run.to_owned(),
            rank: 0,
            local_rank: 0,
            world_size: 1,
            host: giving_log::LogHeader::for_this_process().host,
        })
    }

    /// Run `run`, with rank, local rank and world size from `RANK`, `LOCAL_RANK` and
    /// `WORLD_SIZE` where they are set (a value that is not a number is an error naming the
    /// variable). The local rank defaults to the rank, the world size to `rank + 1`.
    pub fn from_env(run: &str) -> Result<Self, NatsError> {
        Self::from_vars(run, |name| std::env::var(name).ok())
    }

    /// [`from_env`](Identity::from_env) with the variables read through `var`.
    pub fn from_vars(run: &str, var: impl Fn(&str) -> Option<String>) -> Result<Self, NatsError> {
        let number = |variable: &'static str| -> Result<Option<u64>, NatsError> {
            match var(variable) {
                None => Ok(None),
                Some(value) => value
                    .trim()
                    .parse()
                    .map(Some)
                    .map_err(|_| NatsError::Env { variable, value }),
            }
        };
        let rank = number(RANK_ENV)?.unwrap_or(0);
        let local_rank = number(LOCAL_RANK_ENV)?.unwrap_or(rank);
        let world_size = number(WORLD_SIZE_ENV)?.unwrap_or(rank + 1);
        Ok(Self::new(run)?
            .rank(rank)
            .local_rank(local_rank)
            .world_size(world_size))
    }

    /// Sets the rank (and the world size to `rank + 1` if it was smaller).
    pub fn rank(mut self, rank: u64) -> Self {
        self.rank = rank;
        self.world_size = self.world_size.max(rank.saturating_add(1));
        self
    }

    /// Sets the rank on this node.
    pub fn local_rank(mut self, local_rank: u64) -> Self {
        self.local_rank = local_rank;
        self
    }

    /// Sets the number of ranks.
    pub fn world_size(mut self, world_size: u64) -> Self {
        self.world_size = world_size;
        self
    }

    /// Sets the host name.
    pub fn host(mut self, host: &str) -> Self {
        self.host = host.to_owned();
        self
    }

    /// The run's name.
    pub fn run_name(&self) -> &str {
        &self.run
    }

    /// The rank.
    pub fn rank_number(&self) -> u64 {
        self.rank
    }

    /// `giving.<run>.<rank>`.
    pub fn subject(&self) -> String {
        format!("{}.{}.{}", subject::PREFIX, self.run, self.rank)
    }

    /// `event` with the identity's fields added after its own (those it already has are kept:
    /// an event a suite tagged keeps its rank). Same timestamp.
    pub fn tag(&self, event: &Event) -> Event {
        let mut builder = event.to_builder();
        let fields: [(&'static str, Value); 5] = [
            (keys::RUN, Value::from(self.run.as_str())),
            (keys::HOST, Value::from(self.host.as_str())),
            (keys::RANK, Value::from(self.rank)),
            (keys::LOCAL_RANK, Value::from(self.local_rank)),
            (keys::WORLD_SIZE, Value::from(self.world_size)),
        ];
        for (key, value) in fields {
            if !event.has(key) {
                builder.push(key, value);
            }
        }
        builder.build()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn launcher_variables_set_the_rank() {
        let id = Identity::from_vars(
            "r",
            vars(&[("RANK", "3"), ("LOCAL_RANK", "1"), ("WORLD_SIZE", "8")]),
        )
        .unwrap();
        assert_eq!((id.rank, id.local_rank, id.world_size), (3, 1, 8));
        assert_eq!(id.subject(), "giving.r.3");
        let id = Identity::from_vars("r", vars(&[])).unwrap();
        assert_eq!((id.rank, id.local_rank, id.world_size), (0, 0, 1));
    }

    #[test]
    fn a_variable_that_is_not_a_number_is_named() {
        let error = Identity::from_vars("r", vars(&[("WORLD_SIZE", "four")])).unwrap_err();
        assert_eq!(
            error.to_string(),
            "WORLD_SIZE=\"four\": expected a non-negative integer"
        );
    }

    #[test]
    fn tagging_keeps_fields_already_there_and_the_time() {
        let id = Identity::new("r").unwrap().rank(1);
        let event = Event::builder()
            .field(keys::RANK, 7u64)
            .field("x", 1u64)
            .build();
        let tagged = id.tag(&event);
        assert_eq!(tagged.get_as::<u64>(keys::RANK).unwrap(), 7);
        assert_eq!(tagged.get_as::<String>(keys::RUN).unwrap(), "r");
        assert_eq!(tagged.time(), event.time());
    }
}

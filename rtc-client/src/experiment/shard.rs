//! Shards: which calls of a plan one machine runs when a sweep is split over many (`--shard K/N`).
//!
//! A shard is a pure function of the plan's cell list in plan order (scenario, then policy, then
//! seed): shard K of N takes the cells whose index i satisfies `i mod N == K - 1`. Round-robin
//! rather than contiguous blocks because the plan is scenario-major and calls over some
//! scenarios cost several times others (a starlink call simulates more events than a
//! terrestrial one): blocks would give one shard all the slow calls, striping gives every shard
//! the same mix. Every cell is in exactly one shard for any N, so the shards of one N together
//! are the whole plan (docs/architecture.md, "Sweeps, shards and resume").

use serde::{Deserialize, Serialize};
use std::fmt;

/// Most shards a sweep may be split into.
pub const MAX_SHARDS: u64 = 100_000;

/// Shard `index` (1-based) of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Shard {
    /// 1-based, at most `count`.
    pub index: u64,
    /// How many shards the plan is split into.
    pub count: u64,
}

/// Why a `K/N` text is not a shard.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShardError {
    /// Not two numbers around a slash.
    #[error("a shard is K/N, two whole numbers such as 2/4 (shard 2 of 4), got {0:?}")]
    Syntax(String),
    /// K is 0 or above N, or N is 0 or too large.
    #[error("shard {index}/{count} does not exist: K must be 1 to N, and N 1 to {MAX_SHARDS}")]
    OutOfRange {
        /// K.
        index: u64,
        /// N.
        count: u64,
    },
}

impl Shard {
    /// The whole plan as one shard.
    pub const WHOLE: Shard = Shard { index: 1, count: 1 };

    /// Parses `K/N`.
    pub fn parse(text: &str) -> Result<Self, ShardError> {
        let syntax = || ShardError::Syntax(text.to_owned());
        let (k, n) = text.trim().split_once('/').ok_or_else(syntax)?;
        let index: u64 = k.trim().parse().map_err(|_| syntax())?;
        let count: u64 = n.trim().parse().map_err(|_| syntax())?;
        if index == 0 || count == 0 || index > count || count > MAX_SHARDS {
            return Err(ShardError::OutOfRange { index, count });
        }
        Ok(Self { index, count })
    }

    /// Whether the shard is the whole plan.
    pub fn is_whole(self) -> bool {
        self.count == 1
    }

    /// Whether cell `index` (0-based, in plan order) belongs to this shard.
    pub fn holds(self, index: usize) -> bool {
        index as u64 % self.count == self.index - 1
    }

    /// The indices of the cells of a plan of `cells` cells that belong to this shard, in order.
    pub fn cells(self, cells: usize) -> Vec<usize> {
        (0..cells).filter(|&i| self.holds(i)).collect()
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_parse_and_bad_ones_are_named() {
        assert_eq!(Shard::parse("2/4"), Ok(Shard { index: 2, count: 4 }));
        assert_eq!(Shard::parse(" 1 / 1 "), Ok(Shard::WHOLE));
        assert_eq!(
            Shard::parse("0/4").unwrap_err().to_string(),
            "shard 0/4 does not exist: K must be 1 to N, and N 1 to 100000"
        );
        assert!(matches!(
            Shard::parse("5/4"),
            Err(ShardError::OutOfRange { index: 5, count: 4 })
        ));
        assert_eq!(
            Shard::parse("2of4").unwrap_err().to_string(),
            "a shard is K/N, two whole numbers such as 2/4 (shard 2 of 4), got \"2of4\""
        );
        assert!(Shard::parse("-1/4").is_err());
        assert!(Shard::parse("1/").is_err());
        assert_eq!(Shard { index: 3, count: 7 }.to_string(), "3/7");
    }

    #[test]
    fn shards_stripe_the_plan_and_together_hold_every_cell_once() {
        assert_eq!(Shard { index: 1, count: 3 }.cells(8), [0, 3, 6]);
        assert_eq!(Shard { index: 3, count: 3 }.cells(8), [2, 5]);
        for count in 1..=9u64 {
            let mut all: Vec<usize> = (1..=count)
                .flat_map(|index| Shard { index, count }.cells(23))
                .collect();
            all.sort_unstable();
            assert_eq!(all, (0..23).collect::<Vec<_>>(), "{count} shards");
        }
        // More shards than cells: the last ones are empty, which is allowed.
        assert!(Shard { index: 5, count: 5 }.cells(3).is_empty());
    }
}

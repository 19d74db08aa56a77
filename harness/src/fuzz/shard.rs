//! Many machines fuzzing one seed: `--shard K/N` gives shard K every N-th input of the stream
//! the seed draws (sequence or frame number `i * N + K - 1` is its `i`-th), so N machines
//! together draw exactly what one run would, none twice, and `kconform fuzz merge` folds their
//! findings into one directory.

use std::fmt;
use std::str::FromStr;

use super::model::Rng;

/// The most shards a seed is split into.
pub const MOST: u64 = 1024;

/// Which share of a seed's inputs a run draws: shard `index` of `of` (1-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// K, from 1.
    pub index: u64,
    /// N.
    pub of: u64,
}

impl Default for Shard {
    /// The whole stream: 1/1.
    fn default() -> Shard {
        Shard { index: 1, of: 1 }
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.of)
    }
}

impl FromStr for Shard {
    type Err = String;

    /// `K/N` with 1 ≤ K ≤ N ≤ 1024.
    fn from_str(s: &str) -> Result<Shard, String> {
        let (k, n) = s
            .split_once('/')
            .ok_or_else(|| format!("'{s}' is not K/N (the K-th of N shards, as 2/8)"))?;
        let number = |t: &str| {
            t.trim()
                .parse::<u64>()
                .map_err(|_| format!("'{s}': '{t}' is not a number"))
        };
        let shard = Shard {
            index: number(k)?,
            of: number(n)?,
        };
        if shard.of == 0 || shard.of > MOST || shard.index == 0 || shard.index > shard.of {
            return Err(format!(
                "'{s}': want 1 <= K <= N <= {MOST} (the K-th of N shards)"
            ));
        }
        Ok(shard)
    }
}

impl Shard {
    /// The number in the whole stream of this shard's `i`-th input.
    pub fn global(self, i: u64) -> u64 {
        i * self.of + (self.index - 1)
    }

    /// Whether this is the whole stream.
    pub fn whole(self) -> bool {
        self.of == 1
    }
}

/// The seeds of a run's sequences: sequence number `n`'s seed is the `n`-th the run's seed
/// draws, whichever shard asks for it. Asked in rising order, it draws each seed once.
#[derive(Debug)]
pub struct Seeds {
    rng: Rng,
    /// The number of the seed `rng` draws next.
    at: u64,
}

impl Seeds {
    /// The seeds of a run with seed `seed`.
    pub fn new(seed: u64) -> Seeds {
        Seeds {
            rng: Rng::new(seed),
            at: 0,
        }
    }

    /// Sequence `n`'s seed (`n` at least the last one asked for).
    pub fn of(&mut self, n: u64) -> u64 {
        while self.at < n {
            self.rng.next_u64();
            self.at += 1;
        }
        self.at += 1;
        self.rng.next_u64()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_together_draw_every_input_once() {
        let whole: Vec<u64> = {
            let mut s = Seeds::new(7);
            (0..60).map(|n| s.of(n)).collect()
        };
        let mut drawn = Vec::new();
        for k in 1..=4 {
            let shard: Shard = format!("{k}/4").parse().unwrap();
            let mut s = Seeds::new(7);
            for i in 0..15 {
                let n = shard.global(i);
                drawn.push((n, s.of(n)));
            }
        }
        drawn.sort();
        assert_eq!(drawn.len(), 60);
        for (n, seed) in drawn {
            assert_eq!(whole[n as usize], seed, "sequence {n}");
        }
    }

    #[test]
    fn a_shard_reads_as_k_of_n_and_nonsense_is_refused() {
        assert_eq!("3/8".parse::<Shard>().unwrap(), Shard { index: 3, of: 8 });
        assert_eq!(Shard::default().to_string(), "1/1");
        for bad in ["0/4", "5/4", "1/0", "x/2", "2", "1/2000"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
        assert_eq!(Shard { index: 2, of: 3 }.global(4), 13);
    }
}

//! Which frame killed the broker. When the target stops answering, the frames in flight are
//! suspects, not findings: each is sent again alone, on a fresh connection, to a broker
//! brought back ([`super::keeper`]), and the one after which it dies again is the killer,
//! confirmed once more on a freshly started broker. A crash no frame causes alone is looked
//! for in the frames sent since the broker last started, in their order: the shortest run of
//! them that still kills it, its last frame the killer. A crash that does not come back is no
//! finding (the run counts it as not reproduced).

use std::time::Duration;

use super::judge::Happened;
use super::keeper::{Keeper, KeeperError};
use super::last_words::last_words;
use super::minimise::Check;
use super::send::exchange;
use crate::targets::Running;

/// How many of the frames sent before a crash are searched for the ones it needs.
pub const WINDOW: usize = 512;

/// A frame sent in the broker's current life.
#[derive(Debug, Clone)]
pub struct Sent {
    /// Its number in the run.
    pub n: u64,
    /// The frame.
    pub frame: Vec<u8>,
    /// What the mutations did to its seed.
    pub mutations: Vec<String>,
    /// Whether it was answered.
    pub answered: bool,
}

/// What became of frames sent in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fate {
    /// The broker stopped answering after the frame at this index; what it said, if its log
    /// tells.
    Died {
        /// The index of the frame after which it did.
        at: usize,
        /// Its last words, normalised ([`last_words`]).
        words: Option<String>,
    },
    /// It answered ApiVersions after every frame; what happened to the last.
    Lived(Happened),
}

/// Sends frames to the target, bringing it back first when it is down.
pub struct Probe<'a> {
    /// The target.
    pub target: &'a Running,
    /// What brings it back.
    pub keeper: &'a mut Keeper,
    /// Every network wait's deadline.
    pub deadline: Duration,
    /// Whether frames were sent since the broker last started.
    dirty: bool,
}

impl<'a> Probe<'a> {
    /// A probe of `target`, which `keeper` brings back.
    pub fn new(target: &'a Running, keeper: &'a mut Keeper, deadline: Duration) -> Probe<'a> {
        Probe {
            target,
            keeper,
            deadline,
            dirty: true,
        }
    }

    /// Makes sure the broker answers: brought back when it does not, or (with `fresh`) when
    /// frames were sent to it since it started.
    pub async fn up(&mut self, fresh: bool) -> Result<(), KeeperError> {
        let alive = self.target.reachable(self.deadline).await.is_ok();
        if !alive || (fresh && self.dirty) {
            self.keeper.revive().await?;
            self.dirty = false;
        }
        Ok(())
    }

    /// Sends `frames` in order, each on a fresh connection (to a freshly started broker with
    /// `fresh`), and says after which the broker stopped answering ApiVersions, if it did.
    pub async fn send(&mut self, frames: &[&[u8]], fresh: bool) -> Result<Fate, KeeperError> {
        self.up(fresh).await?;
        let mut last = Happened::Closed;
        for (at, frame) in frames.iter().enumerate() {
            self.dirty = true;
            last = exchange(&mut None, self.target.addr, frame, self.deadline).await;
            let check = !matches!(last, Happened::Answered(_)) || at + 1 == frames.len();
            if check && self.target.reachable(self.deadline).await.is_err() {
                let words = last_words(&self.keeper.dying_words());
                return Ok(Fate::Died { at, words });
            }
        }
        Ok(Fate::Lived(last))
    }

    /// Whether `frames` kill the broker at their last frame, as `words` said (when known).
    async fn kills(
        &mut self,
        frames: &[&[u8]],
        fresh: bool,
        words: &Option<String>,
    ) -> Result<bool, KeeperError> {
        Ok(match self.send(frames, fresh).await? {
            Fate::Died { at, words: said } => {
                at + 1 == frames.len()
                    && words
                        .as_deref()
                        .is_none_or(|w| same_words(said.as_deref(), w))
            }
            Fate::Lived(_) => false,
        })
    }
}

/// Whether a replay's last words (`said`) are the crash's (`words`): the same, or one the
/// other cut short (a log read while the dying broker still wrote its backtrace says its
/// message without the frame that signs it). Without this a torn first reading sent the
/// pinning through every suspect and the whole window (eleven starts on a planted broker).
fn same_words(said: Option<&str>, words: &str) -> bool {
    said.is_some_and(|said| said == words || said.starts_with(words) || words.starts_with(said))
}

/// A crash pinned: the frames it needs, the killer last.
#[derive(Debug, Clone)]
pub struct Pinned {
    /// The frames, in the order they are sent; the last kills the broker.
    pub frames: Vec<Sent>,
    /// What the broker said as it died, if its log tells.
    pub words: Option<String>,
    /// Restarts the pinning took.
    pub restarts: u64,
}

/// Pins the crash that ended the broker's last life, given what was sent in it (oldest
/// first) and what the broker said as it died; `None` when nothing sent reproduces it.
/// At most `budget` sequences are tried in the search for the frames a crash needs.
pub async fn pin(
    probe: &mut Probe<'_>,
    history: &[Sent],
    words: Option<String>,
    budget: usize,
) -> Result<Option<Pinned>, KeeperError> {
    let restarts = probe.keeper.restarts;
    let done = |frames: Vec<Sent>, probe: &Probe<'_>| {
        Some(Pinned {
            frames,
            words: words.clone(),
            restarts: probe.keeper.restarts - restarts,
        })
    };
    // Alone: the frames in flight first, in the order they were sent.
    let suspects = history.iter().filter(|s| !s.answered);
    for s in suspects {
        if probe.kills(&[&s.frame], false, &words).await?
            && probe.kills(&[&s.frame], true, &words).await?
        {
            return Ok(done(vec![s.clone()], probe));
        }
    }
    // In order: the last frames sent, then as few of them as still kill it.
    let window = &history[history.len().saturating_sub(WINDOW)..];
    let frames: Vec<&[u8]> = window.iter().map(|s| s.frame.as_slice()).collect();
    let Fate::Died { at, .. } = probe.send(&frames, true).await? else {
        return Ok(None);
    };
    let killer = &window[at];
    let before: Vec<&Sent> = window[..at].iter().collect();
    let Some(needed) = fewest_before(probe, &before, killer, &words, budget).await? else {
        return Ok(None);
    };
    let mut frames: Vec<Sent> = needed.into_iter().cloned().collect();
    frames.push(killer.clone());
    Ok(done(frames, probe))
}

/// The fewest of `before` (in their order) that `killer` needs to kill the broker: the
/// shortest tail of them that does, then as few of that tail as still do. `None` when even
/// all of them do not. At most `budget` sequences are tried.
async fn fewest_before<'s>(
    probe: &mut Probe<'_>,
    before: &[&'s Sent],
    killer: &Sent,
    words: &Option<String>,
    budget: usize,
) -> Result<Option<Vec<&'s Sent>>, KeeperError> {
    let mut tries = Tries { done: 0, budget };
    let mut kills = async |with: &[&'s Sent]| kills_with(probe, with, killer, words).await;
    let Some(tail) = shortest_tail(before, &mut tries, &mut kills).await? else {
        return Ok(None);
    };
    Ok(Some(fewest(tail, &mut tries, &mut kills).await?))
}

/// Tests spent of a budget.
struct Tries {
    done: usize,
    budget: usize,
}

impl Tries {
    /// Takes one, if any is left.
    fn take(&mut self) -> bool {
        let left = self.done < self.budget;
        self.done += usize::from(left);
        left
    }
}

/// The shortest tail of `items` (none of them, the last, the last two, four...) for which
/// `test` holds, if any does.
async fn shortest_tail<T: Copy, E>(
    items: &[T],
    tries: &mut Tries,
    test: &mut impl AsyncFnMut(&[T]) -> Result<bool, E>,
) -> Result<Option<Vec<T>>, E> {
    let mut tail = 0;
    while tries.take() {
        let from = items.len().saturating_sub(tail);
        if test(&items[from..]).await? {
            return Ok(Some(items[from..].to_vec()));
        }
        if tail >= items.len() {
            break;
        }
        tail = (tail * 2).max(1);
    }
    Ok(None)
}

/// As few of `items` (kept in order) as `test` still holds for, `test` holding for all of
/// them: each half, quarter... taken away in turn while it still holds (delta debugging,
/// complements only).
async fn fewest<T: Copy, E>(
    mut items: Vec<T>,
    tries: &mut Tries,
    test: &mut impl AsyncFnMut(&[T]) -> Result<bool, E>,
) -> Result<Vec<T>, E> {
    let mut parts = 2;
    while !items.is_empty() {
        let size = items.len().div_ceil(parts);
        let mut reduced = None;
        for lo in (0..items.len()).step_by(size) {
            let hi = (lo + size).min(items.len());
            let rest: Vec<T> = items[..lo].iter().chain(&items[hi..]).copied().collect();
            if !tries.take() {
                return Ok(items);
            }
            if test(&rest).await? {
                reduced = Some(rest);
                break;
            }
        }
        match reduced {
            Some(rest) => {
                items = rest;
                parts = (parts - 1).max(2);
            }
            None if size == 1 => break,
            None => parts = (parts * 2).min(items.len()),
        }
    }
    Ok(items)
}

/// Whether `with`, then `killer`, kill a freshly started broker at `killer`.
async fn kills_with(
    probe: &mut Probe<'_>,
    with: &[&Sent],
    killer: &Sent,
    words: &Option<String>,
) -> Result<bool, KeeperError> {
    let mut frames: Vec<&[u8]> = with.iter().map(|s| s.frame.as_slice()).collect();
    frames.push(&killer.frame);
    probe.kills(&frames, true, words).await
}

/// A crash seen again: the frames it needs before the candidate, then the candidate, on a
/// freshly started broker when it needs frames before it, and the same last words.
pub struct KillsAgain<'p, 'a> {
    /// The probe.
    pub probe: &'p mut Probe<'a>,
    /// The frames sent before the candidate.
    pub before: Vec<Vec<u8>>,
    /// What the broker said as it died, when its log tells.
    pub words: Option<String>,
}

impl Check for KillsAgain<'_, '_> {
    async fn holds(&mut self, frame: &[u8]) -> bool {
        let mut frames: Vec<&[u8]> = self.before.iter().map(Vec::as_slice).collect();
        frames.push(frame);
        let fresh = !self.before.is_empty();
        // A broker that cannot be brought back cannot say: taken as not shown.
        self.probe
            .kills(&frames, fresh, &self.words)
            .await
            .unwrap_or(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The frames a crash needs are found among many, kept in order, as few as there are.
    #[tokio::test]
    async fn the_frames_a_crash_needs_are_found_among_many() {
        // Needs 3 and 17, in that order, out of 0..40.
        let items: Vec<u32> = (0..40).collect();
        let mut asked = 0;
        let mut test = async |with: &[u32]| {
            asked += 1;
            let at = |x: u32| with.iter().position(|&y| y == x);
            Ok::<bool, ()>(matches!((at(3), at(17)), (Some(a), Some(b)) if a < b))
        };
        let mut tries = Tries {
            done: 0,
            budget: 200,
        };
        let tail = shortest_tail(&items, &mut tries, &mut test)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(tail.len(), 40, "the tail that holds: all (3 is far back)");
        let needed = fewest(tail, &mut tries, &mut test).await.unwrap();
        assert_eq!(needed, [3, 17]);
        assert!(tries.done <= 60, "{} tries", tries.done);
        // One needed frame, near the end: a short tail, then that frame alone.
        let mut near = async |with: &[u32]| Ok::<bool, ()>(with.contains(&37));
        let mut tries = Tries {
            done: 0,
            budget: 200,
        };
        let tail = shortest_tail(&items, &mut tries, &mut near)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(tail, [36, 37, 38, 39]);
        assert_eq!(fewest(tail, &mut tries, &mut near).await.unwrap(), [37]);
        // None needed: the empty tail holds at once.
        let mut none = async |_: &[u32]| Ok::<bool, ()>(true);
        let mut tries = Tries {
            done: 0,
            budget: 200,
        };
        assert_eq!(
            shortest_tail(&items, &mut tries, &mut none).await.unwrap(),
            Some(vec![])
        );
        // Nothing holds: none; and a spent budget stops the search.
        let mut never = async |_: &[u32]| Ok::<bool, ()>(false);
        let mut tries = Tries { done: 0, budget: 3 };
        assert_eq!(
            shortest_tail(&items, &mut tries, &mut never).await.unwrap(),
            None
        );
        assert_eq!(tries.done, 3);
    }
}

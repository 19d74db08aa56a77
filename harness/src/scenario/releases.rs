//! The Apache releases a scenario applies to (`apache = "3.8+"` in its file): a behaviour that
//! came with a release (TRANSACTION_ABORTABLE in 3.8, the epoch bump of EndTxn v5 in 4.0) is
//! written as a scenario for the releases that have it, and runs only where every Apache of
//! the run is one of them. A run with no Apache target (kaas-ref against a kaas build) is
//! judged by 3.7.2's scenarios, the release kaas claims. Without the key, a scenario applies to
//! every release.

use std::fmt;

use crate::targets::apache::Release;

/// An inclusive range of minor releases: `3.8+`, `3.7`, `3.7-3.9`; all by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Releases {
    /// The first (major, minor) it applies to.
    from: (u8, u8),
    /// The last, or none: every later release too.
    to: Option<(u8, u8)>,
}

impl Default for Releases {
    fn default() -> Releases {
        Releases::ALL
    }
}

impl Releases {
    /// Every release.
    pub const ALL: Releases = Releases {
        from: (0, 0),
        to: None,
    };

    /// Parses `3.8+`, `3.7` or `3.7-3.9`.
    pub fn parse(s: &str) -> Result<Releases, String> {
        let minor = |t: &str| -> Result<(u8, u8), String> {
            let (major, minor) = t.trim().split_once('.').ok_or_else(|| {
                format!("'{t}' is not MAJOR.MINOR (apache = \"3.8+\", \"3.7\" or \"3.7-3.9\")")
            })?;
            match (major.parse(), minor.parse()) {
                (Ok(a), Ok(b)) => Ok((a, b)),
                _ => Err(format!("'{t}' is not MAJOR.MINOR")),
            }
        };
        let range = match (s.strip_suffix('+'), s.split_once('-')) {
            (Some(from), _) => Releases {
                from: minor(from)?,
                to: None,
            },
            (None, Some((from, to))) => Releases {
                from: minor(from)?,
                to: Some(minor(to)?),
            },
            (None, None) => Releases {
                from: minor(s)?,
                to: Some(minor(s)?),
            },
        };
        if range.to.is_some_and(|to| to < range.from) {
            return Err(format!("apache = \"{s}\": the range is empty"));
        }
        Ok(range)
    }

    /// Whether `release` is in the range.
    pub fn contains(&self, release: &Release) -> bool {
        let it = (release.major, release.minor);
        it >= self.from && self.to.is_none_or(|to| it <= to)
    }

    /// Whether it is every release (what `kconform list` leaves unsaid).
    pub fn is_all(&self) -> bool {
        *self == Releases::ALL
    }
}

impl fmt::Display for Releases {
    /// As a scenario file writes it (`3.8+`), or `every release`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (a, b) = self.from;
        match self.to {
            _ if self.is_all() => f.write_str("every release"),
            None => write!(f, "{a}.{b}+"),
            Some(to) if to == self.from => write!(f, "{a}.{b}"),
            Some((c, d)) => write!(f, "{a}.{b}-{c}.{d}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(s: &str) -> Release {
        Release::parse(s).unwrap()
    }

    #[test]
    fn a_range_holds_the_releases_it_names() {
        let since = Releases::parse("3.8+").unwrap();
        assert!(!since.contains(&r("3.7")) && since.contains(&r("3.8.0")));
        assert!(since.contains(&r("4.4+tv2")));
        let only = Releases::parse("3.7").unwrap();
        assert!(only.contains(&Release::CLAIMED) && !only.contains(&r("3.8")));
        let span = Releases::parse("3.7-3.9").unwrap();
        assert!(span.contains(&r("3.9")) && !span.contains(&r("4.0")));
        assert!(Releases::ALL.contains(&r("3.7")) && Releases::ALL.contains(&r("4.4")));
        for (text, shown) in [("3.8+", "3.8+"), ("3.7", "3.7"), ("3.7-3.9", "3.7-3.9")] {
            assert_eq!(Releases::parse(text).unwrap().to_string(), shown);
        }
        for bad in ["3", "x.y+", "4.0-3.9", ""] {
            assert!(Releases::parse(bad).is_err(), "{bad}");
        }
    }
}

//! What `--target` names: a kind of broker (kaas-ref, Apache, Apache's recorded answers, a
//! running broker), how many brokers, and whether connections log in and ACLs apply. The
//! three are independent, so each question about a target (its name, its size, whether it is
//! secured) is answered once, not once per combination.

use std::net::SocketAddr;

use super::apache::{Backend, Release};
use super::{TargetError, MAX_BROKERS};

/// A target as `--target` names it (`ref`, `apache:3`, `apache-recorded+sasl`,
/// `external=HOST:PORT`...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TargetSpec {
    /// Which broker.
    pub kind: Kind,
    /// How many brokers it has: scenarios run on targets of their own size. An external
    /// cluster says its size (`external:3=HOST:PORT`), and its Metadata must agree.
    pub brokers: usize,
    /// Whether connections must log in (SASL) and ACLs apply: such a target runs the
    /// security scenarios, and only those.
    pub secured: bool,
    /// The Apache release an external broker answers as (`external@4.4=HOST:PORT`: an Apache
    /// the user runs, or a broker claiming that release's parity); none for 3.7.2's, the
    /// release kaas claims. Which scenarios hold it and how far the ledger speaks follow it.
    pub claims: Option<Release>,
    /// Bugs planted in a kaas-ref target on purpose: none, but in the tests that prove a
    /// judge finds them (only a `planted-bugs` build of the reference broker can plant one).
    #[doc(hidden)]
    pub planted: reference_broker::planted::Planted,
}

/// Which broker a target is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The bundled reference broker (a cluster of them on one shared data directory), in
    /// process.
    Ref,
    /// A real Apache Kafka of the release given (3.7.2 for a bare `apache`): the broker
    /// `kconform apache up` keeps running, or one launched for the run by the backend given
    /// (clusters run as JVMs).
    Apache(Backend, Release),
    /// The answers of the Apache release given as recorded (`snapshots/<scenario>__<label>.snap`,
    /// the label of the live target they were recorded from: `apache`, `apache@4.4.0-tv2`), for
    /// a machine where no Apache can run.
    Recorded(Release),
    /// A Kafka-compatible broker that is already running; secured, it knows the users of
    /// [`crate::security::USERS`] with `admin` a super user.
    External(SocketAddr),
    /// A kaas build (the binary at this path; kaas-ref's does too) run as a cluster of
    /// processes with the Kubernetes API it needs served beside them
    /// ([`super::kaas_build`]). The path is the command line's, kept for the process's life.
    Build(&'static std::path::Path),
}

impl TargetSpec {
    /// kaas-ref, one broker, plain.
    pub const REF: TargetSpec = TargetSpec::one(Kind::Ref);
    /// Apache 3.7.2's recorded answers of one plain broker.
    pub const RECORDED: TargetSpec = TargetSpec::one(Kind::Recorded(Release::CLAIMED));

    /// One plain broker of `kind`.
    pub const fn one(kind: Kind) -> TargetSpec {
        TargetSpec {
            kind,
            brokers: 1,
            secured: false,
            claims: None,
            planted: reference_broker::planted::Planted::NONE,
        }
    }

    /// One plain Apache 3.7.2, launched by `backend`.
    pub const fn apache(backend: Backend) -> TargetSpec {
        TargetSpec::one(Kind::Apache(backend, Release::CLAIMED))
    }

    /// The running broker at `addr`, plain.
    pub const fn external(addr: SocketAddr) -> TargetSpec {
        TargetSpec::one(Kind::External(addr))
    }

    /// The same external broker, answering as Apache `release` does (`external@4.4`).
    pub const fn claiming(self, release: Release) -> TargetSpec {
        TargetSpec {
            claims: Some(release),
            ..self
        }
    }

    /// The same kind of broker, `n` of them (Apache's as JVMs).
    pub const fn cluster(self, n: usize) -> TargetSpec {
        let kind = match self.kind {
            Kind::Apache(_, release) => Kind::Apache(Backend::Jvm, release),
            other => other,
        };
        TargetSpec {
            kind,
            brokers: n,
            ..self
        }
    }

    /// The same target with SASL logins and ACLs.
    pub const fn sasl(self) -> TargetSpec {
        TargetSpec {
            secured: true,
            ..self
        }
    }

    /// Parses `ref`, `apache`, `apache@RELEASE` ([`Release::parse`]: `apache@4.4`,
    /// `apache@4.4.0+tv2`), `apache-recorded` (`apache-recorded@4.4+tv2` for another release's
    /// recorded answers) or `external=HOST:PORT` (`external@4.4=...`
    /// for one answering as Apache 4.4 does); `:N` after any of
    /// them for a cluster of N (`external:3=HOST:PORT`, any one broker's address); `+sasl`
    /// after any of them for SASL and ACLs (before the `=` of an external one:
    /// `external:3+sasl=HOST:PORT`).
    pub fn parse(s: &str) -> Result<TargetSpec, TargetError> {
        let unknown = || TargetError::Unknown(s.to_owned());
        if let Some(build) = TargetSpec::parse_build(s)? {
            return Ok(build);
        }
        if let Some((head, addr)) = s.split_once('=') {
            let (head, secured) = match head.strip_suffix("+sasl") {
                Some(head) => (head, true),
                None => (head, false),
            };
            // `external:N`: a cluster of N, reached through the address given (its brokers
            // are then read from its Metadata); `external@RELEASE`: answering as that release.
            let (head, brokers) = match head.split_once(':') {
                Some((head, n)) => (
                    head,
                    n.parse::<usize>()
                        .ok()
                        .filter(|n| (2..=MAX_BROKERS).contains(n))
                        .ok_or_else(|| TargetError::Invalid {
                            target: s.to_owned(),
                            reason: format!(
                                "a cluster's size is 2 to {MAX_BROKERS} brokers, not '{n}'"
                            ),
                        })?,
                ),
                None => (head, 1),
            };
            let claims = match head.strip_prefix("external") {
                Some("") => None,
                Some(release) => {
                    let release = release.strip_prefix('@').ok_or_else(unknown)?;
                    Some(
                        Release::parse(release).map_err(|reason| TargetError::Invalid {
                            target: s.to_owned(),
                            reason,
                        })?,
                    )
                }
                None => return Err(unknown()),
            };
            use std::net::ToSocketAddrs;
            // A known kind of target with an address that is none: said so, not every form.
            let bad_address = |why: String| TargetError::Invalid {
                target: s.to_owned(),
                reason: format!("'{addr}' is no HOST:PORT ({why})"),
            };
            let addr = addr
                .to_socket_addrs()
                .map_err(|e| bad_address(e.to_string()))?
                .next()
                .ok_or_else(|| bad_address("it names no address".into()))?;
            return Ok(TargetSpec {
                secured,
                brokers,
                claims,
                ..TargetSpec::external(addr)
            });
        }
        let (rest, secured) = match s.strip_suffix("+sasl") {
            Some(rest) => (rest, true),
            None => (s, false),
        };
        let (base, brokers) = match rest.split_once(':') {
            Some((base, n)) => {
                let n = n
                    .parse::<usize>()
                    .ok()
                    .filter(|n| (2..=MAX_BROKERS).contains(n))
                    .ok_or_else(unknown)?;
                (base, n)
            }
            None => (rest, 1),
        };
        let one = match base {
            "ref" => TargetSpec::REF,
            "apache" => TargetSpec::apache(Backend::Auto),
            "apache-recorded" => TargetSpec::RECORDED,
            _ => {
                let release = |text: &str| {
                    Release::parse(text).map_err(|reason| TargetError::Invalid {
                        target: s.to_owned(),
                        reason,
                    })
                };
                match (
                    base.strip_prefix("apache@"),
                    base.strip_prefix("apache-recorded@"),
                ) {
                    (Some(live), _) => TargetSpec::one(Kind::Apache(Backend::Auto, release(live)?)),
                    (_, Some(recorded)) => TargetSpec::one(Kind::Recorded(release(recorded)?)),
                    _ => return Err(unknown()),
                }
            }
        };
        let spec = match brokers {
            1 => one,
            n => one.cluster(n),
        };
        Ok(match secured {
            true => spec.sasl(),
            false => spec,
        })
    }

    /// `build:N=PATH` (`build=PATH` for one broker): a kaas build of N brokers. `None` for
    /// any other target; an error for a path that names no file.
    fn parse_build(s: &str) -> Result<Option<TargetSpec>, TargetError> {
        let Some((head, path)) = s.split_once('=') else {
            return Ok(None);
        };
        let brokers = match head {
            "build" => 1,
            _ => match head.strip_prefix("build:") {
                Some(n) => n
                    .parse::<usize>()
                    .ok()
                    .filter(|n| (1..=MAX_BROKERS).contains(n))
                    .ok_or_else(|| TargetError::Unknown(s.to_owned()))?,
                None => return Ok(None),
            },
        };
        let path = std::path::Path::new(path);
        if !path.is_file() {
            return Err(TargetError::Start {
                target: s.to_owned(),
                reason: format!("{} is no file (the kaas binary to run)", path.display()),
            });
        }
        let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
        // A target names its binary for the process's life; leaked once per `--target`.
        let path: &'static std::path::Path = Box::leak(path.into_boxed_path());
        Ok(Some(TargetSpec {
            brokers,
            ..TargetSpec::one(Kind::Build(path))
        }))
    }

    /// The short name used in reports and snapshot file names: the text [`TargetSpec::parse`]
    /// reads, without an external broker's address.
    pub fn name(&self) -> String {
        let base = match self.kind {
            Kind::Ref => "ref".to_owned(),
            Kind::Apache(_, release) if release == Release::CLAIMED => "apache".to_owned(),
            Kind::Apache(_, release) => format!("apache@{}", release.label()),
            Kind::Recorded(release) if release == Release::CLAIMED => "apache-recorded".to_owned(),
            Kind::Recorded(release) => format!("apache-recorded@{}", release.label()),
            Kind::Build(_) => "build".to_owned(),
            Kind::External(_) => match self.claims {
                Some(release) => format!("external@{}", release.label()),
                None => "external".to_owned(),
            },
        };
        let size = match self.brokers {
            1 => String::new(),
            n => format!(":{n}"),
        };
        let security = if self.secured { "+sasl" } else { "" };
        // A test's kaas-ref with bugs planted is another broker than the clean one beside it.
        let planted = match self.planted == reference_broker::planted::Planted::NONE {
            true => "",
            false => "+planted",
        };
        format!("{base}{size}{security}{planted}")
    }

    /// What `--target` takes to name this target again: [`TargetSpec::name`], with an external
    /// broker's address (`external=127.0.0.1:9092`).
    pub fn arg(&self) -> String {
        match self.kind {
            Kind::External(addr) => format!("{}={addr}", self.name()),
            Kind::Build(path) => format!("{}={}", self.name(), path.display()),
            _ => self.name(),
        }
    }

    /// Whether the target is Apache's recorded answers (of one broker or a cluster).
    pub fn is_recorded(&self) -> bool {
        matches!(self.kind, Kind::Recorded(_))
    }

    /// The live Apache whose answers a recorded target replays: the same shape, of the release
    /// recorded (its snapshots are named after it); any other target as it is.
    pub fn recorded_from(&self) -> TargetSpec {
        match self.kind {
            Kind::Recorded(release) => TargetSpec {
                kind: Kind::Apache(Backend::Auto, release),
                ..*self
            },
            _ => *self,
        }
    }

    /// The address of a broker kconform does not start (`external=HOST:PORT`), if it is one:
    /// where a broker `kconform fuzz --broker-cmd` starts must listen.
    pub fn external_addr(&self) -> Option<std::net::SocketAddr> {
        match self.kind {
            Kind::External(addr) => Some(addr),
            _ => None,
        }
    }

    /// Whether the target is a kaas build kconform starts (not kaas-ref's own binary given as
    /// a build): one that is told the topics a run needs at start, since topics its clients
    /// create were not served in time on a real build.
    pub fn is_kaas_build(&self) -> bool {
        match self.kind {
            Kind::Build(bin) => !crate::targets::kaas_build::is_kaas_ref_once(bin),
            _ => false,
        }
    }

    /// Whether the target is a live Apache (of one broker or a cluster).
    pub fn is_apache(&self) -> bool {
        matches!(self.kind, Kind::Apache(..))
    }

    /// The Apache release a live Apache target runs; `None` for any other target.
    pub fn release(&self) -> Option<Release> {
        match self.kind {
            Kind::Apache(_, release) => Some(release),
            _ => None,
        }
    }

    /// The Apache release whose answers this target gives: an Apache target's release, or the
    /// release whose answers were recorded; none for a broker that is not Apache. What decides which
    /// scenarios a run holds, how far the ledger speaks and how clients are judged.
    pub fn answers_as(&self) -> Option<Release> {
        match self.kind {
            Kind::Recorded(release) => Some(release),
            Kind::External(_) => self.claims,
            _ => self.release(),
        }
    }

    /// The Apache release the target of this name answers as, read back from the name a
    /// transcript keeps (names parse as the targets they name, a cluster's and a secured
    /// broker's too); none for a broker that is not Apache and claims no release. For what
    /// holds transcripts but not their targets: the coverage table's codes by release.
    pub fn answers_as_named(name: &str) -> Option<Release> {
        TargetSpec::parse(name)
            .ok()
            .and_then(|spec| spec.answers_as())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An external broker may say which release it answers as; scenarios and the ledger
    /// follow it, and the name keeps it.
    #[test]
    fn an_external_target_may_claim_a_release() {
        let spec = TargetSpec::parse("external@4.4+tv2:3+sasl=127.0.0.1:9092").unwrap();
        assert_eq!((spec.brokers, spec.secured), (3, true));
        assert_eq!(spec.answers_as(), Release::parse("4.4+tv2").ok());
        assert_eq!(spec.name(), "external@4.4.0+tv2:3+sasl");
        assert_eq!(TargetSpec::parse(&spec.arg()).unwrap(), spec);
        assert_eq!(
            TargetSpec::parse("external=127.0.0.1:9092")
                .unwrap()
                .answers_as(),
            None
        );
        assert!(TargetSpec::parse("external4.4=127.0.0.1:9092").is_err());
        assert!(TargetSpec::parse("external@9.9=127.0.0.1:9092").is_err());
    }

    /// A build names a binary that must exist; its name keeps the path, as a replay needs.
    #[test]
    fn a_build_target_names_its_binary() {
        let bin = std::env::current_exe().unwrap();
        let spec = TargetSpec::parse(&format!("build:3={}", bin.display())).unwrap();
        assert_eq!((spec.name(), spec.brokers), ("build:3".to_owned(), 3));
        assert_eq!(TargetSpec::parse(&spec.arg()).unwrap(), spec);
        assert_eq!(
            TargetSpec::parse(&format!("build={}", bin.display()))
                .unwrap()
                .brokers,
            1
        );
        let e = TargetSpec::parse("build:3=/no/such/kaas")
            .unwrap_err()
            .to_string();
        assert!(e.contains("/no/such/kaas is no file"), "{e}");
        assert!(TargetSpec::parse(&format!("build:0={}", bin.display())).is_err());
        assert!(TargetSpec::parse(&format!("build:10={}", bin.display())).is_err());
    }

    #[test]
    fn an_external_target_is_named_again_with_its_address() {
        let spec = TargetSpec::parse("external+sasl=127.0.0.1:9092").unwrap();
        assert_eq!(spec.name(), "external+sasl");
        assert_eq!(TargetSpec::parse(&spec.arg()).unwrap(), spec);
        assert_eq!(TargetSpec::REF.cluster(3).arg(), "ref:3");
    }

    #[test]
    fn an_apache_release_is_part_of_the_target_and_of_its_name() {
        let r44 = Release::parse("4.4").unwrap();
        let spec = TargetSpec::parse("apache@4.4").unwrap();
        assert_eq!(spec.kind, Kind::Apache(Backend::Auto, r44));
        assert_eq!(spec.name(), "apache@4.4.0");
        assert_eq!(spec.release(), Some(r44));
        assert_eq!(TargetSpec::parse(&spec.arg()).unwrap(), spec);
        let tv2 = TargetSpec::parse("apache@4.4+tv2:3+sasl").unwrap();
        assert_eq!((tv2.brokers, tv2.secured), (3, true));
        assert_eq!(
            tv2.kind,
            Kind::Apache(Backend::Jvm, Release::parse("4.4+tv2").unwrap())
        );
        assert_eq!(tv2.name(), "apache@4.4.0+tv2:3+sasl");
        assert_eq!(TargetSpec::parse(&tv2.name()).unwrap(), tv2);
        // The release kaas claims is the bare `apache`, however it is asked for.
        assert_eq!(TargetSpec::parse("apache@3.7").unwrap().name(), "apache");
        assert_eq!(TargetSpec::REF.release(), None);
        let e = TargetSpec::parse("apache@9.9").unwrap_err().to_string();
        assert!(e.contains("apache@9.9") && e.contains("3.7 to 4.4"), "{e}");
        let recorded = TargetSpec::parse("apache-recorded@4.4+tv2").unwrap();
        assert_eq!(recorded.name(), "apache-recorded@4.4.0+tv2");
        assert_eq!(recorded.answers_as(), Release::parse("4.4+tv2").ok());
        assert!(recorded.is_recorded() && recorded.release().is_none());
        assert_eq!(
            TargetSpec::parse("apache-recorded@3.7").unwrap(),
            TargetSpec::RECORDED
        );
        assert!(TargetSpec::parse("apache-recorded@9.9").is_err());
    }

    /// A transcript's target name says which release it answered as.
    #[test]
    fn a_target_name_says_which_release_it_answers_as() {
        let named = TargetSpec::answers_as_named;
        assert_eq!(named("apache-recorded"), Some(Release::CLAIMED));
        assert_eq!(named("apache"), Some(Release::CLAIMED));
        assert_eq!(
            named("apache@4.4.0+tv2:3+sasl"),
            Release::parse("4.4+tv2").ok()
        );
        assert_eq!(named("ref:3+sasl"), None);
        assert_eq!(named("external"), None);
    }

    #[test]
    fn target_specs_parse() {
        assert_eq!(TargetSpec::parse("ref").unwrap(), TargetSpec::REF);
        assert_eq!(
            TargetSpec::parse("apache").unwrap(),
            TargetSpec::apache(Backend::Auto)
        );
        let addr: SocketAddr = "127.0.0.1:9092".parse().unwrap();
        assert_eq!(
            TargetSpec::parse("external=127.0.0.1:9092").unwrap(),
            TargetSpec::external(addr)
        );
        assert!(TargetSpec::parse("apache-ish").is_err());
        assert_eq!(
            TargetSpec::parse("ref:3").unwrap(),
            TargetSpec::REF.cluster(3)
        );
        let apache3 = TargetSpec::parse("apache:3").unwrap();
        assert_eq!(apache3.kind, Kind::Apache(Backend::Jvm, Release::CLAIMED));
        assert_eq!(apache3.brokers, 3);
        assert_eq!(
            TargetSpec::parse("apache-recorded:3").unwrap().name(),
            "apache-recorded:3"
        );
        for bad in [
            "ref:1",
            "ref:10",
            "ref:x",
            "external:3",
            "apache-ish:3",
            "external:1=127.0.0.1:9092",
            "external:x=127.0.0.1:9092",
            "ref=127.0.0.1:9092",
            "ref+sasl:3",
        ] {
            assert!(TargetSpec::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(super::super::snapshot_label("apache:3"), "apache-3");
        assert!(TargetSpec::parse("external=nowhere").is_err());
        // A known kind with a bad part is said for that part, not with every form.
        for (bad, says) in [
            ("external=nowhere", "'nowhere' is no HOST:PORT"),
            (
                "external:x=127.0.0.1:9092",
                "a cluster's size is 2 to 9 brokers, not 'x'",
            ),
        ] {
            let e = TargetSpec::parse(bad).unwrap_err().to_string();
            assert!(
                e.contains(says) && !e.contains("expected ref"),
                "{bad}: {e}"
            );
        }
        let secured = TargetSpec::parse("external+sasl=127.0.0.1:9092").unwrap();
        assert_eq!(secured, TargetSpec::external(addr).sasl());
        assert!(secured.secured && !TargetSpec::external(addr).secured);
        assert_eq!(
            super::super::snapshot_label(&secured.name()),
            "external-sasl"
        );
        assert_eq!(
            TargetSpec::parse("apache:3+sasl").unwrap(),
            TargetSpec::apache(Backend::Auto).cluster(3).sasl()
        );
        assert!(TargetSpec::parse("apache:3+tls").is_err());
        let cluster = TargetSpec::parse("external:3+sasl=127.0.0.1:9092").unwrap();
        assert_eq!(cluster, TargetSpec::external(addr).cluster(3).sasl());
        assert_eq!(cluster.name(), "external:3+sasl");
        assert_eq!(TargetSpec::parse(&cluster.arg()).unwrap(), cluster);
    }

    #[test]
    fn every_name_parses_back_to_its_target() {
        for kind in [
            Kind::Ref,
            Kind::Apache(Backend::Jvm, Release::CLAIMED),
            Kind::Recorded(Release::CLAIMED),
            Kind::Recorded(Release::parse("4.4+tv2").unwrap()),
        ] {
            for brokers in [1, 3, MAX_BROKERS] {
                for secured in [false, true] {
                    let spec = TargetSpec {
                        kind,
                        brokers,
                        secured,
                        claims: None,
                        planted: reference_broker::planted::Planted::NONE,
                    };
                    let back = TargetSpec::parse(&spec.name()).unwrap();
                    assert_eq!(back.name(), spec.name());
                    assert_eq!((back.brokers, back.secured), (brokers, secured));
                    assert_eq!(back.is_recorded(), spec.is_recorded());
                }
            }
        }
    }
}

//! kaas's environment, read by kaas-ref: a kaas pod is configured by `KAAS_*` variables (no
//! flags), so that a launcher that starts a kaas build (`kconform`'s `build:N=PATH` target)
//! starts kaas-ref the same way, and the launcher is tested on a broker of ours. Only what
//! kaas-ref needs is read; the names and shapes are kaas's (`crates/kaas-broker/src/cli.rs`).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use crate::config::TopicSpec;

/// A kaas pod's identity and addresses, from its environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KaasEnv {
    /// `MY_POD_NAME` (`kaas-2`): the identity it elects under and patches the status of.
    pub pod: String,
    /// The ordinal of the pod's name: the broker id.
    pub broker_id: i32,
    /// `KAAS_NAMESPACE` (default `default`).
    pub namespace: String,
    /// `KAAS_HEADLESS_SVC`: the Service whose EndpointSlices list the brokers.
    pub service: String,
    /// The first listener of `KAAS_LISTENERS` (`addr`, or `port` on every interface).
    pub listen: SocketAddr,
    /// `KAAS_DATA_DIR`: the shared volume.
    pub data_dir: Option<PathBuf>,
    /// `KAAS_TOPICS`: `[{"name": "t", "partitions": 3}]`.
    pub topics: Vec<TopicSpec>,
    /// `KAAS_HEALTH_ADDR` (`:8080` is every interface): where `/readyz` answers.
    pub health: SocketAddr,
    /// `KAAS_CONTROLLER_LEASE_DURATION_SECONDS` (15) and `..._RETRY_PERIOD_SECONDS` (2): how
    /// long a Lease holder that stops renewing keeps it, and how often each broker campaigns.
    pub lease_duration: Duration,
    /// See `lease_duration`.
    pub retry_period: Duration,
}

/// Why kaas's environment could not be read, naming the variable.
#[derive(Debug, thiserror::Error)]
#[error("{var}: {reason}")]
pub struct EnvError {
    /// The variable.
    pub var: &'static str,
    /// What was wrong with it.
    pub reason: String,
}

impl KaasEnv {
    /// kaas's environment from `get` (the process's: `|k| std::env::var(k).ok()`), or `None`
    /// when `MY_POD_NAME` is unset or empty: a broker that is no pod of a cluster.
    pub fn read(get: impl Fn(&str) -> Option<String>) -> Result<Option<KaasEnv>, EnvError> {
        let Some(pod) = get("MY_POD_NAME").filter(|p| !p.is_empty()) else {
            return Ok(None);
        };
        let err = |var: &'static str, reason: String| EnvError { var, reason };
        let broker_id = pod
            .rsplit('-')
            .next()
            .and_then(|n| n.parse::<i32>().ok())
            .filter(|n| *n >= 0)
            .ok_or_else(|| {
                err(
                    "MY_POD_NAME",
                    format!("'{pod}' ends in no ordinal (kaas-N)"),
                )
            })?;
        let service = get("KAAS_HEADLESS_SVC")
            .filter(|s| !s.is_empty())
            .ok_or_else(|| err("KAAS_HEADLESS_SVC", "not set (the brokers' Service)".into()))?;
        let listeners = get("KAAS_LISTENERS")
            .unwrap_or_else(|| r#"[{"name":"internal","addr":"0.0.0.0:9092"}]"#.into());
        let listen = first_listener(&listeners).map_err(|r| err("KAAS_LISTENERS", r))?;
        let topics = match get("KAAS_TOPICS").filter(|t| !t.trim().is_empty()) {
            Some(text) => topics(&text).map_err(|r| err("KAAS_TOPICS", r))?,
            None => Vec::new(),
        };
        let health = get("KAAS_HEALTH_ADDR").unwrap_or_else(|| ":8080".into());
        let health = address(&health).map_err(|r| err("KAAS_HEALTH_ADDR", r))?;
        let seconds = |var: &'static str, default: u64| -> Result<Duration, EnvError> {
            match get(var) {
                None => Ok(Duration::from_secs(default)),
                Some(s) => s
                    .parse::<u64>()
                    .ok()
                    .filter(|n| *n > 0)
                    .map(Duration::from_secs)
                    .ok_or_else(|| err(var, format!("'{s}' is no whole number of seconds"))),
            }
        };
        Ok(Some(KaasEnv {
            pod,
            broker_id,
            namespace: get("KAAS_NAMESPACE")
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "default".into()),
            service,
            listen,
            data_dir: get("KAAS_DATA_DIR")
                .filter(|s| !s.is_empty())
                .map(PathBuf::from),
            topics,
            health,
            lease_duration: seconds("KAAS_CONTROLLER_LEASE_DURATION_SECONDS", 15)?,
            retry_period: seconds("KAAS_CONTROLLER_RETRY_PERIOD_SECONDS", 2)?,
        }))
    }
}

/// `HOST:PORT`, or `:PORT` for every interface.
fn address(text: &str) -> Result<SocketAddr, String> {
    let full = match text.strip_prefix(':') {
        Some(port) => format!("0.0.0.0:{port}"),
        None => text.to_owned(),
    };
    full.parse()
        .map_err(|_| format!("'{text}' is no HOST:PORT or :PORT"))
}

/// The address of the first listener: `{"addr": "HOST:PORT"}` or `{"port": N}` (the chart's
/// shape, on every interface).
fn first_listener(json: &str) -> Result<SocketAddr, String> {
    let listeners: Vec<serde_json::Value> =
        serde_json::from_str(json).map_err(|e| format!("not a JSON list of listeners: {e}"))?;
    let first = listeners.first().ok_or("names no listener")?;
    if let Some(addr) = first.get("addr").and_then(|a| a.as_str()) {
        return address(addr);
    }
    match first.get("port").and_then(|p| p.as_u64()) {
        Some(port) if port <= u64::from(u16::MAX) => {
            Ok(SocketAddr::from(([0, 0, 0, 0], port as u16)))
        }
        _ => Err("its first listener has neither \"addr\" nor a \"port\"".into()),
    }
}

/// `[{"name": "t", "partitions": 3}]`; kaas's other fields are let be.
fn topics(json: &str) -> Result<Vec<TopicSpec>, String> {
    #[derive(serde::Deserialize)]
    struct Seed {
        name: String,
        partitions: i32,
    }
    let seeds: Vec<Seed> = serde_json::from_str(json)
        .map_err(|e| format!("expected [{{\"name\": \"t\", \"partitions\": 3}}]: {e}"))?;
    seeds
        .into_iter()
        .map(|s| match s.partitions > 0 {
            true => Ok(TopicSpec {
                name: s.name,
                partitions: s.partitions,
                configs: Default::default(),
            }),
            false => Err(format!("topic {} has {} partitions", s.name, s.partitions)),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| {
            pairs
                .iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.clone())
        }
    }

    #[test]
    fn a_pod_is_read_as_kaas_reads_it_and_what_is_wrong_is_named() {
        assert_eq!(KaasEnv::read(env(&[])).unwrap(), None, "no pod, no cluster");
        let pod = KaasEnv::read(env(&[
            ("MY_POD_NAME", "kaas-2"),
            ("KAAS_HEADLESS_SVC", "kaas"),
            (
                "KAAS_LISTENERS",
                r#"[{"name":"plain","addr":"127.0.0.3:9092"}]"#,
            ),
            (
                "KAAS_TOPICS",
                r#"[{"name":"t","partitions":3,"replicas":1}]"#,
            ),
            ("KAAS_HEALTH_ADDR", "127.0.0.3:8080"),
            ("KAAS_CONTROLLER_LEASE_DURATION_SECONDS", "4"),
        ]))
        .unwrap()
        .unwrap();
        assert_eq!((pod.broker_id, pod.namespace.as_str()), (2, "default"));
        assert_eq!(pod.listen.to_string(), "127.0.0.3:9092");
        assert_eq!(pod.topics[0].partitions, 3);
        assert_eq!(pod.lease_duration, Duration::from_secs(4));
        assert_eq!(pod.retry_period, Duration::from_secs(2));
        let chart = first_listener(r#"[{"name":"plain","port":9093,"tls":false}]"#).unwrap();
        assert_eq!(chart.to_string(), "0.0.0.0:9093");
        assert_eq!(address(":8080").unwrap().to_string(), "0.0.0.0:8080");
        for (bad, var) in [
            (vec![("MY_POD_NAME", "kaas")], "MY_POD_NAME"),
            (vec![("MY_POD_NAME", "kaas-0")], "KAAS_HEADLESS_SVC"),
            (
                vec![
                    ("MY_POD_NAME", "kaas-0"),
                    ("KAAS_HEADLESS_SVC", "s"),
                    ("KAAS_LISTENERS", "[]"),
                ],
                "KAAS_LISTENERS",
            ),
            (
                vec![
                    ("MY_POD_NAME", "kaas-0"),
                    ("KAAS_HEADLESS_SVC", "s"),
                    ("KAAS_TOPICS", r#"[{"name":"t","partitions":0}]"#),
                ],
                "KAAS_TOPICS",
            ),
        ] {
            let e = KaasEnv::read(env(&bad)).unwrap_err();
            assert_eq!(e.var, var, "{e}");
        }
    }
}

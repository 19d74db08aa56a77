//! Topics and their partition logs: created, listed, deleted, and found again on restart.
//!
//! Each topic's metadata is `topics/<name>.json` (`{"id":"<uuid>","partitions":N}`) and each
//! partition's log lives in `logs/<name>-<partition>/`.
//!
//! A topic is there whole or not at all. Its metadata file, written atomically once every
//! partition directory exists, is the commit point of a creation; removing it is the commit
//! point of a deletion. A creation that fails part-way removes what it made; one cut short by a
//! crash, or a deletion whose directories could not all be removed, leaves directories no
//! metadata file names, and [`TopicRegistry::open`] removes them at the next start.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::lock_order::{Level, OrderedMutex};

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::atomic::write_new;
use super::partition::PartitionLog;
use super::topic_config::{ConfigError, TopicConfig};

/// One topic.
#[derive(Debug, Clone)]
pub struct Topic {
    /// The topic id (KIP-516), stable across restarts.
    pub id: Uuid,
    /// The partition logs, by index.
    pub partitions: Vec<Arc<OrderedMutex<PartitionLog>>>,
    /// The configs given at creation.
    pub config: TopicConfig,
}

#[derive(Serialize, Deserialize)]
struct TopicFile {
    id: Uuid,
    partitions: i32,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    configs: BTreeMap<String, String>,
}

/// Why a topic could not be created.
#[derive(Debug, thiserror::Error)]
pub enum CreateError {
    /// The name is taken.
    #[error("topic '{0}' already exists")]
    Exists(String),
    /// Kafka's naming rule: 1–249 characters of `[a-zA-Z0-9._-]`, not `.` or `..`. The text
    /// is Apache's, for the broken part of the rule.
    #[error("Topic name is invalid: {}", invalid_topic_name(.0).unwrap_or_default())]
    InvalidName(String),
    /// Fewer than one partition.
    #[error("number of partitions must be at least 1, got {0}")]
    InvalidPartitions(i32),
    /// A config Apache would refuse (its message).
    #[error(transparent)]
    InvalidConfig(#[from] ConfigError),
    /// Over one of the broker's bounds (`crate::limits`).
    #[error("{}", .0.message)]
    Limit(crate::limits::Refusal),
    /// Files could not be written.
    #[error("storage: {0}")]
    Io(#[from] io::Error),
}

/// All topics of this broker.
#[derive(Debug)]
pub struct TopicRegistry {
    data_dir: PathBuf,
    topics: BTreeMap<String, Topic>,
    /// Whether peers share the data directory ([`TopicRegistry::open_shared`]): a directory
    /// no metadata file names yet may then be a peer's creation in progress.
    shared: bool,
}

/// The internal topic Apache keeps group offsets in. kaas keeps them in files instead, and
/// kaas-ref shows the topic in Metadata as Apache does (`State::offsets_topic`).
pub const CONSUMER_OFFSETS: &str = "__consumer_offsets";

/// Removes partition directories, logging (not failing on) any that stay: what stays is
/// debris that the next start, or a creation of the same name, removes.
fn remove_dirs(dirs: &[PathBuf]) {
    for dir in dirs {
        if let Err(e) = std::fs::remove_dir_all(dir) {
            if e.kind() != io::ErrorKind::NotFound {
                tracing::warn!(dir = %dir.display(), error = %e, "partition directory not removed");
            }
        }
    }
}

/// Kafka's topic-name rule.
pub fn valid_topic_name(name: &str) -> bool {
    invalid_topic_name(name).is_none()
}

/// The longest topic name Kafka allows.
pub const MAX_TOPIC_NAME: usize = 249;

/// What breaks Kafka's topic-name rule in `name`, in the words Apache 3.7 answers
/// CreateTopics with after "Topic name is invalid: "; none for a valid name.
pub fn invalid_topic_name(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("the empty string is not allowed".into());
    }
    if name == "." || name == ".." {
        return Some(format!("'{name}' is not allowed"));
    }
    if name.len() > MAX_TOPIC_NAME {
        return Some(format!(
            "the length of '{name}' is longer than the max allowed length {MAX_TOPIC_NAME}"
        ));
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
    {
        return Some(format!(
            "'{name}' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"
        ));
    }
    None
}

impl TopicRegistry {
    /// Loads every topic found under `data_dir`, and removes the debris of creations and
    /// deletions cut short (a broker alone on its data directory).
    pub fn open(data_dir: &Path) -> io::Result<TopicRegistry> {
        let mut registry = Self::open_shared(data_dir)?;
        registry.shared = false;
        registry.remove_debris()?;
        Ok(registry)
    }

    /// Loads every topic found under `data_dir`, a directory peers share: nothing is removed
    /// as debris, since a directory no metadata file names yet may be a peer's creation in
    /// progress.
    pub fn open_shared(data_dir: &Path) -> io::Result<TopicRegistry> {
        std::fs::create_dir_all(data_dir.join("topics"))?;
        let mut registry = TopicRegistry {
            data_dir: data_dir.to_owned(),
            topics: BTreeMap::new(),
            shared: true,
        };
        for name in registry.names_on_disk()? {
            let topic = registry.load(&name)?;
            registry.topics.insert(name, topic);
        }
        Ok(registry)
    }

    /// The topics whose metadata files exist now.
    fn names_on_disk(&self) -> io::Result<std::collections::BTreeSet<String>> {
        let mut names = std::collections::BTreeSet::new();
        for entry in std::fs::read_dir(self.data_dir.join("topics"))? {
            let path = entry?.path();
            if let Some(name) = path
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_suffix(".json"))
            {
                names.insert(name.to_owned());
            }
        }
        Ok(names)
    }

    /// Opens the topic a metadata file describes.
    fn load(&self, name: &str) -> io::Result<Topic> {
        let path = self.data_dir.join("topics").join(format!("{name}.json"));
        let file: TopicFile = serde_json::from_slice(&std::fs::read(&path)?)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        let partitions = (0..file.partitions)
            .map(|p| {
                PartitionLog::open(&Self::partition_dir(&self.data_dir, name, p))
                    .map(|l| Arc::new(OrderedMutex::new(Level::Partition, l)))
            })
            .collect::<io::Result<Vec<_>>>()?;
        let config = TopicConfig::from_given(file.configs)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        for log in &partitions {
            log.lock().configure(&config);
        }
        Ok(Topic {
            id: file.id,
            partitions,
            config,
        })
    }

    /// Whether the topics on disk differ (by name) from those loaded: peers sharing the data
    /// directory create and delete topics.
    pub fn stale(&self) -> io::Result<bool> {
        let on_disk = self.names_on_disk()?;
        Ok(on_disk.len() != self.topics.len()
            || on_disk.iter().any(|n| !self.topics.contains_key(n)))
    }

    /// Catches up with the topics peers created or deleted on the shared data directory: loads
    /// the new, forgets the gone.
    pub fn sync(&mut self) -> io::Result<()> {
        let on_disk = self.names_on_disk()?;
        self.topics.retain(|name, _| on_disk.contains(name));
        for name in on_disk {
            if !self.topics.contains_key(&name) {
                match self.load(&name) {
                    Ok(topic) => {
                        self.topics.insert(name, topic);
                    }
                    // Deleted since it was listed.
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(())
    }

    /// Removes what an interrupted creation or deletion left: partition directories of no
    /// topic (or beyond its partition count) and half-written metadata files.
    fn remove_debris(&self) -> io::Result<()> {
        for entry in std::fs::read_dir(self.data_dir.join("topics"))? {
            let path = entry?.path();
            if path.extension().is_some_and(|e| e == "tmp") {
                tracing::info!(file = %path.display(), "removing a half-written topic file");
                std::fs::remove_file(&path)?;
            }
        }
        let Ok(logs) = std::fs::read_dir(self.data_dir.join("logs")) else {
            return Ok(());
        };
        for entry in logs {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let owned = name.rsplit_once('-').is_some_and(|(topic, p)| {
                let count = self.topics.get(topic).map_or(0, |t| t.partitions.len());
                p.parse::<usize>().is_ok_and(|p| p < count)
            });
            if !owned {
                tracing::info!(dir = %name, "removing a partition directory no topic owns");
                std::fs::remove_dir_all(entry.path())?;
            }
        }
        Ok(())
    }

    fn partition_dir(data_dir: &Path, topic: &str, partition: i32) -> PathBuf {
        data_dir.join("logs").join(format!("{topic}-{partition}"))
    }

    /// The topic of that name.
    pub fn get(&self, name: &str) -> Option<&Topic> {
        self.topics.get(name)
    }

    /// The topic with that id, and its name.
    pub fn by_id(&self, id: Uuid) -> Option<(&str, &Topic)> {
        self.topics
            .iter()
            .find(|(_, t)| t.id == id)
            .map(|(n, t)| (n.as_str(), t))
    }

    /// Every topic, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Topic)> {
        self.topics.iter().map(|(n, t)| (n.as_str(), t))
    }

    /// Checks that a topic could be created, without creating it.
    pub fn validate(&self, name: &str, partitions: i32) -> Result<(), CreateError> {
        if !valid_topic_name(name) {
            return Err(CreateError::InvalidName(name.to_owned()));
        }
        if self.topics.contains_key(name) {
            return Err(CreateError::Exists(name.to_owned()));
        }
        if partitions < 1 {
            return Err(CreateError::InvalidPartitions(partitions));
        }
        Ok(())
    }

    /// Creates a topic with the default configs.
    pub fn create(&mut self, name: &str, partitions: i32) -> Result<&Topic, CreateError> {
        self.create_with(name, partitions, TopicConfig::default())
    }

    /// Creates a topic with validated configs.
    pub fn create_with(
        &mut self,
        name: &str,
        partitions: i32,
        config: TopicConfig,
    ) -> Result<&Topic, CreateError> {
        self.validate(name, partitions)?;
        let id = Uuid::new_v4();
        let dirs: Vec<PathBuf> = (0..partitions)
            .map(|p| Self::partition_dir(&self.data_dir, name, p))
            .collect();
        // No topic of this name exists, so any directory of its name is debris (of a deletion
        // that could not finish): a new topic starts empty. Not on a shared directory: there
        // it may be a peer's creation of the same topic in progress (three brokers started
        // with the same topics removed each other's partitions, and one did not start).
        if !self.shared {
            remove_dirs(&dirs);
        }
        let opened = dirs
            .iter()
            .map(|dir| {
                PartitionLog::open(dir).map(|l| Arc::new(OrderedMutex::new(Level::Partition, l)))
            })
            .collect::<io::Result<Vec<_>>>();
        let logs = match opened {
            Ok(logs) => logs,
            Err(e) => {
                if !self.shared {
                    remove_dirs(&dirs);
                }
                return Err(e.into());
            }
        };
        for log in &logs {
            log.lock().configure(&config);
        }
        let file = serde_json::to_vec(&TopicFile {
            id,
            partitions,
            configs: config.given.clone(),
        })
        .expect("serialisable");
        // The commit point: before it, a crash leaves only directories that the next start
        // removes. Created only if no peer created it first; if one did, this broker loads
        // the peer's topic and answers that it exists, as Apache answers the second of two
        // creations.
        let path = self.data_dir.join("topics").join(format!("{name}.json"));
        let topic = match write_new(&path, &file) {
            Ok(true) => Topic {
                id,
                partitions: logs,
                config,
            },
            Ok(false) => {
                drop(logs);
                let theirs = self.load(name)?;
                self.topics.insert(name.to_owned(), theirs);
                return Err(CreateError::Exists(name.to_owned()));
            }
            Err(e) => {
                drop(logs);
                if !self.shared {
                    remove_dirs(&dirs);
                }
                return Err(e.into());
            }
        };
        Ok(self.topics.entry(name.to_owned()).or_insert(topic))
    }

    /// Deletes a topic and its logs; returns its id.
    pub fn delete(&mut self, name: &str) -> io::Result<Option<Uuid>> {
        let Some(topic) = self.topics.remove(name) else {
            return Ok(None);
        };
        // The commit point; the directories after it are debris if they cannot be removed now
        // (removed by the next start, or by a creation of the same name).
        let meta = self.data_dir.join("topics").join(format!("{name}.json"));
        if let Err(e) = std::fs::remove_file(&meta) {
            self.topics.insert(name.to_owned(), topic);
            return Err(e);
        }
        let dirs: Vec<PathBuf> = (0..topic.partitions.len() as i32)
            .map(|p| Self::partition_dir(&self.data_dir, name, p))
            .collect();
        remove_dirs(&dirs);
        Ok(Some(topic.id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two brokers of one shared volume create the same topic at once: the second neither
    /// removes the first's partitions nor makes a topic of its own; it takes the first's and
    /// says it exists.
    #[test]
    fn a_peers_creation_of_the_same_topic_is_taken_not_removed() {
        let dir = tempfile::tempdir().unwrap();
        let mut first = TopicRegistry::open_shared(dir.path()).unwrap();
        let mut second = TopicRegistry::open_shared(dir.path()).unwrap();
        let id = first.create("t", 2).unwrap().id;
        let partition = TopicRegistry::partition_dir(dir.path(), "t", 1);
        let files = |dir: &Path| -> Vec<(std::ffi::OsString, u64)> {
            use std::os::unix::fs::MetadataExt;
            let mut files: Vec<_> = std::fs::read_dir(dir)
                .unwrap()
                .map(|e| {
                    let e = e.unwrap();
                    (e.file_name(), e.metadata().unwrap().ino())
                })
                .collect();
            files.sort();
            files
        };
        let before = files(&partition);
        assert!(!before.is_empty());
        assert!(matches!(
            second.create("t", 2),
            Err(CreateError::Exists(name)) if name == "t"
        ));
        assert_eq!(
            files(&partition),
            before,
            "the first broker's partition files were removed (and made anew)"
        );
        assert_eq!(second.get("t").map(|t| t.id), Some(id));
    }

    #[test]
    fn topics_survive_reopen_and_names_are_checked() {
        let dir = tempfile::tempdir().unwrap();
        let mut reg = TopicRegistry::open(dir.path()).unwrap();
        let id = reg.create("orders", 3).unwrap().id;
        assert!(matches!(
            reg.create("orders", 1),
            Err(CreateError::Exists(_))
        ));
        assert!(matches!(
            reg.create("a/b", 1),
            Err(CreateError::InvalidName(_))
        ));
        assert!(matches!(
            reg.create("x", 0),
            Err(CreateError::InvalidPartitions(0))
        ));
        drop(reg);
        let mut reg = TopicRegistry::open(dir.path()).unwrap();
        let t = reg.get("orders").unwrap();
        assert_eq!((t.id, t.partitions.len()), (id, 3));
        assert_eq!(reg.delete("orders").unwrap(), Some(id));
        assert!(TopicRegistry::open(dir.path())
            .unwrap()
            .get("orders")
            .is_none());
    }
}

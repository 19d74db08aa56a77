//! The jars Apache's Streams exactly-once system test runs from, fetched once with Maven into
//! kconform's cache beside the broker's: `kafka-streams` 3.7.2 and its test jar (which holds
//! `StreamsEosTest`, `EosTestClient` and `EosTestDriver`), with Jackson, which Streams needs
//! at run time and does not bring. 3.7.2 matches the Apache control; 4.x drops the older
//! exactly-once modes and moves its logging to Log4j 2.

use std::path::PathBuf;

use crate::targets::apache::jars::{cache_root, resolve_project};
use crate::targets::apache::ApacheError;

/// The Streams release whose test programs judge.
pub const VERSION: &str = "3.7.2";

/// The Jackson that Streams 3.7.2 was built with.
const JACKSON: &str = "2.16.2";

/// The Maven project naming them.
fn pom() -> String {
    format!(
        r#"<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
  <groupId>local.kconform</groupId><artifactId>streams-eos-libs</artifactId><version>1</version><packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka-streams</artifactId><version>{VERSION}</version></dependency>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka-streams</artifactId><version>{VERSION}</version><classifier>test</classifier>
      <exclusions><exclusion><groupId>*</groupId><artifactId>*</artifactId></exclusion></exclusions></dependency>
    <dependency><groupId>com.fasterxml.jackson.core</groupId><artifactId>jackson-databind</artifactId><version>{JACKSON}</version></dependency>
  </dependencies></project>"#
    )
}

/// The directory holding the jars (the classpath is `<libs>/*`), resolved the first time.
pub fn libs() -> Result<PathBuf, ApacheError> {
    let dir = cache_root().join(format!("streams-eos-{VERSION}"));
    resolve_project(
        &dir,
        &pom(),
        &format!("kafka-streams-{VERSION}-test.jar"),
        &format!("kafka-streams {VERSION} (test jar)"),
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_pom_names_streams_its_test_jar_and_jackson() {
        let pom = super::pom();
        assert!(pom.contains("<artifactId>kafka-streams</artifactId><version>3.7.2</version><classifier>test</classifier>"));
        assert!(pom.contains("<artifactId>jackson-databind</artifactId><version>2.16.2</version>"));
    }
}

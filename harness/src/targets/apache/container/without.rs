//! The container backend in a build without the `docker` feature: the same surface, and a
//! one-line refusal where it would start a container (`auto` never picks it: no engine is
//! said to answer).

use std::net::SocketAddr;

use super::super::release::Release;
use super::super::ApacheError;
use super::WITHOUT_DOCKER;

/// Never running: a build without the `docker` feature starts no container.
#[derive(Debug)]
pub struct ApacheContainer {
    /// The client address (never set: none starts).
    pub addr: SocketAddr,
}

impl ApacheContainer {
    /// Nothing to stop.
    pub async fn stop(self) {}

    /// Refused: the build has no container backend.
    pub async fn start(_release: &Release) -> Result<ApacheContainer, ApacheError> {
        Err(ApacheError::Container(WITHOUT_DOCKER.into()))
    }

    /// Refused: the build has no container backend.
    pub async fn start_secured(_release: &Release) -> Result<ApacheContainer, ApacheError> {
        Err(ApacheError::Container(WITHOUT_DOCKER.into()))
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::Backend;
    use super::*;

    #[tokio::test]
    async fn without_the_feature_the_container_is_refused_and_auto_is_the_jvm() {
        let e = ApacheContainer::start(&Release::CLAIMED).await.unwrap_err();
        assert!(e.to_string().contains("`docker` feature"), "{e}");
        assert!(super::super::docker_answers()
            .unwrap_err()
            .contains("`docker` feature"));
        assert_eq!(Backend::Auto.resolve().unwrap(), Backend::Jvm);
    }
}

//! The security both secured targets share (`ref+sasl`, `apache+sasl`): one SASL_PLAINTEXT
//! listener with PLAIN and SCRAM-SHA-512, the same users and passwords, a super user who sets
//! up each scenario's ACLs, and no access where no ACL allows it. This is the one place the
//! users are written down: kaas-ref is configured from it, Apache's server.properties and
//! SCRAM credentials are written from it, and the wire client logs in with it.

/// The super user: creates and deletes each scenario's ACLs, and provisions topics.
pub const SUPER_USER: &str = "admin";

/// Every user and password, the super user first.
pub const USERS: &[(&str, &str)] = &[
    (SUPER_USER, "admin-secret"),
    ("alice", "alice-secret"),
    ("bob", "bob-secret"),
];

/// A scenario's principal that does not authenticate at all (requests before SASL).
pub const NOBODY: &str = "anonymous";

/// The SASL mechanisms both targets enable, in the order Apache lists them.
pub const MECHANISMS: [&str; 2] = ["PLAIN", "SCRAM-SHA-512"];

/// The users' names, as refusals list them: "admin, alice, bob".
pub fn user_names() -> String {
    USERS.iter().map(|(u, _)| *u).collect::<Vec<_>>().join(", ")
}

/// The password of `user`, if the targets know the user.
pub fn password(user: &str) -> Option<&'static str> {
    USERS.iter().find(|(u, _)| *u == user).map(|(_, p)| *p)
}

/// kaas-ref's security configuration.
pub fn ref_security() -> reference_broker::Security {
    reference_broker::Security {
        users: USERS
            .iter()
            .map(|(name, password)| reference_broker::sasl::User {
                name: (*name).into(),
                password: (*password).into(),
            })
            .collect(),
        super_users: vec![format!("User:{SUPER_USER}")],
    }
}

/// Apache's security settings, as (key, value): PLAIN users in the JAAS line of each SASL
/// listener in `listeners` (lower-case listener names), SCRAM users from the storage format
/// ([`scram_format_args`]) or, in a container, from AlterUserScramCredentials
/// (`apache::container`), `StandardAuthorizer` with no access by default. A controller listener
/// that stays PLAINTEXT sees its peer as `User:ANONYMOUS`, which must be a super user for the
/// controller APIs (the research notes' recipe); no client reaches it.
pub fn apache_settings(listeners: &[&str]) -> Vec<(String, String)> {
    let plain_users: String = USERS
        .iter()
        .map(|(u, p)| format!(" user_{u}=\"{p}\""))
        .collect();
    let admin = password(SUPER_USER).unwrap_or_default();
    let mut out = vec![
        ("sasl.enabled.mechanisms".to_owned(), MECHANISMS.join(",")),
        (
            "sasl.mechanism.inter.broker.protocol".to_owned(),
            "PLAIN".to_owned(),
        ),
    ];
    for listener in listeners {
        out.push((
            format!("listener.name.{listener}.plain.sasl.jaas.config"),
            format!("org.apache.kafka.common.security.plain.PlainLoginModule required username=\"{SUPER_USER}\" password=\"{admin}\"{plain_users};"),
        ));
        out.push((
            format!("listener.name.{listener}.scram-sha-512.sasl.jaas.config"),
            "org.apache.kafka.common.security.scram.ScramLoginModule required;".to_owned(),
        ));
    }
    out.extend([
        (
            "authorizer.class.name".to_owned(),
            "org.apache.kafka.metadata.authorizer.StandardAuthorizer".to_owned(),
        ),
        (
            "super.users".to_owned(),
            format!("User:{SUPER_USER};User:ANONYMOUS"),
        ),
        (
            "allow.everyone.if.no.acl.found".to_owned(),
            "false".to_owned(),
        ),
    ]);
    out
}

/// The server.properties lines of the JVM backend's secured client listener, named
/// `SASL_PLAINTEXT` (the broker's inter-broker listener too).
pub fn apache_properties() -> String {
    apache_settings(&["sasl_plaintext"])
        .iter()
        .map(|(k, v)| format!("{k}={v}\n"))
        .collect()
}

/// The `kafka-storage format` arguments that give every user SCRAM-SHA-512 credentials.
pub fn scram_format_args() -> Vec<String> {
    USERS
        .iter()
        .flat_map(|(u, p)| {
            [
                "--add-scram".to_owned(),
                format!("SCRAM-SHA-512=[name={u},password={p}]"),
            ]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_targets_are_configured_from_the_one_user_list() {
        let apache = apache_properties();
        let kaas = ref_security();
        for (user, password) in USERS {
            assert!(
                apache.contains(&format!("user_{user}=\"{password}\"")),
                "{user}"
            );
            assert!(scram_format_args()
                .contains(&format!("SCRAM-SHA-512=[name={user},password={password}]")));
            assert!(kaas
                .users
                .iter()
                .any(|u| u.name == *user && u.password == *password));
        }
        assert_eq!(kaas.super_users, ["User:admin"]);
        assert!(apache.contains("allow.everyone.if.no.acl.found=false"));
        assert!(apache.contains("sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-512"));
    }
}

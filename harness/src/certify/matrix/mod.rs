//! `kconform matrix`: every Kafka-compatible broker of a brokers file certified side by side
//! against Apache, written as a static site. A broker joins with one entry ([`brokers`]); it
//! is installed and started by its entry's commands ([`started`]) or is a target kconform
//! starts itself; each row ([`row`]) is certified by `kconform certify` in a process of its
//! own, and its certificate becomes a row of cells, one word each ([`cell`]);
//! every run is kept ([`history`]) and the site ([`site`]) shows the latest of each, the
//! history of each broker and what changed between runs of one kconform version.

pub mod brokers;
pub mod cell;
pub mod history;
pub mod row;
pub mod site;
pub mod started;

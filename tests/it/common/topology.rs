//! What the Sentinel and the Cluster tests (`tests/it/sentinel.rs`, `tests/it/cluster.rs`) share:
//! waiting for a topology to settle, and the spec of a URI with a PKI's TLS keys.
#![allow(dead_code)]

use std::thread::sleep;
use std::time::{Duration, Instant};

use dibs::{ConnSpec, SpecValue};

use crate::common::pki::Pki;

pub fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        sleep(Duration::from_millis(50));
    }
}

/// The conn keys of a spec: `uri`, then the PKI's TLS keys, then these.
pub fn spec_with(uri: &str, pki: Option<&Pki>, more: &[(&str, &str)]) -> ConnSpec {
    let mut entries = vec![("uri".to_owned(), SpecValue::Str(uri.to_owned()))];
    for (key, value) in pki.map(|p| p.conn_keys("client")).unwrap_or_default() {
        entries.push((key.to_owned(), SpecValue::Str(value)));
    }
    for (key, value) in more {
        entries.push((key.to_string(), SpecValue::Str(value.to_string())));
    }
    ConnSpec::from_map(&entries).unwrap()
}

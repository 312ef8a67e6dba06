//! The tests of the map forms (`super`): Carmine's spec and conn-map shapes, the keys' values,
//! and the errors that name their key.

use std::time::Duration;

use super::super::tests::{invalid_message, tcp};
use crate::connspec::{ConnSpec, SpecValue};
use crate::Error;

fn s(v: &str) -> SpecValue {
    SpecValue::Str(v.into())
}

fn map(entries: &[(&str, SpecValue)]) -> Vec<(String, SpecValue)> {
    entries
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

#[test]
fn map_spec_shape() {
    let spec = ConnSpec::from_map(&map(&[
        ("host", s("h")),
        ("port", SpecValue::Int(6380)),
        ("db", s("2")),
        ("password", s("pw")),
        ("timeout-ms", SpecValue::Int(500)),
        ("read-timeout-ms", SpecValue::Int(250)),
        ("key-prefix", s("app:locks:")),
    ]))
    .unwrap();
    assert_eq!(tcp(&spec), ("h", 6380));
    assert_eq!(spec.db(), 2);
    assert_eq!(spec.connect_timeout(), Duration::from_millis(500));
    assert_eq!(spec.read_timeout(), Duration::from_millis(250));
    assert_eq!(spec.key_prefix(), "app:locks:");
}

#[test]
fn durable_values() {
    use crate::connspec::Durable;
    let durable = |v: SpecValue| ConnSpec::from_map(&map(&[("durable", v)])).map(|s| s.durable());
    assert_eq!(ConnSpec::from_map(&[]).unwrap().durable(), Durable::Auto);
    assert_eq!(durable(s("auto")).unwrap(), Durable::Auto);
    assert_eq!(durable(s("OFF")).unwrap(), Durable::Off);
    assert_eq!(durable(SpecValue::Int(0)).unwrap(), Durable::Off);
    assert_eq!(durable(SpecValue::Int(2)).unwrap(), Durable::Replicas(2));
    assert_eq!(durable(s("1")).unwrap(), Durable::Replicas(1));
    assert_eq!(durable(s("aof")).unwrap(), Durable::Aof(0));
    assert_eq!(durable(s("aof:1")).unwrap(), Durable::Aof(1));
    for bad in [
        s("sometimes"),
        s("aof:x"),
        SpecValue::Int(17),
        SpecValue::Int(-1),
        SpecValue::Bool(true),
    ] {
        match durable(bad.clone()) {
            Err(Error::InvalidArgument { arg, message }) => {
                assert_eq!(arg, "durable", "{message}");
                assert!(message.contains("'durable' must be"), "{message}");
            }
            other => panic!("{bad:?}: {other:?}"),
        }
    }
}

#[test]
fn map_keyword_keys_and_conn_map_shape() {
    let spec = ConnSpec::from_map(&map(&[
        (
            ":pool",
            SpecValue::Map(map(&[(":max-total-per-key", SpecValue::Int(8))])),
        ),
        (
            ":spec",
            SpecValue::Map(map(&[(":uri", s("redis://h:7000/1"))])),
        ),
    ]))
    .unwrap();
    assert_eq!(tcp(&spec), ("h", 7000));
    assert_eq!(spec.db(), 1);
    assert_eq!((spec.max_total(), spec.max_idle()), (8, 8));
}

#[test]
fn map_uri_and_agreeing_keys_merge() {
    let spec = ConnSpec::from_map(&map(&[
        ("uri", s("redis://h:7000")),
        ("port", SpecValue::Int(7000)),
        ("db", SpecValue::Int(4)),
    ]))
    .unwrap();
    assert_eq!(tcp(&spec), ("h", 7000));
    assert_eq!(spec.db(), 4);
}

#[test]
fn map_errors() {
    let cases: Vec<(Vec<(String, SpecValue)>, &str)> = vec![
        (map(&[("hots", s("h"))]), "unknown key 'hots'"),
        (
            map(&[("port", SpecValue::Other("java.lang.Double".into()))]),
            "'port' must be an integer, got java.lang.Double",
        ),
        (map(&[("port", s("abc"))]), "'port' must be an integer"),
        (
            map(&[("port", SpecValue::Int(70000))]),
            "between 1 and 65535",
        ),
        (
            map(&[("host", SpecValue::Int(1))]),
            "'host' must be a string",
        ),
        (map(&[("ssl", s("yes"))]), "'ssl' must be a boolean"),
        (
            map(&[("uri", s("redis://h:7000")), ("port", SpecValue::Int(7001))]),
            "'port' contradicts the 'uri' key",
        ),
        (
            map(&[("uri", s("redis://h")), ("host", s("other"))]),
            "'host' contradicts",
        ),
        (
            map(&[("uri", s("rediss://h")), ("ssl", SpecValue::Bool(false))]),
            "'ssl' contradicts",
        ),
        (map(&[("host", s("h")), (":host", s("h"))]), "appears twice"),
        (
            map(&[("spec", SpecValue::Map(vec![])), ("host", s("h"))]),
            "unknown key 'host' in the conn map",
        ),
        (map(&[("spec", s("redis://h"))]), "'spec' must be a map"),
        (
            map(&[(
                "pool",
                SpecValue::Map(map(&[("max-wait", SpecValue::Int(1))])),
            )]),
            "unknown key 'max-wait' in the pool map",
        ),
        (map(&[("ca-cert", s("/ca.pem"))]), "needs TLS"),
        (
            map(&[("timeout-ms", SpecValue::Int(0))]),
            "'timeout-ms' must be between 1",
        ),
    ];
    for (entries, fragment) in cases {
        let message = invalid_message(ConnSpec::from_map(&entries));
        assert!(message.contains(fragment), "{entries:?}: {message}");
    }
    let message = invalid_message(ConnSpec::from_map(&map(&[
        ("uri", s("redis://:one@h")),
        ("password", s("two")),
    ])));
    assert!(
        !message.contains("one") && !message.contains("two"),
        "{message}"
    );
}

/// The argument of each error is the key at fault, so that a caller can name its own
/// setting without searching the message.
#[test]
fn map_errors_name_the_key_as_their_argument() {
    let cases: Vec<(Vec<(String, SpecValue)>, &str)> = vec![
        (map(&[("port", SpecValue::Int(70000))]), "port"),
        (map(&[("port", s("six"))]), "port"),
        (map(&[("db", SpecValue::Int(-1))]), "db"),
        (map(&[("host", SpecValue::Int(1))]), "host"),
        (
            map(&[("read-timeout-ms", SpecValue::Int(0))]),
            "read-timeout-ms",
        ),
        (
            map(&[("conn-timeout-ms", SpecValue::Int(-5))]),
            "conn-timeout-ms",
        ),
        (map(&[("ssl", s("yes"))]), "ssl"),
        (map(&[("uri", s("http://h"))]), "uri"),
        (
            map(&[("uri", s("redis://h:1")), ("port", SpecValue::Int(2))]),
            "port",
        ),
        (
            map(&[("sentinels", s("h:1,/x")), ("master-name", s("m"))]),
            "sentinels",
        ),
        (map(&[("sentinels", s("h:1"))]), "master-name"),
        (map(&[("master-name", s("m"))]), "sentinels"),
        (map(&[("cluster-nodes", s("h:x"))]), "cluster-nodes"),
        (
            map(&[("cluster-nodes", s("redis://u:pw@h:7000"))]),
            "cluster-nodes",
        ),
        (
            map(&[
                ("sentinels", s("h:1")),
                ("master-name", s("m")),
                ("cluster-nodes", s("h:2")),
            ]),
            "cluster-nodes",
        ),
        (
            map(&[("cluster-nodes", s("h:1")), ("db", SpecValue::Int(2))]),
            "db",
        ),
        (map(&[("hots", s("h"))]), "conn"),
    ];
    for (entries, expected) in cases {
        match ConnSpec::from_map(&entries) {
            Err(Error::InvalidArgument { arg, .. }) => assert_eq!(arg, expected, "{entries:?}"),
            other => panic!("{entries:?}: expected InvalidArgument, got {other:?}"),
        }
    }
}

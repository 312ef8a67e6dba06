//! The map forms of a conn spec: Carmine's spec shape (`{host, port, password, ...}`, with an
//! optional `uri` key that explicit keys must agree with), and Carmine's conn-map shape
//! (`{pool {...}, spec {...}}`). Keys may be Clojure keywords (`:host`).

use std::fmt;

use super::fields::Fields;
use super::parse_error::{ParseError, Parsed};
use super::uri::parse_node_list;
use super::{
    Durable, Pem, SpecValue, DEFAULT_PORT, DEFAULT_SENTINEL_PORT, MAX_POOL_SIZE, MAX_TIMEOUT_MS,
};

const SPEC_KEYS: &[&str] = &[
    "uri",
    "host",
    "port",
    "username",
    "password",
    "db",
    "timeout-ms",
    "conn-timeout-ms",
    "read-timeout-ms",
    "idle-timeout-ms",
    "ssl",
    "ca-cert",
    "client-cert",
    "client-key",
    "ca-cert-pem",
    "client-cert-pem",
    "client-key-pem",
    "key-prefix",
    "keep-alive",
    "durable",
    "history",
    "instance-id",
    "retry-failed-ticks",
    "sentinels",
    "master-name",
    "sentinel-username",
    "sentinel-password",
    "cluster-nodes",
];
const POOL_KEYS: &[&str] = &[
    "max-total",
    "max-total-per-key",
    "max-idle",
    "max-idle-per-key",
];
const CONN_MAP_KEYS: &[&str] = &["spec", "pool"];

impl SpecValue {
    fn type_name(&self) -> &str {
        match self {
            SpecValue::Null => "null",
            SpecValue::Str(_) => "string",
            SpecValue::Int(_) => "integer",
            SpecValue::Bool(_) => "boolean",
            SpecValue::Map(_) => "map",
            SpecValue::Other(name) => name,
        }
    }
}

impl Fields {
    pub(super) fn from_map(entries: &[(String, SpecValue)]) -> Parsed<Fields> {
        let entries = normalize_keys(entries, "conn")?;
        if entries
            .iter()
            .any(|(k, _)| CONN_MAP_KEYS.contains(&k.as_str()))
        {
            // Carmine's conn map: {pool {...}, spec {...}}.
            reject_unknown(&entries, CONN_MAP_KEYS, "conn", &[SPEC_KEYS])?;
            let mut f = Fields::default();
            for (key, value) in &entries {
                let inner = match value {
                    SpecValue::Map(m) => m,
                    SpecValue::Null if key == "pool" => continue,
                    other => {
                        return Err(ParseError::invalid(
                            "conn",
                            format!("'{key}' must be a map, got {}", other.type_name()),
                        ))
                    }
                };
                let inner = normalize_keys(inner, key)?;
                if key == "spec" {
                    let pool = (f.max_total, f.max_idle);
                    f = Fields::from_spec_entries(&inner)?;
                    (f.max_total, f.max_idle) = pool;
                } else {
                    f.read_pool(&inner)?;
                }
            }
            Ok(f)
        } else {
            Fields::from_spec_entries(&entries)
        }
    }

    fn from_spec_entries(entries: &[(String, SpecValue)]) -> Parsed<Fields> {
        reject_unknown(entries, SPEC_KEYS, "spec", &[CONN_MAP_KEYS, POOL_KEYS])?;
        let mut f = Fields::default();
        let mut from_uri = None;
        for (key, v) in entries {
            match key.as_str() {
                "uri" => from_uri = get_str(key, v)?.map(|u| Fields::from_uri(&u)).transpose()?,
                "host" => f.host = get_str(key, v)?,
                "port" => f.port = get_int(key, v, 1, 65535)?.map(|p| p as u16),
                "username" => f.username = get_str(key, v)?,
                "password" => f.password = get_str(key, v)?,
                "db" => f.db = get_int(key, v, 0, i32::MAX as i128)?.map(|d| d as i64),
                "timeout-ms" => {
                    f.timeout_ms = get_int(key, v, 1, MAX_TIMEOUT_MS)?.map(|t| t as u64)
                }
                "conn-timeout-ms" => {
                    f.connect_timeout_ms = get_int(key, v, 1, MAX_TIMEOUT_MS)?.map(|t| t as u64)
                }
                "read-timeout-ms" => {
                    f.read_timeout_ms = get_int(key, v, 1, MAX_TIMEOUT_MS)?.map(|t| t as u64)
                }
                "idle-timeout-ms" => {
                    f.idle_timeout_ms = get_int(key, v, 1, MAX_TIMEOUT_MS)?.map(|t| t as u64)
                }
                "ssl" => f.tls = get_bool(key, v)?,
                "ca-cert" => Pem::set(&mut f.ca_cert, "ca-cert", get_str(key, v)?)?,
                "client-cert" => Pem::set(&mut f.client_cert, "client-cert", get_str(key, v)?)?,
                "client-key" => Pem::set(&mut f.client_key, "client-key", get_str(key, v)?)?,
                "ca-cert-pem" => Pem::set(&mut f.ca_cert, "ca-cert-pem", get_str(key, v)?)?,
                "client-cert-pem" => {
                    Pem::set(&mut f.client_cert, "client-cert-pem", get_str(key, v)?)?
                }
                "client-key-pem" => {
                    Pem::set(&mut f.client_key, "client-key-pem", get_str(key, v)?)?
                }
                "sentinel-username" => f.sentinel_username = get_str(key, v)?,
                "sentinel-password" => f.sentinel_password = get_str(key, v)?,
                "key-prefix" => f.key_prefix = get_str(key, v)?,
                "keep-alive" => f.keep_alive = get_bool(key, v)?,
                "durable" => f.durable = get_durable(key, v)?,
                "history" => f.history = get_bool(key, v)?,
                "instance-id" => f.instance_id = get_str(key, v)?,
                "retry-failed-ticks" => f.retry_failed_ticks = get_bool(key, v)?,
                "sentinels" | "cluster-nodes" => {
                    let default_port = if key == "sentinels" {
                        DEFAULT_SENTINEL_PORT
                    } else {
                        DEFAULT_PORT
                    };
                    let nodes = get_str(key, v)?
                        .map(|list| parse_node_list(&list, default_port))
                        .transpose()
                        .map_err(|e| ParseError::Key {
                            key: key_arg(key),
                            reason: e.reason(),
                        })?;
                    if key == "sentinels" {
                        f.sentinels = nodes;
                    } else {
                        f.cluster_nodes = nodes;
                    }
                }
                "master-name" => f.master_name = get_str(key, v)?,
                _ => unreachable!("reject_unknown let through '{key}'"),
            }
        }
        match from_uri {
            Some(u) => u.merge(f),
            None => Ok(f),
        }
    }

    fn read_pool(&mut self, entries: &[(String, SpecValue)]) -> Parsed<()> {
        reject_unknown(entries, POOL_KEYS, "pool", &[])?;
        for (key, v) in entries {
            let n = get_int(key, v, 0, MAX_POOL_SIZE)?.map(|n| n as usize);
            let slot = if key.starts_with("max-total") {
                &mut self.max_total
            } else {
                &mut self.max_idle
            };
            if slot.is_some() && n.is_some() && *slot != n {
                return Err(ParseError::invalid(
                    "pool",
                    format!("'{key}' contradicts its alias"),
                ));
            }
            *slot = slot.or(n);
        }
        Ok(())
    }

    /// Merges explicit keys into what the `uri` key said. A key that contradicts the URI is an
    /// error: picking one silently would connect somewhere the caller did not mean.
    fn merge(self, keys: Fields) -> Parsed<Fields> {
        fn pick<T: PartialEq + fmt::Debug>(
            name: &'static str,
            from_uri: Option<T>,
            from_key: Option<T>,
            secret: bool,
        ) -> Parsed<Option<T>> {
            match (from_uri, from_key) {
                (Some(a), Some(b)) if a != b => {
                    let detail = if secret {
                        String::new()
                    } else {
                        format!(": uri says {a:?}, key says {b:?}")
                    };
                    Err(ParseError::invalid(
                        name,
                        format!("'{name}' contradicts the 'uri' key{detail}; give it once"),
                    ))
                }
                (a, b) => Ok(a.or(b)),
            }
        }
        if self.unix_path.is_some() && (keys.host.is_some() || keys.port.is_some()) {
            return Err(ParseError::invalid(
                "conn",
                "'host'/'port' contradict a unix socket 'uri'; give one address",
            ));
        }
        Ok(Fields {
            tls: pick("ssl", self.tls.filter(|t| *t), keys.tls, false)?.or(self.tls),
            host: pick("host", self.host, keys.host, false)?,
            port: pick("port", self.port, keys.port, false)?,
            unix_path: self.unix_path,
            username: pick("username", self.username, keys.username, false)?,
            password: pick("password", self.password, keys.password, true)?,
            db: pick("db", self.db, keys.db, false)?,
            sentinels: pick("sentinels", self.sentinels, keys.sentinels, false)?,
            master_name: pick("master-name", self.master_name, keys.master_name, false)?,
            sentinel_username: pick(
                "sentinel-username",
                self.sentinel_username,
                keys.sentinel_username,
                false,
            )?,
            sentinel_password: pick(
                "sentinel-password",
                self.sentinel_password,
                keys.sentinel_password,
                true,
            )?,
            cluster_nodes: pick(
                "cluster-nodes",
                self.cluster_nodes,
                keys.cluster_nodes,
                false,
            )?,
            ..keys
        })
    }
}

/// Strips the `:` of Clojure keywords and rejects a key given twice (`host` and `:host`).
fn normalize_keys(entries: &[(String, SpecValue)], what: &str) -> Parsed<Vec<(String, SpecValue)>> {
    let mut out: Vec<(String, SpecValue)> = Vec::with_capacity(entries.len());
    for (key, value) in entries {
        let key = key.strip_prefix(':').unwrap_or(key);
        if out.iter().any(|(k, _)| k == key) {
            return Err(ParseError::invalid(
                "conn",
                format!("key '{key}' appears twice in the {what} map"),
            ));
        }
        out.push((key.to_owned(), value.clone()));
    }
    Ok(out)
}

fn reject_unknown(
    entries: &[(String, SpecValue)],
    valid: &[&str],
    what: &str,
    misplaced: &[&[&str]],
) -> Parsed<()> {
    for (key, _) in entries {
        if valid.contains(&key.as_str()) {
            continue;
        }
        let hint = if misplaced.iter().any(|keys| keys.contains(&key.as_str())) {
            " (it belongs in another part of the conn map)"
        } else {
            ""
        };
        return Err(ParseError::invalid(
            "conn",
            format!(
                "unknown key '{key}' in the {what} map{hint}; valid keys: {}",
                valid.join(", ")
            ),
        ));
    }
    Ok(())
}

/// The key as the argument an error names: callers map it to their own setting (the Spring
/// starter to a property) without reading the message. Only known keys get this far.
pub(super) fn key_arg(key: &str) -> &'static str {
    SPEC_KEYS
        .iter()
        .chain(POOL_KEYS)
        .find(|k| **k == key)
        .copied()
        .unwrap_or("conn")
}

fn get_str(key: &str, v: &SpecValue) -> Parsed<Option<String>> {
    match v {
        SpecValue::Null => Ok(None),
        SpecValue::Str(s) => Ok(Some(s.clone())),
        other => Err(wrong_type(key, "a string", other)),
    }
}

fn get_int(key: &str, v: &SpecValue, min: i128, max: i128) -> Parsed<Option<i128>> {
    let n = match v {
        SpecValue::Null => return Ok(None),
        SpecValue::Int(n) => *n,
        SpecValue::Str(s) => s.trim().parse::<i128>().map_err(|_| {
            // The text is not echoed: it may be a secret given under the wrong key.
            ParseError::invalid(
                key_arg(key),
                format!("'{key}' must be an integer, got a non-numeric string"),
            )
        })?,
        other => return Err(wrong_type(key, "an integer", other)),
    };
    if n < min || n > max {
        return Err(ParseError::invalid(
            key_arg(key),
            format!("'{key}' must be between {min} and {max}, got {n}"),
        ));
    }
    Ok(Some(n))
}

/// `"auto"`, `"off"`, a number of replicas (1 to 16, as an integer or a string), `"aof"` (the
/// master's AOF fsync alone) or `"aof:N"` (and N replicas'). 0 is `"off"`.
fn get_durable(key: &str, v: &SpecValue) -> Parsed<Option<Durable>> {
    const MAX: i128 = 16;
    let bad = || {
        ParseError::invalid(
            key_arg(key),
            format!("'{key}' must be \"auto\", \"off\", a number of replicas (0 to {MAX}), \"aof\" or \"aof:N\""),
        )
    };
    let replicas = |n: i128| match n {
        0 => Ok(Durable::Off),
        1..=MAX => Ok(Durable::Replicas(n as u32)),
        _ => Err(bad()),
    };
    let text = match v {
        SpecValue::Null => return Ok(None),
        SpecValue::Int(n) => return replicas(*n).map(Some),
        SpecValue::Str(s) => s.trim().to_ascii_lowercase(),
        other => return Err(wrong_type(key, "a string or an integer", other)),
    };
    Ok(Some(match text.as_str() {
        "auto" => Durable::Auto,
        "off" | "none" => Durable::Off,
        "aof" => Durable::Aof(0),
        t => match t.strip_prefix("aof:") {
            Some(n) => match n.parse::<i128>() {
                Ok(n @ 0..=MAX) => Durable::Aof(n as u32),
                _ => return Err(bad()),
            },
            None => replicas(t.parse::<i128>().map_err(|_| bad())?)?,
        },
    }))
}

fn get_bool(key: &str, v: &SpecValue) -> Parsed<Option<bool>> {
    match v {
        SpecValue::Null => Ok(None),
        SpecValue::Bool(b) => Ok(Some(*b)),
        SpecValue::Str(s) if s == "true" || s == "false" => Ok(Some(s == "true")),
        other => Err(wrong_type(key, "a boolean", other)),
    }
}

fn wrong_type(key: &str, expected: &str, got: &SpecValue) -> ParseError {
    ParseError::invalid(
        key_arg(key),
        format!("'{key}' must be {expected}, got {}", got.type_name()),
    )
}

#[cfg(test)]
mod tests {
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
        let durable =
            |v: SpecValue| ConnSpec::from_map(&map(&[("durable", v)])).map(|s| s.durable());
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
}

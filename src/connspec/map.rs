//! The map forms of a conn spec: Carmine's spec shape (`{host, port, password, ...}`, with an
//! optional `uri` key that explicit keys must agree with), and Carmine's conn-map shape
//! (`{pool {...}, spec {...}}`). Keys may be Clojure keywords (`:host`).

use std::fmt;

use super::fields::Fields;
use super::keys::{CONN_MAP_KEYS, POOL_KEYS, SPEC_KEYS};
use super::parse_error::{ParseError, Parsed};
use super::uri::parse_node_list;
use super::{
    Durable, Pem, SpecValue, DEFAULT_PORT, DEFAULT_SENTINEL_PORT, MAX_POOL_SIZE, MAX_TIMEOUT_MS,
};

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
            reject_unknown(&entries, CONN_MAP_KEYS, "conn", &[&SPEC_KEYS])?;
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
        reject_unknown(entries, &SPEC_KEYS, "spec", &[CONN_MAP_KEYS, POOL_KEYS])?;
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
                "retry-unended-ticks" => f.retry_unended_ticks = get_bool(key, v)?,
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
mod tests;

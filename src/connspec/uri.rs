//! The URI forms of a conn spec:
//!
//! - `redis://[user[:password]@][host][:port][/db]`, `rediss://` for TLS; `valkey://` and
//!   `valkeys://` are aliases. The user info ends at the *last* `@`, so a password may contain
//!   `:`, `@`, `/` or `#` as is; `%XX` escapes are decoded. A bare `user@` is a user name, as in
//!   the IANA registration of the scheme.
//! - `redis+unix:///path/to.sock` or `unix:///path/to.sock`, with optional query keys `db`,
//!   `user`/`username`, `pass`/`password`.
//! - `redis+sentinel://[user[:password]@]h1:p1,h2:p2/master[/db][?sentinel-username=u&sentinel-password=p]`
//!   (the user info is the master's; the query gives the Sentinels' own credentials) and
//!   `redis+cluster://[user[:password]@]h1:p1,h2:p2`; `valkey+` aliases both, and
//!   `rediss+sentinel`, `rediss+cluster`, `valkeys+sentinel` and `valkeys+cluster` are the same
//!   over TLS (to the Sentinels and the master they name; to every node of the cluster).
//!
//! Every error of a URI names the URI, redacted ([`redact_uri`]).

use std::path::PathBuf;

use super::fields::Fields;
use super::parse_error::{ParseError, Parsed};
use super::{DEFAULT_PORT, DEFAULT_SENTINEL_PORT};

impl Fields {
    /// What a URI says. An error names the URI, redacted.
    pub(super) fn from_uri(uri: &str) -> Parsed<Fields> {
        Fields::parse_uri(uri).map_err(|e| ParseError::Uri {
            shown: redact_uri(uri),
            reason: e.reason(),
        })
    }

    /// [`Fields::from_uri`], whose errors are the reason alone.
    fn parse_uri(uri: &str) -> Parsed<Fields> {
        let bad = |why: &str| ParseError::invalid("uri", why);
        let (scheme, rest) = uri
            .split_once("://")
            .ok_or_else(|| bad("expected scheme://, e.g. redis://host:6379"))?;
        let (tls, unix) = match scheme.to_ascii_lowercase().as_str() {
            "redis" | "valkey" => (false, false),
            "rediss" | "valkeys" => (true, false),
            "redis+unix" | "unix" => (false, true),
            "redis+sentinel" | "valkey+sentinel" => {
                return Fields::from_multi_node_uri(rest, true, false)
            }
            "rediss+sentinel" | "valkeys+sentinel" => {
                return Fields::from_multi_node_uri(rest, true, true)
            }
            "redis+cluster" | "valkey+cluster" => {
                return Fields::from_multi_node_uri(rest, false, false)
            }
            "rediss+cluster" | "valkeys+cluster" => {
                return Fields::from_multi_node_uri(rest, false, true)
            }
            other => {
                return Err(bad(&format!(
                    "unknown scheme '{other}'; expected redis, rediss, valkey, valkeys, redis+unix, unix, \
                     redis+sentinel, rediss+sentinel, redis+cluster or rediss+cluster"
                )))
            }
        };
        let mut f = Fields {
            tls: Some(tls),
            ..Fields::default()
        };
        if unix {
            let (path, query) = match rest.split_once('?') {
                Some((p, q)) => (p, Some(q)),
                None => (rest, None),
            };
            let path = percent_decode(path, "uri")?;
            if !path.starts_with('/') {
                return Err(bad(
                    "a unix socket path must be absolute, e.g. unix:///run/redis.sock",
                ));
            }
            f.unix_path = Some(PathBuf::from(path));
            for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
                let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
                let v = percent_decode(v, "uri")?;
                match k {
                    "db" => f.db = Some(parse_db(&v)?),
                    "user" | "username" => f.username = Some(v),
                    "pass" | "password" => f.password = Some(v),
                    // Not echoed: a query may hold a password.
                    _ => {
                        return Err(bad(
                            "unknown query key; valid: db, user, username, pass, password",
                        ))
                    }
                }
            }
            return Ok(f);
        }
        // The user info ends at the last '@': host, port and db never contain one.
        let (userinfo, hostpart) = match rest.rfind('@') {
            Some(i) => (Some(&rest[..i]), &rest[i + 1..]),
            None => (None, rest),
        };
        if let Some(userinfo) = userinfo {
            (f.username, f.password) = parse_userinfo(userinfo)?;
        }
        if hostpart.contains(['?', '#']) {
            return Err(bad(
                "query parameters and fragments are not supported; use map keys",
            ));
        }
        let (authority, path) = match hostpart.find('/') {
            Some(i) => (&hostpart[..i], &hostpart[i + 1..]),
            None => (hostpart, ""),
        };
        (f.host, f.port) = parse_authority(authority)?;
        if !path.is_empty() {
            f.db = Some(parse_db(path)?);
        }
        Ok(f)
    }

    /// `redis+sentinel://[user[:password]@]h1:p1,h2:p2/master[/db][?query]` or
    /// `redis+cluster://[user[:password]@]h1:p1,h2:p2`, after the `://`.
    fn from_multi_node_uri(rest: &str, sentinel: bool, tls: bool) -> Parsed<Fields> {
        let bad = |why: &str| ParseError::invalid("uri", why);
        let mut f = Fields {
            tls: Some(tls),
            ..Fields::default()
        };
        // The query starts at the first '?' after the user info, which ends at the last '@'
        // (a password may hold a '?'); an '@' in the query must be written %40.
        let after_at = rest.rfind('@').map_or(0, |i| i + 1);
        let before = &rest[..after_at];
        if before.find('?').is_some_and(|q| before[q..].contains('=')) {
            // Either an '@' in the query or a '?...=' in the user info: which one cannot be told.
            return Err(bad(
                "write an '@' in the query as %40 (and a '?' in the user info as %3F)",
            ));
        }
        let (rest, query) = match rest[after_at..].find('?') {
            Some(j) if sentinel => (&rest[..after_at + j], Some(&rest[after_at + j + 1..])),
            _ => (rest, None),
        };
        let hostpart = match rest.rfind('@') {
            Some(i) => {
                (f.username, f.password) = parse_userinfo(&rest[..i])?;
                &rest[i + 1..]
            }
            None => rest,
        };
        if hostpart.contains(['?', '#']) {
            return Err(bad(
                "query parameters and fragments are not supported; use map keys",
            ));
        }
        for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            match k {
                "sentinel-username" => f.sentinel_username = Some(percent_decode(v, "uri")?),
                "sentinel-password" => {
                    f.sentinel_password = Some(percent_decode(v, "uri").map_err(|_| {
                        ParseError::invalid(
                            "sentinel-password",
                            "the Sentinel password has an invalid %-escape",
                        )
                    })?)
                }
                // Not echoed: a query may hold a password.
                _ => {
                    return Err(bad(
                        "unknown query key; valid: sentinel-username, sentinel-password",
                    ))
                }
            }
        }
        let (nodes, path) = hostpart.split_once('/').unwrap_or((hostpart, ""));
        let default_port = if sentinel {
            DEFAULT_SENTINEL_PORT
        } else {
            DEFAULT_PORT
        };
        let nodes = parse_node_list(nodes, default_port)?;
        if sentinel {
            let (master, db) = path.split_once('/').unwrap_or((path, ""));
            if master.is_empty() {
                return Err(bad(
                    "name the master after the sentinels: redis+sentinel://h1,h2,h3/mymaster",
                ));
            }
            f.master_name = Some(percent_decode(master, "uri")?);
            if !db.is_empty() {
                f.db = Some(parse_db(db)?);
            }
            f.sentinels = Some(nodes);
        } else {
            if !path.is_empty() {
                return Err(bad(
                    "a cluster has no db or path: redis+cluster://h1:7000,h2:7001",
                ));
            }
            f.cluster_nodes = Some(nodes);
        }
        Ok(f)
    }
}

/// `user[:password]`, both %-decoded; empty parts are absent. Errors never echo the text.
fn parse_userinfo(userinfo: &str) -> Parsed<(Option<String>, Option<String>)> {
    let (user, pass) = match userinfo.split_once(':') {
        Some((u, p)) => (u, Some(p)),
        None => (userinfo, None),
    };
    let user = percent_decode(user, "username")?;
    let pass = pass
        .map(|p| percent_decode(p, "password"))
        .transpose()
        .map_err(|_| ParseError::invalid("password", "the password has an invalid %-escape"))?;
    Ok((
        Some(user).filter(|u| !u.is_empty()),
        pass.filter(|p| !p.is_empty()),
    ))
}

/// `host[:port]` or `[v6][:port]`; either part may be absent.
fn parse_authority(authority: &str) -> Parsed<(Option<String>, Option<u16>)> {
    let bad = |why: &str| ParseError::invalid("host", why);
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (host, after) = v6
            .split_once(']')
            .ok_or_else(|| bad("unclosed '[' in an IPv6 host"))?;
        match after {
            "" => (host, None),
            p => (
                host,
                Some(
                    p.strip_prefix(':')
                        .ok_or_else(|| bad("unexpected text after the IPv6 host"))?,
                ),
            ),
        }
    } else {
        match authority.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        }
    };
    let host = match host {
        "" => None,
        h => Some(percent_decode(h, "host")?),
    };
    let port = port.map(parse_port_text).transpose()?;
    Ok((host, port))
}

/// `h1[:p1],h2[:p2],...`: at least one node, each with a host. Also the value of the map keys
/// `sentinels` and `cluster-nodes`.
pub(super) fn parse_node_list(list: &str, default_port: u16) -> Parsed<Vec<(String, u16)>> {
    let mut nodes = Vec::new();
    for item in list.split(',').map(str::trim) {
        if item.contains(['/', '@']) {
            // Not echoed: a node written as a URI may hold credentials.
            return Err(ParseError::invalid(
                "host",
                "every node is host:port, as in h1:26379,h2:26379, without a scheme, path or credentials",
            ));
        }
        let (host, port) = parse_authority(item)?;
        let host = host.ok_or_else(|| {
            ParseError::invalid("host", "every node needs a host, as in h1:26379,h2:26379")
        })?;
        nodes.push((host, port.unwrap_or(default_port)));
    }
    Ok(nodes)
}

fn parse_port_text(text: &str) -> Parsed<u16> {
    match text.parse::<u32>() {
        Ok(p) if (1..=65535).contains(&p) => Ok(p as u16),
        _ => Err(ParseError::invalid(
            "port",
            "port must be a number between 1 and 65535",
        )),
    }
}

fn parse_db(text: &str) -> Parsed<i64> {
    match text.parse::<i64>() {
        Ok(db) if (0..=i32::MAX as i64).contains(&db) => Ok(db),
        _ => Err(ParseError::invalid(
            "db",
            "db must be a non-negative integer",
        )),
    }
}

fn percent_decode(text: &str, arg: &'static str) -> Parsed<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| {
                    ParseError::invalid(arg, format!("invalid %-escape in the {arg}"))
                })?;
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out)
        .map_err(|_| ParseError::invalid(arg, format!("the {arg} is not UTF-8 once %-decoded")))
}

/// A URI fit for a message. The user info and the query, which may hold a password, become
/// `***`; so do a port or db that is not one, since that is where a password lands when the `@`
/// was forgotten (`redis://:secret`).
pub(super) fn redact_uri(uri: &str) -> String {
    let Some((scheme, rest)) = uri.split_once("://") else {
        return "***".to_owned();
    };
    let (user, rest) = match rest.rfind('@') {
        // An '@' after a '?' may be inside a query's password: nothing after it is safe to show.
        Some(i) if rest[..i].contains(['?', '#']) => return format!("{scheme}://***"),
        Some(i) => ("***@", &rest[i + 1..]),
        None => ("", rest),
    };
    let (rest, query) = match rest.split_once(['?', '#']) {
        Some((before, _)) => (before, "?***"),
        None => (rest, ""),
    };
    if scheme.ends_with("unix") {
        return format!("{scheme}://{user}{rest}{query}");
    }
    let (authority, path) = match rest.split_once('/') {
        Some((a, p)) => (a, Some(p)),
        None => (rest, None),
    };
    let port_at = if authority.starts_with('[') {
        authority.find("]:").map(|i| i + 1)
    } else {
        authority.find(':')
    };
    let authority = match port_at {
        Some(i) if parse_port_text(&authority[i + 1..]).is_err() => {
            format!("{}:***", &authority[..i])
        }
        _ => authority.to_owned(),
    };
    let path = match path {
        Some(p) if !p.is_empty() && parse_db(p).is_err() => "/***".to_owned(),
        Some(p) => format!("/{p}"),
        None => String::new(),
    };
    format!("{scheme}://{user}{authority}{path}{query}")
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::super::tests::{invalid_message, tcp};
    use crate::connspec::{Address, ConnSpec};

    #[test]
    fn uri_defaults() {
        let spec = ConnSpec::from_uri("redis://").unwrap();
        assert_eq!(tcp(&spec), ("127.0.0.1", 6379));
        assert_eq!(spec.db(), 0);
        assert!(!spec.tls());
        assert_eq!(spec.connect_timeout(), Duration::from_millis(4000));
        assert_eq!(spec.read_timeout(), Duration::from_millis(4000));
        assert_eq!(spec.key_prefix(), "dibs:");
    }

    #[test]
    fn uri_full_with_awkward_password() {
        let spec = ConnSpec::from_uri("rediss://app:p@ss:w/rd#1@cache.local:6380/3").unwrap();
        assert_eq!(tcp(&spec), ("cache.local", 6380));
        assert!(spec.tls());
        assert_eq!(spec.username(), Some("app"));
        assert_eq!(spec.password(), Some("p@ss:w/rd#1"));
        assert_eq!(spec.db(), 3);
    }

    #[test]
    fn uri_percent_decoding_and_aliases() {
        let spec = ConnSpec::from_uri("valkeys://us%65r:p%40%3A@h").unwrap();
        assert!(spec.tls());
        assert_eq!(spec.username(), Some("user"));
        assert_eq!(spec.password(), Some("p@:"));
        let spec = ConnSpec::from_uri("valkey://:secret@[::1]:7000").unwrap();
        assert_eq!(tcp(&spec), ("::1", 7000));
        assert_eq!(spec.username(), None);
        assert_eq!(spec.password(), Some("secret"));
        assert_eq!(spec.endpoint(), "[::1]:7000");
    }

    #[test]
    fn uri_unix_socket() {
        let spec =
            ConnSpec::from_uri("redis+unix:///run/redis/redis.sock?db=2&pass=x%26y").unwrap();
        assert_eq!(
            spec.address(),
            &Address::Unix("/run/redis/redis.sock".into())
        );
        assert_eq!(spec.db(), 2);
        assert_eq!(spec.password(), Some("x&y"));
        let spec = ConnSpec::from_uri("unix:///tmp/r.sock").unwrap();
        assert_eq!(spec.address(), &Address::Unix("/tmp/r.sock".into()));
    }

    #[test]
    fn uri_tls_topologies_and_the_sentinels_own_credentials() {
        let spec = ConnSpec::from_uri(
            "rediss+sentinel://app:m%40ster@s1:5000,s2/cache/2?sentinel-username=watch&sentinel-password=s%40nt",
        )
        .unwrap();
        assert!(spec.tls());
        assert_eq!(
            spec.address(),
            &Address::Sentinel {
                sentinels: vec![("s1".into(), 5000), ("s2".into(), 26379)],
                master: "cache".into()
            }
        );
        assert_eq!(spec.db(), 2);
        assert_eq!(
            (spec.username(), spec.password()),
            (Some("app"), Some("m@ster"))
        );
        assert_eq!(spec.sentinel_username(), Some("watch"));
        assert!(spec.has_sentinel_password());
        let debug = format!("{spec:?}");
        assert!(
            !debug.contains("s@nt") && !debug.contains("m@ster"),
            "{debug}"
        );
        // A '?' in the master's password is its own, not a query.
        let spec = ConnSpec::from_uri("redis+sentinel://:a?b@s1/m").unwrap();
        assert_eq!(spec.password(), Some("a?b"));
        assert!(!spec.has_sentinel_password());

        for scheme in ["rediss+cluster", "valkeys+cluster"] {
            let spec = ConnSpec::from_uri(&format!("{scheme}://n1:7000,n2:7001")).unwrap();
            assert!(spec.tls(), "{scheme}");
            assert!(matches!(spec.address(), Address::Cluster { .. }));
        }
        assert!(ConnSpec::from_uri("valkeys+sentinel://s1/m").unwrap().tls());
        // Empty is none, as Spring's `${SENTINEL_PASSWORD:}` gives it.
        let empty = ConnSpec::from_uri("redis+sentinel://s1/m?sentinel-password=").unwrap();
        assert!(!empty.has_sentinel_password());
        assert!(!ConnSpec::from_uri("redis+sentinel://s1/m").unwrap().tls());

        for (uri, fragment) in [
            ("redis+sentinel://s1/m?sentinel-password=a@b", "as %40"),
            ("redis+sentinel://s1/m?Sentinel-Password=a@b", "as %40"),
            ("redis+sentinel://s1/m?password=x", "unknown query key"),
            (
                "redis+sentinel://s1/m?sentinel-username=u",
                "needs 'sentinel-password'",
            ),
            ("redis+cluster://n1?sentinel-password=x", "query parameters"),
        ] {
            let message = invalid_message(ConnSpec::from_uri(uri));
            assert!(message.contains(fragment), "{uri}: {message}");
            // Neither side of an '@' in a query's password shows.
            assert!(
                !message.contains("a@") && !message.contains("@b"),
                "{message}"
            );
        }
    }

    #[test]
    fn uri_errors_name_the_problem_and_hide_the_password() {
        for (uri, fragment) in [
            ("localhost:6379", "expected scheme://"),
            ("http://h", "unknown scheme 'http'"),
            ("redis://h:0", "between 1 and 65535"),
            ("redis://h:70000", "between 1 and 65535"),
            ("redis://h:port", "between 1 and 65535"),
            ("redis://h/abc", "db must be a non-negative integer"),
            ("redis://h/-1", "db must be a non-negative integer"),
            ("redis://h/0?x=1", "query parameters"),
            ("redis://[::1", "unclosed"),
            ("unix://relative.sock", "absolute"),
            ("redis://u:%zz@h", "invalid %-escape"),
        ] {
            let message = invalid_message(ConnSpec::from_uri(uri));
            assert!(message.contains(fragment), "{uri}: {message}");
        }
        let message = invalid_message(ConnSpec::from_uri("redis://u:hunter2@h:99999"));
        assert!(!message.contains("hunter2"), "{message}");
    }
}

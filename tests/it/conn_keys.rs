//! The conn keys exist once, in `dibs::CONN_KEYS`: this fails when the guide's table, the
//! typed options or the Spring starter name a key the list does not, or leave out one it does.
//! `DIBS_WRITE_CONN_KEYS=1 cargo test -p dibs --test conn_keys` rewrites the guide's table.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use dibs::CONN_KEYS;

const BEGIN: &str =
    "<!-- conn-keys: begin (generated from dibs::CONN_KEYS by tests/it/conn_keys.rs) -->";
const END: &str = "<!-- conn-keys: end -->";

/// Keys `DibsOptions.Builder` leaves out, and why.
const NOT_IN_OPTIONS: &[(&str, &str)] = &[(
    "timeout-ms",
    "connectTimeout and readTimeout set its two halves",
)];

/// Keys the Spring starter has no property for, and why.
const NOT_IN_STARTER: &[(&str, &str)] = &[
    (
        "timeout-ms",
        "spring.data.redis.timeout and connect-timeout set its two halves",
    ),
    (
        "idle-timeout-ms",
        "Boot's Redis properties have none; the 60 s default holds",
    ),
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &str) -> String {
    fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn all_keys() -> BTreeSet<&'static str> {
    CONN_KEYS.iter().map(|k| k.name).collect()
}

fn table() -> String {
    let mut out = String::from("| key | takes | sets |\n|---|---|---|\n");
    for k in CONN_KEYS {
        out += &format!("| `{}` | {} | {} |\n", k.name, k.takes, k.sets);
    }
    out
}

/// The quoted conn-key-like strings of `text` (lower case and hyphens) followed by a comma, and
/// preceded by `opening` (`put(` for the builder's keys; any for a map's): the keys of
/// `put("key", ...)` and of `Map.entry("key", ...)`, not the values after them.
fn quoted_keys(text: &str, opening: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for (i, _) in text.match_indices("\",") {
        let open = text[..i].rfind('"').expect("an opening quote");
        let word = &text[open + 1..i];
        if !word.is_empty()
            && text[..open].ends_with(opening)
            && word.starts_with(|c: char| c.is_ascii_lowercase())
            && word.chars().all(|c| c.is_ascii_lowercase() || c == '-')
        {
            found.insert(word.to_owned());
        }
    }
    found
}

fn between<'t>(text: &'t str, from: &str, to: &str) -> &'t str {
    let start = text.find(from).unwrap_or_else(|| panic!("no {from:?}"));
    let end = start
        + text[start..]
            .find(to)
            .unwrap_or_else(|| panic!("no {to:?}"));
    &text[start..end]
}

/// `named` must be exactly the conn keys less `left_out`.
fn check(where_: &str, named: &BTreeSet<String>, left_out: &[(&str, &str)]) {
    let left_out: BTreeSet<&str> = left_out.iter().map(|(k, _)| *k).collect();
    let unknown: Vec<_> = named
        .iter()
        .filter(|k| !all_keys().contains(k.as_str()))
        .collect();
    assert!(
        unknown.is_empty(),
        "{where_} names keys dibs::CONN_KEYS does not: {unknown:?}"
    );
    let missing: Vec<_> = all_keys()
        .into_iter()
        .filter(|k| !named.contains(*k) && !left_out.contains(k))
        .collect();
    assert!(
        missing.is_empty(),
        "{where_} leaves out the conn keys {missing:?}: add them there, or to its list of keys left out, with the reason"
    );
}

#[test]
fn the_guide_shows_the_table_of_every_conn_key() {
    let path = root().join("docs/guide.md");
    let text = read("docs/guide.md");
    let (head, rest) = text
        .split_once(BEGIN)
        .expect("docs/guide.md has the conn-keys markers");
    let (current, tail) = rest
        .split_once(END)
        .expect("docs/guide.md has the end marker");
    let wanted = table();
    if std::env::var_os("DIBS_WRITE_CONN_KEYS").is_some() {
        fs::write(&path, format!("{head}{BEGIN}\n{wanted}{END}{tail}")).unwrap();
        return;
    }
    assert_eq!(
        current.trim_start_matches('\n'),
        wanted,
        "docs/guide.md's table of conn keys differs from dibs::CONN_KEYS: run \
         DIBS_WRITE_CONN_KEYS=1 cargo test -p dibs --test conn_keys"
    );
}

#[test]
fn the_typed_options_set_every_conn_key() {
    let text = read("java/src/main/java/dibs/DibsOptions.java");
    let builder = between(
        &text,
        "public static final class Builder",
        "public DibsOptions build()",
    );
    let named = quoted_keys(builder, "put(");
    check("DibsOptions.Builder", &named, NOT_IN_OPTIONS);
}

#[test]
fn the_spring_starter_has_a_property_for_every_conn_key() {
    let text = read("dibs-spring-boot-starter/src/main/java/dibs/spring/RedisSettings.java");
    let maps = between(&text, "CONNECTION_PROPERTY = ", "private final String url;");
    let named = quoted_keys(maps, "");
    check("the starter's RedisSettings", &named, NOT_IN_STARTER);
}

#[test]
fn the_key_lists_left_out_name_conn_keys() {
    for (key, _) in NOT_IN_OPTIONS.iter().chain(NOT_IN_STARTER) {
        assert!(all_keys().contains(key), "{key} is no conn key");
    }
    assert!(Path::new(&root().join("docs/guide.md")).exists());
}

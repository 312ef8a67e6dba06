//! Decodes a Java `Map` that `dibs.ConnCache` flattened into typed tokens: triples of key, tag,
//! value. Tags: `s` string, `i` integer, `b` boolean, `n` null, `x` another type (the value is its
//! class name), `m` nested map (the value counts its direct entries, whose triples follow it). Java only flattens;
//! the core decides what is valid.

use dibs_core::{Error, SpecValue};

use crate::border::ConnToken;

pub(super) fn decode(tokens: &[String]) -> Result<Vec<(String, SpecValue)>, Error> {
    let mut at = 0;
    let entries = decode_entries(tokens, &mut at, usize::MAX, 0)?;
    if at != tokens.len() {
        return Err(malformed("trailing tokens"));
    }
    Ok(entries)
}

fn decode_entries(
    tokens: &[String],
    at: &mut usize,
    count: usize,
    depth: usize,
) -> Result<Vec<(String, SpecValue)>, Error> {
    if depth > 4 {
        return Err(Error::InvalidArgument {
            arg: "conn",
            message: "conn maps nest at most two levels ({pool, spec})".into(),
        });
    }
    let mut entries = Vec::new();
    while entries.len() < count && *at < tokens.len() {
        let [key, tag, value] = tokens
            .get(*at..*at + 3)
            .ok_or_else(|| malformed("incomplete triple"))?
        else {
            unreachable!()
        };
        *at += 3;
        let token = tag.parse().ok().and_then(ConnToken::from_code);
        let value = match token.ok_or_else(|| malformed("unknown tag"))? {
            ConnToken::Str => SpecValue::Str(value.clone()),
            ConnToken::Int => value
                .parse()
                .map(SpecValue::Int)
                .unwrap_or_else(|_| SpecValue::Other(format!("integer {value} (out of range)"))),
            ConnToken::Bool => SpecValue::Bool(value == "true"),
            ConnToken::Null => SpecValue::Null,
            ConnToken::Other => SpecValue::Other(value.clone()),
            ConnToken::Map => {
                let n = value.parse().map_err(|_| malformed("bad map size"))?;
                SpecValue::Map(decode_entries(tokens, at, n, depth + 1)?)
            }
        };
        entries.push((key.clone(), value));
    }
    if count != usize::MAX && entries.len() != count {
        return Err(malformed("map shorter than its size"));
    }
    Ok(entries)
}

fn malformed(what: &str) -> Error {
    // Only a mismatch between dibs's own Java and Rust halves can get here.
    Error::InvalidArgument {
        arg: "conn",
        message: format!("malformed conn map tokens from the Java side: {what}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tokens, each tag written as a letter (s, i, b, n, m, x: as the codes' names begin) and
    /// turned into its code; any other text as it is.
    fn t(tokens: &[&str]) -> Vec<String> {
        tokens
            .iter()
            .enumerate()
            .map(|(i, s)| match (i % 3, *s) {
                (1, "s") => ConnToken::Str.code().to_string(),
                (1, "i") => ConnToken::Int.code().to_string(),
                (1, "b") => ConnToken::Bool.code().to_string(),
                (1, "n") => ConnToken::Null.code().to_string(),
                (1, "m") => ConnToken::Map.code().to_string(),
                (1, "x") => ConnToken::Other.code().to_string(),
                _ => s.to_string(),
            })
            .collect()
    }

    #[test]
    fn decodes_nested_maps_and_types() {
        let tokens = t(&[
            ":pool", "m", "0", ":spec", "m", "3", "host", "s", "h", "port", "i", "6380", "ssl",
            "b", "false", "password", "n", "",
        ]);
        let entries = decode(&tokens).unwrap();
        assert_eq!(entries.len(), 3);
        assert_eq!(entries[0], (":pool".into(), SpecValue::Map(vec![])));
        let SpecValue::Map(spec) = &entries[1].1 else {
            panic!()
        };
        assert_eq!(spec[1], ("port".into(), SpecValue::Int(6380)));
        assert_eq!(spec[2], ("ssl".into(), SpecValue::Bool(false)));
        assert_eq!(entries[2], ("password".into(), SpecValue::Null));
    }

    #[test]
    fn rejects_malformed_tokens() {
        for tokens in [
            t(&["a", "s"]),
            t(&["a", "q", "v"]),
            t(&["a", "m", "2", "b", "s", "c"]),
        ] {
            assert!(decode(&tokens).is_err(), "{tokens:?}");
        }
        assert!(decode(&[String::from("a"), String::from("9"), String::from("v")]).is_err());
        let deep: Vec<String> = (0..10).flat_map(|_| t(&["k", "m", "1"])).collect();
        assert!(decode(&deep).is_err());
    }
}

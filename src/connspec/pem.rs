//! PEM material that a spec names: a file, read when a locker is made, or the text itself (the
//! `-pem` keys), given in memory so that a private key need never touch the disk.

use std::borrow::Cow;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use super::parse_error::ParseError;
use crate::error::{Error, Result};

/// A CA bundle, a certificate chain or a private key, in PEM.
#[derive(Clone, PartialEq, Eq, Hash)]
pub enum Pem {
    /// The path of a PEM file.
    File(PathBuf),
    /// The PEM text itself; never shown, as it may be a private key.
    Text(Arc<str>),
}

impl Pem {
    /// A value of the key `key` (a path) or `key-pem` (the text), checked for its form: a path
    /// that is PEM text, or text that is no PEM, is refused without quoting it.
    pub(super) fn parse(key: &'static str, value: String) -> std::result::Result<Pem, ParseError> {
        let text = value.contains("-----BEGIN ");
        match key.strip_suffix("-pem") {
            Some(path_key) if !text => Err(ParseError::invalid(
                key,
                format!("'{key}' takes PEM text (-----BEGIN ...); for a file, use '{path_key}'"),
            )),
            Some(_) => Ok(Pem::Text(value.into())),
            None if text => Err(ParseError::invalid(
                key,
                format!("'{key}' takes a file's path; for PEM text, use '{key}-pem'"),
            )),
            None => Ok(Pem::File(PathBuf::from(value))),
        }
    }

    /// Puts the value of `key` (`NAME` or `NAME-pem`) in `slot`, which one of the two may fill.
    pub(super) fn set(
        slot: &mut Option<Pem>,
        key: &'static str,
        value: Option<String>,
    ) -> std::result::Result<(), ParseError> {
        let Some(value) = value else {
            return Ok(());
        };
        if slot.is_some() {
            let name = key.strip_suffix("-pem").unwrap_or(key);
            return Err(ParseError::invalid(
                key,
                format!("'{name}' and '{name}-pem' are two forms of one value: give one"),
            ));
        }
        *slot = Some(Pem::parse(key, value)?);
        Ok(())
    }

    /// How a message names it, as given to `key`: `'key' PATH`, or `'key-pem'`, never the text.
    pub(crate) fn named(&self, key: &str) -> String {
        match self {
            Pem::File(path) => format!("'{key}' {}", path.display()),
            Pem::Text(_) => format!("'{key}-pem'"),
        }
    }

    /// The PEM bytes: the file's, read now, or the text's. `arg` names the key in an error.
    pub(crate) fn bytes(&self, arg: &'static str) -> Result<Cow<'_, [u8]>> {
        match self {
            Pem::File(path) => std::fs::read(path).map(Cow::Owned).map_err(|e| {
                Error::invalid(arg, format!("cannot read '{arg}' {}: {e}", path.display()))
            }),
            Pem::Text(text) => Ok(Cow::Borrowed(text.as_bytes())),
        }
    }
}

/// The path, or the text's length only.
impl fmt::Debug for Pem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Pem::File(path) => f.debug_tuple("File").field(path).finish(),
            Pem::Text(text) => write!(f, "Text(<{} bytes>)", text.len()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str =
        "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIA==\n-----END PRIVATE KEY-----\n";

    #[test]
    fn a_path_and_a_text_each_go_to_their_own_key_and_neither_is_quoted() {
        assert_eq!(
            Pem::parse("client-key", "/k.pem".into()).unwrap(),
            Pem::File("/k.pem".into())
        );
        let text = Pem::parse("client-key-pem", KEY.into()).unwrap();
        assert_eq!(&*text.bytes("client-key").unwrap(), KEY.as_bytes());
        assert_eq!(text.named("client-key"), "'client-key-pem'");
        assert!(!format!("{text:?}").contains("MC4C"), "{text:?}");
        let refused = |key, value: &str| Error::from(Pem::parse(key, value.into()).unwrap_err());
        let path_as_text = refused("client-key-pem", "/k.pem").to_string();
        assert!(path_as_text.contains("use 'client-key'"), "{path_as_text}");
        let text_as_path = refused("client-key", KEY).to_string();
        assert!(!text_as_path.contains("MC4C"), "{text_as_path}");
        assert!(text_as_path.contains("'client-key-pem'"), "{text_as_path}");
    }
}

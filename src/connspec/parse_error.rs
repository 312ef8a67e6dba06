//! Why a spec was refused: [`ParseError`], which the URI and map parsers and [`Fields::build`]
//! report, and the one place it becomes an [`Error::InvalidArgument`].
//!
//! [`Fields::build`]: super::fields::Fields::build

use crate::error::Error;

/// Why a spec was refused, as both parsers and the build step report it. It becomes an
/// [`Error::InvalidArgument`] in one place, the `From` below.
#[derive(Debug)]
pub(super) enum ParseError {
    /// `arg` is wrong; `message` says how, and names it.
    Invalid { arg: &'static str, message: String },
    /// A URI that does not parse: `shown` is the URI redacted, `reason` what is wrong with it.
    Uri { shown: String, reason: String },
    /// A map key whose value does not parse, and why.
    Key { key: &'static str, reason: String },
}

pub(super) type Parsed<T> = std::result::Result<T, ParseError>;

impl ParseError {
    pub(super) fn invalid(arg: &'static str, message: impl Into<String>) -> ParseError {
        ParseError::Invalid {
            arg,
            message: message.into(),
        }
    }

    /// The argument named, and the whole message.
    fn into_parts(self) -> (&'static str, String) {
        match self {
            ParseError::Invalid { arg, message } => (arg, message),
            ParseError::Uri { shown, reason } => {
                ("uri", format!("invalid conn URI '{shown}': {reason}"))
            }
            ParseError::Key { key, reason } => (key, format!("'{key}': {reason}")),
        }
    }

    /// The message alone, to become the reason of an enclosing error.
    pub(super) fn reason(self) -> String {
        self.into_parts().1
    }
}

impl From<ParseError> for Error {
    fn from(e: ParseError) -> Error {
        let (arg, message) = e.into_parts();
        Error::InvalidArgument { arg, message }
    }
}

//! [`Refusal`]: the one error type of the console's actions.

/// Why a key cannot apply now: the status line shows it as a refusal (`StatusKind::Refusal`). Every
/// action of the reducer answers `Result<_, Refusal>`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Refusal(pub String);

impl Refusal {
    /// A refusal that says `why` (a value the operator typed that does not parse).
    pub fn of(why: impl std::fmt::Display) -> Refusal {
        Refusal(why.to_string())
    }
}

impl From<String> for Refusal {
    fn from(why: String) -> Refusal {
        Refusal(why)
    }
}

impl From<&str> for Refusal {
    fn from(why: &str) -> Refusal {
        Refusal(why.to_string())
    }
}

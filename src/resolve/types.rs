//! What every format resolver takes and gives, below them all: the answer for one
//! address ([`Symbolized`]), why a module could not be loaded ([`LoadError`]), and what a
//! resolver is told about the file it loads ([`LoadContext`], [`Companion`]). The formats
//! import these from here, not from the `Module` dispatch above them.

use std::path::{Path, PathBuf};
use std::rc::Rc;

/// A name or path in an answer: shared, since the same function and file come back for
/// many addresses (and stay in each module's memo of answers).
pub type Text = Rc<str>;

/// One inlined frame, innermost first in [`Symbolized::inlines`].
#[derive(Debug, Clone, PartialEq)]
pub struct InlineFrame {
    pub function: Option<Text>,
    pub file: Option<Text>,
    pub line: Option<u32>,
}

/// What one address resolves to.
#[derive(Debug, Clone, PartialEq)]
pub struct Symbolized {
    /// The outer (not inlined) function.
    pub function: Text,
    /// Address minus the start of the function (or of its part holding the address, when
    /// that part lies before the entry, as gcc's `.cold` parts do).
    pub function_offset: u64,
    pub function_size: Option<u64>,
    /// File and line in the outer function (the call site when there are inlines).
    pub file: Option<Text>,
    pub line: Option<u32>,
    pub inlines: Vec<InlineFrame>,
}

/// The kinds, each once: the enum, [`LoadErrorKind::ALL`] and the names come from this
/// one list.
macro_rules! load_error_kinds {
    ($($(#[$doc:meta])* $kind:ident => $name:literal,)*) => {
        /// What kind of failure a [`LoadError`] is. Each kind has the name the
        /// `/symbolicate/v5` answer gives it in `module_errors` ([`Self::name`]): the
        /// front-end and scripts see those names, so they never change.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum LoadErrorKind {
            $($(#[$doc])* $kind,)*
        }

        impl LoadErrorKind {
            /// Every kind, for tests.
            pub const ALL: &[LoadErrorKind] = &[$(LoadErrorKind::$kind,)*];

            /// The name in `module_errors` (and in stderr lines).
            pub fn name(self) -> &'static str {
                match self {
                    $(LoadErrorKind::$kind => $name,)*
                }
            }
        }
    };
}

load_error_kinds! {
    CacheRefused => "CacheRefused",
    DebugLinkCrcMismatch => "DebugLinkCrcMismatch",
    DecompressionLimit => "DecompressionLimit",
    DownloadPending => "DownloadPending",
    DyldCacheError => "DyldCacheError",
    InvalidDebugId => "InvalidDebugId",
    InvalidDebugName => "InvalidDebugName",
    MiniDebugInfo => "MiniDebugInfo",
    MissingSupplementaryFile => "MissingSupplementaryFile",
    /// A module's symbol names pass their cap ([`symnames`]).
    NameLimit => "NameLimit",
    NoCandidates => "NoCandidates",
    NoHttpClient => "NoHttpClient",
    NoMatchMultiArch => "NoMatchMultiArch",
    NotFound => "NotFound",
    ObjectModified => "ObjectModified",
    ObjectNotFound => "ObjectNotFound",
    ParseError => "ParseError",
    /// A path named by the profile or a debug file that is never looked at (UNC,
    /// device, `/net`: [`crate::shared::pathname::refused_from_outside`]).
    PathRefused => "PathRefused",
    /// A parser panicked on the file (see [`LoadError::from_panic`]): named `ParseError`
    /// in answers, but the file is never parsed again.
    ParserPanic => "ParseError",
    ReadError => "ReadError",
    ServerDown => "ServerDown",
    SidecarError => "SidecarError",
    UnknownFormat => "UnknownFormat",
    UnmatchedDebugId => "UnmatchedDebugId",
    UnsupportedFormat => "UnsupportedFormat",
    ZipError => "ZipError",
}

impl LoadErrorKind {
    /// No file was there to try (as opposed to one that could not be used).
    pub fn is_absence(self) -> bool {
        matches!(self, LoadErrorKind::NotFound | LoadErrorKind::NoCandidates)
    }

    /// A file of another build was there (the profile is older than the build).
    pub fn is_other_build(self) -> bool {
        matches!(
            self,
            LoadErrorKind::UnmatchedDebugId | LoadErrorKind::NoMatchMultiArch
        )
    }

    /// `NotFound` or `ReadError` for a failure to open a file.
    pub fn of_io(e: &std::io::Error) -> LoadErrorKind {
        if e.kind() == std::io::ErrorKind::NotFound {
            LoadErrorKind::NotFound
        } else {
            LoadErrorKind::ReadError
        }
    }
}

impl std::fmt::Display for LoadErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a candidate file could not be used.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadError {
    pub kind: LoadErrorKind,
    pub message: String,
    /// For [`LoadErrorKind::UnmatchedDebugId`]: the debug ID the file has, when known.
    pub found_id: Option<crate::shared::debugid::DebugId>,
}

impl LoadError {
    /// What a panic inside a format's code becomes: an error of that module alone.
    pub fn from_panic(what: &str, payload: &(dyn std::any::Any + Send)) -> LoadError {
        LoadError::msg(
            LoadErrorKind::ParserPanic,
            format!(
                "{what}: the parser failed on this file ({})",
                panic_message(payload)
            ),
        )
    }

    /// Whether this error stands for a parser's panic (the file is not parsed again).
    pub fn is_parser_panic(&self) -> bool {
        matches!(self.kind, LoadErrorKind::ParserPanic)
    }

    /// An error about the file at `path`: `path: problem`.
    pub fn new(kind: LoadErrorKind, path: &Path, problem: impl std::fmt::Display) -> LoadError {
        LoadError::msg(kind, format!("{}: {problem}", path.display()))
    }

    /// An error with a message of its own.
    pub fn msg(kind: LoadErrorKind, message: String) -> LoadError {
        LoadError {
            kind,
            message,
            found_id: None,
        }
    }
}

/// A panic's payload as text (`&str` and `String` payloads; others are "unknown panic").
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// A file that completes a module, which the format names and the store finds.
#[derive(Debug, Clone, Copy)]
pub enum Companion<'a> {
    /// A separate ELF debug file by build ID (lower-case hex).
    BuildId(&'a str),
    /// The file a `.gnu_debuglink` names.
    DebugLink(&'a str),
    /// A dwz supplementary file: the path `.gnu_debugaltlink` names (absolute, or relative
    /// to the debug file) and its build ID (lower-case hex), which the format checks.
    Supplementary { path: &'a str, build_id: &'a str },
    /// An object file (or archive) a Mach-O debug map names, as recorded there.
    OsoObject(&'a str),
    /// A PE's PDB: its file name, the path the CodeView record gives, and the debug ID.
    Pdb {
        name: &'a str,
        recorded: &'a str,
        id: &'a crate::shared::debugid::DebugId,
    },
}

/// Where a companion file may be, in order; the store's answer.
pub type CompanionPaths<'a> = dyn Fn(&Path, Companion<'_>) -> Vec<PathBuf> + 'a;

/// What a resolver is told about the file being loaded.
#[derive(Clone, Copy)]
pub struct LoadContext<'a> {
    pub path: &'a Path,
    /// Given the binary's path and a companion, the paths to try.
    pub companions: &'a CompanionPaths<'a>,
    pub verbose: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_keeps_its_json_name() {
        // The names the front-end and scripts see in `module_errors`: never renamed.
        let names: Vec<&str> = LoadErrorKind::ALL.iter().map(|k| k.name()).collect();
        assert_eq!(
            names,
            [
                "CacheRefused",
                "DebugLinkCrcMismatch",
                "DecompressionLimit",
                "DownloadPending",
                "DyldCacheError",
                "InvalidDebugId",
                "InvalidDebugName",
                "MiniDebugInfo",
                "MissingSupplementaryFile",
                "NameLimit",
                "NoCandidates",
                "NoHttpClient",
                "NoMatchMultiArch",
                "NotFound",
                "ObjectModified",
                "ObjectNotFound",
                "ParseError",
                "PathRefused",
                "ParseError",
                "ReadError",
                "ServerDown",
                "SidecarError",
                "UnknownFormat",
                "UnmatchedDebugId",
                "UnsupportedFormat",
                "ZipError",
            ]
        );
        for &k in LoadErrorKind::ALL {
            // Variant name and JSON name agree, but for the parser's panic.
            if k != LoadErrorKind::ParserPanic {
                assert_eq!(format!("{k:?}"), k.name());
            }
            assert_eq!(k.to_string(), k.name());
        }
    }

    #[test]
    fn a_parser_panic_is_a_parse_error_by_name_only() {
        let payload: Box<dyn std::any::Any + Send> = Box::new("index out of bounds");
        let e = LoadError::from_panic("/x/a.pdb", &*payload);
        assert!(e.is_parser_panic());
        assert_eq!(e.kind.name(), "ParseError");
        assert!(e.message.contains("index out of bounds"), "{}", e.message);
        let other = LoadError::new(
            LoadErrorKind::ParseError,
            Path::new("/x/a.pdb"),
            "the parser failed on this file",
        );
        assert!(!other.is_parser_panic());
    }
}

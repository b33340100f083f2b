//! A module answered from its prepared index ([`super::prepared`]), with its files
//! behind it: what the index does not hold (a compilation directory for `/source/v1`),
//! and every answer once a damaged chunk is found, come from the module opened from its
//! files, as the store would have opened it.

use std::cell::{Cell, OnceCell};

use super::prepared::{INDEXED_END, Memo, Prepared};
use super::types::{LoadError, LoadErrorKind, Symbolized};
use super::{Module, NoEdges};

/// Opens the module from its files (the store's way, with its companions).
pub type Reopen = Box<dyn Fn() -> Result<Module, LoadError>>;

pub struct Indexed {
    pub index: Prepared,
    reopen: Reopen,
    files: OnceCell<Result<Module, LoadError>>,
    /// A chunk of the index did not match its hash: from then on every answer is the
    /// files'.
    broken: Cell<bool>,
    warnings: Vec<LoadError>,
}

impl Indexed {
    pub fn new(index: Prepared, reopen: Reopen) -> Indexed {
        let warnings = index
            .meta
            .warnings
            .iter()
            .map(|(kind, message)| {
                let kind = LoadErrorKind::ALL
                    .iter()
                    .copied()
                    .find(|k| k.name() == kind)
                    .unwrap_or(LoadErrorKind::ParseError);
                LoadError::msg(kind, message.clone())
            })
            .collect();
        Indexed {
            index,
            reopen,
            files: OnceCell::new(),
            broken: Cell::new(false),
            warnings,
        }
    }

    /// The module opened from its files, on first need.
    pub fn files(&self) -> Option<&Module> {
        self.files.get_or_init(|| (self.reopen)()).as_ref().ok()
    }

    /// Whether a damaged chunk was found: the store then writes the index again.
    pub fn is_broken(&self) -> bool {
        self.broken.get()
    }

    /// The debug file the index was built from (`/source/v1` reads it).
    pub fn debug_file(&self) -> Option<&std::path::Path> {
        Some(std::path::Path::new(&self.index.meta.debug_file))
            .filter(|p| !p.as_os_str().is_empty())
    }

    pub fn warnings(&self) -> &[LoadError] {
        &self.warnings
    }

    pub fn lookup_each(&self, offsets: &[u64], found: &mut dyn FnMut(usize, Option<Symbolized>)) {
        let mut from = 0;
        if !self.broken.get() {
            let mut memo = Memo::default();
            // Ascending: those past what the index holds come last, from the files.
            let end = offsets.partition_point(|&o| o < INDEXED_END);
            while from < end {
                match self.index.lookup(offsets[from], &mut memo) {
                    Ok(s) => found(from, s),
                    Err(_) => {
                        crate::log::elog!(
                            "{}: damaged; answering from the debug files, and writing it again",
                            self.index.path.display()
                        );
                        self.broken.set(true);
                        break;
                    }
                }
                from += 1;
            }
        }
        if from < offsets.len() {
            match self.files() {
                Some(m) => m.lookup_each(&offsets[from..], &mut |i, s| found(from + i, s)),
                None => (from..offsets.len()).for_each(|i| found(i, None)),
            }
        }
    }

    /// As the files' module gives them, once the index is found damaged.
    pub fn edge_steps(&self) -> Option<usize> {
        self.files()?.edge_steps()
    }

    pub fn edges_step(&self, k: usize, out: &mut Vec<u64>) -> Result<(), NoEdges> {
        self.files().ok_or(NoEdges::Unreadable)?.edges_step(k, out)
    }

    pub fn cost(&self) -> u64 {
        self.index.cost()
            + self
                .files
                .get()
                .and_then(|m| m.as_ref().ok())
                .map_or(0, |m| m.cost())
    }
}

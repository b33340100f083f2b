//! Format resolvers: turn a module offset into function, file/line and inline frames.
//! One submodule per debug format; [`Module`] is what the symbol store caches.

pub mod breakpad;
pub mod bytes;
pub mod codescan;
pub mod demangle;
pub mod dwarf;
pub mod elf;
pub mod fasthash;
pub mod funcs;
pub mod id;
pub mod indexed;
pub mod macho;
pub mod native;
pub mod open;
pub mod pace;
pub mod pe;
pub mod prepared;
pub mod range;
pub mod section;
pub mod sidecar;
pub mod symnames;
pub mod symtab;
pub mod types;
pub mod unwind;

use std::path::Path;

pub use demangle::demangle;
pub use dwarf::edges::NoEdges;
pub use types::{Companion, LoadContext, LoadError, LoadErrorKind, Symbolized, panic_message};

/// A parsed debug file, ready for lookups; kept in the symbol store's cache.
pub enum Module {
    /// ELF, Mach-O or PE: DWARF, symbol or export tables.
    Native(Box<native::NativeModule>),
    /// A PDB's procedures, lines and inline sites.
    Pdb(Box<pe::PdbModule>),
    /// A Breakpad `.sym` file, indexed.
    Breakpad(breakpad::SymFile),
    /// A module of the profile's `.syms.json` sidecar.
    /// Shared with the store, which keeps the parsed sidecar for the whole run.
    Sidecar(std::rc::Rc<sidecar::SidecarModule>),
    /// Answered from its prepared index, kept from an earlier run.
    Indexed(Box<indexed::Indexed>),
}

impl Module {
    /// Resolves module offsets, which must be sorted ascending (one pass per module).
    pub fn lookup_sorted(&self, offsets: &[u64]) -> Vec<Option<Symbolized>> {
        let mut out = vec![None; offsets.len()];
        self.lookup_each(offsets, &mut |i, s| out[i] = s);
        out
    }

    /// As [`Self::lookup_sorted`], handing each answer to `found` with the index of its
    /// offset, in any order, as soon as it is known: a big request's answers need not all
    /// be held at once.
    pub fn lookup_each(&self, offsets: &[u64], found: &mut dyn FnMut(usize, Option<Symbolized>)) {
        match self {
            Module::Native(m) => m.lookup_each(offsets, found),
            Module::Breakpad(m) => m.lookup_each(offsets, found),
            Module::Pdb(m) => m.lookup_each(offsets, found),
            Module::Indexed(m) => m.lookup_each(offsets, found),
            Module::Sidecar(m) => {
                for (i, &o) in offsets.iter().enumerate() {
                    found(i, m.lookup(o));
                }
            }
        }
    }

    /// Which part of the debug information one pass reads for `offset` (a DWARF unit),
    /// where there is such a part: offsets of one part are best asked together, since a
    /// batch reads each part it touches whole.
    pub fn part_of(&self, offset: u64) -> Option<usize> {
        match self {
            Module::Native(m) => m.part_of(offset),
            Module::Indexed(m) if m.is_broken() => m.files()?.part_of(offset),
            _ => None,
        }
    }

    /// The local debug file behind this module, for serving sources; `None` when the
    /// module came from a Breakpad file or a sidecar (whose paths need not be this
    /// machine's).
    pub fn local_debug_file(&self) -> Option<&Path> {
        match self {
            Module::Native(m) => Some(&m.debug_file),
            Module::Pdb(m) => Some(&m.path),
            Module::Indexed(m) => m.debug_file(),
            Module::Breakpad(_) | Module::Sidecar(_) => None,
        }
    }

    /// The compilation directory of the code at `offset`, where the format records one.
    pub fn comp_dir(&self, offset: u64) -> Option<String> {
        match self {
            Module::Native(m) => m.comp_dir(offset),
            Module::Indexed(m) => m.files()?.comp_dir(offset),
            _ => None,
        }
    }

    /// Problems with companion files of a module that was found nevertheless.
    pub fn warnings(&self) -> &[LoadError] {
        match self {
            Module::Native(m) => &m.warnings,
            Module::Indexed(m) => m.warnings(),
            _ => &[],
        }
    }

    /// Read from a local binary that has no debug information of its own or found beside
    /// it (stripped ELF or Mach-O, a PE without its PDB): its names are `fun_…`, exports
    /// and PLT entries, without files or lines, so better sources are worth asking.
    pub fn lacks_debug_info(&self) -> bool {
        matches!(self, Module::Native(m)
            if m.dwarf.is_none() && m.debug_map.as_ref().is_none_or(|d| !d.has_objects()))
    }

    /// Bytes of its symbol tables' names and entries this module holds on the heap
    /// (part of [`Self::cost`]): the store bounds their total over all cached modules.
    pub fn names_cost(&self) -> u64 {
        match self {
            Module::Native(m) => m.symbols.cost() + m.symbol_names.cost(),
            _ => 0,
        }
    }

    /// Bytes of debug data this module holds in memory (for the cache bound).
    pub fn cost(&self) -> u64 {
        match self {
            Module::Native(m) => m.cost(),
            Module::Pdb(m) => m.cost(),
            Module::Breakpad(m) => m.cost(),
            Module::Sidecar(m) => m.cost(),
            Module::Indexed(m) => m.cost(),
        }
    }

    /// Steps of [`Self::edges_step`] for the prepared index's builder, or `None` for a
    /// module that is not indexed: only DWARF (ELF) and Breakpad modules are. A PDB's
    /// procedures load in a fraction of a second; a sidecar is its own index.
    pub fn edge_steps(&self) -> Option<usize> {
        match self {
            Module::Native(m) => m.edge_steps(),
            Module::Breakpad(m) => Some(m.edge_steps()),
            Module::Indexed(m) if m.is_broken() => m.edge_steps(),
            _ => None,
        }
    }

    /// Pushes the module offsets where an answer may change, for step `k` of
    /// [`Self::edge_steps`] (any order, repeats allowed).
    pub fn edges_step(&self, k: usize, out: &mut Vec<u64>) -> Result<(), NoEdges> {
        match self {
            Module::Native(m) => m.edges_step(k, out),
            Module::Breakpad(m) => {
                m.edges_step(k, out);
                Ok(())
            }
            Module::Indexed(m) => m.edges_step(k, out),
            _ => Err(NoEdges::Unreadable),
        }
    }
}

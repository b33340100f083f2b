//! profiler-symbol-server as a library: the binary (`main.rs`) only calls [`app::main`].
//!
//! Data flows one way, one module per step:
//! [`cli`] (command line) → [`profile`] (the profile file, its libs, the CI rewrite) →
//! [`server`] (HTTP loop, limits, Host/token checks) → [`api`] (one handler per endpoint) →
//! [`store`] (where debug files are looked for, the bounded cache) → [`resolve`] (one
//! module per debug format). [`app`] runs a mode; [`ci`] is the `symbolicate` mode.

mod api;
pub mod app;
mod ci;
mod cli;
mod coldsort;
mod disasm;
mod fs;
mod hint;
mod jsonwrite;
mod log;
mod profile;
mod remote;
mod resolve;
mod server;
mod shared;
mod signals;
mod store;

/// What the fuzz targets (`fuzz/`) and the demangler's differential test
/// (`tests/demangle.rs`, 100 000 names in one process) reach into; not an API. Everything
/// else is private to the crate, so the compiler reports code nothing calls.
#[doc(hidden)]
pub mod internals {
    pub use crate::api::Api;
    pub use crate::profile::read::{Want, read};
    pub use crate::profile::rewrite::{Replacements, rewrite};
    pub use crate::profile::scan::Input;
    pub use crate::resolve::breakpad::SymFile;
    pub use crate::resolve::native::set_one_by_one;
    pub use crate::resolve::{Companion, LoadContext, Module, demangle, open};
    pub use crate::shared::debugid::DebugId;
    pub use crate::store::SymbolStore;
    pub use crate::store::zip::ZipArchive;
}

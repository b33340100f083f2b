//! profiler-symbol-server as a library: the binary (`main.rs`) only calls [`app::main`].
//!
//! Data flows one way, one module per step:
//! [`cli`] (command line) → [`profile`] (the profile file, its libs, the CI rewrite) →
//! [`server`] (HTTP loop, limits, Host/token checks) → [`api`] (one handler per endpoint) →
//! [`store`] (where debug files are looked for, the bounded cache) → [`resolve`] (one
//! module per debug format). [`app`] runs a mode; [`ci`] is the `symbolicate` mode.

pub mod api;
pub mod app;
pub mod ci;
pub mod cli;
pub mod debugid;
pub mod disasm;
pub mod fs;
pub mod hint;
pub mod jsonwrite;
pub mod log;
pub mod pathname;
pub mod profile;
pub mod remote;
pub mod resolve;
pub mod server;
pub mod signals;
pub mod store;

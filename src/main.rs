//! profiler-symbol-server: see README.md. The work is in the library crate.

fn main() -> std::process::ExitCode {
    profiler_symbol_server::app::main()
}

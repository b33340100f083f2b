//! profiler-symbol-server: see README.md. The work is in the library crate.

// musl's allocator costs the static Linux build speed; dlmalloc (pure Rust) wins it back.
#[cfg(target_env = "musl")]
#[global_allocator]
static ALLOCATOR: dlmalloc::GlobalDlmalloc = dlmalloc::GlobalDlmalloc;

fn main() -> std::process::ExitCode {
    profiler_symbol_server::app::main()
}

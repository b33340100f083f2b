//! profiler-symbol-server: see README.md. This file only wires the steps together.

mod api;
mod app;
mod ci;
mod cli;
mod codefile;
mod debugid;
mod disasm;
mod jsonscan;
mod jsonwrite;
mod libs;
mod profile;
mod resolve;
mod rewrite;
mod server;
mod source;
mod store;
mod zip;

fn main() {
    let args = std::env::args_os().skip(1);
    let code = match cli::parse(args, std::env::var("PROFILER_URL").ok()) {
        Ok(invocation) => app::run(invocation),
        Err(e) => {
            eprintln!("error: {e}\nRun with --help for usage.");
            app::EXIT_USAGE
        }
    };
    std::process::exit(code);
}

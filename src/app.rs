//! Runs one mode of the command line; returns the process exit code.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use crate::api::{Api, Handled};
use crate::cli::{Command, Invocation, ServerOptions, SymbolOptions};
use crate::profile::ProfileFile;
use crate::server::Server;
use crate::store::SymbolStore;

pub const EXIT_OK: u8 = 0;
pub const EXIT_FAILURE: u8 = 1;
pub const EXIT_USAGE: u8 = 2;
/// `symbolicate`: the outputs were written, but none of the profile's addresses got a name.
pub const EXIT_NOTHING_RESOLVED: u8 = 3;

/// The symbol store of a mode. The store never waits for a download: the server loop parks
/// the request and polls, `query` starts every download a request needs before waiting
/// for any (its loop around `Api::handle_or_wait`), `symbolicate` fetches what the
/// profile needs all at once (`SymbolStore::fetch_all`).
fn store(mut opts: SymbolOptions) -> SymbolStore {
    if std::env::var_os("PROFILER_SYMBOL_SERVER_NO_INDEX_CACHE")
        .is_some_and(|v| !v.is_empty() && v != "0")
    {
        opts.index_cache = crate::cli::IndexCacheUse::Off;
    }
    if let Ok(nt) = std::env::var("_NT_SYMBOL_PATH") {
        opts.symbol_path.extend(crate::cli::SymbolPath::parse(&nt));
    }
    let debuginfod = std::env::var("DEBUGINFOD_URLS").ok();
    let mut store = SymbolStore::new(opts);
    store.add_remote_sources(debuginfod.as_deref());
    store
}

/// The whole program: parses the command line, runs the mode, gives the exit status.
pub fn main() -> std::process::ExitCode {
    let args = std::env::args_os().skip(1);
    let code = match crate::cli::parse(args, std::env::var("PROFILER_URL").ok()) {
        Ok(invocation) => run(invocation),
        Err(e) => {
            crate::log::elog!("error: {e}");
            crate::log::elog!("Run with --help for usage.");
            EXIT_USAGE
        }
    };
    std::process::ExitCode::from(code)
}

/// glibc maps big blocks (a request's vectors, its answer's parts) one by one and unmaps
/// them when freed, raising that size bound only as it sees them: the first requests after
/// a big one paid a page fault per 4 KiB they wrote (a repeated 10 000-address answer
/// 12 ms, then 7 ms from the fourth). Fixed bounds keep freed memory for the next request;
/// the heap still gives back what stays free above 64 MiB.
fn steady_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets allocator parameters, under the allocator's own lock.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 64 << 20);
    }
}

pub fn run(inv: Invocation) -> u8 {
    let Invocation { command, symbols } = inv;
    crate::signals::install();
    steady_allocator();
    match command {
        Command::Help(mode) => {
            let _ = std::io::stdout().write_all(crate::cli::help(mode).as_bytes());
            EXIT_OK
        }
        Command::Version => {
            // The platform too: a bug report then says which build it came from.
            crate::log::out!(
                "profiler-symbol-server {} ({} {})",
                env!("CARGO_PKG_VERSION"),
                std::env::consts::OS,
                std::env::consts::ARCH
            );
            EXIT_OK
        }
        Command::Load { profile, server } => run_load(profile, &server, symbols),
        Command::Query { api_path, request } => run_query(api_path, request, symbols),
        Command::Symbolicate {
            profile,
            output,
            sidecar,
        } => run_symbolicate(&profile, output, sidecar, symbols),
    }
}

/// `load`: serves the profile (if any) and the API until Ctrl-C.
fn run_load(profile: Option<PathBuf>, server: &ServerOptions, symbols: SymbolOptions) -> u8 {
    let profile = match profile.as_deref().map(open_profile).transpose() {
        Ok(p) => p,
        Err(code) => return code,
    };
    warn_missing_inputs(&symbols);
    let quiet = symbols.quiet;
    let mut symbols = symbols;
    // The server writes prepared indexes in its idle time (the one-shot modes only read).
    if symbols.index_cache == crate::cli::IndexCacheUse::Read {
        symbols.index_cache = crate::cli::IndexCacheUse::ReadWrite;
    }
    // The server loop never waits for a download: it parks the request.
    let mut store = store(symbols);
    // A sidecar beside the profile answers for modules no local file has.
    if let Some(p) = &profile {
        let sidecar = crate::ci::default_sidecar(&p.path);
        if sidecar.is_file() {
            if !quiet {
                crate::log::elog!(
                    "Using symbols from {} where no local file has them.",
                    sidecar.display()
                );
            }
            store.set_sidecar(sidecar);
        }
    }
    let api = Api::new(store, profile.clone(), quiet);
    let srv = match Server::start(server, profile, api, quiet) {
        Ok(s) => s,
        Err(e) => {
            crate::log::elog!("error: {e}");
            return EXIT_FAILURE;
        }
    };
    // The URL goes out before anything about symbols is read, so the profile
    // shows at once.
    let url = srv.profiler_url();
    if !quiet {
        crate::log::elog!("Local server listening at http://{}", srv.local_addr());
        if let Some(note) = srv.exposure_note() {
            crate::log::elog!("{note}");
        }
    }
    if server.no_open {
        crate::log::out!("{url}");
        let _ = std::io::stdout().flush();
    } else {
        // The token goes in no log line and no command line: the browser gets a
        // private file that redirects to the URL. When no browser opens, the URL
        // goes to stdout (as with --no-open), even with -q: it is the only way in.
        let fallback = url.clone();
        let failed = move |why: String| {
            crate::log::elog!(
                "warning: could not open a browser ({why}); open the URL printed on stdout"
            );
            crate::log::out!("{fallback}");
        };
        match crate::server::open_browser(&url, failed) {
            Ok(file) if !quiet => crate::log::elog!(
                "Opening the profiler in a browser (through {}).",
                file.display()
            ),
            Ok(_) => {}
            Err(e) => {
                crate::log::elog!(
                    "warning: could not open a browser: {e}; open the URL printed on stdout"
                );
                crate::log::out!("{url}");
            }
        }
    }
    if !quiet {
        crate::log::elog!("Press Ctrl-C to stop.");
    }
    srv.run();
    EXIT_OK
}

/// `query`: answers one API request on stdout.
fn run_query(api_path: String, request: Option<PathBuf>, symbols: SymbolOptions) -> u8 {
    let body = match read_request(request.as_deref()) {
        Ok(b) => b,
        Err(e) => {
            crate::log::elog!("error: {e}");
            return EXIT_FAILURE;
        }
    };
    warn_missing_inputs(&symbols);
    let quiet = symbols.quiet;
    // Every download the request needs runs at once; this waits for them.
    let store = store(symbols);
    let waits = store.has_remote();
    let mut api = Api::new(store, None, quiet);
    let path = if api_path.starts_with('/') {
        api_path
    } else {
        format!("/{api_path}")
    };
    let mut handled = api.handle_or_wait(&path, body, waits);
    let answer = loop {
        match handled {
            Handled::Answer(answer) => break answer,
            Handled::WaitForDownloads(parsed) => {
                api.wait_download();
                handled = api.handle_parsed(parsed, waits);
            }
        }
    };
    api.say_advice();
    let (code, text) = match answer {
        Ok(answer) => (EXIT_OK, answer.into_vec()),
        Err(e) => {
            crate::log::elog!("error: {}", e.message);
            // Written as the server writes its answers: `Value`'s `Display` would
            // link two more copies of its writer (12 KB).
            let text = serde_json::to_vec(&e.to_json()).unwrap_or_default();
            (EXIT_FAILURE, text)
        }
    };
    let mut out = std::io::stdout().lock();
    let written = out.write_all(&text).and_then(|()| writeln!(out));
    if let Err(e) = written {
        crate::log::elog!("error: writing the answer to stdout: {e}");
        return EXIT_FAILURE;
    }
    code
}

/// `symbolicate`: writes the symbolicated profile and/or its sidecar.
fn run_symbolicate(
    profile: &Path,
    output: Option<PathBuf>,
    sidecar: Option<Option<PathBuf>>,
    symbols: SymbolOptions,
) -> u8 {
    if let Err(code) = open_profile(profile) {
        return code;
    }
    warn_missing_inputs(&symbols);
    let quiet = symbols.quiet;
    let mut store = store(symbols);
    match crate::ci::symbolicate(profile, output.as_deref(), sidecar, &mut store, quiet) {
        Ok(outcome) if outcome.nothing_resolved() => EXIT_NOTHING_RESOLVED,
        Ok(_) => EXIT_OK,
        Err(e) => {
            crate::log::elog!("error: {}", e.0);
            EXIT_FAILURE
        }
    }
}

/// Opens PROFILE at start; on failure says why and gives the exit code: a file that is no
/// JSON is a usage error, an unreadable one a runtime failure.
fn open_profile(path: &Path) -> Result<ProfileFile, u8> {
    ProfileFile::open(path).map_err(|e| {
        crate::log::elog!("error: {e}");
        if e.not_a_profile {
            EXIT_USAGE
        } else {
            EXIT_FAILURE
        }
    })
}

/// A symbol folder or zip that is not there is most likely a typo: say so at start (the
/// run goes on, other sources may have the symbols).
fn warn_missing_inputs(opts: &SymbolOptions) {
    let given = [
        ("--symbol-dir", &opts.symbol_dirs),
        ("--breakpad-symbol-dir", &opts.breakpad_symbol_dirs),
        ("--symbols-zip", &opts.symbols_zips),
    ];
    for (flag, paths) in given {
        for p in paths.iter().filter(|p| !p.exists()) {
            crate::log::elog!("warning: {flag} {}: no such file or folder", p.display());
        }
    }
}

/// Why `query`'s request could not be read.
enum RequestError {
    File(PathBuf, std::io::Error),
    Stdin(std::io::Error),
}

impl std::fmt::Display for RequestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RequestError::File(p, e) => write!(f, "request file {}: {e}", p.display()),
            RequestError::Stdin(e) => write!(f, "reading the request from stdin: {e}"),
        }
    }
}

fn read_request(path: Option<&Path>) -> Result<Vec<u8>, RequestError> {
    match path {
        Some(p) => crate::fs::read_regular(p, crate::server::MAX_BODY)
            .map_err(|e| RequestError::File(p.to_path_buf(), e)),
        None => {
            let mut buf = Vec::new();
            std::io::stdin()
                .read_to_end(&mut buf)
                .map_err(RequestError::Stdin)?;
            Ok(buf)
        }
    }
}

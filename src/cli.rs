//! Command line: turns `argv` into an [`Invocation`]: the [`Command`] (its mode's own
//! options, e.g. [`ServerOptions`]) and the [`SymbolOptions`] every mode shares.

pub use crate::shared::options::{IndexCacheUse, SymbolOptions, SymbolPath};
use std::ffi::OsString;
use std::fmt;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

const USAGE: &str = "\
USAGE:
    profiler-symbol-server [load] [OPTIONS] [PROFILE]
    profiler-symbol-server symbolicate [OPTIONS] PROFILE -o OUT [--sidecar[=PATH]]
    profiler-symbol-server query [OPTIONS] API-PATH [REQUEST.json]
    profiler-symbol-server <load|symbolicate|query> --help   (one mode's options)
";

const ABOUT: &str = "\
profiler-symbol-server: open a Gecko profile in the Firefox Profiler and symbolicate it
from local debug information.
";

const LOAD: &str = "\
load [OPTIONS] [PROFILE]  (the default mode)
    Serve PROFILE on a local HTTP server and open the profiler on it. The profile shows
    at once; function names, file/line and inline frames are filled in as the profiler
    asks. Keeps serving until Ctrl-C. Without PROFILE the server runs as a symbol server
    only. PROFILE is a Gecko profile or a processed profile, plain or gzipped JSON;
    relative lib paths in it are looked up beside the profile, then in the current folder.
";

const SYMBOLICATE: &str = "\
symbolicate [OPTIONS] PROFILE -o OUT [--sidecar[=PATH]]
    CI mode: no server, no browser. Every 0x... location of every thread (and
    subprocess) that falls in a lib becomes \"<function> (in <debugName>)\"; the rest of
    the profile is copied byte for byte. OUT is gzipped when it ends in .gz.
    --sidecar writes the symbols of every address, with file/line and inline frames,
    as a .syms.json (default: PROFILE with its last extension replaced by syms.json),
    which `load` picks up beside the profile on a machine without the symbols.
    A processed profile (what the profiler saves and samply records) takes --sidecar
    only: -o would not merge and expand its frames as the profiler does; `load` it to
    symbolicate it.
    OUT and the sidecar appear together once both are complete, or not at all.
    meta.presymbolicated is set only when every address in a lib got a name (the
    profiler never symbolicates a profile so marked); otherwise stderr says how many
    stayed unresolved and why, and the profiler symbolicates the rest when it opens OUT.
";

const QUERY: &str = "\
query [OPTIONS] API-PATH [REQUEST.json]
    Answer one API request (/symbolicate/v5, /source/v1, /asm/v1) on stdout, exactly as
    the server would. Reads the request from standard input when no file is given.
";

const SYMBOL_OPTIONS: &str = "\
SYMBOL OPTIONS (all modes):
    --symbol-dir DIR            Search DIR for <debugName> and <name>. Repeatable.
    --breakpad-symbol-dir DIR   Breakpad store <debugName>/<ID>/<name>.sym. Repeatable.
    --symbols-zip ZIP           A zipped Breakpad store (target.crashreporter-symbols.zip),
                                read in place. Repeatable.
    --windows-symbol-path PATH  Local symstores <name>/<ID>/<name>, _NT_SYMBOL_PATH syntax
                                (also read from $_NT_SYMBOL_PATH); srv*CACHE*URL entries
                                are fetched like --windows-symbol-server into CACHE.
    --breakpad-symbol-server URL  Fetch {URL}/<debugName>/<ID>/<name>.sym for modules not
                                found locally (e.g. https://symbols.mozilla.org/).
                                Repeatable, tried in order.
    --breakpad-symbol-cache DIR Where fetched .sym files are kept. [default: the user's
                                cache folder/profiler-symbol-server/breakpad]
                                A folder you name (here, --windows-symbol-cache or a
                                srv*CACHE*URL entry) is only added to, never pruned;
                                the default caches drop files this program fetched
                                (unused 90 days, or over 10 GB), nothing else.
    --windows-symbol-server URL Fetch {URL}/<pdbName>/<ID>/<pdbName>. Repeatable.
    --windows-symbol-cache DIR  Where fetched PDBs are kept. [default: the user's cache
                                folder/profiler-symbol-server/windows]
    --simpleperf-binary-cache DIR  Binaries under their on-device path, DIR/<lib path>.
    --dyld-shared-cache PATH    A macOS dyld shared cache (the main file; its subcaches
                                PATH.01... and PATH.symbols beside it): system libraries
                                not found as files are read from it, by path and UUID.
                                Repeatable; on macOS the system's caches are searched
                                after these.
    DEBUGINFOD_URLS             (environment) debuginfod servers for ELF modules without
                                local debug info, cached like elfutils does.
    --no-index-cache            Neither read nor write prepared indexes (also
                                PROFILER_SYMBOL_SERVER_NO_INDEX_CACHE=1). The server
                                indexes each big debug file (4 MB and more) in its idle
                                time, under the user's cache folder/profiler-symbol-
                                server/index, and the next run answers from the index
                                without reading the file; query and symbolicate only read
                                them. An index is used only while every file it was made
                                from is unchanged. Delete the folder to clear it.
    --index-cache-size MB       The most the index folder may hold; the least recently
                                used indexes go first. [default: 4000]
    -v, --verbose               Log every candidate debug file tried, and why it was
                                rejected, on stderr.
    -q, --quiet                 Print only errors (and the URL with --no-open, or when no
                                browser could be opened). Without it, each request is
                                logged on stderr (path without the token, status, bytes).
";

const SERVER_OPTIONS: &str = "\
SERVER OPTIONS (load):
    -n, --no-open               Do not open a browser; print the profiler URL as the only
                                line on stdout.
    -P, --port N|N+             Port to listen on. N+ tries N upwards and takes the first
                                free one; N means exactly N; 0 means any free port.
                                [default: 3000+]
    --address IP                Address to bind. [default: 127.0.0.1] A non-loopback
                                address (0.0.0.0 or ::: all of this machine's) opens the
                                server to the network: whoever has the URL (its secret token) can
                                read the profile and ask for symbols, source files and
                                disassembly of the modules found here. Requests must name
                                the address they reach, this machine's name or localhost
                                in Host. The URL uses that address (for 0.0.0.0, the
                                machine's outward address or name).
    --profiler-url URL          Front-end to open. [default: $PROFILER_URL, else
                                https://profiler.firefox.com]
    --read-timeout SECS         Drop a client that stalls this long mid-request or
                                mid-answer, so it cannot hold up the others. [default: 10]
";

const SYMBOLICATE_OPTIONS: &str = "\
SYMBOLICATE OPTIONS:
    -o, --output OUT            Where to write the symbolicated profile (.gz: gzipped).
                                Written to a temporary file, renamed when complete.
    --sidecar[=PATH]            Also (or instead) write the .syms.json sidecar.
";

const OTHER: &str = "\
OTHER:
    -h, --help                  Print this help (after a mode: that mode's help).
    -V, --version               Print the version.

EXIT CODES:
    0 success, 1 runtime failure (unreadable file, port taken), 2 usage error,
    3 symbolicate: outputs written, but none of the addresses in libs got a name.
";

/// The help text: the whole of it, or one mode's.
pub fn help(mode: Option<Mode>) -> String {
    let parts: &[&str] = match mode {
        None => &[
            ABOUT,
            "\n",
            USAGE,
            "\nMODES:\n",
            LOAD,
            SYMBOLICATE,
            QUERY,
            "\n",
            SYMBOL_OPTIONS,
            "\n",
            SERVER_OPTIONS,
            "\n",
            SYMBOLICATE_OPTIONS,
            "\n",
            OTHER,
        ],
        Some(Mode::Load) => &[
            LOAD,
            "\n",
            SYMBOL_OPTIONS,
            "\n",
            SERVER_OPTIONS,
            "\n",
            OTHER,
        ],
        Some(Mode::Symbolicate) => &[
            SYMBOLICATE,
            "\n",
            SYMBOL_OPTIONS,
            "\n",
            SYMBOLICATE_OPTIONS,
            "\n",
            OTHER,
        ],
        Some(Mode::Query) => &[QUERY, "\n", SYMBOL_OPTIONS, "\n", OTHER],
    };
    parts.concat()
}

/// A usage error: the message names the option or argument at fault. Exit code 2.
#[derive(Debug)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl From<lexopt::Error> for UsageError {
    fn from(e: lexopt::Error) -> Self {
        UsageError(e.to_string())
    }
}

/// Which ports to try.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PortSpec {
    /// Exactly this port (0: any free port).
    Exact(u16),
    /// This port or the first free one above it.
    From(u16),
}

#[derive(Debug, Clone)]
pub struct ServerOptions {
    pub no_open: bool,
    pub port: PortSpec,
    pub address: IpAddr,
    pub profiler_url: String,
    /// How long a client may stall while sending a request or taking an answer.
    pub read_timeout: Duration,
}

#[derive(Debug)]
pub enum Command {
    Load {
        profile: Option<PathBuf>,
        server: ServerOptions,
    },
    Symbolicate {
        profile: PathBuf,
        output: Option<PathBuf>,
        sidecar: Option<Option<PathBuf>>,
    },
    Query {
        api_path: String,
        request: Option<PathBuf>,
    },
    /// `--help`, after a mode or not.
    Help(Option<Mode>),
    Version,
}

#[derive(Debug)]
pub struct Invocation {
    pub command: Command,
    pub symbols: SymbolOptions,
}

/// The three modes of the command line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Mode {
    Load,
    Symbolicate,
    Query,
}

pub fn parse_port(s: &str) -> Result<PortSpec, UsageError> {
    let bad = || UsageError(format!("--port: '{s}' is not a port (expected N, N+ or 0)"));
    match s.strip_suffix('+') {
        Some(n) => n.parse().map(PortSpec::From).map_err(|_| bad()),
        None => s.parse().map(PortSpec::Exact).map_err(|_| bad()),
    }
}

fn string(v: OsString, opt: &str) -> Result<String, UsageError> {
    v.into_string().map_err(|v| {
        UsageError(format!(
            "{opt}: '{}' is not valid UTF-8",
            v.to_string_lossy()
        ))
    })
}

fn server_url(v: OsString, opt: &str) -> Result<String, UsageError> {
    let s = string(v, opt)?;
    if s.starts_with("http://") || s.starts_with("https://") {
        Ok(s)
    } else {
        Err(UsageError(format!(
            "{opt}: '{s}' must start with http:// or https://"
        )))
    }
}

/// The mode `word` is probably a misspelling of: not a file, no path or extension, and
/// at most two edits away from a mode's name.
fn misspelled_mode(word: &str) -> Option<&'static str> {
    if word.contains(['.', '/', '\\']) || Path::new(word).exists() {
        return None;
    }
    ["load", "symbolicate", "query"]
        .into_iter()
        .map(|m| (edit_distance(word, m), m))
        .filter(|&(d, _)| d <= 2)
        .min()
        .map(|(_, m)| m)
}

/// Levenshtein distance (short words only).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// Parses the arguments after the program name. `profiler_url_env` is `$PROFILER_URL`.
pub fn parse<I>(args: I, profiler_url_env: Option<String>) -> Result<Invocation, UsageError>
where
    I: IntoIterator<Item = OsString>,
{
    use lexopt::prelude::*;
    let mut parser = lexopt::Parser::from_args(args);
    let mut symbols = SymbolOptions::default();
    let mut given = Given {
        mode: None,
        positionals: Vec::new(),
        server: ServerOptions {
            no_open: false,
            port: PortSpec::From(3000),
            address: IpAddr::from([127, 0, 0, 1]),
            profiler_url: profiler_url_env
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "https://profiler.firefox.com".to_string()),
            read_timeout: Duration::from_secs(10),
        },
        output: None,
        sidecar: None,
        sidecar_at: None,
    };

    while let Some(arg) = parser.next()? {
        match arg {
            Short('h') | Long("help") => {
                return Ok(Invocation {
                    command: Command::Help(given.mode),
                    symbols,
                });
            }
            Short('V') | Long("version") => {
                return Ok(Invocation {
                    command: Command::Version,
                    symbols,
                });
            }
            Long("symbol-dir") => symbols.symbol_dirs.push(parser.value()?.into()),
            Long("breakpad-symbol-dir") => {
                symbols.breakpad_symbol_dirs.push(parser.value()?.into())
            }
            Long("symbols-zip") => symbols.symbols_zips.push(parser.value()?.into()),
            Long("windows-symbol-path") => {
                let value = string(parser.value()?, "--windows-symbol-path")?;
                symbols.symbol_path.extend(SymbolPath::parse(&value));
            }
            Long("breakpad-symbol-server") => symbols
                .breakpad_symbol_servers
                .push(server_url(parser.value()?, "--breakpad-symbol-server")?),
            Long("windows-symbol-server") => symbols
                .windows_symbol_servers
                .push(server_url(parser.value()?, "--windows-symbol-server")?),
            Long("breakpad-symbol-cache") => {
                symbols.breakpad_symbol_cache = Some(parser.value()?.into())
            }
            Long("windows-symbol-cache") => {
                symbols.windows_symbol_cache = Some(parser.value()?.into())
            }
            Long("simpleperf-binary-cache") => symbols
                .simpleperf_binary_caches
                .push(parser.value()?.into()),
            Long("dyld-shared-cache") => symbols.dyld_shared_caches.push(parser.value()?.into()),
            Long("no-index-cache") => symbols.index_cache = IndexCacheUse::Off,
            Long("index-cache-size") => {
                let s = string(parser.value()?, "--index-cache-size")?;
                let mb: u64 = s.parse().map_err(|_| {
                    UsageError(format!("--index-cache-size: '{s}' is not a number of MB"))
                })?;
                symbols.index_cache_bytes = Some(mb.saturating_mul(1_000_000));
            }
            Short('v') | Long("verbose") => symbols.verbose = true,
            Short('q') | Long("quiet") => symbols.quiet = true,
            Short('n') | Long("no-open") => given.server.no_open = true,
            Short('P') | Long("port") => {
                given.server.port = parse_port(&string(parser.value()?, "--port")?)?
            }
            Long("address") => {
                let s = string(parser.value()?, "--address")?;
                given.server.address = s
                    .parse()
                    .map_err(|_| UsageError(format!("--address: '{s}' is not an IP address")))?;
            }
            Long("profiler-url") => {
                let s = string(parser.value()?, "--profiler-url")?;
                if !(s.starts_with("http://") || s.starts_with("https://")) {
                    return Err(UsageError(format!(
                        "--profiler-url: '{s}' must start with http:// or https://"
                    )));
                }
                given.server.profiler_url = s;
            }
            Long("read-timeout") => {
                let s = string(parser.value()?, "--read-timeout")?;
                given.server.read_timeout = s
                    .parse::<f64>()
                    .ok()
                    .filter(|t| *t > 0.0 && *t < 86400.0)
                    .map(Duration::from_secs_f64)
                    .ok_or_else(|| {
                        UsageError(format!("--read-timeout: '{s}' is not a number of seconds"))
                    })?;
            }
            Short('o') | Long("output") => {
                if given.output.is_some() {
                    return Err(UsageError("-o/--output given twice".to_string()));
                }
                given.output = Some(parser.value()?.into())
            }
            Long("sidecar") => {
                let value = parser.optional_value().map(PathBuf::from);
                given.sidecar_at = value.is_none().then_some(given.positionals.len());
                given.sidecar = Some(value);
            }
            Value(v) => {
                if given.mode.is_none() && given.positionals.is_empty() {
                    match v.to_str() {
                        Some("load") => {
                            given.mode = Some(Mode::Load);
                            continue;
                        }
                        Some("symbolicate") => {
                            given.mode = Some(Mode::Symbolicate);
                            continue;
                        }
                        Some("query") => {
                            given.mode = Some(Mode::Query);
                            continue;
                        }
                        _ => {}
                    }
                }
                given.positionals.push(v);
            }
            _ => return Err(arg.unexpected().into()),
        }
    }
    Ok(Invocation {
        command: given.command()?,
        symbols,
    })
}

/// What the command line gave, before it is checked as a whole.
struct Given {
    mode: Option<Mode>,
    positionals: Vec<OsString>,
    server: ServerOptions,
    output: Option<PathBuf>,
    sidecar: Option<Option<PathBuf>>,
    /// `--sidecar PATH` (no `=`): the index the next positional will have.
    sidecar_at: Option<usize>,
}

impl Given {
    /// The mode's command: its positionals, and the options checked against the mode.
    fn command(self) -> Result<Command, UsageError> {
        let Given {
            mode,
            mut positionals,
            mut server,
            output,
            mut sidecar,
            sidecar_at,
        } = self;
        server.profiler_url = server.profiler_url.trim_end_matches('/').to_string();
        let mode = mode.unwrap_or(Mode::Load);
        // `--sidecar PATH` as the contract writes it: the argument after it is its PATH when
        // a profile is given besides (with one positional only, that one is the profile).
        if mode == Mode::Symbolicate
            && sidecar == Some(None)
            && let Some(i) = sidecar_at.filter(|&i| i < positionals.len() && positionals.len() >= 2)
        {
            sidecar = Some(Some(PathBuf::from(positionals.remove(i))));
        }
        if mode == Mode::Load
            && positionals.len() >= 2
            && let Some(near) = positionals[0].to_str().and_then(misspelled_mode)
        {
            return Err(UsageError(format!(
                "unknown mode '{}' (did you mean '{near}'?); modes: load, symbolicate, query",
                positionals[0].to_string_lossy()
            )));
        }
        if mode != Mode::Symbolicate && (output.is_some() || sidecar.is_some()) {
            return Err(UsageError(
                "-o/--output and --sidecar are only valid with `symbolicate`".to_string(),
            ));
        }
        let mut positionals = positionals.into_iter();
        let command = match mode {
            Mode::Load => {
                let profile = positionals.next().map(PathBuf::from);
                Command::Load { profile, server }
            }
            Mode::Symbolicate => {
                let profile = positionals
                    .next()
                    .map(PathBuf::from)
                    .ok_or_else(|| UsageError("symbolicate: missing PROFILE".to_string()))?;
                if output.is_none() && sidecar.is_none() {
                    return Err(UsageError(
                        "symbolicate: give -o OUT, --sidecar, or both".to_string(),
                    ));
                }
                Command::Symbolicate {
                    profile,
                    output,
                    sidecar,
                }
            }
            Mode::Query => {
                let api_path = positionals
                    .next()
                    .ok_or_else(|| {
                        UsageError("query: missing API-PATH (e.g. /symbolicate/v5)".to_string())
                    })
                    .and_then(|p| string(p, "API-PATH"))?;
                let request = positionals.next().map(PathBuf::from);
                Command::Query { api_path, request }
            }
        };
        if let Some(extra) = positionals.next() {
            return Err(UsageError(format!(
                "unexpected argument '{}'",
                extra.to_string_lossy()
            )));
        }
        Ok(command)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Result<Invocation, UsageError> {
        parse(args.iter().map(OsString::from), None)
    }

    #[test]
    fn misspelled_modes_are_named() {
        let e = p(&["lod", "x.json"]).err().unwrap().0;
        assert!(
            e.contains("unknown mode 'lod'") && e.contains("'load'"),
            "{e}"
        );
        let e = p(&["symbolicat", "x.json", "y"]).err().unwrap().0;
        assert!(e.contains("'symbolicate'"), "{e}");
        let e = p(&["qeury", "/symbolicate/v5"]).err().unwrap().0;
        assert!(e.contains("'query'"), "{e}");
        // A real extra argument is still just that.
        let e = p(&["load", "a.json", "b.json"]).err().unwrap().0;
        assert!(e.contains("unexpected argument 'b.json'"), "{e}");
    }

    #[test]
    fn sidecar_takes_its_path_with_or_without_equals() {
        let side = |args: &[&str]| match p(args).unwrap().command {
            Command::Symbolicate {
                profile, sidecar, ..
            } => (profile, sidecar),
            _ => panic!("not symbolicate"),
        };
        let want = (PathBuf::from("p.json"), Some(Some(PathBuf::from("s.json"))));
        assert_eq!(
            side(&["symbolicate", "p.json", "--sidecar", "s.json"]),
            want
        );
        assert_eq!(
            side(&["symbolicate", "--sidecar", "s.json", "p.json"]),
            want
        );
        assert_eq!(side(&["symbolicate", "p.json", "--sidecar=s.json"]), want);
        assert_eq!(
            side(&["symbolicate", "--sidecar", "p.json"]),
            (PathBuf::from("p.json"), Some(None))
        );
        assert_eq!(
            side(&["symbolicate", "p.json", "--sidecar", "-o", "o.json"]),
            (PathBuf::from("p.json"), Some(None))
        );
        let e = p(&["symbolicate", "p.json", "-o", "a", "-o", "b"])
            .err()
            .unwrap()
            .0;
        assert!(e.contains("twice"), "{e}");
    }

    #[test]
    fn ports() {
        assert_eq!(parse_port("3000+").unwrap(), PortSpec::From(3000));
        assert_eq!(parse_port("0").unwrap(), PortSpec::Exact(0));
        assert!(parse_port("x").is_err());
        assert!(parse_port("70000").is_err());
    }

    #[test]
    fn modes() {
        let inv = p(&[
            "prof.json",
            "--symbol-dir",
            "a",
            "--symbol-dir=b",
            "-n",
            "-P",
            "0",
        ])
        .unwrap();
        match inv.command {
            Command::Load { profile, server } => {
                assert_eq!(profile, Some(PathBuf::from("prof.json")));
                assert!(server.no_open);
                assert_eq!(server.port, PortSpec::Exact(0));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(inv.symbols.symbol_dirs.len(), 2);
        assert!(matches!(
            p(&["query", "/symbolicate/v5"]).unwrap().command,
            Command::Query { request: None, .. }
        ));
        assert!(p(&["query"]).is_err());
        assert!(p(&["--bogus"]).is_err());
        assert!(p(&["a.json", "b.json"]).is_err());
        assert!(p(&["symbolicate", "a.json"]).is_err());
        // mach's command line for samply.
        let inv = p(&[
            "load",
            "u.json",
            "--no-open",
            "--breakpad-symbol-dir",
            "d",
            "--breakpad-symbol-server",
            "https://symbols.mozilla.org/",
        ])
        .unwrap();
        assert_eq!(
            inv.symbols.breakpad_symbol_servers,
            ["https://symbols.mozilla.org/"]
        );
        assert!(p(&["--breakpad-symbol-server", "ftp://x"]).is_err());
        let inv = p(&[
            "query",
            "--dyld-shared-cache",
            "/c/dyld_shared_cache_arm64e",
            "--dyld-shared-cache=d",
            "/symbolicate/v5",
        ])
        .unwrap();
        assert_eq!(
            inv.symbols.dyld_shared_caches,
            [
                PathBuf::from("/c/dyld_shared_cache_arm64e"),
                PathBuf::from("d")
            ]
        );
        assert!(p(&["a.json", "-o", "x"]).is_err());
    }
}

//! Demangles one mangled name per line of standard input, as `addr2line` does (default
//! options), printing the name unchanged when it is not demangled; the time taken and the
//! names per second go to standard error. `--why` prints, instead, why a name is left
//! mangled (`parse: <error>` or `print`), or `ok`. `--parse-limit N` and `--print-limit N`
//! set the recursion limits (for finding what real names need).

use std::io::{self, BufRead, Write};
use std::time::Instant;

fn main() -> io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let why = args.iter().any(|a| a == "--why");
    let limit = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .and_then(|n| n.parse::<u32>().ok())
    };
    let mut parse_options = cpp_demangle::ParseOptions::default();
    if let Some(n) = limit("--parse-limit") {
        parse_options = parse_options.recursion_limit(n);
    }
    let mut options = cpp_demangle::DemangleOptions::default();
    if let Some(n) = limit("--print-limit") {
        options = options.recursion_limit(n);
    }
    let stdin = io::stdin();
    let names: Vec<String> = stdin.lock().lines().collect::<Result<_, _>>()?;
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let start = Instant::now();
    let mut lines = Vec::with_capacity(names.len());
    for name in &names {
        let line = match cpp_demangle::Symbol::new_with_options(name.as_bytes(), &parse_options) {
            Ok(sym) => match sym.demangle_with_options(&options) {
                Ok(_) if why => "ok".to_string(),
                Ok(text) => text,
                Err(_) if why => "print".to_string(),
                Err(_) => name.clone(),
            },
            Err(e) if why => format!("parse: {e}"),
            Err(_) => name.clone(),
        };
        lines.push(line);
    }
    let took = start.elapsed();
    for line in &lines {
        writeln!(out, "{line}")?;
    }
    let secs = took.as_secs_f64();
    eprintln!(
        "{} names in {:.3} s: {:.0} names/s",
        names.len(),
        secs,
        names.len() as f64 / secs.max(1e-9)
    );
    Ok(())
}

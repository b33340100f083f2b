//! Output that never fails: mach reads our output through one pipe and closes it after the
//! URL line, so every later write meets EPIPE. `println!`/`eprintln!` panic on that (a
//! request became a 500, Ctrl-C an exit 101); these macros drop the error instead.

/// `eprintln!` whose write errors are ignored.
#[macro_export]
macro_rules! elog {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// `println!` whose write errors are ignored (stdout is flushed: scripts wait for the line).
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let mut o = std::io::stdout().lock();
        let _ = writeln!(o, $($arg)*);
        let _ = o.flush();
    }};
}

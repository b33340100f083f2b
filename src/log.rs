//! Output that never fails: mach reads our output through one pipe and closes it after the
//! URL line, so every later write meets EPIPE. `println!`/`eprintln!` panic on that (a
//! request became a 500, Ctrl-C an exit 101); these macros drop the error instead.
//!
//! Names and paths on stderr come from profiles and requests, i.e. from anyone: control
//! characters are escaped in every line (an ESC sequence could rewrite the terminal), and
//! a path inside a suggested command is shell-quoted (see [`shell_quote`]).

use std::borrow::Cow;
use std::fmt::Write as _;

/// `eprintln!` whose write errors are ignored, with control characters escaped.
macro_rules! elog {
    ($($arg:tt)*) => {
        $crate::log::write_stderr(format_args!($($arg)*))
    };
}
pub(crate) use elog;

/// One line on stderr (the [`elog!`] macro): control characters escaped, errors ignored.
pub fn write_stderr(args: std::fmt::Arguments<'_>) {
    use std::io::Write as _;
    let text = args.to_string();
    let _ = writeln!(std::io::stderr(), "{}", escape_controls(&text));
}

/// C0 controls (newline and tab included: one message is one line), DEL and the C1 range
/// written as `\x1b` / `\u{9b}`, so that no byte of a name reaches the terminal as a
/// command.
pub fn escape_controls(s: &str) -> Cow<'_, str> {
    let control = |c: char| c.is_control();
    if !s.contains(control) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c as u32 {
            n @ (0..=0x1f | 0x7f) => {
                let _ = write!(out, "\\x{n:02x}");
            }
            n @ 0x80..=0x9f => {
                let _ = write!(out, "\\u{{{n:x}}}");
            }
            _ => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// `s` as one word of a POSIX shell command: unchanged when it holds only characters
/// no shell treats specially, else in single quotes (an embedded `'` as `'\\''`), so
/// that pasting a suggested command never runs `$(…)` or backquotes from a profile.
pub fn shell_quote(s: &str) -> Cow<'_, str> {
    let plain = |b: u8| b.is_ascii_alphanumeric() || b"/._-+,:=@%".contains(&b);
    if !s.is_empty() && s.bytes().all(plain) {
        return Cow::Borrowed(s);
    }
    Cow::Owned(format!("'{}'", s.replace('\'', "'\\''")))
}

/// `n` and its noun, singular for one: "1 module", "2 modules".
pub fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `println!` whose write errors are ignored (stdout is flushed: scripts wait for the line).
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let mut o = std::io::stdout().lock();
        let _ = writeln!(o, $($arg)*);
        let _ = o.flush();
    }};
}
pub(crate) use out;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_are_escaped_and_words_quoted() {
        assert_eq!(
            escape_controls("a\x1b[2Jb\n\t\u{9b}c\u{7f}é"),
            "a\\x1b[2Jb\\x0a\\x09\\u{9b}c\\x7fé"
        );
        assert_eq!(escape_controls("/usr/lib/libc.so.6"), "/usr/lib/libc.so.6");
        assert_eq!(shell_quote("/usr/lib/libc.so.6"), "/usr/lib/libc.so.6");
        assert_eq!(shell_quote("/x/lib$(touch X).so"), "'/x/lib$(touch X).so'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote(""), "''");
    }
}

//! Names from a profile or a request (debug names, library names, code IDs) become path
//! components here, and only here: a name is used only if every platform would read it as
//! one plain file name. On Windows `C:x` is relative to a drive's current folder,
//! `x:stream` names an alternate data stream, `NUL.pdb` is a device and trailing dots or
//! spaces are dropped, so a crafted profile could otherwise make the Windows build read or
//! write outside the folder it joins the name to.

/// RFC 3986 unreserved characters besides letters and digits: what a query value keeps.
pub const UNRESERVED: &[u8] = b"-_.~";
/// What a URL path keeps: `pchar` and `/`.
pub const PATH_CHARS: &[u8] = b"-._~!$&'()*+,;=:@/";

/// Percent-encodes every byte of `s` but ASCII letters, digits and `keep` (the one encoder
/// for URLs this program writes: the profiler URL's parameters, symbol server paths).
pub fn percent_encode(s: &str, keep: &[u8]) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || keep.contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Whether `name` is safe as one path component on every platform.
pub fn is_plain(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && !name.contains("..")
        && !name.ends_with(['.', ' '])
        && !name.chars().any(|c| {
            c.is_control() || matches!(c, '/' | '\\' | ':' | '<' | '>' | '"' | '|' | '?' | '*')
        })
        && !is_windows_device(name)
}

/// Where a Breakpad symbol store keeps a module's `.sym`: `<debugName>/<ID>/<stem>.sym`,
/// the stem being the debug name without `.pdb`. `debug_name` must be [`is_plain`].
pub fn breakpad_sym_path(
    debug_name: &str,
    breakpad_id: &crate::shared::debugid::DebugId,
) -> String {
    let id = breakpad_id.path_component();
    let stem = debug_name.strip_suffix(".pdb").unwrap_or(debug_name);
    format!("{debug_name}/{id}/{stem}.sym")
}

/// Whether a file name is one of Windows' reserved device names, with any extension
/// (`CON`, `nul.pdb`, `COM1.txt`, `LPT¹`).
fn is_windows_device(name: &str) -> bool {
    let stem = name.split('.').next().unwrap_or(name).trim_end_matches(' ');
    let upper = stem.to_ascii_uppercase();
    if matches!(
        upper.as_str(),
        "CON" | "PRN" | "AUX" | "NUL" | "CONIN$" | "CONOUT$"
    ) {
        return true;
    }
    let (head, digit) = match upper.char_indices().nth(3) {
        Some((i, _)) => upper.split_at(i),
        None => return false,
    };
    matches!(head, "COM" | "LPT")
        && matches!(
            digit,
            "0" | "1" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "9" | "¹" | "²" | "³"
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names_pass() {
        for n in [
            "libxul.so",
            "xul.pdb",
            "libc.so.6",
            "firefox",
            "[vdso]",
            "libstdc++.so.6",
            "a b.dll",
            "CONFIG.pdb",
            "console.dll",
            "COM10.dll",
            "0123456789ABCDEF0123456789ABCDEF0",
        ] {
            assert!(is_plain(n), "{n}");
        }
    }

    #[test]
    fn anything_more_than_a_file_name_is_refused() {
        for n in [
            "",
            ".",
            "..",
            "a/b",
            "a\\b",
            "../x",
            "C:x",
            "C:",
            "x.pdb:stream",
            "CON",
            "con",
            "NUL.pdb",
            "nul .pdb",
            "COM1",
            "lpt9.dll",
            "COM¹.dll",
            "AUX.tar.gz",
            "CONIN$",
            "name.",
            "name ",
            "a\u{0}b",
            "a\nb",
            "a\u{1b}[31m",
            "a*b",
            "a?b",
            "a|b",
            "a<b>",
            "a\"b",
        ] {
            assert!(!is_plain(n), "{n:?}");
        }
    }
}

/// Why a path that a profile, a request or a debug file names must not be touched at all,
/// not even looked at (`stat`), if it must not:
/// - `\\host\share\…`, `\\?\…`, `\\.\…` (or with `/`): on Windows, looking at a UNC path
///   connects to that host and sends the user's NTLM credentials, and `\\.\pipe\…`
///   reaches local named pipes and devices;
/// - `/net/…`: the automounter's, which mounts another machine's share on a look.
///
/// `..` is taken as written (`/tmp/../net/h` is under `/net`). Paths the user types
/// (`--symbol-dir \\server\symbols`) are not checked: they are the user's choice.
pub fn refused_from_outside(path: &str) -> Option<&'static str> {
    let unified = path.replace('\\', "/");
    if unified.starts_with("//") {
        return Some(
            "a UNC or device path (\\\\host\\share, \\\\?\\, \\\\.\\); looking at it would connect to another machine or reach a device",
        );
    }
    if unified.starts_with('/') {
        let mut parts: Vec<&str> = Vec::new();
        for c in unified.split('/') {
            match c {
                "" | "." => {}
                ".." => {
                    parts.pop();
                }
                other => parts.push(other),
            }
        }
        if parts.first() == Some(&"net") {
            return Some(
                "under /net, where looking at a path mounts another machine's share (the automounter)",
            );
        }
    }
    None
}

#[cfg(test)]
mod outside_tests {
    use super::refused_from_outside;

    #[test]
    fn unc_device_and_automount_paths_are_refused_in_every_spelling() {
        for p in [
            r"\\attacker\share\xul.pdb",
            r"\\attacker@80\x",
            r"\\.\pipe\x",
            r"\\?\C:\x.pdb",
            r"\\?\UNC\host\share\x",
            "//host/share/x.pdb",
            r"/\host\x",
            "/net/host/lib/libxul.so",
            "/net",
            "/tmp/../net/host/x",
            "/./net/h/x",
        ] {
            assert!(refused_from_outside(p).is_some(), "{p}");
        }
        for p in [
            "/usr/lib/libc.so.6",
            "/network/x",
            "/home/net/x",
            r"C:\build\xul.pdb",
            "relative/net/x",
            "libxul.so",
        ] {
            assert!(refused_from_outside(p).is_none(), "{p}");
        }
    }
}

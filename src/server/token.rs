//! The secret path prefix: drawn from the operating system's random source, compared in
//! constant time, and kept out of log lines.

use super::ServerError;

/// Fills `buf` from the operating system's random source.
pub fn random_bytes(buf: &mut [u8]) -> Result<(), ServerError> {
    os_random(buf).map_err(|e| ServerError(format!("the system's random source failed: {e}")))
}

/// getrandom(2): no descriptor, works before /dev is mounted or in a chroot without it.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn os_random(buf: &mut [u8]) -> std::io::Result<()> {
    let mut filled = 0;
    while filled < buf.len() {
        let rest = &mut buf[filled..];
        // SAFETY: the pointer and length describe `rest`, writable for the call.
        let n = unsafe { libc::getrandom(rest.as_mut_ptr().cast(), rest.len(), 0) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        filled += n as usize;
    }
    Ok(())
}

/// getentropy(2), at most 256 bytes a call.
#[cfg(target_vendor = "apple")]
fn os_random(buf: &mut [u8]) -> std::io::Result<()> {
    for chunk in buf.chunks_mut(256) {
        // SAFETY: the pointer and length describe `chunk` (at most 256 bytes, the limit).
        if unsafe { libc::getentropy(chunk.as_mut_ptr().cast(), chunk.len()) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Other Unix systems: the random device.
#[cfg(all(
    unix,
    not(any(target_os = "linux", target_os = "android", target_vendor = "apple"))
))]
fn os_random(buf: &mut [u8]) -> std::io::Result<()> {
    use std::io::Read;
    std::fs::File::open("/dev/urandom")?.read_exact(buf)
}

/// ProcessPrng, the system generator std itself uses (Windows 10 and later, as std).
/// raw-dylib: no import library is needed to link it.
#[cfg(windows)]
fn os_random(buf: &mut [u8]) -> std::io::Result<()> {
    #[link(name = "bcryptprimitives", kind = "raw-dylib")]
    unsafe extern "system" {
        fn ProcessPrng(pbdata: *mut u8, cbdata: usize) -> i32;
    }
    // SAFETY: the pointer and length describe `buf`; ProcessPrng always succeeds (TRUE).
    if unsafe { ProcessPrng(buf.as_mut_ptr(), buf.len()) } == 0 {
        return Err(std::io::Error::other("ProcessPrng failed"));
    }
    Ok(())
}

/// 128 bits from the operating system's random source, as 32 hex digits (URL-safe).
pub fn random_token() -> Result<String, ServerError> {
    let mut bytes = [0u8; 16];
    random_bytes(&mut bytes)?;
    Ok(crate::shared::debugid::hex_lower(&bytes))
}

/// Equality whose time depends on the lengths only, not on where the bytes differ (the
/// token's length is no secret: every token has 32 digits).
pub fn ct_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let diff = std::hint::black_box(a)
        .iter()
        .zip(std::hint::black_box(b))
        .fold(0u8, |d, (x, y)| d | (x ^ y));
    std::hint::black_box(diff) == 0
}

/// What follows `/<token>` in `path` (empty, or from a `/`), if the path is under it.
pub fn under_token<'a>(path: &'a str, token: &str) -> Option<&'a str> {
    let end = 1 + token.len();
    let candidate = path.as_bytes().get(1..end)?;
    if !path.starts_with('/') || !ct_eq(candidate, token.as_bytes()) {
        return None;
    }
    // The token is ASCII: `end` is a character boundary once it matched.
    let rest = path.get(end..)?;
    (rest.is_empty() || rest.starts_with('/')).then_some(rest)
}

/// A request's path as log lines show it: without its query, the token (wherever it
/// appears, a near miss under the prefix included) replaced by `…`, at most 120 characters.
pub fn log_path(url: &str, token: &str) -> String {
    let path = url.split(['?', '#']).next().unwrap_or("");
    let shown = match under_token(path, token) {
        Some(rest) => format!("/…{rest}"),
        None => path.replace(token, "…"),
    };
    match shown.char_indices().nth(120) {
        Some((cut, _)) => format!("{}…", &shown[..cut]),
        None => shown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens() {
        let t = random_token().unwrap();
        assert_eq!(t.len(), 32);
        assert!(t.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_ne!(t, random_token().unwrap());
        // A buffer longer than getentropy's 256-byte limit is filled too.
        let mut big = [0u8; 1000];
        random_bytes(&mut big).unwrap();
        assert!(big.iter().any(|&b| b != 0));
    }

    #[test]
    fn prefix() {
        let t = "0123456789abcdef0123456789abcdef";
        assert_eq!(under_token(&format!("/{t}"), t), Some(""));
        assert_eq!(under_token(&format!("/{t}/a/b"), t), Some("/a/b"));
        assert_eq!(under_token(&format!("/{t}x/a"), t), None);
        assert_eq!(under_token(&format!("/{}/a", &t[..31]), t), None);
        assert_eq!(under_token(&format!("/{}0/a", &t[..31]), t), None);
        assert_eq!(under_token(&format!("x{t}/a"), t), None);
        assert_eq!(under_token("/", t), None);
        assert_eq!(under_token("", t), None);
        // Multi-byte characters where the token would end: no panic.
        assert_eq!(under_token(&format!("/{}é/a", &t[..31]), t), None);
        assert_eq!(under_token("/ééééééééééééééééé", t), None);
        assert!(ct_eq(b"abc", b"abc"));
        assert!(!ct_eq(b"abc", b"abd"));
        assert!(!ct_eq(b"abc", b"ab"));
        assert_eq!(
            log_path(&format!("/{t}/symbolicate/v5?x={t}"), t),
            "/…/symbolicate/v5"
        );
        assert_eq!(log_path(&format!("/x/{t}/y"), t), "/x/…/y");
        assert_eq!(log_path(&"/a".repeat(100), t).chars().count(), 121);
    }
}

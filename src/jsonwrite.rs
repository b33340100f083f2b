//! Writing JSON text directly, for the big answers (a value tree first cost more than the
//! lookups).

/// Appends `s` as a JSON string.
pub fn string(out: &mut Vec<u8>, s: &str) {
    // Names and paths rarely need escapes: copy those whole (most of a big answer is them).
    if !needs_escape(s.as_bytes()) {
        out.reserve(s.len() + 2);
        out.push(b'"');
        out.extend_from_slice(s.as_bytes());
        out.push(b'"');
    } else {
        // Writing to a Vec cannot fail.
        let _ = serde_json::to_writer(&mut *out, s);
    }
}

/// Whether `b` has a byte JSON must escape (control, `"`, `\\`); eight bytes at a time.
pub fn needs_escape(b: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let has_zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGH != 0;
    let mut chunks = b.chunks_exact(8);
    for c in &mut chunks {
        let x = u64::from_le_bytes(c.try_into().unwrap_or([0; 8]));
        let control = x.wrapping_sub(ONES * 0x20) & !x & HIGH != 0;
        if control || has_zero(x ^ (ONES * b'"' as u64)) || has_zero(x ^ (ONES * b'\\' as u64)) {
            return true;
        }
    }
    chunks
        .remainder()
        .iter()
        .any(|&c| c < 0x20 || c == b'"' || c == b'\\')
}

/// Appends `v` in decimal. The hot path of big answers (frame indexes, lines): `write!`
/// goes through the formatting machinery for each.
pub fn uint(out: &mut Vec<u8>, mut v: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[i..]);
}

/// Appends `v` as the JSON string `"0x…"` (lowercase hex, no leading zeros).
pub fn hex_string(out: &mut Vec<u8>, mut v: u64) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    i -= 1;
    buf[i] = b'"';
    loop {
        i -= 1;
        buf[i] = DIGITS[(v & 15) as usize];
        v >>= 4;
        if v == 0 {
            break;
        }
    }
    i -= 3;
    buf[i..i + 3].copy_from_slice(b"\"0x");
    out.extend_from_slice(&buf[i..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_are_found_anywhere() {
        assert!(!needs_escape(
            b"std::vector<int>::push_back(int const&) /usr/include/x.h"
        ));
        for bad in [
            "a\"b",
            "0123456789\\",
            "tab\there",
            "\u{1}",
            "long name without any escape but a quote at the end\"",
        ] {
            assert!(needs_escape(bad.as_bytes()), "{bad:?}");
        }
        let mut out = Vec::new();
        string(&mut out, "x\"y\\z\n");
        assert_eq!(out, br#""x\"y\\z\n""#);
    }

    #[test]
    fn numbers_match_the_formatter() {
        for v in [
            0u64,
            1,
            9,
            10,
            15,
            16,
            255,
            4096,
            123_456_789,
            u32::MAX as u64,
            u64::MAX,
        ] {
            let mut out = Vec::new();
            uint(&mut out, v);
            assert_eq!(out, v.to_string().as_bytes());
            let mut out = Vec::new();
            hex_string(&mut out, v);
            assert_eq!(out, format!("\"{v:#x}\"").as_bytes());
        }
    }
}

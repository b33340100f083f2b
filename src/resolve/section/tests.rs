use super::*;
// The decompression at once: outside a slice it never pauses.
use crate::resolve::pace::finish;

use std::io::Write;

fn zlib(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn budget(compressed: u64) -> Budget {
    let b = Budget::default();
    b.compressed.set(compressed);
    b
}

#[test]
fn the_limit_is_a_ratio_of_the_compressed_bytes_between_a_floor_and_a_ceiling() {
    assert_eq!(budget(0).limit(), BUDGET_FREE);
    assert_eq!(budget(1 << 20).limit(), BUDGET_FREE);
    assert_eq!(budget(6 << 20).limit(), 300 << 20);
    assert_eq!(budget(1 << 30).limit(), BUDGET_MAX);
    assert_eq!(budget(u64::MAX).limit(), BUDGET_MAX);
}

#[test]
fn sections_share_the_budget_and_a_claim_past_it_is_refused() {
    let b = budget(0);
    let packed = zlib(&vec![0; 40 << 20]);
    assert_eq!(
        finish(inflate(".debug_info", Codec::Zlib, &packed, 40 << 20, &b))
            .unwrap()
            .len(),
        40 << 20
    );
    // 24 MiB left of the 64 MiB floor: the same 40 MiB again is refused, unread.
    let e = finish(inflate(".debug_str", Codec::Zlib, &packed, 40 << 20, &b)).unwrap_err();
    assert_eq!(e.kind(), crate::resolve::LoadErrorKind::DecompressionLimit);
    let e = e.to_string();
    assert!(
        e.contains(".debug_str") && e.contains("limit of 67108864"),
        "{e}"
    );
}

#[test]
fn a_header_claiming_less_than_the_stream_holds_reads_only_the_claim() {
    let b = budget(0);
    let packed = zlib(&vec![0; 8 << 20]);
    let out = finish(inflate(".debug_info", Codec::Zlib, &packed, 1000, &b)).unwrap();
    assert_eq!(out.len(), 1000);
    assert_eq!(b.used.get(), 1000);
    // Claiming more than it holds is corrupt, and said so.
    let e = finish(inflate(".debug_line", Codec::Zlib, &zlib(b"abc"), 10, &b))
        .unwrap_err()
        .to_string();
    assert!(e.contains("decompressed to 3 bytes, expected 10"), "{e}");
}

fn zstd(data: &[u8]) -> Vec<u8> {
    ruzstd::encoding::compress_to_vec(data, ruzstd::encoding::CompressionLevel::Fastest)
}

/// A big section goes to a spill file and reads back as the one inflated in memory,
/// paced or not, for both codecs; the budget counts it the same.
#[cfg(target_os = "linux")]
#[test]
fn a_spilled_section_is_the_section_inflated_in_memory() {
    let mut x: u32 = 0x9e37_79b9;
    let text: Vec<u8> = (0..(SPILL_MIN as u32 / 4 + 12_345))
        .flat_map(|i| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            if i % 4 == 0 { x } else { i % 1021 }.to_le_bytes()
        })
        .collect();
    let claimed = text.len() as u64;
    for (codec, packed) in [(Codec::Zlib, zlib(&text)), (Codec::Zstd, zstd(&text))] {
        let b = budget(0);
        let spilled = finish(spill(codec, &packed, claimed)).expect("a spill file");
        assert!(*spilled == *text, "{codec:?}");
        let via = finish(inflate_section(".debug_info", codec, &packed, claimed, &b)).unwrap();
        assert!(*via == *text, "{codec:?}");
        assert_eq!(b.used.get(), claimed);
        // Paced: the same bytes, with pauses.
        let again = packed.clone();
        let mut load =
            crate::resolve::pace::Resumable::new(
                async move { spill(codec, &again, claimed).await },
            );
        let mut steps = 0;
        let out = loop {
            if let Some(out) = load.step(std::time::Instant::now()) {
                break out.expect("a spill file");
            }
            steps += 1;
        };
        assert!(*out == *text, "{codec:?}");
        assert!(steps >= 1, "{codec:?}: {steps} pauses");
        // A stream shorter than its claim is no spill: the memory path says why.
        let e = finish(inflate_section(
            ".debug_info",
            codec,
            &packed,
            claimed + 1,
            &b,
        ))
        .unwrap_err()
        .to_string();
        assert!(e.contains("expected"), "{e}");
    }
}

#[test]
fn a_section_decompressed_in_slices_is_the_one_decompressed_at_once() {
    // Half noise, half repeats: zlib's slices follow its input, zstd's its output.
    let mut x: u32 = 0x2545_f491;
    let text: Vec<u8> = (0..400_000u32)
        .flat_map(|i| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            if i % 2 == 0 { x } else { i % 251 }.to_le_bytes()
        })
        .collect();
    for (codec, packed) in [(Codec::Zlib, zlib(&text)), (Codec::Zstd, zstd(&text))] {
        // A deadline already past: a pause after every 256 KiB.
        let mut load = crate::resolve::pace::Resumable::new(async move {
            let b = budget(0);
            inflate(".debug_info", codec, &packed, 1_600_000, &b).await
        });
        let mut steps = 0;
        let out = loop {
            if let Some(out) = load.step(std::time::Instant::now()) {
                break out.unwrap();
            }
            steps += 1;
        };
        assert_eq!(out, text, "{codec:?}");
        assert!(steps >= 6, "{codec:?}: {steps} pauses");
    }
}

#[test]
fn zstd_sections_inflate_frame_after_frame_within_the_budget() {
    let b = budget(0);
    let text: Vec<u8> = (0..300_000u32)
        .flat_map(|i| (i % 251).to_le_bytes())
        .collect();
    // Two frames, with a skippable frame between (lld writes pieces; any may come).
    let mut packed = zstd(&text[..500_000]);
    packed.extend_from_slice(&0x184D_2A50u32.to_le_bytes());
    packed.extend_from_slice(&3u32.to_le_bytes());
    packed.extend_from_slice(b"xyz");
    packed.extend(zstd(&text[500_000..]));
    let out = finish(inflate(
        ".debug_info",
        Codec::Zstd,
        &packed,
        text.len() as u64,
        &b,
    ))
    .unwrap();
    assert!(out == text);
    assert_eq!(b.used.get(), text.len() as u64);
    // Past the budget: refused unread, as zlib.
    let e = finish(inflate(".debug_str", Codec::Zstd, &packed, 100 << 20, &b))
        .unwrap_err()
        .to_string();
    assert!(e.contains("limit of 67108864"), "{e}");
    // Truncated or shorter than claimed: said so.
    let e = finish(inflate(
        ".debug_line",
        Codec::Zstd,
        &packed[..1000],
        1 << 20,
        &b,
    ))
    .unwrap_err()
    .to_string();
    assert!(e.contains("section .debug_line:"), "{e}");
    let e = finish(inflate(".debug_line", Codec::Zstd, &zstd(b"abc"), 10, &b))
        .unwrap_err()
        .to_string();
    assert!(e.contains("decompressed to 3 bytes, expected 10"), "{e}");
    // A claim shorter than the stream: only the claim is read.
    let out = finish(inflate(".debug_line", Codec::Zstd, &packed, 1000, &b)).unwrap();
    assert!(out == text[..1000]);
}

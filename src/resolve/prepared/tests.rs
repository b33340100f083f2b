use super::build::Builder;
use super::*;
use crate::resolve::types::{InlineFrame, Symbolized};

#[test]
fn every_single_bit_flip_changes_the_hash() {
    let mut data: Vec<u8> = (0..1000u32).map(|i| (i * 7 + 3) as u8).collect();
    let h = hash(&data);
    for bit in 0..data.len() * 8 {
        data[bit / 8] ^= 1 << (bit % 8);
        assert_ne!(hash(&data), h, "bit {bit}");
        data[bit / 8] ^= 1 << (bit % 8);
    }
    assert_ne!(hash(&data[..999]), h);
}

fn frame(f: &str, file: &str, line: u32) -> InlineFrame {
    InlineFrame {
        function: Some(f.into()),
        file: Some(file.into()),
        line: Some(line),
    }
}

/// Answers of a made-up module: functions with lines, some with inlined calls two deep,
/// gaps between them; (start of each run, its answer there).
fn runs() -> Vec<(u64, Option<Symbolized>)> {
    let mut out = Vec::new();
    for f in 0..40u64 {
        let base = 0x1000 + f * 0x100;
        for k in 0..6u64 {
            let inlines = match k % 3 {
                0 => vec![],
                1 => vec![frame(&format!("inl{f}<int>()"), "a/ü.h", 10 + k as u32)],
                _ => vec![
                    frame(&format!("inner{f}()"), "b.h", 3),
                    frame(&format!("inl{f}<int>()"), "a/ü.h", 12),
                ],
            };
            out.push((
                base + k * 0x10,
                Some(Symbolized {
                    function: format!("ns::func{f}(int, char const*)").into(),
                    function_offset: k * 0x10,
                    function_size: (f % 5 != 0).then_some(0x60),
                    file: Some("src/x.cpp".into()),
                    line: (k != 4).then_some(100 + k as u32),
                    inlines,
                }),
            ));
        }
        out.push((base + 0x60, None));
    }
    out
}

/// The answer at `offset` as the runs give it.
fn expected(runs: &[(u64, Option<Symbolized>)], offset: u64) -> Option<Symbolized> {
    let i = runs.partition_point(|r| r.0 <= offset).checked_sub(1)?;
    let (start, s) = &runs[i];
    let mut s = s.clone()?;
    s.function_offset += offset - start;
    Some(s)
}

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("pss-prepared-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write_index(dir: &std::path::Path) -> (std::path::PathBuf, Vec<u8>) {
    let source = dir.join("lib.debug");
    std::fs::write(&source, b"debug bytes").unwrap();
    let mut b = Builder::default();
    for (start, s) in runs() {
        b.add(start, s.as_ref()).unwrap();
    }
    let meta = Meta {
        debug_name: "lib.so".into(),
        debug_id: "ABC0".into(),
        sources: vec![Source::of(&source).unwrap()],
        debug_file: source.to_string_lossy().into_owned(),
        warnings: vec![],
        rows: 0,
        nodes: 0,
        funcs: 0,
        strings: 0,
    };
    let path = dir.join("lib.psidx");
    let mut f = std::fs::File::create(&path).unwrap();
    b.write(meta, &mut f).unwrap();
    drop(f);
    let bytes = std::fs::read(&path).unwrap();
    (path, bytes)
}

#[test]
fn an_index_answers_as_the_runs_it_was_built_from() {
    let dir = scratch("answers");
    let (path, _) = write_index(&dir);
    let p = Prepared::open(&path, "lib.so", "ABC0").unwrap();
    let runs = runs();
    let mut memo = Memo::default();
    for offset in (0..0x4000).chain([u32::MAX as u64]) {
        assert_eq!(
            p.lookup(offset, &mut memo).unwrap(),
            expected(&runs, offset),
            "{offset:#x}"
        );
    }
    assert!(matches!(
        Prepared::open(&path, "lib.so", "ABC1"),
        Err(Rejected::Foreign)
    ));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every byte of the file changed in turn: the index is refused, or answers as before,
/// or reports the damage when it reads it; never another answer, never a panic.
#[test]
fn a_damaged_byte_anywhere_never_changes_an_answer() {
    let dir = scratch("damage");
    let (path, good) = write_index(&dir);
    let runs = runs();
    let offsets: Vec<u64> = (0x0f00..0x3900).step_by(3).collect();
    for at in 0..good.len() {
        let mut bad = good.clone();
        bad[at] ^= 0x5a;
        std::fs::write(&path, &bad).unwrap();
        let Ok(p) = Prepared::open(&path, "lib.so", "ABC0") else {
            continue;
        };
        let mut memo = Memo::default();
        for &o in &offsets {
            match p.lookup(o, &mut memo) {
                Ok(s) => assert_eq!(s, expected(&runs, o), "byte {at} changed, {o:#x}"),
                Err(_) => break,
            }
        }
    }
    // Cut short anywhere: refused.
    for len in (0..good.len()).step_by(7) {
        std::fs::write(&path, &good[..len]).unwrap();
        assert!(Prepared::open(&path, "lib.so", "ABC0").is_err(), "{len}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

use super::*;
use crate::resolve::bytes::FileBytes;
use std::rc::Rc;

/// A type stream of `records` (items from 0x1000), in one piece.
fn store<I: pdb::ItemIndex>(records: &[Vec<u8>]) -> ItemStore<I> {
    let mut s = vec![0u8; 56];
    for (at, v) in [(4, 56u32), (8, 0x1000), (12, 0x1000 + records.len() as u32)] {
        s[at..at + 4].copy_from_slice(&v.to_le_bytes());
    }
    for r in records {
        s.extend_from_slice(&(r.len() as u16).to_le_bytes());
        s.extend_from_slice(r);
    }
    let slices = [pdb::SourceSlice {
        offset: 0,
        size: s.len(),
    }];
    ItemStore::new(Rc::new(FileBytes::from_vec(s)), &slices).unwrap()
}

fn record(kind: u16, fields: &[u32]) -> Vec<u8> {
    let mut r = kind.to_le_bytes().to_vec();
    for f in fields {
        r.extend_from_slice(&f.to_le_bytes());
    }
    r
}

/// A crafted type stream: one class with a 2 000-byte name, 30 levels of
/// pointers to it, and 300 functions each taking a different mix of them: every
/// (type, depth) text is kilobytes long. With the memo's bound at 16 KB the text it
/// holds stays under it, and every name is the one an unbounded memo gives.
#[test]
fn the_memo_of_written_types_stays_within_its_bound() {
    let name = "C".repeat(2000);
    // LF_CLASS: count, properties, fields, derived, vshape, size 8, name.
    let mut class = 0x1504u16.to_le_bytes().to_vec();
    class.extend_from_slice(&[0, 0, 0x80, 0]); // count 0, forward reference
    class.extend_from_slice(&[0; 12]);
    class.extend_from_slice(&8u16.to_le_bytes());
    class.extend_from_slice(name.as_bytes());
    class.push(0);
    let mut records = vec![class];
    // LF_POINTER to the previous type: 64-bit, 8 bytes.
    for level in 0..30u32 {
        records.push(record(0x1002, &[0x1000 + level, 0x0c | (8 << 13)]));
    }
    let mut procedures = Vec::new();
    for f in 0..300u32 {
        let args: Vec<u32> = (0..3).map(|k| 0x1001 + (f * 7 + k * 11) % 30).collect();
        let arglist = 0x1000 + records.len() as u32;
        let mut list = vec![args.len() as u32];
        list.extend(&args);
        records.push(record(0x1201, &list));
        // LF_PROCEDURE: returns void (0x0003), C calling convention, 3 parameters.
        let mut p = record(0x1008, &[0x0003]);
        p.extend_from_slice(&[0, 0]);
        p.extend_from_slice(&3u16.to_le_bytes());
        p.extend_from_slice(&arglist.to_le_bytes());
        procedures.push(0x1000 + records.len() as u32);
        records.push(p);
    }
    let types = store::<TypeIndex>(&records);
    let ids = store::<IdIndex>(&[]);
    let unbounded = NameFormatter::new(&types, &ids, 8);
    let mut bounded = NameFormatter::new(&types, &ids, 8);
    bounded.max_written = 16 << 10;
    let mut peak = 0;
    for &p in &procedures {
        let want = unbounded.function("f", TypeIndex(p));
        assert!(want.as_ref().is_some_and(|w| w.contains(&name)), "{p:#x}");
        assert_eq!(bounded.function("f", TypeIndex(p)), want, "{p:#x}");
        peak = peak.max(bounded.written_bytes.get());
        let held: usize = bounded.written.borrow().values().map(|t| t.len()).sum();
        assert!(held <= 16 << 10, "{held} bytes held");
    }
    // The unbounded memo went far past it: the bound is what kept the other small.
    assert!(unbounded.written_bytes.get() > 20 * (16 << 10));
    assert!(peak > 8 << 10);
}

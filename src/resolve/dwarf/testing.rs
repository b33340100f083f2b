//! What the DWARF readers' tests share (the fixtures and how their DWARF is loaded), and
//! the resolver's own tests.

use std::path::Path;
use std::rc::Rc;

use gimli::RunTimeEndian;

use super::{Bytes, DwarfResolver, R};

/// Test inputs of the batch path's readers: own-corpus binaries from gcc and clang, DWARF 4
/// and 5, -O0 to -O2.
pub(super) const READER_FIXTURES: &[&str] = &[
    "fixtures/corpus/elf/shapes-clang19-O2-dwarf5-nopie",
    "fixtures/corpus/elf/shapes-clang19-O0-dwarf4",
    "fixtures/corpus/elf/shapes-gcc-O0-dwarf5",
    "fixtures/corpus/elf/shapes-gcc-Os-dwarf4",
    "fixtures/corpus/elf/tmpl-gcc-O2-dwarf4",
    "fixtures/corpus/elf/tmpl-clang19-O2-dwarf5",
    "fixtures/corpus/elf/libmathlib-gcc-O0.so",
];

/// The DWARF of a fixture (relative to the crate).
pub(super) fn fixture_dwarf(path: &str) -> gimli::Dwarf<R> {
    use object::{Object, ObjectSection};
    let full = format!("{}/{path}", env!("CARGO_MANIFEST_DIR"));
    let data = Rc::new(crate::resolve::bytes::FileBytes::open(Path::new(&full)).unwrap());
    let file = object::File::parse(&**data).unwrap();
    gimli::Dwarf::load(|id| -> Result<R, gimli::Error> {
        let bytes = file
            .section_by_name(id.name())
            .and_then(|s| s.data().ok())
            .unwrap_or(&[]);
        Ok(R::new(Bytes::of(&data, bytes), RunTimeEndian::Little))
    })
    .unwrap()
}

#[test]
fn debug_info_is_read_once() {
    // gimli's loader asks for other sections before `.debug_info`: the one read first must
    // not be given away on the first call (a compressed one was decompressed twice).
    use object::{Object, ObjectSection};
    let full = format!("{}/{}", env!("CARGO_MANIFEST_DIR"), READER_FIXTURES[0]);
    let data = Rc::new(crate::resolve::bytes::FileBytes::open(Path::new(&full)).unwrap());
    let file = object::File::parse(&**data).unwrap();
    let mut asked: Vec<String> = Vec::new();
    let dwarf = DwarfResolver::new(
        &mut |name| {
            asked.push(name.to_string());
            Ok(file
                .section_by_name(name)
                .and_then(|s| s.data().ok())
                .map(|d| Bytes::of(&data, d)))
        },
        RunTimeEndian::Little,
        Path::new(&full),
        Rc::default(),
    )
    .unwrap();
    assert!(dwarf.is_some());
    let reads = asked.iter().filter(|n| *n == ".debug_info").count();
    assert_eq!(reads, 1, "{asked:?}");
}

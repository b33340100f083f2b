//! A function's address range from unwind information: a leaf that the unwind-table
//! readers, the code scanner and the function table all use.

/// A function range from unwind information. `primary` is set for a part of a function
/// (a chained `.pdata` entry): the `[start, end)` of the function it belongs to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Range {
    pub start: u64,
    pub end: u64,
    pub primary: Option<(u64, u64)>,
}

impl Range {
    pub fn new(start: u64, end: u64) -> Range {
        Range {
            start,
            end,
            primary: None,
        }
    }
}

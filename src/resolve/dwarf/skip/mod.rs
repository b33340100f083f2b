//! Stepping over DIEs without decoding them. A batch walks every DIE of the units it
//! asks about (tens of megabytes on a big binary) and reads the attributes of few: for the
//! rest, gimli's `skip_attributes` works out each attribute's size from its form, DIE
//! after DIE. Here each abbreviation's sizes are worked out once per unit into a plan
//! (runs of fixed-size attributes merged), so most DIEs are stepped over with one add.

use gimli::{Abbreviations, AttributeValue, DwTag, UnitHeader};

use super::R;

/// One step over an abbreviation's attributes.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Step {
    Fixed(usize),
    /// A LEB128 number.
    Leb,
    /// A block whose length is in the 1, 2 or 4 bytes before it.
    Block(u8),
    /// A block whose length is a ULEB128 before it (`DW_FORM_block`, `exprloc`).
    BlockLeb,
    /// A NUL-terminated string.
    Str,
    /// An address range attribute (`DW_AT_low_pc`, `high_pc`, `ranges`) of a subprogram
    /// or inlined call: read when the caller wants the DIE's ranges, else stepped over
    /// as `size` says (bytes, or [`LEB`]).
    Range {
        index: u32,
        form: Form,
        size: u8,
    },
}

/// The `size` of a [`Step::Range`] that is a LEB128.
const LEB: u8 = u8::MAX;

/// An address range attribute: `DW_AT_low_pc`, `high_pc` or `ranges`.
fn range_attr(name: gimli::DwAt) -> bool {
    matches!(
        name,
        gimli::DW_AT_low_pc | gimli::DW_AT_high_pc | gimli::DW_AT_ranges
    )
}

/// How a range attribute is read: its value decoded here for the forms compilers use,
/// as gimli's `Attribute::value` gives it; by gimli for any other.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Form {
    /// `DW_FORM_addr`.
    Addr,
    /// `DW_FORM_data1`-`data8` of `DW_AT_high_pc` (an offset from the low pc).
    Data,
    /// `DW_FORM_udata` of `DW_AT_high_pc`.
    Udata,
    /// `DW_FORM_sec_offset` of `DW_AT_ranges`.
    RangesOffset,
    /// `DW_FORM_addrx*`: an index into `.debug_addr`.
    AddrIndex,
    /// `DW_FORM_rnglistx` of `DW_AT_ranges`.
    RangesIndex,
    Gimli,
}

fn range_form(name: gimli::DwAt, form: gimli::DwForm) -> Form {
    match (name, form) {
        (gimli::DW_AT_low_pc | gimli::DW_AT_high_pc, gimli::DW_FORM_addr) => Form::Addr,
        (
            gimli::DW_AT_low_pc | gimli::DW_AT_high_pc,
            gimli::DW_FORM_addrx
            | gimli::DW_FORM_GNU_addr_index
            | gimli::DW_FORM_addrx1
            | gimli::DW_FORM_addrx2
            | gimli::DW_FORM_addrx3
            | gimli::DW_FORM_addrx4,
        ) => Form::AddrIndex,
        (
            gimli::DW_AT_high_pc,
            gimli::DW_FORM_data1
            | gimli::DW_FORM_data2
            | gimli::DW_FORM_data4
            | gimli::DW_FORM_data8,
        ) => Form::Data,
        (gimli::DW_AT_high_pc, gimli::DW_FORM_udata) => Form::Udata,
        (gimli::DW_AT_ranges, gimli::DW_FORM_sec_offset) => Form::RangesOffset,
        (gimli::DW_AT_ranges, gimli::DW_FORM_rnglistx) => Form::RangesIndex,
        _ => Form::Gimli,
    }
}

/// How to step over an attribute of this form; `None`: a form only gimli reads
/// (`DW_FORM_indirect`, unknown forms).
fn step_of(spec: &gimli::AttributeSpecification, header: &UnitHeader<R>) -> Option<Step> {
    if let Some(n) = spec.size(header) {
        return Some(Step::Fixed(n));
    }
    Some(match spec.form() {
        gimli::DW_FORM_block1 => Step::Block(1),
        gimli::DW_FORM_block2 => Step::Block(2),
        gimli::DW_FORM_block4 => Step::Block(4),
        gimli::DW_FORM_block | gimli::DW_FORM_exprloc => Step::BlockLeb,
        gimli::DW_FORM_string => Step::Str,
        gimli::DW_FORM_udata
        | gimli::DW_FORM_sdata
        | gimli::DW_FORM_ref_udata
        | gimli::DW_FORM_strx
        | gimli::DW_FORM_GNU_str_index
        | gimli::DW_FORM_addrx
        | gimli::DW_FORM_GNU_addr_index
        | gimli::DW_FORM_loclistx
        | gimli::DW_FORM_rnglistx => Step::Leb,
        _ => return None,
    })
}

#[derive(Clone, Copy)]
struct Plan {
    tag: DwTag,
    children: bool,
    /// A subprogram with none of `DW_AT_low_pc`, `high_pc`, `ranges`: a declaration or an
    /// abstract instance, which covers no address. Outside a subprogram being read, the
    /// walk does nothing with it, and its children are stepped over as any others (a
    /// member function's declaration in every class of every unit: in C++, more of them
    /// than of definitions).
    no_range: bool,
    /// `steps[first..first + count]`; `None`: a form only gimli reads.
    steps: Option<(u32, u32)>,
    /// All its attributes together are this many bytes (the common case).
    fixed: Option<u32>,
}

impl Plan {
    /// This plan in [`Plans::skips`]' form; `steps` are its steps.
    fn skip_word(&self, steps: &[Step]) -> u32 {
        let mut w = match self.steps {
            None => UNPLANNED,
            Some(_) => shape(steps),
        };
        if self.children {
            w |= CHILDREN;
        }
        match self.tag {
            gimli::DW_TAG_subprogram if !self.no_range => w |= STOP,
            gimli::DW_TAG_subprogram | gimli::DW_TAG_inlined_subroutine => w |= STOP_INSIDE,
            _ => {}
        }
        w
    }
}

/// How [`Cursor::skip_others`] steps over attributes `steps`: all of a fixed size
/// ([`SIZE`] bytes), fixed bytes around one number, block or string ([`ONE_VARIABLE`]:
/// an enumerator's value, a variable's location expression; most DIEs that are not of
/// a fixed size), or step by step ([`VARIABLE`]).
fn shape(steps: &[Step]) -> u32 {
    let (mut before, mut after, mut variable) = (0usize, 0usize, None);
    for step in steps {
        let fixed = match *step {
            Step::Fixed(n) => Some(n),
            Step::Range { size, .. } if size != LEB => Some(usize::from(size)),
            _ => None,
        };
        match (fixed, variable) {
            (Some(n), None) => before += n,
            (Some(n), Some(_)) => after += n,
            (None, None) => {
                variable = Some(match step {
                    Step::Leb | Step::Range { size: LEB, .. } => KIND_LEB,
                    Step::BlockLeb => KIND_BLOCK,
                    Step::Str => KIND_STR,
                    _ => return VARIABLE,
                })
            }
            (None, Some(_)) => return VARIABLE,
        }
    }
    match variable {
        None if before <= SIZE as usize => before as u32,
        Some(kind) if before < 1 << 10 && after < 1 << 10 => {
            ONE_VARIABLE | before as u32 | (after as u32) << 10 | kind << 20
        }
        _ => VARIABLE,
    }
}

/// The plans of one unit's abbreviations, reused from unit to unit.
#[derive(Default)]
pub(super) struct Plans {
    plans: Vec<Plan>,
    steps: Vec<Step>,
    /// By abbreviation code less one, what [`Cursor::skip_others`] needs of its plan in
    /// one word: the size of its attributes when fixed ([`SIZE`]) and the flags below.
    /// One 4-byte load per DIE where the plan's fields were read: a cold request at
    /// libxul's size is 2.5 % faster (that loop is most of its time).
    skips: Vec<u32>,
}

/// In [`Plans::skips`]: the size of a DIE's attributes, when fixed.
const SIZE: u32 = (1 << 20) - 1;
/// Its attributes are fixed bytes (bits 0-9), one variable-size value of the kind in
/// bits 20-21, and fixed bytes again (bits 10-19).
const ONE_VARIABLE: u32 = 1 << 22;
const KIND_LEB: u32 = 0;
const KIND_BLOCK: u32 = 1;
const KIND_STR: u32 = 2;
/// Its attributes are stepped over by its plan's steps.
const VARIABLE: u32 = 1 << 23;
/// Has children.
const CHILDREN: u32 = 1 << 24;
/// A subprogram with an address range: the walk reads it.
const STOP: u32 = 1 << 25;
/// A subprogram without one, or an inlined call: the walk reads it inside a subprogram
/// holding an address asked.
const STOP_INSIDE: u32 = 1 << 26;
/// No plan (a form only gimli reads): left to [`Cursor::next`].
const UNPLANNED: u32 = 1 << 27;

impl Plans {
    /// Plans for the abbreviations numbered 1, 2, … of `abbrevs` (compilers number them
    /// so); any other code is looked up in `abbrevs` as it comes.
    pub(super) fn build(&mut self, header: &UnitHeader<R>, abbrevs: &Abbreviations) {
        self.plans.clear();
        self.steps.clear();
        self.skips.clear();
        let mut code = 1;
        while let Some(a) = abbrevs.get(code) {
            let first = self.steps.len();
            let ranged = matches!(
                a.tag(),
                gimli::DW_TAG_subprogram | gimli::DW_TAG_inlined_subroutine
            );
            let mut ok = true;
            for (i, spec) in a.attributes().iter().enumerate() {
                let Some(mut step) = step_of(spec, header) else {
                    ok = false;
                    break;
                };
                let size = match step {
                    Step::Fixed(n) => u8::try_from(n).ok().filter(|&n| n != LEB),
                    Step::Leb => Some(LEB),
                    _ => None,
                };
                // Blocks and strings of these attributes give no range (`RangeAttrs::take`).
                if ranged
                    && let Some(size) = size
                    && range_attr(spec.name())
                {
                    // An empty form (`implicit_const`) or an odd address size: gimli's
                    // reading, errors included.
                    let form = match (size, range_form(spec.name(), spec.form())) {
                        (0, _) | (3 | 5..=7, Form::Addr) => Form::Gimli,
                        (_, form) => form,
                    };
                    step = Step::Range {
                        index: i as u32,
                        form,
                        size,
                    };
                }
                let merge = self.steps.len() > first;
                match (self.steps.last_mut(), step) {
                    (Some(Step::Fixed(n)), Step::Fixed(m)) if merge => *n += m,
                    _ => self.steps.push(step),
                }
            }
            if !ok {
                self.steps.truncate(first);
            }
            let fixed = match (ok, &self.steps[first..]) {
                (true, []) => Some(0),
                (true, [Step::Fixed(n)]) => u32::try_from(*n).ok(),
                _ => None,
            };
            let no_range = a.tag() == gimli::DW_TAG_subprogram
                && !a.attributes().iter().any(|spec| range_attr(spec.name()));
            let plan = Plan {
                tag: a.tag(),
                children: a.has_children(),
                no_range,
                steps: ok.then(|| (first as u32, (self.steps.len() - first) as u32)),
                fixed,
            };
            self.skips.push(plan.skip_word(&self.steps[first..]));
            self.plans.push(plan);
            code += 1;
        }
    }
}

/// A position in a unit's DIEs.
pub(super) struct Cursor<'a> {
    unit: &'a gimli::UnitRef<'a, R>,
    bytes: &'a [u8],
    /// The unit offset of `bytes[0]`.
    base: usize,
    pos: usize,
    depth: isize,
    big_endian: bool,
}

/// The number in the ≤ 8 bytes `b`. (A copy of `b.len()` bytes into an array is a call
/// to `memcpy`, which musl's static build makes slow on the hot path.)
#[inline(always)]
pub(super) fn uint(b: &[u8], big_endian: bool) -> u64 {
    macro_rules! int {
        ($t:ty) => {{
            let a = b.try_into().unwrap_or_default();
            u64::from(if big_endian {
                <$t>::from_be_bytes(a)
            } else {
                <$t>::from_le_bytes(a)
            })
        }};
    }
    match b.len() {
        1 => u64::from(b[0]),
        2 => int!(u16),
        4 => int!(u32),
        8 => int!(u64),
        n => b.iter().enumerate().fold(0, |v, (i, &x)| {
            let shift = if big_endian { 8 * (n - 1 - i) } else { 8 * i };
            v | u64::from(x) << shift
        }),
    }
}

fn eof() -> gimli::Error {
    gimli::Error::UnexpectedEof(gimli::ReaderOffsetId(0))
}

impl<'a> Cursor<'a> {
    /// At the unit's first DIE.
    pub(super) fn new(unit: &'a gimli::UnitRef<'a, R>) -> gimli::Result<Cursor<'a>> {
        let root = unit.header.root_offset();
        // The unit's DIEs as a part of its `.debug_info` (borrowed for `'a`, where the
        // header's own reader would be a value of this function).
        let Some(at) = unit.header.debug_info_offset() else {
            return Err(gimli::Error::UnsupportedOffset);
        };
        let section = gimli::Section::reader(&unit.dwarf.debug_info);
        let end = at.0.checked_add(unit.header.length_including_self());
        let bytes = end
            .and_then(|end| section.slice().get(at.0.checked_add(root.0)?..end))
            .ok_or_else(eof)?;
        Ok(Cursor {
            unit,
            bytes,
            base: root.0,
            pos: 0,
            depth: 0,
            big_endian: gimli::Endianity::is_big_endian(gimli::Reader::endian(section)),
        })
    }

    #[inline(always)]
    pub(super) fn is_empty(&self) -> bool {
        self.pos >= self.bytes.len()
    }

    /// The unit offset of the next DIE.
    #[inline(always)]
    pub(super) fn offset(&self) -> gimli::UnitOffset<usize> {
        gimli::UnitOffset(self.base + self.pos)
    }

    /// The depth of the next DIE, as gimli's `EntriesRaw::next_depth` counts it.
    #[inline(always)]
    pub(super) fn depth(&self) -> isize {
        self.depth
    }

    #[inline(always)]
    fn byte(&mut self) -> gimli::Result<u8> {
        let b = *self.bytes.get(self.pos).ok_or_else(eof)?;
        self.pos += 1;
        Ok(b)
    }

    #[inline(always)]
    fn uleb(&mut self) -> gimli::Result<u64> {
        let mut value = 0u64;
        let mut shift = 0;
        loop {
            let b = self.byte()?;
            if shift == 63 && b > 1 {
                return Err(gimli::Error::BadUnsignedLeb128);
            }
            value |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(value);
            }
            shift += 7;
        }
    }

    #[inline(always)]
    fn skip(&mut self, n: usize) -> gimli::Result<()> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.bytes.len());
        self.pos = end.ok_or_else(eof)?;
        Ok(())
    }

    /// A number of `n` ≤ 8 bytes.
    #[inline(always)]
    fn fixed(&mut self, n: usize) -> gimli::Result<u64> {
        if n > 8 {
            return Err(gimli::Error::UnsupportedAddressSize(n as u8));
        }
        let b = self.bytes.get(self.pos..self.pos + n).ok_or_else(eof)?;
        self.pos += n;
        Ok(uint(b, self.big_endian))
    }

    /// Steps over attributes of the [`ONE_VARIABLE`] shape `word`.
    #[inline(always)]
    fn skip_one_variable(&mut self, word: u32) -> gimli::Result<()> {
        self.skip((word & 0x3ff) as usize)?;
        self.step(match word >> 20 & 3 {
            KIND_LEB => Step::Leb,
            KIND_BLOCK => Step::BlockLeb,
            _ => Step::Str,
        })?;
        self.skip((word >> 10 & 0x3ff) as usize)
    }

    #[inline(always)]
    fn step(&mut self, step: Step) -> gimli::Result<()> {
        match step {
            Step::Fixed(n) => self.skip(n),
            Step::Leb | Step::Range { size: LEB, .. } => {
                while self.byte()? & 0x80 != 0 {}
                Ok(())
            }
            Step::Block(n) => {
                let len = self.fixed(usize::from(n))?;
                self.skip(usize::try_from(len).map_err(|_| eof())?)
            }
            Step::BlockLeb => {
                let len = self.uleb()?;
                self.skip(usize::try_from(len).map_err(|_| eof())?)
            }
            Step::Str => {
                let n = memchr::memchr(0, &self.bytes[self.pos..]).ok_or_else(eof)?;
                self.pos += n + 1;
                Ok(())
            }
            Step::Range { size, .. } => self.skip(usize::from(size)),
        }
    }

    /// Steps over DIEs the walk does nothing with, while the next DIE's depth is above
    /// `floor`: null entries, and DIEs whose tag is neither a subprogram nor, where
    /// `inlines_too`, an inlined call; without `inlines_too`, subprograms without address
    /// attributes too (`Plan::no_range`). Stops at anything else (an abbreviation without a
    /// plan, a read past the end included: [`Self::next`] then reads or reports it).
    /// Most of a big unit's DIEs are variables, parameters, types and call sites: stepped
    /// over here without the per-DIE work of the walk's loop.
    #[inline(always)]
    pub(super) fn skip_others(&mut self, plans: &Plans, floor: isize, inlines_too: bool) {
        let stop = UNPLANNED
            | if inlines_too {
                STOP | STOP_INSIDE
            } else {
                STOP
            };
        while self.depth > floor {
            let Some(&b) = self.bytes.get(self.pos) else {
                return;
            };
            if b == 0 {
                self.pos += 1;
                self.depth -= 1;
                continue;
            }
            // One- and two-byte codes (a big C++ unit has a few hundred abbreviations);
            // longer ones go through `next`.
            let (code, len) = if b < 0x80 {
                (usize::from(b), 1)
            } else {
                match self.bytes.get(self.pos + 1) {
                    Some(&c) if c < 0x80 => (usize::from(b & 0x7f) | usize::from(c) << 7, 2),
                    _ => return,
                }
            };
            let Some(&word) = plans.skips.get(code.wrapping_sub(1)) else {
                return;
            };
            if word & stop != 0 {
                return;
            }
            let start = self.pos;
            self.pos += len;
            let stepped = if word & (VARIABLE | ONE_VARIABLE) == 0 {
                self.skip((word & SIZE) as usize)
            } else if word & ONE_VARIABLE != 0 {
                self.skip_one_variable(word)
            } else {
                match plans.plans[code - 1].steps {
                    Some((first, count)) => plans.steps[first as usize..(first + count) as usize]
                        .iter()
                        .try_for_each(|&step| self.step(step)),
                    None => Err(eof()),
                }
            };
            if stepped.is_err() {
                self.pos = start;
                return;
            }
            if word & CHILDREN != 0 {
                self.depth += 1;
            }
        }
    }

    /// Steps over the next DIE; `None` for the null entry closing a list of children,
    /// else its tag. Where `wanted(tag)`, its address range attributes are handed to
    /// `take` as gimli reads them.
    pub(super) fn next(
        &mut self,
        plans: &Plans,
        wanted: impl Fn(DwTag) -> bool,
        take: &mut dyn FnMut(gimli::DwAt, AttributeValue<R>) -> gimli::Result<()>,
    ) -> gimli::Result<Option<DwTag>> {
        let start = self.pos;
        // Abbreviation codes are mostly below 128: one byte.
        let code = match self.bytes.get(start) {
            Some(&b) if b < 0x80 => {
                self.pos += 1;
                u64::from(b)
            }
            _ => self.uleb()?,
        };
        if code == 0 {
            self.depth -= 1;
            return Ok(None);
        }
        let plan = usize::try_from(code - 1)
            .ok()
            .and_then(|i| plans.plans.get(i));
        let Some((plan, (first, count))) = plan.and_then(|p| Some((p, p.steps?))) else {
            return self.next_by_gimli(start, code, wanted, take);
        };
        if plan.children {
            self.depth += 1;
        }
        if let Some(n) = plan.fixed {
            self.skip(n as usize)?;
            return Ok(Some(plan.tag));
        }
        let read = wanted(plan.tag);
        for &step in &plans.steps[first as usize..(first + count) as usize] {
            match step {
                Step::Range { index, form, size } if read => {
                    self.read_range(code, index, form, size, take)?
                }
                Step::Fixed(n) => self.skip(n)?,
                _ => self.step(step)?,
            }
        }
        Ok(Some(plan.tag))
    }

    fn read_range(
        &mut self,
        code: u64,
        index: u32,
        form: Form,
        size: u8,
        take: &mut dyn FnMut(gimli::DwAt, AttributeValue<R>) -> gimli::Result<()>,
    ) -> gimli::Result<()> {
        let abbrev = self.unit.abbreviations.get(code);
        let spec = abbrev.and_then(|a| a.attributes().get(index as usize));
        let spec = *spec.ok_or(gimli::Error::InvalidAbbreviationCode(code))?;
        let number = |c: &mut Self| match size {
            LEB => c.uleb(),
            n => c.fixed(usize::from(n)),
        };
        let value = match form {
            Form::Addr => AttributeValue::Addr(number(self)?),
            Form::Data | Form::Udata => AttributeValue::Udata(number(self)?),
            Form::RangesOffset => {
                let offset = usize::try_from(number(self)?).map_err(|_| eof())?;
                AttributeValue::RangeListsRef(gimli::RawRangeListsOffset(offset))
            }
            Form::AddrIndex => {
                let i = usize::try_from(number(self)?).map_err(|_| eof())?;
                AttributeValue::DebugAddrIndex(gimli::DebugAddrIndex(i))
            }
            Form::RangesIndex => {
                let i = usize::try_from(number(self)?).map_err(|_| eof())?;
                AttributeValue::DebugRngListsIndex(gimli::DebugRngListsIndex(i))
            }
            Form::Gimli => {
                let mut entries = self.unit.entries_raw(Some(self.offset()))?;
                let attr = entries.read_attribute(spec)?;
                self.pos = entries.next_offset().0 - self.base;
                attr.value()
            }
        };
        take(spec.name(), value)
    }

    /// [`Self::next`] for an abbreviation without a plan, all by gimli.
    fn next_by_gimli(
        &mut self,
        start: usize,
        code: u64,
        wanted: impl Fn(DwTag) -> bool,
        take: &mut dyn FnMut(gimli::DwAt, AttributeValue<R>) -> gimli::Result<()>,
    ) -> gimli::Result<Option<DwTag>> {
        let abbrev = self
            .unit
            .abbreviations
            .get(code)
            .ok_or(gimli::Error::InvalidAbbreviationCode(code))?;
        let mut entries = self
            .unit
            .entries_raw(Some(gimli::UnitOffset(self.base + start)))?;
        entries.read_abbreviation()?;
        if wanted(abbrev.tag()) {
            for spec in abbrev.attributes() {
                let attr = entries.read_attribute(*spec)?;
                take(attr.name(), attr.value())?;
            }
        } else {
            entries.skip_attributes(abbrev.attributes())?;
        }
        self.pos = entries.next_offset().0 - self.base;
        if abbrev.has_children() {
            self.depth += 1;
        }
        Ok(Some(abbrev.tag()))
    }
}

#[cfg(test)]
mod tests;

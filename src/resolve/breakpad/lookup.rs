//! Looking addresses up in an indexed `.sym`: the FUNC block an address falls in, parsed
//! for the run of asked offsets that fall in it (`block.rs`), names read once per request,
//! PUBLIC records for the rest.

use std::collections::HashMap;

use super::block::{Block, Inline};
use super::*;

impl SymFile {
    /// Resolves module offsets (ascending), reading the mapping in place, each answer
    /// handed over as it is known (in order): a big request's answers are never all held.
    pub fn lookup_each(&self, offsets: &[u64], found: &mut dyn FnMut(usize, Option<Symbolized>)) {
        let mut state = Request::default();
        for i in 0..offsets.len() {
            found(i, self.lookup(&mut state, offsets, i));
        }
        give_back(&self.data, &self.data);
    }

    /// The name of `FILE n` / `INLINE_ORIGIN n` ("FILE n name": the name may contain
    /// spaces), read once per request.
    fn named(
        &self,
        table: &[(u32, u64)],
        memo: &mut HashMap<u32, Option<Text>>,
        n: Option<u32>,
        shown: fn(Text) -> Text,
    ) -> Option<Text> {
        let n = n?;
        memo.entry(n)
            .or_insert_with(|| {
                let off = offset_of(table, n)?;
                let line = line_at(&self.data, off)?;
                Some(shown(line.splitn(3, ' ').nth(2)?.into()))
            })
            .clone()
    }

    /// The answer for `offsets[at]`. A FUNC's block is parsed for the run of offsets
    /// from `at` on that fall in it (ascending offsets: all of its own), and kept for
    /// them.
    fn lookup(&self, state: &mut Request, offsets: &[u64], at: usize) -> Option<Symbolized> {
        let addr = offsets[at];
        let data: &[u8] = &self.data;
        let i = self.funcs.partition_point(|f| f.addr <= addr);
        let func_index = i.checked_sub(1).filter(|&j| {
            let f = &self.funcs[j];
            addr < f.addr.saturating_add(f.size)
        });
        let Some(j) = func_index else {
            return self.public_for(addr);
        };
        if state.block.as_ref().is_none_or(|(k, _)| *k != j) || at >= state.run_end {
            let f = &self.funcs[j];
            let s = usize::try_from(f.start).ok()?;
            let len = usize::try_from(f.len).ok()?;
            let text = lossy(data.get(s..s.checked_add(len)?)?);
            let end = f.addr.saturating_add(f.size);
            let run = offsets[at..]
                .iter()
                .take_while(|&&o| f.addr <= o && o < end)
                .count();
            state.run_end = at + run;
            state.targets.clear();
            state.targets.extend_from_slice(&offsets[at..at + run]);
            state.targets.sort_unstable();
            // The last block's vectors are reused: their capacity is there already.
            let old = state.block.take().map(|(_, b)| b);
            state.block = Some((j, Block::parse(&text, &state.targets, old)?));
            // A fault maps up to 16 pages around the one read: count at least that.
            state.parsed += len.max(64 << 10);
            if state.parsed >= RELEASE_EVERY {
                // The blocks parsed so far are held as tables; their pages can go.
                give_back(&self.data, data);
                state.parsed = 0;
            }
        }
        let (_, block) = state.block.as_ref()?;
        let f = &self.funcs[j];
        let (line_file, line_no) = block
            .line_at(addr)
            .map_or((None, None), |l| (Some(l.file), Some(l.line)));
        // One flat pass over the block's ranges (an inline is in once, however many of
        // its ranges hold the address), in record order as before the sort below.
        let mut inlines: Vec<&Inline> = Vec::new();
        let mut last = usize::MAX;
        for (k, &(a, s)) in block.ranges.iter().enumerate() {
            if a <= addr && addr < a.saturating_add(s) {
                let owner = block.owners[k] as usize;
                if owner != last {
                    inlines.push(&block.inlines[owner]);
                    last = owner;
                }
            }
        }
        inlines.sort_by_key(|inl| std::cmp::Reverse(inl.depth));
        // No real chain comes near this; a crafted one must not make an answer of GBs.
        inlines.drain(..inlines.len().saturating_sub(MAX_INLINE_FRAMES));
        // Innermost first: each frame's location is where the next-inner one was called
        // from, the innermost's is the line record.
        let mut frames = Vec::with_capacity(inlines.len());
        let (mut loc_file, mut loc_line) = (line_file, line_no);
        for inl in &inlines {
            frames.push(InlineFrame {
                // Demangled once per request, not once per frame.
                function: self.named(
                    &self.origins,
                    &mut state.origin_names,
                    Some(inl.origin),
                    demangled_text,
                ),
                file: self.named(&self.files, &mut state.file_names, loc_file, |t| t),
                line: loc_line.filter(|&l| l != 0),
            });
            loc_file = Some(inl.call_file);
            loc_line = Some(inl.call_line);
        }
        Some(Symbolized {
            function: block.name.clone(),
            function_offset: addr - f.addr,
            function_size: Some(f.size),
            file: self.named(&self.files, &mut state.file_names, loc_file, |t| t),
            line: loc_line.filter(|&l| l != 0),
            inlines: frames,
        })
    }

    /// A PUBLIC covers from its address up to the next symbol (PUBLIC or FUNC).
    fn public_for(&self, addr: u64) -> Option<Symbolized> {
        let p = self
            .publics
            .partition_point(|p| p.0 <= addr)
            .checked_sub(1)?;
        let (paddr, off) = self.publics[p];
        let func_before = self.funcs.partition_point(|f| f.addr <= addr);
        if func_before > 0 && self.funcs[func_before - 1].addr > paddr {
            return None; // a FUNC starts after that PUBLIC and has ended before addr
        }
        let line = line_at(&self.data, off)?;
        let rest = line.strip_prefix("PUBLIC ")?;
        let rest = rest.strip_prefix("m ").unwrap_or(rest);
        let name = rest.splitn(3, ' ').nth(2)?.to_string();
        // dump_syms' placeholders and Mach-O's header symbol bound the symbol before them
        // but name no code.
        if is_placeholder(&name) || name == "_mh_execute_header" || name == "__mh_execute_header" {
            return None;
        }
        Some(Symbolized {
            function: demangled(name).into(),
            function_offset: addr - paddr,
            function_size: None,
            file: None,
            line: None,
            inlines: Vec::new(),
        })
    }
}

/// dump_syms' own names for code it has no name for: `<.plt ELF section in libx.so>`
/// (section starts), `<unknown in libx.so>`, and Breakpad's `<name omitted>`. Anything else
/// that starts with `<` is a real name (Rust's `<T as Trait>::f`).
pub(super) fn is_placeholder(name: &str) -> bool {
    let Some(inner) = name.strip_prefix('<').and_then(|n| n.strip_suffix('>')) else {
        return false;
    };
    inner == "name omitted"
        || inner.starts_with("unknown in ")
        || inner
            .split_once(" section in ")
            .is_some_and(|(section, _)| !section.contains(['<', '>', ':']))
}

/// What one request's lookups share: the FUNC block of the last address, and the names
/// read so far.
#[derive(Default)]
pub(super) struct Request {
    /// The FUNC block parsed last, for the offsets before `run_end` (`targets`, sorted).
    block: Option<(usize, Block)>,
    run_end: usize,
    targets: Vec<u64>,
    /// Bytes of blocks parsed since the mapping's pages were last given back.
    parsed: usize,
    file_names: HashMap<u32, Option<Text>>,
    origin_names: HashMap<u32, Option<Text>>,
}

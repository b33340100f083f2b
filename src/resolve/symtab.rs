//! A sorted symbol table: the fallback when there is no debug info for an address.

use super::demangle::demangle;
use super::types::Symbolized;

#[derive(Debug, Clone)]
struct Sym {
    start: u64,
    size: u64,
    name: String,
}

#[derive(Debug, Default)]
pub struct SymbolTable {
    syms: Vec<Sym>,
}

impl SymbolTable {
    /// `symbols`: (address, size, raw name). Zero-sized symbols are dropped: nothing says
    /// how far they reach, and an address must never be attached to a function it is not in.
    pub fn new(symbols: impl IntoIterator<Item = (u64, u64, String)>) -> SymbolTable {
        let mut syms: Vec<Sym> = symbols
            .into_iter()
            .filter(|(_, size, name)| *size > 0 && !name.is_empty())
            .map(|(start, size, name)| Sym { start, size, name })
            .collect();
        // The same function often appears in .symtab and .dynsym: keep one, prefer the
        // larger size, then the shorter name (a real symbol over an alias like `foo@@V1`).
        syms.sort_by(|a, b| {
            a.start
                .cmp(&b.start)
                .then(b.size.cmp(&a.size))
                .then(a.name.len().cmp(&b.name.len()))
        });
        syms.dedup_by(|b, a| a.start == b.start);
        SymbolTable { syms }
    }

    /// The symbol whose [start, start+size) holds `addr`, as a name, start and size.
    pub fn find(&self, addr: u64) -> Option<(&str, u64, u64)> {
        let i = self.syms.partition_point(|s| s.start <= addr);
        // Sized symbols may nest (a local label inside a function): look back a little.
        self.syms[..i]
            .iter()
            .rev()
            .take(4)
            .find(|s| addr < s.start.saturating_add(s.size))
            .map(|s| (s.name.as_str(), s.start, s.size))
    }

    /// Resolves `addr` (an address in the file's own address space) from symbols alone.
    pub fn lookup(&self, addr: u64) -> Option<Symbolized> {
        let (name, start, size) = self.find(addr)?;
        Some(Symbolized {
            function: demangle(name).into(),
            function_offset: addr - start,
            function_size: Some(size),
            file: None,
            line: None,
            inlines: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sized_symbols_only_cover_their_range() {
        let t = SymbolTable::new([
            (0x100, 0x10, "a".to_string()),
            (0x120, 0, "zero".to_string()),
            (0x130, 0x8, "b".to_string()),
            (0x130, 0x8, "b@@V".to_string()),
        ]);
        assert_eq!(t.find(0x100).map(|s| s.0), Some("a"));
        assert_eq!(t.find(0x10f).map(|s| s.0), Some("a"));
        assert_eq!(t.find(0x110), None);
        assert_eq!(t.find(0x125), None);
        assert_eq!(t.find(0x137).map(|s| s.0), Some("b"));
        assert_eq!(t.find(0x138), None);
        assert_eq!(t.find(0x50), None);
    }
}

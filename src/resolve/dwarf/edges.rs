//! Where an answer may change, unit by unit: the addresses the prepared index
//! ([`crate::resolve::prepared`]) asks the resolver about. Each unit gives the edges of
//! its own ranges, of its functions' and inlined calls' ranges, and the address of each
//! row of its line program; between two edges every address has the same function,
//! inline chain, file and line (the index's builder checks it at both ends of each run).

use super::DwarfResolver;

/// Why a unit gives no edges: the module is then not indexed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoEdges {
    /// A skeleton unit: its DIEs are in a `.dwo` or `.dwp`.
    Split,
    /// A read failed (the answers there come from addr2line's fallback paths).
    Unreadable,
}

impl std::fmt::Display for NoEdges {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            NoEdges::Split => "split DWARF: its DIEs are in .dwo files",
            NoEdges::Unreadable => "a unit of its debug info could not be read",
        })
    }
}

impl From<gimli::Error> for NoEdges {
    fn from(_: gimli::Error) -> NoEdges {
        NoEdges::Unreadable
    }
}

impl DwarfResolver {
    /// How many units [`Self::unit_edges`] takes.
    pub fn unit_count(&self) -> usize {
        self.units.units.len()
    }

    /// Pushes the edges of unit `i` (addresses of the file's own address space, any order,
    /// repeats allowed).
    pub fn unit_edges(&self, i: usize, out: &mut Vec<u64>) -> Result<(), NoEdges> {
        let entry = self.units.units.get(i).ok_or(NoEdges::Unreadable)?;
        if entry.split {
            return Err(NoEdges::Split);
        }
        let unit = self.units.unit(&self.dwarf, i).ok_or(NoEdges::Unreadable)?;
        let u = unit.unit_ref(&self.dwarf);
        let mut dies = u.entries();
        while let Some(die) = dies.next_dfs()? {
            if matches!(
                die.tag(),
                gimli::DW_TAG_compile_unit
                    | gimli::DW_TAG_partial_unit
                    | gimli::DW_TAG_subprogram
                    | gimli::DW_TAG_inlined_subroutine
                    | gimli::DW_TAG_entry_point
            ) {
                let mut ranges = u.die_ranges(die)?;
                while let Some(r) = ranges.next()? {
                    out.push(r.begin);
                    out.push(r.end);
                }
            }
        }
        if let Some(program) = unit.line_program.clone() {
            let mut rows = program.rows();
            while let Some((_, row)) = rows.next_row()? {
                out.push(row.address());
            }
        }
        Ok(())
    }

    /// Pushes the edges of the units' ranges as the batch path and addr2line list them.
    pub fn unit_range_edges(&self, out: &mut Vec<u64>) {
        self.units.range_edges(out);
    }
}

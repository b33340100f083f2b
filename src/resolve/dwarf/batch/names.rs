//! The batch path's names: a subprogram's or inlined call's name, call file and line, read
//! as addr2line reads them (through abstract origins and specifications, across units).

use gimli::AttributeValue;

use super::units::Units;
use super::{Fallback, Off, URef};
use crate::resolve::dwarf::R;

#[derive(Clone)]
pub(super) struct DieInfo {
    pub(super) name: Option<R>,
    pub(super) call_file: Option<u64>,
    pub(super) call_line: u32,
}

/// A subprogram's or inlined call's name, call file and line, as addr2line reads them.
pub(super) fn die_info(
    units: Option<&Units>,
    unit: &URef<'_>,
    die: Off,
) -> Result<DieInfo, Fallback> {
    let mut entries = unit.entries_raw(Some(die))?;
    let abbrev = entries.read_abbreviation()?.ok_or(Fallback::Unreadable)?;
    let mut info = DieInfo {
        name: None,
        call_file: None,
        call_line: 0,
    };
    for spec in abbrev.attributes() {
        let attr = entries.read_attribute(*spec)?;
        match attr.name() {
            gimli::DW_AT_linkage_name | gimli::DW_AT_MIPS_linkage_name => {
                if let Ok(v) = unit.attr_string(attr.value()) {
                    info.name = Some(v);
                }
            }
            gimli::DW_AT_name if info.name.is_none() => {
                info.name = unit.attr_string(attr.value()).ok();
            }
            gimli::DW_AT_abstract_origin | gimli::DW_AT_specification if info.name.is_none() => {
                info.name = name_attr(units, unit, attr.value(), 16)?;
            }
            gimli::DW_AT_call_file => {
                // DWARF 5 numbers files from 0; before, 0 meant none.
                if let AttributeValue::FileIndex(fi) = attr.value()
                    && (fi > 0 || unit.header.version() >= 5)
                {
                    info.call_file = Some(fi);
                }
            }
            gimli::DW_AT_call_line => info.call_line = attr.udata_value().unwrap_or(0) as u32,
            _ => {}
        }
    }
    Ok(info)
}

fn name_attr(
    units: Option<&Units>,
    unit: &URef<'_>,
    value: AttributeValue<R>,
    limit: usize,
) -> Result<Option<R>, Fallback> {
    if limit == 0 {
        return Ok(None);
    }
    match value {
        AttributeValue::UnitRef(offset) => name_entry(units, unit, offset, limit),
        AttributeValue::DebugInfoRef(dr) => {
            // From a split unit: left to addr2line.
            let missing = Fallback::Unreadable;
            let all = units.ok_or(missing)?;
            let index = all.holding(dr.0).ok_or(missing)?;
            let other = all.unit(unit.dwarf, index).ok_or(missing)?;
            let offset = dr.to_unit_offset(&other.header).ok_or(missing)?;
            name_entry(units, &URef::new(unit.dwarf, &other), offset, limit)
        }
        // In the supplementary file: left to addr2line.
        AttributeValue::DebugInfoRefSup(_) if unit.dwarf.sup.is_some() => {
            Err(Fallback::Supplementary)
        }
        _ => Ok(None),
    }
}

fn name_entry(
    units: Option<&Units>,
    unit: &URef<'_>,
    offset: Off,
    limit: usize,
) -> Result<Option<R>, Fallback> {
    let mut entries = unit.entries_raw(Some(offset))?;
    let abbrev = entries.read_abbreviation()?.ok_or(Fallback::Unreadable)?;
    let mut name = None;
    let mut next = None;
    for spec in abbrev.attributes() {
        let attr = entries.read_attribute(*spec)?;
        match attr.name() {
            gimli::DW_AT_linkage_name | gimli::DW_AT_MIPS_linkage_name => {
                if let Ok(v) = unit.attr_string(attr.value()) {
                    return Ok(Some(v));
                }
            }
            gimli::DW_AT_name => {
                if let Ok(v) = unit.attr_string(attr.value()) {
                    name = Some(v);
                }
            }
            gimli::DW_AT_abstract_origin | gimli::DW_AT_specification => {
                next = Some(attr.value());
            }
            _ => {}
        }
    }
    if name.is_some() {
        return Ok(name);
    }
    match next {
        Some(next) => name_attr(units, unit, next, limit - 1),
        None => Ok(None),
    }
}

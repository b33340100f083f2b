//! A procedure's and an inlinee's name, spelled as dump_syms writes them.

use crate::resolve::demangle::demangle;

use super::super::pdb_items::ItemStore;
use super::super::pdb_names::NameFormatter;

/// A procedure's name as dump_syms writes it in FUNC records: with its arguments from its
/// type (`ns::f(int, char const*)`); an MSVC-decorated name (`?f@@YAXH@Z`) demangled.
pub(super) fn proc_name(formatter: &NameFormatter<'_>, p: &pdb::ProcedureSymbol<'_>) -> String {
    let raw = p.name.to_string();
    if raw.starts_with('?') {
        return dump_syms_spelling(demangle(&raw));
    }
    dump_syms_spelling(
        formatter
            .function(&raw, p.type_index)
            .unwrap_or_else(|| raw.into_owned()),
    )
}

/// Anonymous namespaces as dump_syms writes them in `.sym` files, `(anonymous namespace)`,
/// where MSVC's names and demangler write `` `anonymous namespace' ``: Tecken serves
/// dump_syms' names for Firefox's own Windows builds, and a local build must read alike.
pub(super) fn dump_syms_spelling(name: String) -> String {
    const MSVC: &str = "`anonymous namespace'";
    if name.contains(MSVC) {
        name.replace(MSVC, "(anonymous namespace)")
    } else {
        name
    }
}

/// The name of an inlined function without its arguments, `Class::method` for member
/// functions: when its type cannot be formatted.
pub(super) fn inlinee_name(
    ids: &ItemStore<pdb::IdIndex>,
    types: &ItemStore<pdb::TypeIndex>,
    index: pdb::IdIndex,
) -> Option<String> {
    match ids.find(index).and_then(|i| i.parse()) {
        Ok(pdb::IdData::Function(f)) => {
            // The scope is a string id naming the namespace, e.g. `std`.
            let scope = f
                .scope
                .and_then(|s| match ids.find(s).and_then(|i| i.parse()) {
                    Ok(pdb::IdData::String(s)) => Some(s.name.to_string().into_owned()),
                    _ => None,
                });
            Some(match scope {
                Some(scope) if !scope.is_empty() => format!("{scope}::{}", f.name.to_string()),
                _ => f.name.to_string().into_owned(),
            })
        }
        Ok(pdb::IdData::MemberFunction(m)) => {
            let class = types
                .find(m.parent)
                .and_then(|t| t.parse())
                .ok()
                .and_then(|t| match t {
                    pdb::TypeData::Class(c) => Some(c.name.to_string().into_owned()),
                    pdb::TypeData::Union(u) => Some(u.name.to_string().into_owned()),
                    _ => None,
                });
            Some(match class {
                Some(c) => format!("{c}::{}", m.name.to_string()),
                None => m.name.to_string().into_owned(),
            })
        }
        _ => None,
    }
}

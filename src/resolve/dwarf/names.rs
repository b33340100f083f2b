//! Qualified names for subprograms that carry no linkage name: Firefox's clang builds
//! (`-mllvm -dwarf-linkage-names=Abstract`) keep linkage names only on abstract
//! subprograms, and with `-gsimple-template-names` a template's `DW_AT_name` lacks its
//! arguments. The name is rebuilt from the declaration chain (namespaces, classes) and
//! the template parameter DIEs, as llvm's DWARF type printer does.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use gimli::{AttributeValue, UnitOffset};

use crate::resolve::dwarf::R;

type Parents = HashMap<UnitOffset<usize>, UnitOffset<usize>>;
/// A DIE: its unit ([`unit_key`]) and its offset in the unit.
type DieKey = (usize, UnitOffset<usize>);

/// A unit, told apart by where it starts in memory: the section offsets of split units
/// (each `.dwo`, each part of a `.dwp`) all start at 0.
fn unit_key(unit: &gimli::UnitRef<'_, R>) -> usize {
    let section = gimli::Section::reader(&unit.dwarf.debug_info)
        .slice()
        .as_ptr() as usize;
    section + unit.header.offset().0
}

/// Hops through `DW_AT_specification`/`DW_AT_abstract_origin`, and nesting depth of
/// types in template arguments: bounds against cyclic or hostile DWARF.
const MAX_HOPS: usize = 8;

#[derive(Default)]
pub struct Names {
    /// Per unit: the scope (namespace, class, unit) of each DIE declared in one; function
    /// bodies are not walked.
    parents: RefCell<HashMap<usize, Rc<Parents>>>,
    done: RefCell<HashMap<DieKey, Option<Rc<str>>>>,
}

/// Whether a raw DWARF name is a linkage (mangled) name.
pub fn is_mangled(raw: &[u8]) -> bool {
    raw.starts_with(b"_Z") || raw.starts_with(b"__Z") || raw.starts_with(b"_R")
}

/// Whether names in this language are qualified by scopes and may need rebuilding.
pub fn is_cplusplus(lang: Option<gimli::DwLang>) -> bool {
    matches!(
        lang,
        Some(
            gimli::DW_LANG_C_plus_plus
                | gimli::DW_LANG_C_plus_plus_03
                | gimli::DW_LANG_C_plus_plus_11
                | gimli::DW_LANG_C_plus_plus_14
                | gimli::DW_LANG_ObjC_plus_plus
        )
    )
}

impl Names {
    /// `ns::Class<Args>::name<Args>` for the subprogram or inlined call at `die`; `None`
    /// when the DWARF gives no name.
    pub fn qualified(&self, unit: &gimli::UnitRef<'_, R>, die: UnitOffset) -> Option<Rc<str>> {
        let key = (unit_key(unit), die);
        if let Some(v) = self.done.borrow().get(&key) {
            return v.clone();
        }
        let v = self.build(unit, die).map(Rc::from);
        self.done.borrow_mut().insert(key, v.clone());
        v
    }

    fn build(&self, unit: &gimli::UnitRef<'_, R>, die: UnitOffset) -> Option<String> {
        // Follow the chain to the declaration, taking the first name and the first
        // template parameters met on the way.
        let mut at = die;
        let mut name = None;
        let mut args = None;
        for _ in 0..MAX_HOPS {
            let entry = unit.entry(at).ok()?;
            if name.is_none()
                && let Some(v) = entry.attr_value(gimli::DW_AT_name)
            {
                name = unit.attr_string(v).ok().map(|s| lossy(&s));
            }
            if args.is_none() {
                args = self.template_args(unit, at);
            }
            let next = entry
                .attr_value(gimli::DW_AT_specification)
                .or_else(|| entry.attr_value(gimli::DW_AT_abstract_origin));
            match next {
                Some(AttributeValue::UnitRef(o)) => at = o,
                _ => break,
            }
        }
        let mut out = name?;
        if !out.contains('<')
            && let Some(a) = args
        {
            out.push_str(&a);
        }
        let scope = self.scope(unit, at, 0);
        Some(if scope.is_empty() {
            out
        } else {
            format!("{scope}::{out}")
        })
    }

    fn parents(&self, unit: &gimli::UnitRef<'_, R>) -> Rc<Parents> {
        let key = unit_key(unit);
        if let Some(p) = self.parents.borrow().get(&key) {
            return p.clone();
        }
        let mut map = Parents::new();
        if let Ok(mut tree) = unit.entries_tree(None)
            && let Ok(root) = tree.root()
        {
            let _ = walk_scopes(root, &mut map, 0);
        }
        let map = Rc::new(map);
        self.parents.borrow_mut().insert(key, map.clone());
        map
    }

    /// `ns::Class<int>` enclosing the DIE at `at` (empty at the unit's top level).
    fn scope(&self, unit: &gimli::UnitRef<'_, R>, at: UnitOffset, depth: usize) -> String {
        let parents = self.parents(unit);
        let mut parts = Vec::new();
        let mut cur = at;
        while let Some(&p) = parents.get(&cur) {
            if parts.len() > 64 {
                break;
            }
            let Ok(entry) = unit.entry(p) else { break };
            let name = entry
                .attr_value(gimli::DW_AT_name)
                .and_then(|v| unit.attr_string(v).ok())
                .map(|s| lossy(&s));
            match entry.tag() {
                gimli::DW_TAG_namespace => {
                    parts.push(name.unwrap_or_else(|| "(anonymous namespace)".into()))
                }
                gimli::DW_TAG_class_type
                | gimli::DW_TAG_structure_type
                | gimli::DW_TAG_union_type => {
                    let mut n = name.unwrap_or_else(|| "(anonymous)".into());
                    if !n.contains('<')
                        && depth < MAX_HOPS
                        && let Some(a) = self.template_args_at(unit, p, depth + 1)
                    {
                        n.push_str(&a);
                    }
                    parts.push(n);
                }
                _ => break,
            }
            cur = p;
        }
        parts.reverse();
        parts.join("::")
    }

    fn template_args(&self, unit: &gimli::UnitRef<'_, R>, at: UnitOffset) -> Option<String> {
        self.template_args_at(unit, at, 0)
    }

    /// `<T, 3>` from the template parameter children of the DIE at `at`.
    fn template_args_at(
        &self,
        unit: &gimli::UnitRef<'_, R>,
        at: UnitOffset,
        depth: usize,
    ) -> Option<String> {
        let mut tree = unit.entries_tree(Some(at)).ok()?;
        let root = tree.root().ok()?;
        let mut children = root.children();
        let mut args = Vec::new();
        while let Ok(Some(child)) = children.next() {
            let e = child.entry();
            match e.tag() {
                gimli::DW_TAG_template_type_parameter => {
                    args.push(match e.attr_value(gimli::DW_AT_type) {
                        Some(AttributeValue::UnitRef(t)) => self.type_name(unit, t, depth + 1)?,
                        _ => "void".to_string(),
                    });
                }
                gimli::DW_TAG_template_value_parameter => {
                    args.push(const_value(e.attr_value(gimli::DW_AT_const_value)?)?);
                }
                _ => {}
            }
        }
        (!args.is_empty()).then(|| format!("<{}>", args.join(", ")))
    }

    /// A type as C++ spells it, for template arguments; `None` for what is not rendered.
    fn type_name(
        &self,
        unit: &gimli::UnitRef<'_, R>,
        t: UnitOffset,
        depth: usize,
    ) -> Option<String> {
        if depth > MAX_HOPS {
            return None;
        }
        let entry = unit.entry(t).ok()?;
        let inner = || match entry.attr_value(gimli::DW_AT_type) {
            Some(AttributeValue::UnitRef(o)) => self.type_name(unit, o, depth + 1),
            None => Some("void".to_string()),
            _ => None,
        };
        let name = || {
            entry
                .attr_value(gimli::DW_AT_name)
                .and_then(|v| unit.attr_string(v).ok())
                .map(|s| lossy(&s))
        };
        Some(match entry.tag() {
            gimli::DW_TAG_base_type | gimli::DW_TAG_unspecified_type => name()?,
            gimli::DW_TAG_typedef
            | gimli::DW_TAG_class_type
            | gimli::DW_TAG_structure_type
            | gimli::DW_TAG_union_type
            | gimli::DW_TAG_enumeration_type => {
                let mut n = name()?;
                if !n.contains('<')
                    && let Some(a) = self.template_args_at(unit, t, depth + 1)
                {
                    n.push_str(&a);
                }
                let scope = self.scope(unit, t, depth + 1);
                if scope.is_empty() {
                    n
                } else {
                    format!("{scope}::{n}")
                }
            }
            gimli::DW_TAG_pointer_type => format!("{}*", inner()?),
            gimli::DW_TAG_reference_type => format!("{}&", inner()?),
            gimli::DW_TAG_rvalue_reference_type => format!("{}&&", inner()?),
            gimli::DW_TAG_const_type => format!("const {}", inner()?),
            gimli::DW_TAG_volatile_type => format!("volatile {}", inner()?),
            _ => return None,
        })
    }
}

/// Records the scope of every DIE under namespaces, classes and the unit itself; the
/// bodies of functions (most of a unit) are skipped.
fn walk_scopes(
    node: gimli::EntriesTreeNode<'_, '_, R>,
    map: &mut Parents,
    depth: usize,
) -> gimli::Result<()> {
    let parent = node.entry().offset();
    let mut children = node.children();
    while let Some(child) = children.next()? {
        let off = child.entry().offset();
        map.insert(off, parent);
        let scope = matches!(
            child.entry().tag(),
            gimli::DW_TAG_namespace
                | gimli::DW_TAG_class_type
                | gimli::DW_TAG_structure_type
                | gimli::DW_TAG_union_type
        );
        if scope && depth < 64 {
            walk_scopes(child, map, depth + 1)?;
        }
    }
    Ok(())
}

fn const_value(v: AttributeValue<R>) -> Option<String> {
    Some(match v {
        AttributeValue::Sdata(x) => x.to_string(),
        AttributeValue::Udata(x) => x.to_string(),
        AttributeValue::Data1(x) => (x as i8).to_string(),
        AttributeValue::Data2(x) => (x as i16).to_string(),
        AttributeValue::Data4(x) => (x as i32).to_string(),
        AttributeValue::Data8(x) => (x as i64).to_string(),
        _ => return None,
    })
}

fn lossy(s: &R) -> String {
    String::from_utf8_lossy(s.slice()).into_owned()
}

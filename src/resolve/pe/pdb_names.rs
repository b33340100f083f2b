//! Function names with their argument lists from a PDB's type stream, as dump_syms writes
//! them in `.sym` FUNC records (so Tecken's symbols of every official Windows build) and
//! samply shows them: `ns::Class::method(int, char const*) const`. Procedure records and
//! inlinee ids carry only the bare name; the arguments come from the function's type.
//!
//! The rules are those of pdb-addr2line's `TypeFormatter` (MIT OR Apache-2.0), which
//! dump_syms calls through symbolic with its default flags: no return type, no `static`,
//! `, ` between arguments, class names without `class`/`struct`. Unlike it, nothing here
//! panics on an unknown primitive, and nesting and output length are bounded (a hostile
//! PDB can make a type refer to itself), and so is the memo of written types.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt::Write;

mod sizes;

use pdb::{
    ArgumentList, ArrayType, IdData, IdIndex, MemberFunctionType, ModifierType, PointerMode,
    PointerType, PrimitiveKind, PrimitiveType, ProcedureType, TypeData, TypeIndex,
};

use super::pdb_items::ItemStore;

/// Deeper type nesting than this is cut (`…`): real types are a few levels deep.
const MAX_DEPTH: u32 = 48;
/// A formatted name longer than this is cut: a real one is a few hundred bytes.
const MAX_LEN: usize = 8192;

/// Bytes of text the memo of written types may hold: a real PDB's argument types are a
/// few thousand short texts (well under 1 MB), while a crafted one (chains of argument
/// lists that all end at one 8 KB class name) could make every (type, depth) a text of
/// its own, about 192 KB per function. Past this the memo starts over.
const MAX_WRITTEN: usize = 4 << 20;

/// Formats names from the TPI (types) and IPI (ids) of one PDB.
pub struct NameFormatter<'t> {
    types: &'t ItemStore<TypeIndex>,
    ids: &'t ItemStore<IdIndex>,
    /// Sizes of defined classes and unions by (unique) name, for the element counts of
    /// arrays of forward-declared types; read from the TPI the first time one is needed.
    sizes: RefCell<Option<HashMap<Vec<u8>, u64>>>,
    /// Each type's text by (index, depth), as written once: the argument types of the
    /// functions of a C++ program are mostly the same few (`std::basic_string<…> const&`),
    /// and each is many records to read.
    written: RefCell<HashMap<(TypeIndex, u32), Box<str>, crate::resolve::fasthash::Fast>>,
    /// Bytes of text in `written`, bounded by `max_written` ([`MAX_WRITTEN`]).
    written_bytes: std::cell::Cell<usize>,
    max_written: usize,
    ptr_size: u64,
}

struct PtrAttrs {
    pointer_const: bool,
    pointee_const: bool,
    mode: PointerMode,
}

type Res = Result<(), Cut>;

/// Formatting stopped: too deep, too long, or an unreadable record.
#[derive(Debug)]
pub struct Cut;

impl From<std::fmt::Error> for Cut {
    fn from(_: std::fmt::Error) -> Cut {
        Cut
    }
}

impl<'t> NameFormatter<'t> {
    pub fn new(
        types: &'t ItemStore<TypeIndex>,
        ids: &'t ItemStore<IdIndex>,
        ptr_size: u64,
    ) -> Self {
        NameFormatter {
            types,
            ids,
            sizes: RefCell::new(None),
            written: RefCell::new(HashMap::default()),
            written_bytes: std::cell::Cell::new(0),
            max_written: MAX_WRITTEN,
            ptr_size,
        }
    }

    pub fn types(&self) -> &'t ItemStore<TypeIndex> {
        self.types
    }

    pub fn ids(&self) -> &'t ItemStore<IdIndex> {
        self.ids
    }

    /// A procedure's name with its arguments, from the procedure's type; the bare name
    /// when the type says nothing (index 0, or not a function type).
    pub fn function(&self, name: &str, ty: TypeIndex) -> Option<String> {
        let mut w = String::new();
        self.emit_function(&mut w, name, ty).ok()?;
        Some(w)
    }

    /// An inlined function's name (`id`: global, resolved by the caller) with its scope
    /// and arguments.
    pub fn id(&self, id: IdIndex, resolve: &dyn Fn(IdIndex) -> Option<IdIndex>) -> Option<String> {
        let mut w = String::new();
        self.emit_id(&mut w, id, resolve, 0).ok()?;
        Some(w)
    }

    fn ty(&self, index: TypeIndex) -> Result<TypeData<'t>, Cut> {
        self.types
            .find(index)
            .and_then(|i| i.parse())
            .map_err(|_| Cut)
    }

    fn emit_name(w: &mut String, name: &str) -> Res {
        if name.is_empty() {
            w.push_str("<name omitted>");
        } else {
            w.push_str(name);
        }
        Ok(())
    }

    fn emit_function(&self, w: &mut String, name: &str, ty: TypeIndex) -> Res {
        if ty == TypeIndex(0) {
            return Self::emit_name(w, name);
        }
        match self.ty(ty) {
            Ok(TypeData::MemberFunction(t)) => {
                Self::emit_name(w, name)?;
                self.emit_method_args(w, &t, true, 0)?;
            }
            Ok(TypeData::Procedure(t)) => {
                Self::emit_name(w, name)?;
                w.push('(');
                self.emit_type_index(w, t.argument_list, 0)?;
                w.push(')');
            }
            _ => w.push_str(name),
        }
        Ok(())
    }

    fn emit_id(
        &self,
        w: &mut String,
        id: IdIndex,
        resolve: &dyn Fn(IdIndex) -> Option<IdIndex>,
        depth: u32,
    ) -> Res {
        if depth > MAX_DEPTH {
            return Err(Cut);
        }
        let global = resolve(id).ok_or(Cut)?;
        let data = self
            .ids
            .find(global)
            .and_then(|i| i.parse())
            .map_err(|_| Cut)?;
        match data {
            IdData::MemberFunction(m) => {
                let TypeData::MemberFunction(t) = self.ty(m.function_type)? else {
                    return Err(Cut);
                };
                self.emit_type_index(w, m.parent, depth + 1)?;
                w.push_str("::");
                Self::emit_name(w, &m.name.to_string())?;
                self.emit_method_args(w, &t, true, depth + 1)?;
            }
            IdData::Function(f) => {
                let TypeData::Procedure(t) = self.ty(f.function_type)? else {
                    return Err(Cut);
                };
                if let Some(scope) = f.scope {
                    self.emit_id(w, scope, resolve, depth + 1)?;
                    w.push_str("::");
                }
                Self::emit_name(w, &f.name.to_string())?;
                w.push('(');
                self.emit_type_index(w, t.argument_list, depth + 1)?;
                w.push(')');
            }
            IdData::String(s) => {
                let name = s.name.to_string();
                // `?A0x<hex>` is an anonymous namespace.
                let anonymous = name
                    .strip_prefix("?A0x")
                    .is_some_and(|h| u32::from_str_radix(h, 16).is_ok());
                if anonymous {
                    w.push_str("`anonymous namespace'");
                } else {
                    w.push_str(&name);
                }
            }
            _ => return Err(Cut),
        }
        Ok(())
    }

    /// `(args)` and ` const` of a method; a `this` type that is not the class is an
    /// extra first argument (Rust associated functions, as pdb-addr2line reads them).
    fn emit_method_args(
        &self,
        w: &mut String,
        t: &MemberFunctionType,
        allow_const: bool,
        depth: u32,
    ) -> Res {
        let TypeData::ArgumentList(args) = self.ty(t.argument_list)? else {
            return Err(Cut);
        };
        let (is_const, extra) = match t.this_pointer_type {
            None => (false, None),
            Some(this) => match self.this_constness(this, t.class_type) {
                Some(constant) => (constant, None),
                None => (false, Some(this)),
            },
        };
        w.push('(');
        if let Some(first) = extra {
            self.emit_type_index(w, first, depth + 1)?;
            self.emit_arg_list(w, &args, true, depth + 1)?;
        } else {
            self.emit_arg_list(w, &args, false, depth + 1)?;
        }
        w.push(')');
        if is_const && allow_const {
            w.push_str(" const");
        }
        Ok(())
    }

    /// Whether `this` points to `class` (`Some(const)`), or to something else.
    fn this_constness(&self, this: TypeIndex, class: TypeIndex) -> Option<bool> {
        let Ok(TypeData::Pointer(p)) = self.ty(this) else {
            return None;
        };
        if p.underlying_type == class {
            return Some(false);
        }
        match self.ty(p.underlying_type) {
            Ok(TypeData::Modifier(m)) if m.underlying_type == class => Some(m.constant),
            _ => None,
        }
    }

    fn emit_arg_list(
        &self,
        w: &mut String,
        list: &ArgumentList,
        comma_first: bool,
        depth: u32,
    ) -> Res {
        for (i, &arg) in list.arguments.iter().enumerate() {
            if i > 0 || comma_first {
                w.push_str(", ");
            }
            self.emit_type_index(w, arg, depth + 1)?;
        }
        Ok(())
    }

    fn emit_type_index(&self, w: &mut String, index: TypeIndex, depth: u32) -> Res {
        if depth > MAX_DEPTH || w.len() > MAX_LEN {
            return Err(Cut);
        }
        // Written before at this depth: the same text, unless it would now pass the length
        // bound somewhere (written again, to cut where the first writing would have).
        if let Some(text) = self.written.borrow().get(&(index, depth))
            && w.len() + text.len() <= MAX_LEN
        {
            w.push_str(text);
            return Ok(());
        }
        let start = w.len();
        self.emit_type_index_once(w, index, depth)?;
        if w.len() <= MAX_LEN {
            let text = &w[start..];
            let mut written = self.written.borrow_mut();
            let bytes = self.written_bytes.get() + text.len();
            if bytes > self.max_written {
                written.clear();
                self.written_bytes.set(text.len());
            } else {
                self.written_bytes.set(bytes);
            }
            written.insert((index, depth), text.into());
        }
        Ok(())
    }

    fn emit_type_index_once(&self, w: &mut String, index: TypeIndex, depth: u32) -> Res {
        match self.types.find(index).and_then(|i| i.parse()) {
            Ok(data) => self.emit_type(w, data, depth),
            Err(pdb::Error::UnimplementedTypeKind(k)) => {
                write!(w, "<unimplemented type kind 0x{k:x}>")?;
                Ok(())
            }
            Err(pdb::Error::TypeNotFound(i)) => {
                write!(w, "<missing type 0x{i:x}>")?;
                Ok(())
            }
            Err(_) => Err(Cut),
        }
    }

    fn emit_type(&self, w: &mut String, data: TypeData<'t>, depth: u32) -> Res {
        if depth > MAX_DEPTH || w.len() > MAX_LEN {
            return Err(Cut);
        }
        match data {
            TypeData::Primitive(t) => Self::emit_primitive(w, &t, false),
            TypeData::Class(t) => w.push_str(&t.name.to_string()),
            TypeData::MemberFunction(t) => {
                w.push_str("()");
                self.emit_method_args(w, &t, false, depth + 1)?;
            }
            TypeData::Procedure(t) => {
                // pdb-addr2line writes a bare function type so (no closing parenthesis).
                w.push_str("()(");
                self.emit_type_index(w, t.argument_list, depth + 1)?;
            }
            TypeData::ArgumentList(t) => self.emit_arg_list(w, &t, false, depth + 1)?,
            TypeData::Pointer(t) => self.emit_ptr(w, t, false, depth + 1)?,
            TypeData::Array(t) => self.emit_array(w, t, depth + 1)?,
            TypeData::Union(t) => w.push_str(&t.name.to_string()),
            TypeData::Enumeration(t) => w.push_str(&t.name.to_string()),
            TypeData::Enumerate(t) => w.push_str(&t.name.to_string()),
            TypeData::Modifier(t) => self.emit_modifier(w, t, depth + 1)?,
            // Field-list records, which no valid signature names. pdb-addr2line prints their
            // `Debug` form; the variant's name alone keeps `TypeData`'s whole `Debug` (25 KB)
            // out of the binary and a hostile field list out of the name.
            other => {
                w.push_str("unhandled type /* ");
                w.push_str(unhandled_kind(&other));
                w.push_str(" */");
            }
        }
        Ok(())
    }

    fn emit_primitive(w: &mut String, prim: &PrimitiveType, is_const: bool) {
        use PrimitiveKind as K;
        let name = match prim.kind {
            K::NoType => "<NoType>",
            K::Void => "void",
            K::Char => "signed char",
            K::UChar => "unsigned char",
            K::RChar => "char",
            K::WChar => "wchar_t",
            K::RChar16 => "char16_t",
            K::RChar32 => "char32_t",
            K::I8 => "int8_t",
            K::U8 => "uint8_t",
            K::Short => "short",
            K::UShort => "unsigned short",
            K::I16 => "int16_t",
            K::U16 => "uint16_t",
            K::Long => "long",
            K::ULong => "unsigned long",
            K::I32 => "int",
            K::U32 => "unsigned int",
            K::Quad => "long long",
            K::UQuad => "unsigned long long",
            K::I64 => "int64_t",
            K::U64 => "uint64_t",
            K::I128 | K::Octa => "int128_t",
            K::U128 | K::UOcta => "uint128_t",
            K::F16 => "float16_t",
            K::F32 | K::F32PP => "float",
            K::F48 => "float48_t",
            K::F64 => "double",
            K::F80 | K::F128 => "long double",
            K::Complex32 => "complex<float>",
            K::Complex64 => "complex<double>",
            K::Complex80 | K::Complex128 => "complex<long double>",
            K::Bool8 => "bool",
            K::Bool16 => "bool16_t",
            K::Bool32 => "bool32_t",
            K::Bool64 => "bool64_t",
            K::HRESULT => "HRESULT",
            _ => "<unknown primitive>",
        };
        match (prim.indirection.is_some(), is_const) {
            (true, true) => {
                w.push_str(name);
                w.push_str(" const*");
            }
            (true, false) => {
                w.push_str(name);
                w.push('*');
            }
            (false, true) => {
                w.push_str("const ");
                w.push_str(name);
            }
            (false, false) => w.push_str(name),
        }
    }

    fn emit_modifier(&self, w: &mut String, m: ModifierType, depth: u32) -> Res {
        match self.ty(m.underlying_type)? {
            TypeData::Pointer(p) => self.emit_ptr(w, p, m.constant, depth + 1),
            TypeData::Primitive(p) => {
                Self::emit_primitive(w, &p, m.constant);
                Ok(())
            }
            other => {
                if m.constant {
                    w.push_str("const ");
                }
                self.emit_type(w, other, depth + 1)
            }
        }
    }

    /// Pointers and references with their `const`s, innermost last (`char const* const`).
    fn emit_ptr(&self, w: &mut String, ptr: PointerType, is_const: bool, depth: u32) -> Res {
        let mut attrs = vec![PtrAttrs {
            pointer_const: ptr.attributes.is_const() || is_const,
            pointee_const: false,
            mode: ptr.attributes.pointer_mode(),
        }];
        let mut ptr = ptr;
        for _ in 0..MAX_DEPTH {
            match self.ty(ptr.underlying_type)? {
                TypeData::Pointer(t) => {
                    attrs.push(PtrAttrs {
                        pointer_const: t.attributes.is_const(),
                        pointee_const: false,
                        mode: t.attributes.pointer_mode(),
                    });
                    ptr = t;
                }
                TypeData::Modifier(t) => {
                    if let Some(last) = attrs.last_mut() {
                        last.pointee_const = t.constant;
                    }
                    match self.ty(t.underlying_type)? {
                        TypeData::Pointer(p) => {
                            attrs.push(PtrAttrs {
                                pointer_const: p.attributes.is_const(),
                                pointee_const: false,
                                mode: p.attributes.pointer_mode(),
                            });
                            ptr = p;
                        }
                        other => return self.emit_ptr_to(w, attrs, other, depth + 1),
                    }
                }
                other => return self.emit_ptr_to(w, attrs, other, depth + 1),
            }
        }
        Err(Cut)
    }

    fn emit_ptr_to(
        &self,
        w: &mut String,
        attrs: Vec<PtrAttrs>,
        to: TypeData<'t>,
        depth: u32,
    ) -> Res {
        match to {
            TypeData::MemberFunction(f) => {
                self.emit_return_type(
                    w,
                    Some(f.return_type),
                    f.attributes.is_constructor(),
                    depth,
                )?;
                w.push('(');
                self.emit_type_index(w, f.class_type, depth + 1)?;
                Self::emit_attrs(w, &attrs, false, false);
                w.push(')');
                self.emit_method_args(w, &f, false, depth + 1)
            }
            TypeData::Procedure(f) => self.emit_proc_ptr(w, &f, &attrs, depth),
            other => {
                let mut buf = String::new();
                self.emit_type(&mut buf, other, depth + 1)?;
                let after_sigil = buf.ends_with('*') || buf.ends_with('&');
                w.push_str(&buf);
                Self::emit_attrs(w, &attrs, true, after_sigil);
                Ok(())
            }
        }
    }

    fn emit_proc_ptr(
        &self,
        w: &mut String,
        f: &ProcedureType,
        attrs: &[PtrAttrs],
        depth: u32,
    ) -> Res {
        self.emit_return_type(w, f.return_type, f.attributes.is_constructor(), depth)?;
        w.push('(');
        Self::emit_attrs(w, attrs, false, false);
        w.push_str(")(");
        self.emit_type_index(w, f.argument_list, depth + 1)?;
        w.push(')');
        Ok(())
    }

    fn emit_return_type(
        &self,
        w: &mut String,
        ty: Option<TypeIndex>,
        constructor: bool,
        depth: u32,
    ) -> Res {
        if let (false, Some(ty)) = (constructor, ty) {
            self.emit_type_index(w, ty, depth + 1)?;
            w.push(' ');
        }
        Ok(())
    }

    /// The sigils of a pointer chain, outermost last (pdb-addr2line's `emit_attributes`
    /// without its `SPACE_BEFORE_POINTER` flag, which dump_syms does not set).
    fn emit_attrs(w: &mut String, attrs: &[PtrAttrs], space_at_start: bool, _after_sigil: bool) {
        let mut at_start = true;
        for a in attrs.iter().rev() {
            if a.pointee_const {
                if !at_start || space_at_start {
                    w.push(' ');
                }
                w.push_str("const");
            }
            at_start = false;
            w.push_str(match a.mode {
                PointerMode::Pointer => "*",
                PointerMode::LValueReference => "&",
                PointerMode::Member | PointerMode::MemberFunction => "::*",
                PointerMode::RValueReference => "&&",
            });
            if a.pointer_const {
                w.push_str(" const");
            }
        }
    }

    fn emit_array(&self, w: &mut String, array: ArrayType, depth: u32) -> Res {
        // `int[3][4]` is an array of 48 bytes of arrays of 16 bytes of int: dimensions are
        // byte sizes, divided by the next level's size to count elements.
        let mut dims: Vec<u64> = Vec::new();
        let mut base = array;
        let base_data = loop {
            dims.push(base.dimensions.first().copied().unwrap_or(0).into());
            if dims.len() > MAX_DEPTH as usize {
                return Err(Cut);
            }
            match self.ty(base.element_type)? {
                TypeData::Array(a) => base = a,
                other => break other,
            }
        };
        let base_size = self.data_size(&base_data, depth + 1);
        self.emit_type(w, base_data, depth + 1)?;
        let mut it = dims.into_iter().peekable();
        while let Some(bytes) = it.next() {
            let next = it.peek().copied().unwrap_or(base_size);
            // The base size can be zero (`struct A {}; void f(A x[10])`): no count then.
            match bytes.checked_div(next) {
                Some(n) => write!(w, "[{n}]")?,
                None => w.push_str("[]"),
            }
        }
        Ok(())
    }
}

/// The variant's name of a type record `emit_type` does not write.
fn unhandled_kind(data: &TypeData) -> &'static str {
    match data {
        TypeData::Primitive(_) => "Primitive",
        TypeData::Class(_) => "Class",
        TypeData::Member(_) => "Member",
        TypeData::MemberFunction(_) => "MemberFunction",
        TypeData::OverloadedMethod(_) => "OverloadedMethod",
        TypeData::Method(_) => "Method",
        TypeData::StaticMember(_) => "StaticMember",
        TypeData::Nested(_) => "Nested",
        TypeData::BaseClass(_) => "BaseClass",
        TypeData::VirtualBaseClass(_) => "VirtualBaseClass",
        TypeData::VirtualFunctionTablePointer(_) => "VirtualFunctionTablePointer",
        TypeData::Procedure(_) => "Procedure",
        TypeData::Pointer(_) => "Pointer",
        TypeData::Modifier(_) => "Modifier",
        TypeData::Enumeration(_) => "Enumeration",
        TypeData::Enumerate(_) => "Enumerate",
        TypeData::Array(_) => "Array",
        TypeData::Union(_) => "Union",
        TypeData::Bitfield(_) => "Bitfield",
        TypeData::FieldList(_) => "FieldList",
        TypeData::ArgumentList(_) => "ArgumentList",
        TypeData::MethodList(_) => "MethodList",
        _ => "TypeData",
    }
}

#[cfg(test)]
mod tests;

//! The sizes of types, which an array's element count is computed from (`int[4]`: the
//! record gives the array's bytes): primitives by kind, classes and unions by their
//! definition when the record is a forward reference.

use std::collections::HashMap;

use pdb::{PrimitiveKind, TypeData, TypeIndex};

use super::{MAX_DEPTH, NameFormatter};

impl<'t> NameFormatter<'t> {
    fn type_size(&self, index: TypeIndex, depth: u32) -> u64 {
        if depth > MAX_DEPTH {
            return 0;
        }
        match self.ty(index) {
            Ok(data) => self.data_size(&data, depth + 1),
            Err(_) => 0,
        }
    }

    pub(super) fn data_size(&self, data: &TypeData<'t>, depth: u32) -> u64 {
        use PrimitiveKind as K;
        match data {
            TypeData::Primitive(t) => {
                if t.indirection.is_some() {
                    return self.ptr_size;
                }
                match t.kind {
                    K::Char | K::UChar | K::RChar | K::I8 | K::U8 | K::Bool8 => 1,
                    K::WChar
                    | K::RChar16
                    | K::Short
                    | K::UShort
                    | K::I16
                    | K::U16
                    | K::F16
                    | K::Bool16 => 2,
                    K::RChar32
                    | K::Long
                    | K::ULong
                    | K::I32
                    | K::U32
                    | K::F32
                    | K::F32PP
                    | K::Bool32
                    | K::HRESULT => 4,
                    K::I64 | K::U64 | K::Quad | K::UQuad | K::F64 | K::Complex32 | K::Bool64 => 8,
                    K::I128 | K::U128 | K::Octa | K::UOcta | K::F128 | K::Complex64 => 16,
                    K::F48 => 6,
                    K::F80 => 10,
                    K::Complex80 => 20,
                    K::Complex128 => 32,
                    _ => 0,
                }
            }
            TypeData::Class(t) if t.properties.forward_reference() => {
                let name = t.unique_name.unwrap_or(t.name);
                self.defined_size(name.as_bytes()).unwrap_or(t.size)
            }
            TypeData::Class(t) => t.size,
            TypeData::Union(t) if t.properties.forward_reference() => {
                let name = t.unique_name.unwrap_or(t.name);
                self.defined_size(name.as_bytes()).unwrap_or(t.size)
            }
            TypeData::Union(t) => t.size,
            TypeData::MemberFunction(_) | TypeData::Procedure(_) => self.ptr_size,
            TypeData::Pointer(t) => t.attributes.size().into(),
            TypeData::Array(t) => t.dimensions.last().copied().unwrap_or(0).into(),
            TypeData::Enumeration(t) => self.type_size(t.underlying_type, depth + 1),
            TypeData::Enumerate(t) => match t.value {
                pdb::Variant::I8(_) | pdb::Variant::U8(_) => 1,
                pdb::Variant::I16(_) | pdb::Variant::U16(_) => 2,
                pdb::Variant::I32(_) | pdb::Variant::U32(_) => 4,
                pdb::Variant::I64(_) | pdb::Variant::U64(_) => 8,
            },
            TypeData::Modifier(t) => self.type_size(t.underlying_type, depth + 1),
            _ => 0,
        }
    }

    /// The size of the defined (not forward-declared) class or union named `name`.
    fn defined_size(&self, name: &[u8]) -> Option<u64> {
        let mut sizes = self.sizes.borrow_mut();
        let map = sizes.get_or_insert_with(|| {
            let mut map = HashMap::new();
            for item in self.types.iter() {
                let (fwd, name, size) = match item.parse() {
                    Ok(TypeData::Class(c)) => (
                        c.properties.forward_reference(),
                        c.unique_name.unwrap_or(c.name),
                        c.size,
                    ),
                    Ok(TypeData::Union(u)) => (
                        u.properties.forward_reference(),
                        u.unique_name.unwrap_or(u.name),
                        u.size,
                    ),
                    _ => continue,
                };
                if !fwd {
                    map.entry(name.as_bytes().to_vec()).or_insert(size);
                }
            }
            map
        });
        map.get(name).copied()
    }
}

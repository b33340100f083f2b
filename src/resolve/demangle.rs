//! Mangled names as the profiler shows them: Itanium C++, Rust and MSVC.

/// Demangles an Itanium C++ (`_Z…`), Rust (`_R…`, legacy `_ZN…`) or MSVC (`?…`) name;
/// anything else is a plain name and is returned as it is (`f` is not `float`).
pub fn demangle(name: &str) -> String {
    if name.starts_with("_Z") || name.starts_with("_R") {
        addr2line::demangle_auto(name.into(), None).into_owned()
    } else if name.starts_with('?') {
        demangle_msvc(name).unwrap_or_else(|| name.to_string())
    } else {
        name.to_string()
    }
}

/// An MSVC-decorated name as the profiler shows it (samply's flags): no return type,
/// calling convention or access specifier, `a, b` argument lists.
pub fn demangle_msvc(name: &str) -> Option<String> {
    use msvc_demangler::DemangleFlags as F;
    let flags = F::NO_ACCESS_SPECIFIERS
        | F::NO_FUNCTION_RETURNS
        | F::NO_MEMBER_TYPE
        | F::NO_MS_KEYWORDS
        | F::NO_THISTYPE
        | F::NO_CLASS_TYPE
        | F::SPACE_AFTER_COMMA
        | F::HUG_TYPE;
    // `f(void)` reads as the C++ source and Itanium names do: `f()`.
    msvc_demangler::demangle(name, flags)
        .ok()
        .map(|s| s.replace("(void)", "()"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_mangled_names_are_demangled() {
        assert_eq!(demangle("f"), "f");
        assert_eq!(demangle("_Z1fv"), "f()");
        assert_eq!(
            demangle(
                "?toString@Decimal@blink@@QEBA?AV?$basic_string@DU?$char_traits@D@std@@V?$allocator@D@2@@std@@XZ"
            ),
            "blink::Decimal::toString()"
        );
    }
}

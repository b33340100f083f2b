//! Tests of the patches (see PATCHES.md): each expected string is what
//! `llvm-cxxfilt` (LLVM 19) prints for the name, with `> >` for `>>`.

use super::{DemangleOptions, Symbol};
use alloc::string::String;

fn demangle(name: &str) -> String {
    Symbol::new(name.as_bytes())
        .and_then(|s| {
            s.demangle_with_options(&DemangleOptions::default())
                .map_err(|_| crate::error::Error::Overflow)
        })
        .unwrap_or_else(|_| String::from("<error>"))
}

fn check(cases: &[(&str, &str)]) {
    for (mangled, llvm) in cases {
        assert_eq!(demangle(mangled), *llvm, "{mangled}");
    }
}

#[test]
fn special_names_as_llvm_writes_them() {
    check(&[
        ("_ZTV1A", "vtable for A"),
        ("_ZTT1A", "VTT for A"),
        ("_ZThn8_N1A1fEv", "non-virtual thunk to A::f()"),
        ("_ZTv0_n24_N1A1fEv", "virtual thunk to A::f()"),
        ("_ZTcv0_n24_h8_N1A1fEv", "covariant return thunk to A::f()"),
        ("_ZTC1B0_1A", "construction vtable for A-in-B"),
        ("_ZGR1a_", "reference temporary for a"),
        ("_ZTH1a", "thread-local initialization routine for a"),
        ("_ZTW1a", "thread-local wrapper routine for a"),
    ]);
}

#[test]
fn lambdas_and_unnamed_types_as_llvm_writes_them() {
    check(&[
        (
            "_ZZ1fiEd_NKUlvE_clEv",
            "f(int)::'lambda'()::operator()() const",
        ),
        // g++ 12 and clang 19 for `call([](auto x) {...})` in a plain function.
        (
            "_Z4callIZ5plainvEUlT_E_EiS0_",
            "int call<plain()::'lambda'(auto)>(auto)",
        ),
        (
            "_ZZ5plainvENKUlT_E_clIiEEDaS_",
            "auto plain()::'lambda'(auto)::operator()<int>(auto) const",
        ),
        ("_ZZ1fvENKUlvE_clEv", "f()::'lambda'()::operator()() const"),
        (
            "_ZZ1fvENKUlvE0_clEv",
            "f()::'lambda0'()::operator()() const",
        ),
        ("_ZN1AUt_D1Ev", "A::'unnamed'::~()"),
        ("_ZN1AUt0_C2Ev", "A::'unnamed0'::()"),
    ]);
}

#[test]
fn pack_expansions_apply_the_pattern_to_each_element() {
    check(&[
        ("_Z1fIJiiEEiDpOT_", "int f<int, int>(int&&, int&&)"),
        (
            "_Z1gIJRKiiEEvDpOT_",
            "void g<int const&, int>(int const&, int&&)",
        ),
        (
            "_Z1fIJZ1gvEUlRiE_EEvDpOT_",
            "void f<g()::'lambda'(int&)>(g()::'lambda'(int&)&&)",
        ),
        (
            "_Z1fIJiiEEvDpPFvDpT_E",
            "void f<int, int>(void (*)(int, int)...)",
        ),
    ]);
}

#[test]
fn empty_packs_print_nothing() {
    check(&[
        ("_Z1fIJEEvDpOT_", "void f<>()"),
        ("_ZN1AIiJEE1fEv", "A<int>::f()"),
        ("_Z1hIJEEvN1AIiJDpT_EEE", "void h<>(A<int>)"),
    ]);
}

#[test]
fn templated_constructors_keep_their_first_parameter() {
    check(&[("_ZN1SC2IiEEiT_", "S::S<int>(int, int)")]);
}

#[test]
fn a_substituted_scope_takes_nothing_pending() {
    check(&[
        ("_Z1fN1X1AERKNS0_1BE", "f(X::A, X::A::B const&)"),
        ("_Z1fN1X1AEPFS0_iE", "f(X::A, X::A (*)(int))"),
        (
            "_Z1fIXadL_ZNK1X1A6createEvEEEvv",
            "void f<&X::A::create() const>()",
        ),
    ]);
}

#[test]
fn standard_abbreviations_as_llvm_writes_them() {
    check(&[
        ("_ZNSi3getEv", "std::istream::get()"),
        ("_ZTISo", "typeinfo for std::ostream"),
        ("_ZTSSd", "typeinfo name for std::iostream"),
        (
            "_ZNSsC1Ev",
            "std::basic_string<char, std::char_traits<char>, std::allocator<char> >::basic_string()",
        ),
        (
            "_ZNSoD0Ev",
            "std::basic_ostream<char, std::char_traits<char> >::~basic_ostream()",
        ),
    ]);
}

#[test]
fn template_param_declarations_are_skipped() {
    check(&[
        ("_Z1fITnDaLi1EEvv", "void f<1>()"),
        ("_Z1fITyiEvv", "void f<int>()"),
    ]);
}

#[test]
fn spacing_as_llvm_writes_it() {
    check(&[
        ("_Z1fM1AFPFvlEiE", "f(void (* (A::*)(int))(long))"),
        ("_Z1fPFM1AFvlEiE", "f(void (A::* (*)(int))(long))"),
        ("_ZlsIiEvRSoT_", "void operator<<<int>(std::ostream&, int)"),
    ]);
}

#[test]
fn expressions_as_llvm_writes_them() {
    check(&[
        (
            "_Z1fIiEN9enable_ifIXntsr7is_sameIT_vEE5valueEvE4typeEv",
            "enable_if<!is_same<int, void>::value, void>::type f<int>()",
        ),
        ("_Z1fIiEDTclL_Z1gEfp_EET_", "decltype(g(fp)) f<int>(int)"),
        (
            "_Z1fIiEDTneclsr3stdE7declvalIT_EELi0EES0_",
            "decltype(std::declval<int>() != 0) f<int>(int)",
        ),
    ]);
}

#[test]
fn nested_pack_expansions_are_bounded() {
    // Each level prints its pattern once per element: 10^12 without the cap.
    let mut pattern = String::from("T_");
    for _ in 0..12 {
        pattern = alloc::format!("PFvDp{pattern}E");
    }
    let name = alloc::format!("_Z1fIJiiiiiiiiiiEEvDp{pattern}");
    assert_eq!(demangle(&name), "<error>");
}

#[test]
fn requires_clauses_as_llvm_writes_them() {
    check(&[
        // A trailing requires-clause (clang 19, `template<class T> int g(T) requires C<T>`).
        ("_Z1gIiEiT_Q1CIS0_E", "int g<int>(int) requires C<int>"),
    ]);
    // After the template arguments: read for its substitutions, not printed. (LLVM 19
    // prints `int f<int>(T)`, reading `S0_` as the requires-clause's own `T`; the parameter
    // is `int`.)
    assert_eq!(demangle("_Z1fIiQ1CIT_EEiS0_"), "int f<int>(int)");
}

#[test]
fn conversions_with_a_list_as_llvm_writes_them() {
    check(&[
        // clang 19: `-> decltype(a.v, void())` and `-> decltype(t(u), void())`.
        (
            "_Z2h3I1SEDTcmdtfp_1vcvv_EET_",
            "decltype(fp.v, (void)()) h3<S>(S)",
        ),
        (
            "_Z2h5IPFviEiEDTcmclfp_fp0_Ecvv_EET_T0_",
            "decltype(fp(fp0), (void)()) h5<void (*)(int), int>(void (*)(int), int)",
        ),
    ]);
}

#[test]
fn unified_constructors_and_destructors_as_llvm_writes_them() {
    check(&[
        (
            "_ZNSaISt8optionalIiEEC5Ev",
            "std::allocator<std::optional<int> >::allocator()",
        ),
        (
            "_ZNSaISt8optionalIiEED5Ev",
            "std::allocator<std::optional<int> >::~allocator()",
        ),
    ]);
}

#[test]
fn requires_expressions_and_outer_parameters_as_llvm_writes_them() {
    check(&[
        // libstdc++'s `operator==` of `__normal_iterator` (gcc 12, C++20).
        (
            "_ZN9__gnu_cxxeqIPiSt6vectorIiSaIiEEEEbRKNS_17__normal_iteratorIT_T0_EESA_QrqXeqcldtfp_4baseEcldtfp0_4baseERSt14convertible_toIbEE",
            "bool __gnu_cxx::operator==<int*, std::vector<int, std::allocator<int> > >(__gnu_cxx::__normal_iterator<int*, std::vector<int, std::allocator<int> > > const&, __gnu_cxx::__normal_iterator<int*, std::vector<int, std::allocator<int> > > const&) requires requires { {fp.base() == fp0.base()} -> std::convertible_to<bool>; }",
        ),
        // A class template's parameters in its constructor's requires-clause: no
        // argument in scope, named as LLVM names them.
        (
            "_ZNSt4pairIPSt18_Rb_tree_node_baseS1_EC2ERKS1_S4_Qcl16_S_constructibleIRKT_RKT0_EE",
            "std::pair<std::_Rb_tree_node_base*, std::_Rb_tree_node_base*>::pair(std::_Rb_tree_node_base* const&, std::_Rb_tree_node_base* const&) requires _S_constructible<T const&, T0 const&>()",
        ),
        // `TL0__`: a parameter of an enclosing level, in a requires-clause after
        // template arguments (not printed).
        (
            "_ZNSt4pairIPSt18_Rb_tree_node_baseS1_EC2IRS1_S4_Qcl16_S_constructibleITL0__TL0_0_EEEEOT_OT0_",
            "std::pair<std::_Rb_tree_node_base*, std::_Rb_tree_node_base*>::pair<std::_Rb_tree_node_base*&, std::_Rb_tree_node_base*&>(std::_Rb_tree_node_base*&, std::_Rb_tree_node_base*&)",
        ),
    ]);
}

#[test]
fn deeply_nested_templates_are_demangled() {
    // Forty levels of templates: 200 levels of parsing and of printing, as
    // boost::spirit and boost::proto names need (upstream stopped at 96 and 128).
    let depth = 40;
    let mangled = format!("_Z1fI{}i{}Evv", "1AI".repeat(depth), "E".repeat(depth));
    let closing = vec![">"; depth + 1].join(" ");
    let llvm = format!("void f<{}int{closing}()", "A<".repeat(depth));
    assert_eq!(demangle(&mangled), llvm);
    // Ten thousand levels are refused, before the stack runs out.
    let mangled = format!("_Z1fI{}i{}Evv", "1AI".repeat(10_000), "E".repeat(10_000));
    assert_eq!(demangle(&mangled), "<error>");
}

#[test]
fn clone_suffixes_as_llvm_writes_them() {
    check(&[
        (
            "_Z10dumpConfigR7Context.cold",
            "dumpConfig(Context&) (.cold)",
        ),
        ("_Z3foov.isra.0.cold", "foo() (.isra.0.cold)"),
        ("_Z3foov.constprop.0", "foo() (.constprop.0)"),
        ("_Z3foov.part.0.isra.0", "foo() (.part.0.isra.0)"),
    ]);
}

#[test]
fn ref_qualified_function_types_as_llvm_writes_them() {
    check(&[
        ("_ZN1AIFvvOEE1fEv", "A<void () &&>::f()"),
        ("_Z1fIFviOEEvv", "void f<void (int) &&>()"),
        ("_Z1fIKFviREEvv", "void f<void (int) const &>()"),
        ("_Z1fIM1AFviOEEvv", "void f<void (A::*)(int) &&>()"),
        (
            "_ZN3fu27abi_3106detail12type_erasure6tables6vtableINS1_8propertyILb1ELb0EJFvvOEEEEE12weak_destroyEPNS2_13data_accessorEm",
            "fu2::abi_310::detail::type_erasure::tables::vtable<fu2::abi_310::detail::property<true, false, void () &&> >::weak_destroy(fu2::abi_310::detail::type_erasure::data_accessor*, unsigned long)",
        ),
    ]);
}

#[test]
fn expression_pack_expansions_apply_the_pattern_to_each_element() {
    // LLVM writes the literals `0ul, 1ul`; the SPEC allows `(unsigned long)0`.
    check(&[
        (
            "_Z1fIJLm0ELm1EEEvSt16integer_sequenceImJXspT_EEE",
            "void f<(unsigned long)0, (unsigned long)1>(std::integer_sequence<unsigned long, (unsigned long)0, (unsigned long)1>)",
        ),
        (
            "_Z1fIJEEvSt16integer_sequenceImJXspT_EEE",
            "void f<>(std::integer_sequence<unsigned long>)",
        ),
        (
            "_Z1fIJiiEEDTcl1gspcl7forwardIT_Efp_EEEDpOS0_",
            "decltype(g(forward<int>(fp), forward<int>(fp))) f<int, int>(int&&, int&&)",
        ),
        ("_Z1fIJEEDTcl1gfp_spcl7forwardIT_Efp_EEEDpOS0_", "decltype(g(fp)) f<>()"),
        (
            "_ZNSt16allocator_traitsIN7mempool14pool_allocatorILNS0_12pool_index_tE24EiEEE9constructIiJEEEDTcl12_S_constructfp_fp0_spcl7forwardIT0_Efp1_EEERS3_PT_DpOS6_",
            "decltype(_S_construct(fp, fp0)) std::allocator_traits<mempool::pool_allocator<(mempool::pool_index_t)24, int> >::construct<int>(mempool::pool_allocator<(mempool::pool_index_t)24, int>&, int*)",
        ),
    ]);
}

#[test]
fn member_access_as_llvm_writes_it() {
    check(&[
        (
            "_Z1fI1AEDTcldtcl7declvalIT_EE1fIXLi1EEEEEv",
            "decltype(declval<A>().f<1>()) f<A>()",
        ),
        (
            "_Z1fI1AEDTptcl7declvalIT_EE1fEv",
            "decltype(declval<A>()->f) f<A>()",
        ),
        ("_Z1fI1AEDTdtdtfp_1a1bES0_", "decltype(fp.a.b) f<A>(A)"),
        (
            "_Z1fI1AEDTdtplfp_fp_1bES0_",
            "decltype((fp + fp).b) f<A>(A)",
        ),
    ]);
}

#[test]
fn closure_constructors_and_destructors_as_llvm_writes_them() {
    check(&[
        (
            "_ZZN15ceph_mount_infoD4EvENUlT_E_D4Ev",
            "ceph_mount_info::~ceph_mount_info()::'lambda'(auto)::~()",
        ),
        ("_ZZN7C_drain4waitEvENUlvE_D4Ev", "C_drain::wait()::'lambda'()::~()"),
        (
            "_ZZN9MonClient13handle_configEP7MConfigENUlvE0_D1Ev",
            "MonClient::handle_config(MConfig*)::'lambda0'()::~()",
        ),
        (
            "_ZZN4cupt8internal8FileImpl11getLineImplEPPKcENUlS3_mE_C4EOS5_",
            "cupt::internal::FileImpl::getLineImpl(char const**)::'lambda'(char const*, unsigned long)::('lambda'(char const*, unsigned long)&&)",
        ),
    ]);
}

#[test]
fn sizeof_and_noexcept_bind_as_unary_operators() {
    check(&[
        (
            "_Z1fIiEvPAntstT__c",
            "void f<int>(char (*) [!(sizeof (int))])",
        ),
        (
            "_Z1fIiEvPAntatT__c",
            "void f<int>(char (*) [!(alignof (int))])",
        ),
        (
            "_Z1fIiEvPAntnxfp__c",
            "void f<int>(char (*) [!(noexcept (fp))])",
        ),
        (
            "_Z1fIiEvPAplstT_Li1E_c",
            "void f<int>(char (*) [sizeof (int) + 1])",
        ),
    ]);
}

#[test]
fn an_empty_pack_among_a_lambdas_parameters_gets_no_comma() {
    check(&[(
        "_ZNSt5tupleIJZ17make_named_threadIZN4ceph5async15io_context_pool5startEsEUlvE_JEESt6threadSt17basic_string_viewIcSt11char_traitsIcEEOT_DpOT0_EUlSB_SE_E_S4_EED2Ev",
        "std::tuple<std::thread make_named_thread<ceph::async::io_context_pool::start(short)::'lambda'()>(std::basic_string_view<char, std::char_traits<char> >, ceph::async::io_context_pool::start(short)::'lambda'()&&)::'lambda'(ceph::async::io_context_pool::start(short)::'lambda'()&&), ceph::async::io_context_pool::start(short)::'lambda'()>::~tuple()",
    )]);
}

#[test]
fn a_function_returning_a_reference_to_an_array_is_a_declarator() {
    check(&[
        (
            "_ZSt7forwardIRA10_KcEOT_RNSt16remove_referenceIS3_E4typeE",
            "char const (&std::forward<char const (&) [10]>(std::remove_reference<char const (&) [10]>::type&)) [10]",
        ),
        ("_Z1fIiERA10_T_v", "int (&f<int>()) [10]"),
        ("_Z1fIiEPA10_A2_T_v", "int (*f<int>()) [10][2]"),
    ]);
}

#[test]
fn vector_types_as_llvm_writes_them() {
    check(&[
        ("_Z1fDv4_f", "f(float vector[4])"),
        (
            "_Z15_mm_cmpeq_epi32Dv2_xS_",
            "_mm_cmpeq_epi32(long long vector[2], long long vector[2])",
        ),
        ("_Z1fIiEvDvLi4E_T_", "void f<int>(int vector[4])"),
        ("_Z1fPDv4_f", "f(float vector[4]*)"),
    ]);
}

#[test]
fn literal_operators_as_llvm_writes_them() {
    check(&[
        (
            "_ZNSt8literals15string_literalsli1sB5cxx11EPKcm",
            "std::literals::string_literals::operator\"\" s[abi:cxx11](char const*, unsigned long)",
        ),
        ("_Zli2_xy", "operator\"\" _x(unsigned long long)"),
    ]);
}

#[test]
fn new_expressions_as_llvm_writes_them() {
    check(&[(
        "_ZSt12construct_atIcJRKcEEDTgsnwcvPvLi0E_T_pispcl7declvalIT0_EEEEPS3_DpOS4_",
        "decltype(::new((void*)(0)) char(declval<char const&>())) std::construct_at<char, char const&>(char*, char const&)",
    )]);
}

#[test]
fn constraint_template_params_as_llvm_names_them() {
    check(&[
        ("_ZN1AIiE1fEvQ1CITL0__E", "A<int>::f() requires C<TL0_>"),
        (
            "_ZN1AIiE1fEvQ1CIT_TL0_0_E",
            "A<int>::f() requires C<T, TL0_0>",
        ),
        ("_Z1fIiEvvQ1CIT_E", "void f<int>() requires C<T>"),
        // Through a substitution made outside the clause it is the argument.
        (
            "_Z8trailingIlEiT_QaagtstS0_Li2Esr3stdE8integralIS0_E",
            "int trailing<long>(long) requires sizeof (long) > 2 && std::integral<long>",
        ),
    ]);
}

#[test]
fn hidden_friends_as_llvm_writes_them() {
    check(&[
        (
            "_ZN1XFeqERKS_S1_",
            "X::friend operator==(X const&, X const&)",
        ),
        ("_ZN1XIiEF1fEv", "X<int>::friend f()"),
    ]);
}

#[test]
fn float_literals_as_llvm_writes_them() {
    check(&[
        ("_Z3dblILd4004000000000000EEiv", "int dbl<0x1.4p+1>()"),
        ("_Z1fILf3fc00000EEvv", "void f<0x1.8p+0f>()"),
        ("_Z1fILe3fff8000000000000000EEvv", "void f<0x8p-3L>()"),
        (
            "_Z1fILd0000000000000001EEvv",
            "void f<0x0.0000000000001p-1022>()",
        ),
        (
            "_Z1fILdbff5555555555555EEvv",
            "void f<-0x1.5555555555555p+0>()",
        ),
        ("_Z1fILdfff8000000000000EEvv", "void f<-nan>()"),
        ("_Z1fILd8000000000000000EEvv", "void f<-0x0p+0>()"),
        (
            "_Z1fILe00000000000000000001EEvv",
            "void f<0x0.000000000000001p-16385L>()",
        ),
    ]);
}

#[test]
fn folds_and_subscripts_as_llvm_writes_them() {
    check(&[
        (
            "_Z5sizesIJicdEESt17integral_constantImXfRplstT_Li0EEEv",
            "std::integral_constant<unsigned long, ((sizeof (int), sizeof (char), sizeof (double)) + ... + 0)> sizes<int, char, double>()",
        ),
        (
            "_Z9foldexprsIJbbEEDTcmcmcmfraafp_floofp_fRplfp_Li1EfLmlLi1Efp_EDpT_",
            "decltype(((fp...) && ...), (... || (fp...)), ((fp...) + ... + 1), (1 * ... * (fp...))) foldexprs<bool, bool>(bool, bool)",
        ),
        ("_Z1fIJicEEvvQfrooT_", "void f<int, char>() requires ((T...) || ...)"),
        ("_Z1gIiEDTixadL_Z1aELi0EEv", "decltype((&a)[0]) g<int>()"),
        (
            "_Z9cast_exprIiEDTplplplplplsclfp_ixrcPcadfp_Li0EccKT_fp_tlS1_EcvS1_Li1EcvS1_Li2EES1_",
            "decltype(static_cast<long>(fp) + (reinterpret_cast<char*>(&fp))[0] + const_cast<int const>(fp) + int{} + (int)(1) + (int)(2)) cast_expr<int>(int)",
        ),
    ]);
}

#[test]
fn greater_in_parentheses_only_inside_template_args() {
    check(&[
        (
            "_ZNKSt7greaterIvEclIRiS2_EEDTgtclsr3stdE7forwardIT_Efp_Eclsr3stdE7forwardIT0_Efp0_EEOS3_OS4_",
            "decltype(std::forward<int&>(fp) > std::forward<int&>(fp0)) std::greater<void>::operator()<int&, int&>(int&, int&) const",
        ),
        ("_Z1fIiEvPAgtLi1ELi0E_i", "void f<int>(int (*) [1 > 0])"),
        ("_Z1fIiEN1AIXgtLi1ELi0EEE1tEv", "A<(1 > 0)>::t f<int>()"),
    ]);
}

#[test]
fn a_reference_to_decltype_keeps_its_qualifiers_out_of_the_expression() {
    // A function pointer type inside the `decltype(…)` took the pending `&`
    // (`(int (*&)())(nullptr)`), as in range-v3's `join_view::cursor` requirements.
    check(&[
        (
            "_Z1fIiEvRDTcvPFivELDnEE",
            "void f<int>(decltype((int (*)())(nullptr))&)",
        ),
        (
            "_Z1fIiEvOKDTcvPFRivELDnEE",
            "void f<int>(decltype((int& (*)())(nullptr)) const&&)",
        ),
        (
            "_Z1fIiEDTcl7declvalIRDTcvPFivELDnEEEEEv",
            "decltype(declval<decltype((int (*)())(nullptr))&>()) f<int>()",
        ),
    ]);
}

//! `#[probe]` on items it cannot instrument, and `give!` of what is not a value: one clear
//! compile error at the right span.

#[test]
fn probe_rejects_what_it_cannot_instrument() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/probe_*.rs");
    t.compile_fail("tests/ui/give_*.rs");
    t.pass("tests/ui/pass_*.rs");
}

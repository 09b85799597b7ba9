//! ptera's own tests (breuleux/ptera 1.4.1, `tests/test_probe.py`, `tests/test_interpret.py`,
//! `tests/test_selector.py`), translated: each test's doc comment names the ptera test it comes
//! from, and says where the Rust version differs (docs/probes.md, "How it differs from ptera").
//!
//! ptera's fixtures are rewritten as `#[probe]` functions with the same names and arithmetic.
//! ptera's `full_tapping` gathers a *total* probe's values until the outermost call returns;
//! here every probe gives at its focus with what is bound then (ptera's `tapping`, the
//! *immediate* kind), so a translated total test expects the immediate events.

// A probe observes named bindings: returning one is the point of these fixtures.
#![allow(clippy::let_and_return)]

mod ptera_fixtures;

use futures::executor::block_on;
use giving::prelude::*;
use giving::probe::{Condition, Literal, ProbeError, Role, Selector};
use giving::{Event, given};
use ptera_fixtures::*;

// --- test_probe.py's fixtures ---

/// `f` with its `a` tagged, as ptera's `a: "@flag"`: the tag is the written type.
type Flag = i64;

#[giving::probe]
fn f_tagged(x: i32) -> i64 {
    let a: Flag = i64::from(x) * i64::from(x);
    a + 1
}

struct Elephant {
    secret: i64,
}

#[giving::probe]
impl Elephant {
    fn sing(&self, x: i64) -> i64 {
        let wow = x + self.secret;
        wow
    }

    fn size(&self) -> i64 {
        self.secret
    }
}

fn loopy() -> i64 {
    let el = Elephant { secret: 10 };
    let mut acc = 0;
    for i in 0..100 {
        acc += f(i);
        acc += g(i);
        acc += el.sing(i);
        acc += f_tagged(i as i32);
    }
    acc
}

#[giving::probe]
fn click(n: i64) -> i64 {
    n * n
}

#[giving::probe]
fn clack(n: i64) -> i64 {
    let a = click(n / 2);
    let b = click(n / 3);
    a + b
}

#[giving::probe]
fn looper(x: i64) -> i64 {
    let mut k = 0;
    let mut last = 0;
    for (i, j) in (0..x).zip(0..x) {
        k += i * j;
        last = j;
    }
    k + last
}

/// ptera's `tests/milk.py`, selected by its module path.
mod milk {
    #[giving::probe]
    pub fn cheese(x: i64) -> i64 {
        let a = x * x;
        a + 4
    }

    #[giving::probe]
    pub fn gouda(x: i64) -> i64 {
        let a = x * 2;
        let b = a * a * 4;
        b
    }
}

// --- test_interpret.py's fixtures ---

#[giving::probe]
fn snapple(x: i64) -> i64 {
    let a = cabanana(x + 1);
    let b = cabanana(x + 2);
    a + b
}

#[giving::probe]
fn cabanana(y: i64) -> i64 {
    peacherry(y + 1)
}

#[giving::probe]
fn peacherry(z: i64) -> i64 {
    z + 1
}

// `i` and `j` are not read by the body: they are there for the probe (`superbrie(i=1, j)`).
#[giving::probe]
#[allow(unused_variables)]
fn superbrie(n: i64) -> i64 {
    let mut result = 0;
    let mut k = 0;
    for i in 0..n {
        for j in 0..n {
            result += brie(k, 2);
            k += 1;
        }
    }
    result
}

/// ptera's `Matou`.
struct Matou {
    species: String,
}

#[giving::probe]
impl Matou {
    fn meow(&self, repeat: usize) -> String {
        let ms = "m".to_owned();
        let es = "e".to_owned();
        let os = "o".repeat(repeat);
        let ws = "w".repeat(self.species.len());
        let cry = ms + &es + &os + &ws;
        let meows = vec![cry; repeat];
        meows.join(" ")
    }
}

// --- test_probe.py ---

/// ptera `test_probe`: `f > a` while active, nothing once the probe is gone.
#[test]
fn test_probe() {
    let gv = given();
    let probe = gv.probe("f > a").unwrap().key::<i64>("a");
    loopy();
    drop(probe);
    let again = gv.probe("g > a").unwrap();
    drop(again);
    loopy();
    gv.finish().unwrap();
    let gv = given();
    let probe = gv.probe("f > a").unwrap();
    loopy();
    let values = events(gv, probe);
    let expected: Vec<String> = (0..100).map(|x| format!("a={}", x * x)).collect();
    assert_eq!(values, expected);
}

/// ptera `test_probe_method`: `Elephant.sing > wow`, the class-qualified method with a dot.
#[test]
fn test_probe_method() {
    let values = probed("Elephant.sing > wow", || {
        loopy();
    });
    let expected: Vec<String> = (0..100).map(|x| format!("wow={}", x + 10)).collect();
    assert_eq!(values, expected);
}

/// ptera `test_probe_property`: `Elephant.size() as size`, the return value under a name.
#[test]
fn test_probe_property() {
    let values = probed("Elephant.size() as size", || {
        assert_eq!(Elephant { secret: 10 }.size(), 10);
    });
    assert_eq!(values, ["size=10"]);
}

/// ptera `test_probe_tag`: `f > $x:@flag`. Here the tag is the written type: `a: Flag`
/// (`x: i32` is not one), given as `x`.
#[test]
fn test_probe_tag() {
    let values = probed("f_tagged > $x:Flag", || {
        loopy();
    });
    let expected: Vec<String> = (0..100).map(|x| format!("x={}", x * x)).collect();
    assert_eq!(values, expected);
}

/// ptera `test_pipe`: `probe.kmap(lambda a: -a)`, an operator on the probe's stream.
#[test]
fn test_pipe() {
    let gv = given();
    let negated = gv.spawn(
        gv.probe("f > a")
            .unwrap()
            .key::<i64>("a")
            .map(|a| -a)
            .collect::<Vec<_>>(),
    );
    loopy();
    gv.finish().unwrap();
    let expected: Vec<i64> = (0..100).map(|x| -x * x).collect();
    assert_eq!(negated.join().unwrap(), expected);
}

/// ptera `test_probing_nested` and `test_probing_multi`: `click > n` and `clack > b` at once.
#[test]
fn test_probing_nested() {
    let gv = given();
    let clicks = gv.probe("click > n").unwrap();
    let clacks = gv.probe("clack > b").unwrap();
    clack(9);
    gv.finish().unwrap();
    let clicks: Vec<String> = block_on(clicks.map(|e| e.to_string()).collect());
    let clacks: Vec<String> = block_on(clacks.map(|e| e.to_string()).collect());
    assert_eq!(clicks, ["n=4", "n=3"]);
    assert_eq!(clacks, ["b=9"]);
}

/// ptera `test_two_probes`: `f > a` and `g > a`, each its own function's `a`.
#[test]
fn test_two_probes() {
    let gv = given();
    let fs = gv.probe("f > a").unwrap().key::<i64>("a");
    let gs = gv.probe("g > a").unwrap().key::<i64>("a");
    loopy();
    gv.finish().unwrap();
    assert_eq!(
        block_on(fs.collect::<Vec<_>>()),
        (0..100).map(|x| x * x).collect::<Vec<_>>()
    );
    assert_eq!(
        block_on(gs.collect::<Vec<_>>()),
        (0..100).map(|x| -x).collect::<Vec<_>>()
    );
}

/// ptera `test_probe_same_var_twice`: a second probe on the same variable; the first still
/// sees every call.
#[test]
fn test_probe_same_var_twice() {
    let gv = given();
    let first = gv.probe("f > a").unwrap().key::<i64>("a");
    loopy();
    let second = gv.probe("f > a").unwrap().key::<i64>("a");
    loopy();
    gv.finish().unwrap();
    let squares: Vec<i64> = (0..100).map(|x| x * x).collect();
    assert_eq!(
        block_on(first.collect::<Vec<_>>()),
        [squares.clone(), squares.clone()].concat()
    );
    assert_eq!(block_on(second.collect::<Vec<_>>()), squares);
}

/// ptera `test_bad_probe`: `unknown > a` is refused.
#[test]
fn test_bad_probe() {
    assert!(matches!(
        given().probe("unknown > a"),
        Err(ProbeError::UnknownFunction { .. })
    ));
}

/// ptera `test_probing`: `probe["a"].max()`.
#[test]
fn test_probing() {
    let gv = given();
    let max = gv.spawn(gv.probe("f > a").unwrap().key::<i64>("a").max());
    loopy();
    gv.finish().unwrap();
    assert_eq!(max.join().unwrap(), Some(99 * 99));
}

/// ptera `test_accumulate`: `f > a` over `f(4)`, `f(5)`.
#[test]
fn test_accumulate() {
    let values = probed("f > a", || {
        f(4);
        f(5);
    });
    assert_eq!(values, ["a=16", "a=25"]);
}

/// ptera `test_slash_probe`: `/tests.milk/cheese > a`, the function of one module, written
/// with ptera's slashes (this test crate is `probe_ptera`).
#[test]
fn test_slash_probe() {
    let values = probed("/probe_ptera.milk/cheese > a", || {
        assert_eq!(milk::cheese(4), 16 + 4);
        assert_eq!(milk::cheese(5), 25 + 4);
    });
    assert_eq!(values, ["a=16", "a=25"]);
}

/// ptera `test_slash_probe_multi`: three probes of `gouda` in turn, the last `//gouda() as ret`.
#[test]
fn test_slash_probe_multi() {
    assert_eq!(
        probed("/probe_ptera.milk/gouda > a", || assert_eq!(
            milk::gouda(4),
            256
        )),
        ["a=8"]
    );
    assert_eq!(
        probed("/probe_ptera.milk/gouda > b", || assert_eq!(
            milk::gouda(4),
            256
        )),
        ["b=256"]
    );
    assert_eq!(
        probed("//gouda() as ret", || assert_eq!(milk::gouda(4), 256)),
        ["ret=256"]
    );
}

/// ptera `test_probe_override`: `probe.override(lambda a: 1234)` on `f > a`.
#[test]
fn test_probe_override() {
    let gv = given();
    let fixed = gv
        .probe("f > a")
        .unwrap()
        .override_with(|_: i64| 1234)
        .unwrap();
    assert_eq!(f(5), 1235);
    drop(fixed);
    let ten = gv
        .probe("f > a")
        .unwrap()
        .override_with(|_: i64| 10)
        .unwrap();
    assert_eq!(f(5), 11);
    drop(ten);
    assert_eq!(f(5), 26);
}

/// ptera `test_probe_koverride`: `koverride(lambda a: a * a)`.
#[test]
fn test_probe_koverride() {
    let gv = given();
    let _squared = gv
        .probe("f > a")
        .unwrap()
        .override_with(|a: i64| a * a)
        .unwrap();
    assert_eq!(f(5), 5_i64.pow(4) + 1);
}

/// ptera `test_probe_total`: `f(x, a)` gives one event when `f` returns.
#[test]
fn test_probe_total() {
    assert_eq!(probed("f(x, a)", || assert_eq!(f(12), 145)), ["x=12 a=144"]);
}

/// ptera `test_wrap`: `recurso(!n) as !!v` brackets each recursive call, `n` on the way in,
/// the return value on the way out, innermost block closed first.
#[test]
fn test_wrap() {
    let gv = given();
    let probe = gv.probe("recurso(!n) as !!v").unwrap();
    recurso(4);
    gv.finish().unwrap();
    let steps: Vec<String> = block_on(probe.collect::<Vec<Event>>())
        .iter()
        .map(|e| match (e.get_as::<u64>("n"), e.get_as::<u64>("v")) {
            (Ok(n), _) => format!("-{n}"),
            (_, Ok(v)) => format!("{v}"),
            _ => panic!("{e}"),
        })
        .collect();
    assert_eq!(
        steps,
        ["-4", "-3", "-2", "-1", "-0", "1", "1", "2", "6", "24"]
    );
}

/// ptera `test_loop_hashvar`: `looper(#loop_i, k) > #endloop_j` on a loop over two variables.
#[test]
fn test_loop_hashvar() {
    let values = probed("looper(#loop_i, k) > #endloop_j", || {
        looper(3);
    });
    assert_eq!(
        values,
        [
            "#loop_i=true k=0 #endloop_j=true",
            "#loop_i=true k=1 #endloop_j=true",
            "#loop_i=true k=5 #endloop_j=true",
        ]
    );
}

// --- test_interpret.py ---

fn dbrie(selector: &str) -> Vec<String> {
    probed(selector, || assert_eq!(double_brie(2, 10), 236))
}

/// ptera `test_selectors`, "simple, test focus": `*(x)` and `*(!x)` in whichever function has
/// an `x`.
#[test]
fn test_selectors_any_function() {
    assert_eq!(dbrie("*(x)"), ["x=2", "x=10"]);
    assert_eq!(dbrie("*(!x)"), ["x=2", "x=10"]);
    assert_eq!(dbrie("*(!x, y)"), ["x=2 y=3", "x=10 y=11"]);
    assert_eq!(dbrie("*(x, y)"), ["x=2 y=3", "x=10 y=11"]);
}

/// ptera `test_selectors`, "simple" and "indirect": `*(!a)`, `brie(!a)`, and `a` alone (any
/// function's `a`), in call order.
#[test]
fn test_selectors_simple_and_indirect() {
    assert_eq!(dbrie("*(!a)"), ["a=4", "a=13", "a=100"]);
    assert_eq!(dbrie("brie(!a)"), ["a=4", "a=100"]);
    assert_eq!(dbrie("a"), ["a=4", "a=13", "a=100"]);
}

/// ptera `test_selectors`, "multi-level": `double_brie(a) > brie(!x)`; `a` is bound only after
/// the first `brie` returns, so the first event has no `a` (ptera's total probe waits for it).
#[test]
fn test_selectors_multi_level() {
    assert_eq!(dbrie("double_brie(a) > brie(!x)"), ["x=2", "a=13 x=10"]);
}

/// ptera `test_selectors`, "parameter": `brie(!$v:tag.Bouffe)`, every variable of a tag.
#[test]
fn test_selectors_parameter() {
    assert_eq!(dbrie("brie(!$v:Bouffe)"), ["v=4", "v=9", "v=100", "v=121"]);
    // ptera's other spelling of the tag (`@Bouffe`, its `tag.Bouffe`).
    assert_eq!(dbrie("brie(!$v:@Bouffe)"), ["v=4", "v=9", "v=100", "v=121"]);
    assert_eq!(
        dbrie("*(a) > brie(!$v:Bouffe)"),
        ["v=4", "v=9", "a=13 v=100", "a=13 v=121"]
    );
}

/// A `$v` capture (no focus on it) over several variables: one field, the variable bound last,
/// as ptera 1.4.1's immediate probe gives it (run there, `double_brie(2, 10)`):
/// `brie(!#exit, $v:tag.Bouffe)` → `v=9`, `v=121` (`b`, bound after `a`);
/// `brie(a, !b, $v:tag.Bouffe)` → `a=4 v=9 b=9` (fields here in the selector's order); `brie(!y, $v)` → `v=3 y=3` (`y`, the argument
/// bound last). Its total probe refuses these ("multiple values stored for capture `v`"); a
/// focus-less selector here gives its event at `#exit`, as the first line's.
#[test]
fn a_generic_capture_over_several_variables_reads_the_one_bound_last() {
    assert_eq!(dbrie("brie($v:Bouffe)"), ["v=9", "v=121"]);
    assert_eq!(
        dbrie("brie(!#exit, $v:Bouffe)"),
        ["#exit=true v=9", "#exit=true v=121"]
    );
    assert_eq!(
        dbrie("brie(a, !b, $v:Bouffe)"),
        ["a=4 b=9 v=9", "a=100 b=121 v=121"]
    );
    assert_eq!(dbrie("brie(!y, $v)"), ["y=3 v=3", "y=11 v=11"]);
}

/// ptera `test_selectors`, "inexistent category": `brie > $x:tag.Xylophone` gives nothing.
#[test]
fn test_selectors_inexistent_category() {
    assert!(dbrie("brie > $x:Xylophone").is_empty());
}

/// ptera `test_selectors`, "filter on value": `double_brie(x1=2) > brie > x`, and a condition
/// on a value not bound yet (`#value=1234`) gives nothing.
#[test]
fn test_selectors_filter_on_value() {
    assert_eq!(
        dbrie("double_brie(x1=2) > brie > x"),
        ["x1=2 x=2", "x1=2 x=10"]
    );
    assert!(dbrie("double_brie(x1=3) > brie > x").is_empty());
    assert!(dbrie("double_brie(#value=1234) > brie > x").is_empty());
}

/// ptera `test_selectors`, "filter on value" on the focus's own function:
/// `brie(!x, y, a=4)`. Immediate here, so `a` is tested when `#exit` gives the event: the
/// condition moves to a focus-less selector.
#[test]
fn test_selectors_filter_on_own_value() {
    assert_eq!(dbrie("brie(x, y, a=4)"), ["x=2 y=3 a=4"]);
    assert_eq!(dbrie("brie > a=100"), ["a=100"]);
}

/// ptera `test_deep`: `snapple > cabanana(y) > peacherry > z`, three levels.
#[test]
fn test_deep() {
    let values = probed("snapple > cabanana(y) > peacherry > z", || {
        snapple(5);
    });
    assert_eq!(values, ["y=6 z=7", "y=7 z=8"]);
}

/// ptera `test_nested_loops`: `superbrie(i=1, j) > brie > x`, a condition on an enclosing
/// loop variable; then `superbrie(i=1, j ~ every(3)) > brie > x`, a match function on the
/// other (also `test_immediate_evaluation`'s immediate `j~every(3)` case: the same selector
/// and result; its total case is not translated, docs/probes.md).
#[test]
fn test_nested_loops() {
    let gv = given();
    let probe = gv.probe("superbrie(i=1, j) > brie > x").unwrap();
    assert_eq!(superbrie(10), 328_750);
    gv.finish().unwrap();
    let events = block_on(probe.collect::<Vec<Event>>());
    let js: Vec<i64> = events.iter().map(|e| e.get_as("j").unwrap()).collect();
    let xs: Vec<i64> = events.iter().map(|e| e.get_as("x").unwrap()).collect();
    assert_eq!(js, (0..10).collect::<Vec<_>>());
    assert_eq!(xs, (10..20).collect::<Vec<_>>());

    let gv = given();
    let probe = gv.probe("superbrie(i=1, j ~ every(3)) > brie > x").unwrap();
    superbrie(10);
    gv.finish().unwrap();
    let xs: Vec<i64> = block_on(probe.key::<i64>("x").collect::<Vec<_>>());
    assert_eq!(xs, (10..20).step_by(3).collect::<Vec<_>>());
}

/// ptera `test_misc`: `x` alone, `square > x`, and
/// `sumsquares(x as ssx, y as ssy) > square(rval) > x` (`rval` is not bound when `x` is).
#[test]
fn test_misc() {
    let run = || assert_eq!(sumsquares(3, 4), 25);
    assert_eq!(probed("x", run), ["x=3", "x=3", "x=4"]);
    assert_eq!(probed("square > x", run), ["x=3", "x=4"]);
    assert_eq!(
        probed("square(x) > rval", run),
        ["x=3 rval=9", "x=4 rval=16"]
    );
    assert_eq!(
        probed("sumsquares(x as ssx, y as ssy) > square(rval) > x", run),
        ["ssx=3 ssy=4 x=3", "ssx=3 ssy=4 x=4"]
    );
}

/// ptera `test_method`: `Matou.meow(repeat) > os` over three calls.
#[test]
fn test_method() {
    let siamese = Matou {
        species: "siamese".into(),
    };
    assert_eq!(siamese.meow(1), "meowwwwwww");
    let values = probed("Matou.meow(repeat) > os", || {
        for i in 0..3 {
            siamese.meow(i);
        }
    });
    assert_eq!(values, ["repeat=0 os=", "repeat=1 os=o", "repeat=2 os=oo"]);
}

/// ptera `test_selectors`, "accumulate values across calls", with one nested call:
/// `double_brie(extra(!cheese))` is `double_brie > extra(!cheese)`.
#[test]
fn test_selectors_nested_call() {
    assert_eq!(
        dbrie("double_brie(extra(!cheese))"),
        ["cheese=13", "cheese=221"]
    );
}

// --- test_selector.py ---

/// A capture without its column: name, key, role, tag, condition.
type CaptureShape = (String, String, Role, Option<String>, Option<Condition>);

/// A selector's functions and captures without their columns, to compare two spellings.
fn shape(selector: &str) -> Vec<(String, Vec<CaptureShape>)> {
    Selector::parse(selector)
        .unwrap_or_else(|e| panic!("{e}"))
        .elements()
        .iter()
        .map(|e| {
            let captures = e
                .captures
                .iter()
                .map(|c| {
                    (
                        c.name.clone(),
                        c.key.clone(),
                        c.role,
                        c.tag.clone(),
                        c.condition.clone(),
                    )
                })
                .collect();
            (e.name(), captures)
        })
        .collect()
}

/// ptera `test_parser_equivalencies`: the spellings ptera treats as one selector.
#[test]
fn test_parser_equivalencies() {
    assert_eq!(shape("* as x"), shape("$x"));
    assert_eq!(shape("a > b > c"), shape("a\n> b\n> c"));
    assert_eq!(shape("a > b > c"), shape("\n  a > b > c\n"));
    assert_eq!(shape("a > b"), shape("a(!b)"));
    assert_eq!(shape("a > b > c"), shape("a > b(!c)"));
    assert_eq!(shape("a > b > c"), shape("a() > b(!c)"));
    assert_eq!(shape("a > b(c)"), shape("a(b(c))"));
    assert_eq!(shape("a() as b"), shape("a(!#value as b)"));
    assert_eq!(shape("a(b)=3"), shape("a(b, #value=3)"));
    assert_eq!(shape("apple"), shape("*(!apple)"));
}

/// ptera `test_parser`: captures, renaming, a generic capture with a tag (`$f:Fruit`), and a
/// tag alone (`apple > :Fruit`, from `test_lexer`'s `radish > :cake`).
#[test]
fn test_parser() {
    let s = Selector::parse("apple(a, b, c, d as e)").unwrap();
    let keys: Vec<_> = s.elements()[0]
        .captures
        .iter()
        .map(|c| c.key.as_str())
        .collect();
    assert_eq!(keys, ["a", "b", "c", "e"]);
    assert!(s.focus().is_none());
    let s = Selector::parse("$f:Fruit").unwrap();
    let focus = s.focus().unwrap();
    assert!(focus.is_any() && s.elements()[0].is_any());
    assert_eq!(
        (focus.key.as_str(), focus.tag.as_deref()),
        ("f", Some("Fruit"))
    );
    let s = Selector::parse("apple > :Fruit").unwrap();
    let focus = s.focus().unwrap();
    assert_eq!(
        (focus.name.as_str(), focus.tag.as_deref()),
        ("*", Some("Fruit"))
    );
    let s = Selector::parse("apple(!a)").unwrap();
    assert_eq!(s.focus().unwrap().name, "a");
}

/// ptera `test_bad_patterns`: `{x}` and `%` are not selectors.
#[test]
fn test_bad_patterns() {
    assert_eq!(Selector::parse("{x}").unwrap_err().column, 1);
    assert_eq!(Selector::parse("%").unwrap_err().column, 1);
}

/// ptera `test_validity`: one focus per selector.
#[test]
fn test_validity() {
    assert!(Selector::parse("a(!$b)").is_ok());
    assert!(Selector::parse("a(!$b, !$c)").is_err());
    assert!(Selector::parse("a(b, c)").is_ok());
    assert!(Selector::parse("a(!b, c)").is_ok());
    assert!(Selector::parse("a(!b, !c)").is_err());
}

/// ptera `test_main`: the focus of each form.
#[test]
fn test_main() {
    let focus = |s: &str| Selector::parse(s).unwrap().focus().map(|c| c.name.clone());
    assert_eq!(focus("apple > pie").as_deref(), Some("pie"));
    assert_eq!(focus("apple(!x, y)").as_deref(), Some("x"));
    assert_eq!(focus("apple(x, !y)").as_deref(), Some("y"));
    assert_eq!(focus("apple(x, y)"), None);
}

/// ptera `test_value_evaluate`: `x=3`, `x=3.7`, `x='wow'`.
#[test]
fn test_value_evaluate() {
    let condition = |s: &str| match Selector::parse(s).unwrap().focus().unwrap().condition {
        Some(Condition::Equals(ref literal)) => Some(literal.clone()),
        _ => None,
    };
    assert_eq!(condition("x=3"), Some(Literal::Int(3)));
    assert_eq!(condition("x=3.7"), Some(Literal::Float(3.7)));
    assert_eq!(condition("x='wow'"), Some(Literal::Str("wow".into())));
    assert_eq!(condition("f > x=-2"), Some(Literal::Int(-2)));
    assert_eq!(condition("f > x=True"), Some(Literal::Bool(true)));
}

/// ptera `test_all_captures`: `f(x=3)` captures `x`, with its condition.
#[test]
fn test_all_captures() {
    let s = Selector::parse("f(x=3)").unwrap();
    let x = &s.elements()[0].captures[0];
    assert_eq!(
        (x.name.as_str(), x.role, x.condition.clone()),
        ("x", Role::Context, Some(Condition::Equals(Literal::Int(3))))
    );
    assert!(
        Selector::parse("g > f()").unwrap().elements()[1]
            .captures
            .is_empty()
    );
}

/// ptera `test_code_not_found`: `//what > x` names no function.
#[test]
fn test_code_not_found() {
    assert!(matches!(
        given().probe("//what > x"),
        Err(ProbeError::UnknownFunction { .. })
    ));
}

/// ptera `test_immediate_evaluation`, its overrides: `superbrie(k=7) > brie > x` replaces the
/// one `x` given while the enclosing `k` is 7, `superbrie(i=9) > brie > x` the ten under
/// `i=9` (ptera's `Overlay.rewriting`).
#[test]
fn test_immediate_evaluation_overrides() {
    let gv = given();
    let zero = gv
        .probe("superbrie(k=7) > brie > x")
        .unwrap()
        .override_with(|_: i64| 0)
        .unwrap();
    assert_eq!(superbrie(10), 328_701);
    assert_eq!(zero.replaced(), 1);
    drop(zero);
    let zero = gv
        .probe("superbrie(i=9) > brie > x")
        .unwrap()
        .override_with(|_: i64| 0)
        .unwrap();
    assert_eq!(superbrie(10), 239_365);
    assert_eq!(zero.replaced(), 10);
    drop(zero);
    assert_eq!(superbrie(10), 328_750);
}

/// An overridable argument gives one event per call, with the other arguments bound, as any
/// argument does (ptera binds every argument at entry).
#[test]
fn an_overridable_argument_gives_one_event_with_the_others_bound() {
    assert_eq!(
        probed("brie(!x, y)", || assert_eq!(brie(3, 4), 25)),
        ["x=3 y=4"]
    );
    assert_eq!(probed("brie > x", || assert_eq!(brie(3, 4), 25)), ["x=3"]);
}

/// An override's conditions are the probe's: on another argument (`brie(y=4) > x`), on the
/// enclosing call (`square(x=3) > rval`) and on the value itself (`square > rval=16`).
#[test]
fn overrides_apply_only_where_their_conditions_hold() {
    let gv = given();
    let on_y = gv
        .probe("brie(y=4) > x")
        .unwrap()
        .override_with(|_: i64| 0)
        .unwrap();
    assert_eq!(brie(3, 4), 16);
    assert_eq!(brie(3, 5), 34);
    assert_eq!(on_y.replaced(), 1);
    drop(on_y);

    let on_x = gv
        .probe("square(x=3) > rval")
        .unwrap()
        .override_with(|_: i64| 0)
        .unwrap();
    assert_eq!(sumsquares(3, 4), 16);
    drop(on_x);
    let on_value = gv
        .probe("square > rval=16")
        .unwrap()
        .override_with(|_: i64| 0)
        .unwrap();
    assert_eq!(sumsquares(3, 4), 9);
    assert_eq!(on_value.replaced(), 1);
}

/// Every probe sees the value the function goes on with: with `square > rval` := 5, another
/// probe on `square > rval` gives 5 and 5 (ptera's overlay applies before its taps).
#[test]
fn other_probes_see_the_overridden_value() {
    let gv = given();
    let seen = gv.probe("square > rval").unwrap();
    let five = gv
        .probe("square > rval")
        .unwrap()
        .override_with(|_: i64| 5)
        .unwrap();
    assert_eq!(sumsquares(3, 4), 10);
    drop(five);
    assert_eq!(events(gv, seen), ["rval=5", "rval=5"]);
}

// `j = j + 1` as ptera's test writes it: a plain assignment, which the macro sees apart from `+=`.
#[giving::probe(overridable(j))]
#[allow(clippy::assign_op_pattern)]
fn bump(n: i64) -> i64 {
    let mut j = n;
    j = j + 1;
    j += 1;
    j
}

#[giving::probe(overridable(i))]
fn total(n: i64) -> i64 {
    let mut sum = 0;
    for i in 0..n {
        sum += i;
    }
    sum
}

/// Every binding of an overridable variable goes through the override: its `let`, each later
/// assignment (`j = j + 1`, `j += 1`) and a `for` variable's each iteration (ptera overrides
/// every assignment of the focus variable).
#[test]
fn every_assignment_of_an_overridable_variable_is_replaced() {
    let gv = given();
    let tenfold = gv
        .probe("bump > j")
        .unwrap()
        .override_with(|j: i64| j * 10)
        .unwrap();
    // 2 → 20 → 21 → 210 → 211 → 2110.
    assert_eq!(bump(2), 2110);
    assert_eq!(tenfold.replaced(), 3);
    drop(tenfold);
    assert_eq!(bump(2), 4);

    let seen = gv.probe("total > i").unwrap();
    let doubled = gv
        .probe("total > i")
        .unwrap()
        .override_with(|i: i64| 2 * i)
        .unwrap();
    assert_eq!(total(4), 12);
    assert_eq!(doubled.replaced(), 4);
    drop(doubled);
    assert_eq!(events(gv, seen), ["i=0", "i=2", "i=4", "i=6"]);
}

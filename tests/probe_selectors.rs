//! Selector parsing: every form, and malformed selectors that say where and what was expected.

use giving::probe::{Role, Selector};

#[test]
fn every_form_parses() {
    let s = Selector::parse("f > x").unwrap();
    assert_eq!(s.elements().len(), 1);
    assert_eq!(s.focus().unwrap().name, "x");

    let s = Selector::parse("f(a, b) > x").unwrap();
    let names: Vec<_> = s.elements()[0]
        .captures
        .iter()
        .map(|c| (c.name.as_str(), c.role))
        .collect();
    assert_eq!(
        names,
        [
            ("a", Role::Context),
            ("b", Role::Context),
            ("x", Role::Focus)
        ]
    );

    let s = Selector::parse("f(!x)").unwrap();
    assert_eq!(s.focus().unwrap().name, "x");

    let s = Selector::parse("outer > middle > inner > x").unwrap();
    let path: Vec<_> = s.elements().iter().map(|e| e.name()).collect();
    assert_eq!(path, ["outer", "middle", "inner"]);

    // Grouping parentheses, as ptera's tests write them (`apple` == `(apple)`); `>` nests to
    // the right, so a group on the right changes nothing.
    for grouped in [
        "(outer > middle > inner > x)",
        "outer > (middle > (inner > x))",
        "((outer)) > middle > (inner) > (x)",
    ] {
        assert_eq!(
            shape(grouped),
            shape("outer > middle > inner > x"),
            "{grouped} is outer > middle > inner > x"
        );
    }
    assert_eq!(shape("(x)"), shape("x"));

    let s = Selector::parse("f > loss as l").unwrap();
    assert_eq!(
        (
            s.focus().unwrap().name.as_str(),
            s.focus().unwrap().key.as_str()
        ),
        ("loss", "l")
    );

    for special in [
        "#value",
        "#enter",
        "#exit",
        "#error",
        "#loop_x",
        "#endloop_x",
    ] {
        let s = Selector::parse(&format!("f > {special}")).unwrap();
        assert_eq!(s.focus().unwrap().name, special);
    }

    let s = Selector::parse("f(inp as batch, !#loop_inp as start, !!#endloop_inp as end)").unwrap();
    assert_eq!(s.focus().unwrap().key, "start");
    assert_eq!(s.end().unwrap().key, "end");

    let s = Selector::parse("crate::models::cnn::forward > x").unwrap();
    assert_eq!(s.elements()[0].path, ["crate", "models", "cnn", "forward"]);

    let s = Selector::parse("f(a, b)").unwrap();
    assert!(s.focus().is_none());
    assert_eq!(s.to_string(), "f(a, b)");
}

/// Each malformed selector: its column and the message.
const MALFORMED: [(&str, usize, &str); 16] = [
    ("", 1, "expected a variable or function name, found the end"),
    (
        "m::f",
        5,
        "expected `>` and a variable, or `(` with captures, after the function name, found the end",
    ),
    (
        "f > ",
        5,
        "expected a variable or function name, found the end",
    ),
    ("f(x", 4, "expected `,`, `as` or `)`, found the end"),
    (
        "f(x,)",
        5,
        "expected a variable name, `!`, `!!` or a special (#value, …), found `)`",
    ),
    (
        "f(!!x)",
        3,
        "expected a beginning (`!x`) for the wrapper's end (`!!`), found only `!!x`",
    ),
    (
        "f(!x, !y)",
        7,
        "expected a single focus (`!`) per selector, found a second one on `y`",
    ),
    (
        "f > #bogus",
        5,
        "expected #enter, #exit, #value, #error, #loop_NAME or #endloop_NAME, found `#bogus`",
    ),
    (
        "f > x as",
        9,
        "expected a field name after `as`, found the end",
    ),
    (
        "f >> x",
        3,
        "expected `>` (ptera 1.4 has no `>>`: `>` already means called within, at any depth), found `>>`",
    ),
    ("(f > x", 7, "expected `>`, `(`, `as` or `)`, found the end"),
    (
        "(a > b) > c",
        9,
        "expected the end or `)` after a parenthesised chain (ptera reads `(a > b) > c` as `a(!b, !c)`, not `a > b > c`), found `>`",
    ),
    (
        "f > x)",
        6,
        "expected `>`, `(`, `as` or the end of the selector, found `)`",
    ),
    (
        "f > ()",
        6,
        "expected a variable or function name, found `)`",
    ),
    (
        "f(x) y",
        6,
        "expected `>` or the end of the selector, found `y`",
    ),
    (
        "g as h > f > x",
        3,
        "expected `as` only after a variable (a function cannot be renamed), found a renamed function",
    ),
];

/// One function of a selector: its path and its captures (name, key, role).
type Shape = (Vec<String>, Vec<(String, String, Role)>);

/// A selector's functions and captures, without the columns they were written at.
fn shape(selector: &str) -> Vec<Shape> {
    let parsed = Selector::parse(selector).unwrap();
    parsed
        .elements()
        .iter()
        .map(|e| {
            let captures = e.captures.iter();
            let captures = captures.map(|c| (c.name.clone(), c.key.clone(), c.role));
            (e.path.clone(), captures.collect())
        })
        .collect()
}

#[test]
fn malformed_selectors_name_the_column_and_what_was_expected() {
    for (selector, column, message) in MALFORMED {
        let error = Selector::parse(selector).unwrap_err();
        assert_eq!(error.column, column, "{selector:?}: {error}");
        assert_eq!(
            error.to_string(),
            format!("selector `{selector}`, column {column}: {message}"),
            "{selector:?}"
        );
    }
}

#[test]
fn more_malformed_selectors() {
    for (selector, column, expected) in [
        (
            "f(!x) > y",
            9,
            "the end of the selector: the function already has a focus",
        ),
        (
            "f(!x) > g(y) > z",
            3,
            "a plain capture: `!` and `!!` belong in the last function",
        ),
        ("f::", 4, "a name after `::`"),
        (
            "f > a::b",
            5,
            "a variable name (no `::`) or `(` after the last function",
        ),
        ("#value > x", 1, "a function name before `>`"),
        ("f(!x) > #value", 9, "the end of the selector"),
        ("f > 3x", 5, "a variable or function name"),
        ("f $ x", 3, "`>`, `(`, `as` or the end of the selector"),
        ("f(!x) > g()", 3, "a plain capture"),
    ] {
        let error = Selector::parse(selector).unwrap_err();
        assert_eq!(error.column, column, "{selector:?}: {error}");
        assert!(
            error.expected.starts_with(expected),
            "{selector:?}: {error}"
        );
    }
}

/// Every string of up to five characters over the grammar's alphabet parses or gives an error
/// whose column lies within the selector (plus one, for "the end"): nothing panics.
#[test]
fn no_selector_panics_the_parser() {
    const ALPHABET: [char; 12] = ['f', 'x', '>', '(', ')', ',', '!', '#', ':', ' ', 'a', 's'];
    fn walk(text: &mut String, depth: usize, count: &mut usize) {
        match Selector::parse(text) {
            Ok(selector) => assert!(!selector.elements().is_empty()),
            Err(error) => {
                assert!(
                    error.column >= 1 && error.column <= text.chars().count() + 1,
                    "{error}"
                );
                assert!(!error.expected.is_empty());
            }
        }
        *count += 1;
        if depth == 0 {
            return;
        }
        for c in ALPHABET {
            text.push(c);
            walk(text, depth - 1, count);
            text.pop();
        }
    }
    let mut count = 0;
    walk(&mut String::new(), 5, &mut count);
    assert_eq!(count, (0..=5).map(|n| 12usize.pow(n)).sum::<usize>());
}

/// The forms ptera has and this grammar refuses, each with where and why.
#[test]
fn ptera_forms_without_a_rust_counterpart_say_why() {
    for (selector, column, expected) in [
        ("f(g(x), h(y))", 9, "one nested call per function"),
        ("f:Tag > x", 2, "a tag on a variable"),
        (
            "f > #value:Tag",
            11,
            "a tag on a variable (specials have none)",
        ),
        ("f > *=3", 6, "a named variable before `=`"),
        ("f > x=", 7, "a value after `=`"),
        ("f > x=abc", 7, "a value after `=`"),
        ("f > x='abc", 7, "a value after `=`"),
        (
            "f > x=99999999999999999999",
            7,
            "a number that fits in 64 bits",
        ),
        (
            "f(g(x)) > y",
            1,
            "a nested call (`f(g(x))`) only in the last function",
        ),
        ("f=3 > x", 2, "a condition on a variable"),
        ("$x > y", 1, "a function name before `>`"),
        ("f > /a/b", 5, "a variable name (no `::`)"),
        (
            "f > $x:@enter",
            8,
            "a type's name (ptera's `@enter`/`@exit` tags",
        ),
        ("f > $x:@", 9, "a tag (a type name) after `:`"),
    ] {
        let error = Selector::parse(selector).unwrap_err();
        assert_eq!(error.column, column, "{selector:?}: {error}");
        assert!(
            error.expected.starts_with(expected),
            "{selector:?}: {error}"
        );
    }
}

#[giving::probe]
fn typed(count: u32, scale: f64) -> f64 {
    let label: &str = "x";
    let product = f64::from(count) * scale;
    product + label.len() as f64
}

/// A tag that contradicts the written type, and a variable no function has, are refused when
/// the probe opens, with the column and what would work.
#[test]
fn resolution_errors_for_tags_and_lone_variables() {
    let error = giving::probe::check("typed > count:f64").unwrap_err();
    assert_eq!(
        error.to_string(),
        "`count` in `typed` is written `u32`, not tagged `f64` (column 9): a tag names the \
         variable's type"
    );
    assert!(giving::probe::check("typed > count:u32").is_ok());
    assert!(giving::probe::check("typed > product:f64").is_ok()); // decided at run time
    let error = giving::probe::check("typed").unwrap_err();
    assert_eq!(
        error.to_string(),
        "no function instrumented with #[probe] has a variable `typed` (column 1); `typed` is a \
         function: select one of its variables (`typed > x`) or capture some (`typed(x, y)`)"
    );
    let error = giving::probe::check("prodcut").unwrap_err();
    assert!(
        error
            .to_string()
            .ends_with("; closest: product, count, label"),
        "{error}"
    );
    assert!(giving::probe::check("*(count) > x").is_err());
    assert_eq!(typed(2, 0.5), 2.0);
}

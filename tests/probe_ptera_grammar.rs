//! The selector grammar against ptera 1.4.1's own parser: each selector below is parsed by
//! ptera (`ptera.selector._select`, run in Python) and by `Selector::parse`, and the two must
//! agree as the list says — the same functions and captures, both refusing, or a difference
//! that docs/probes.md lists. A difference that goes away fails the test too, so the list (and
//! the page) stays true.
//!
//! Needs Python with `ptera==1.4.1` (`.ci/run` installs it); without it the test says SKIPPED.

use std::process::Command;

use giving::probe::{ANY, Role, Selector};
use serde_json::Value as Json;

/// How ptera and giving must relate on one selector.
enum Expect {
    /// Both accept it, with the same functions and captures.
    Same,
    /// Both refuse it.
    BothRefuse,
    /// ptera accepts it and giving does not (docs/probes.md says why).
    OnlyPtera(&'static str),
}

use Expect::*;

const CASES: &[(&str, Expect)] = &[
    ("f > x", Same),
    ("f(!x)", Same),
    ("f(a, b)", Same),
    ("f(x) > y", Same),
    ("f(!x, y)", Same),
    ("f(x, !y)", Same),
    ("outer > middle > inner > x", Same),
    ("x", Same),
    ("(apple)", Same),
    ("a > (b > c)", Same),
    ("(a) > b", Same),
    ("a > (b) > (c)", Same),
    (
        "(a > b) > c",
        OnlyPtera("ptera reads it as `a(!b, !c)`, two foci in one function; giving refuses it"),
    ),
    ("f > x as y", Same),
    ("f() as x", Same),
    ("f(!n) as !!v", Same),
    (
        "f(!x) > g > !!y",
        OnlyPtera("a wrapper's end only in the function of its beginning"),
    ),
    ("f(x=1) > y", Same),
    ("f > x=3", Same),
    ("*(x) > y", Same),
    ("f > $x", Same),
    ("f > *", Same),
    ("f > x:Tag", Same),
    ("f > $x:Tag", Same),
    ("f > :Tag", Same),
    ("f > #enter", Same),
    ("f > #value", Same),
    ("f(#loop_i) > x", Same),
    ("Koala.moo > x", Same),
    ("superbrie(i=1, j) > brie > x", Same),
    ("sumsquares(x as ssx, y as ssy) > square(rval) > x", Same),
    ("f >> x", BothRefuse),
    ("", BothRefuse),
    ("f > ", BothRefuse),
    ("f(x", BothRefuse),
    ("(f > x", BothRefuse),
    ("f > $x:@flag", Same),
    ("f(!x:@Bouffe, y)", Same),
    ("f > :@Tag", Same),
    ("!!x", OnlyPtera("a wrapper's end without its beginning")),
    (
        "f(!!x) > g > y",
        OnlyPtera("a wrapper's end outside the innermost function"),
    ),
    (
        "f(x, !y, g(z))",
        OnlyPtera("the focus outside the innermost function"),
    ),
    (
        "double_brie(!a) > brie(x)",
        OnlyPtera("the focus outside the innermost function"),
    ),
    ("Koala.moo > self.x", OnlyPtera("attribute captures")),
    (
        "f:Tag(x)",
        OnlyPtera("function tags: a Rust function has no type to tag it by"),
    ),
    ("f(g > x, h > y)", OnlyPtera("sibling calls")),
    ("x ~ every(3)", Same),
    ("superbrie(i=1, j~every(3)) > brie > x", Same),
];

/// ptera's parse of each selector: one JSON line each, `{"ok": false}` for a refusal, else the
/// chain of calls from the outermost (`name`, `captures` as `[name, key, role, tag]`) and
/// whether a call had sibling children (a form giving has no shape for).
const PTERA: &str = r#"
import json, sys
from ptera.selector import _select

def text(v):
    if v is None:
        return None
    return getattr(v, "value", v)

def capture(c):
    level = max(c.tags, default=0)
    role = {0: "Context", 1: "Focus", 2: "End"}[level]
    name = text(c.name) or "*"
    key = c.capture or "*"
    # `@Tag` resolves to the tag `Tag` (ptera's `tag_factory`), as `Tag` does once imported.
    category = text(c.category)
    if isinstance(category, str) and category.startswith("@"):
        category = category[1:]
    return [name, key, role, category]

for selector in json.loads(sys.argv[1]):
    try:
        call = _select(selector)
    except Exception as error:
        print(json.dumps({"ok": False, "error": str(error)}))
        continue
    chain, siblings = [], False
    while call is not None:
        chain.append({"name": text(call.element.name) or "*",
                      "captures": [capture(c) for c in call.captures]})
        siblings = siblings or len(call.children) > 1
        call = call.children[0] if call.children else None
    print(json.dumps({"ok": True, "chain": chain, "siblings": siblings}))
"#;

/// ptera's verdict on every case, or `None` where Python or ptera 1.4.1 is missing.
fn ptera_parses(selectors: &[&str]) -> Option<Vec<Json>> {
    let version = Command::new("python3")
        .args([
            "-c",
            "import importlib.metadata as m; print(m.version('ptera'))",
        ])
        .output()
        .ok()?;
    if !version.status.success() || String::from_utf8_lossy(&version.stdout).trim() != "1.4.1" {
        return None;
    }
    let out = Command::new("python3")
        .args(["-c", PTERA, &serde_json::to_string(selectors).unwrap()])
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = String::from_utf8(out.stdout).unwrap();
    Some(
        lines
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect(),
    )
}

/// giving's parse in ptera's terms: the chain of functions, each with its captures.
fn giving_shape(selector: &Selector) -> Json {
    let chain: Vec<Json> = selector
        .elements()
        .iter()
        .map(|element| {
            let captures: Vec<Json> = element
                .captures
                .iter()
                .map(|c| {
                    let role = match c.role {
                        Role::Context => "Context",
                        Role::Focus => "Focus",
                        Role::End => "End",
                    };
                    // ptera keeps the capture's name as written (`x` of `x as y`).
                    let name = if c.name == ANY { "*" } else { &c.name };
                    serde_json::json!([name, c.key, role, c.tag])
                })
                .collect();
            // ptera writes `Type.method` with a dot, as it was given.
            serde_json::json!({"name": element.path.join("."), "captures": captures})
        })
        .collect();
    serde_json::json!({"ok": true, "chain": chain, "siblings": false})
}

#[test]
fn selectors_parse_as_ptera_1_4_1_parses_them() {
    let selectors: Vec<&str> = CASES.iter().map(|(s, _)| *s).collect();
    let Some(ptera) = ptera_parses(&selectors) else {
        eprintln!(
            "SKIPPED: Python with ptera 1.4.1 is not installed (pip install ptera==1.4.1): the \
             grammar was not compared with ptera's"
        );
        return;
    };
    assert_eq!(ptera.len(), CASES.len());
    let mut wrong = Vec::new();
    for ((selector, expect), theirs) in CASES.iter().zip(&ptera) {
        let ours = Selector::parse(selector);
        let ptera_ok = theirs["ok"].as_bool().unwrap();
        let verdict = match expect {
            Same => match &ours {
                Ok(parsed) if ptera_ok && giving_shape(parsed) == *theirs => None,
                Ok(parsed) => Some(format!(
                    "expected the same shape: ptera {theirs}, giving {}",
                    giving_shape(parsed)
                )),
                Err(error) => Some(format!("giving refuses it ({error}); ptera: {theirs}")),
            },
            BothRefuse => (ptera_ok || ours.is_ok())
                .then(|| format!("expected both to refuse: ptera {theirs}, giving {ours:?}")),
            OnlyPtera(why) => (!ptera_ok || ours.is_ok()).then(|| {
                format!("listed as accepted by ptera only ({why}): ptera {theirs}, giving {ours:?}")
            }),
        };
        if let Some(verdict) = verdict {
            wrong.push(format!("`{selector}`: {verdict}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

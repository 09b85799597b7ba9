//! A benchmark's `argv`, as milabench assembles and resolves it: `utils.assemble_options` (a
//! map's positional keys first, `--:` raw arguments, lists joined by commas), then `sizer`'s
//! `auto(…)`, `auto_batch(…)` and `expr(…)` on each argument (`name=auto_batch(8)` too).

use serde_norway::Value;

use super::resolve::scalar;
use super::scaling::Scaling;
use super::source::kind;

/// `argv` as milabench's `assemble_options` writes it: a list as it is; a map's keys with
/// `true` that do not start with `-` are positional and come first; `--: [..]` adds raw
/// arguments; `null` (and, unlike milabench, which refuses it, `false`) leaves a flag out;
/// a list value is joined by commas.
pub(crate) fn assemble(value: &Value) -> Result<Vec<String>, String> {
    match value {
        Value::Sequence(items) => items
            .iter()
            .map(|v| {
                scalar(v).ok_or_else(|| "a list of argv must hold strings or numbers".to_owned())
            })
            .collect(),
        Value::Mapping(map) => {
            let mut positional = Vec::new();
            let mut args = Vec::new();
            for (flag, v) in map {
                let flag = scalar(flag).ok_or("a flag must be a string")?;
                match v {
                    Value::Null | Value::Bool(false) => {}
                    Value::Bool(true) if flag.starts_with('-') => args.push(flag),
                    Value::Bool(true) => positional.push(flag),
                    Value::Sequence(raw) if flag == "--" => {
                        for item in raw {
                            args.push(scalar(item).ok_or("`--`: raw arguments are strings")?);
                        }
                    }
                    Value::Sequence(items) => {
                        let joined: Option<Vec<String>> = items.iter().map(scalar).collect();
                        let joined = joined.ok_or_else(|| {
                            format!("`{flag}`: a list value must hold strings or numbers")
                        })?;
                        args.push(flag);
                        args.push(joined.join(","));
                    }
                    other => {
                        let v = scalar(other).ok_or_else(|| {
                            format!(
                                "`{flag}`: expected a string, a number or a boolean, found {}",
                                kind(other)
                            )
                        })?;
                        args.push(flag);
                        args.push(v);
                    }
                }
            }
            positional.extend(args);
            Ok(positional)
        }
        other => Err(format!("expected a map or a list, found {}", kind(other))),
    }
}

/// How milabench's sizer answers `auto(…)` and `auto_batch(…)` (system `options.cpu` and
/// `options.sizer`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sizing {
    /// `options.sizer.auto` without `mult`/`add`: the batch size from this table …
    pub scaling: Option<std::sync::Arc<Scaling>>,
    /// … for this many bytes of GPU memory (`gpu.capacity` or `options.sizer.capacity`) …
    pub capacity: Option<f64>,
    /// … rounded down to a multiple of this …
    pub multiple: Option<u64>,
    /// … or to a power of this; unless `batch_size` says it.
    pub power: Option<u64>,
    /// `options.sizer.batch_size`.
    pub batch_size: Option<i64>,
    /// `options.cpu.enabled`: `auto(value, default)` gives `value` (else `default`).
    pub cpu_enabled: bool,
    /// `options.sizer.auto` with `mult`/`add`: `auto_batch(b)` gives
    /// `max(1, int(b × mult) + add)` (else `b`).
    pub batch_auto: bool,
    /// `options.sizer.mult`.
    pub batch_mult: Option<f64>,
    /// `options.sizer.add`.
    pub batch_add: Option<i64>,
}

/// Resolves one argument of the benchmark `bench` as milabench's `auto_eval`: a value (after
/// `name=`) that starts with `auto` or `expr` is evaluated; anything else is kept.
pub(crate) fn resolve(arg: &str, sizing: &Sizing, bench: &str) -> Result<String, String> {
    let (name, value) = match arg.split_once('=') {
        Some((name, value)) => (Some(name), value),
        None => (None, arg),
    };
    // A bare word (`--device: auto`) is a value, not a call: milabench evaluates it to a
    // function's name; giving keeps it as written.
    if !(value.starts_with("auto") || value.starts_with("expr")) || !value.contains('(') {
        return Ok(arg.to_owned());
    }
    let result = Parser {
        text: value.as_bytes(),
        at: 0,
        sizing,
        bench,
    }
    .whole()
    .map_err(|e| format!("{arg:?}: {e}"))?;
    let text = result.text();
    Ok(match name {
        Some(name) => format!("{name}={text}"),
        None => text,
    })
}

/// A number as Python computes it: an int stays an int.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Num {
    Int(i64),
    Float(f64),
}

impl Num {
    fn f(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Float(f) => f,
        }
    }

    /// As Python's `str()`.
    fn text(self) -> String {
        match self {
            Num::Int(i) => i.to_string(),
            Num::Float(f) if f.fract() == 0.0 && f.abs() < 1e16 => format!("{f:.1}"),
            Num::Float(f) => f.to_string(),
        }
    }
}

/// Arithmetic with `auto`, `auto_batch`, `expr`, `min`, `max` and `int`: what milabench's
/// configurations write inside `eval`.
struct Parser<'a> {
    text: &'a [u8],
    at: usize,
    sizing: &'a Sizing,
    bench: &'a str,
}

impl Parser<'_> {
    fn whole(mut self) -> Result<Num, String> {
        let n = self.sum()?;
        self.space();
        if self.at != self.text.len() {
            return Err(format!("unexpected `{}`", self.text[self.at] as char));
        }
        Ok(n)
    }

    fn space(&mut self) {
        while self.text.get(self.at).is_some_and(u8::is_ascii_whitespace) {
            self.at += 1;
        }
    }

    fn eat(&mut self, token: &str) -> bool {
        self.space();
        if self.text[self.at..].starts_with(token.as_bytes()) {
            self.at += token.len();
            true
        } else {
            false
        }
    }

    fn sum(&mut self) -> Result<Num, String> {
        let mut n = self.product()?;
        loop {
            if self.eat("+") {
                n = arith(n, self.product()?, |a, b| a.checked_add(b), |a, b| a + b)?;
            } else if self.eat("-") {
                n = arith(n, self.product()?, |a, b| a.checked_sub(b), |a, b| a - b)?;
            } else {
                return Ok(n);
            }
        }
    }

    fn product(&mut self) -> Result<Num, String> {
        let mut n = self.unary()?;
        loop {
            if self.eat("//") {
                let d = self.unary()?;
                n = match (n, d) {
                    (_, Num::Int(0)) => return Err("division by zero".to_owned()),
                    (Num::Int(a), Num::Int(b)) => Num::Int(a.div_euclid(b)),
                    (a, b) => Num::Float((a.f() / b.f()).floor()),
                };
            } else if self.eat("*") {
                n = arith(n, self.unary()?, |a, b| a.checked_mul(b), |a, b| a * b)?;
            } else if self.eat("/") {
                let d = self.unary()?;
                if d.f() == 0.0 {
                    return Err("division by zero".to_owned());
                }
                n = Num::Float(n.f() / d.f());
            } else if self.eat("%") {
                let d = self.unary()?;
                n = match (n, d) {
                    (_, Num::Int(0)) => return Err("division by zero".to_owned()),
                    (Num::Int(a), Num::Int(b)) => Num::Int(a.rem_euclid(b)),
                    (a, b) => Num::Float(a.f().rem_euclid(b.f())),
                };
            } else {
                return Ok(n);
            }
        }
    }

    fn unary(&mut self) -> Result<Num, String> {
        if self.eat("-") {
            return Ok(match self.unary()? {
                Num::Int(i) => Num::Int(-i),
                Num::Float(f) => Num::Float(-f),
            });
        }
        self.atom()
    }

    fn atom(&mut self) -> Result<Num, String> {
        self.space();
        if self.eat("(") {
            let n = self.sum()?;
            return self.close(n);
        }
        let start = self.at;
        while self
            .text
            .get(self.at)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_' || *c == b'.')
        {
            self.at += 1;
        }
        let word = std::str::from_utf8(&self.text[start..self.at]).unwrap_or_default();
        if word.is_empty() {
            return Err("expected a number or a function".to_owned());
        }
        if word.as_bytes()[0].is_ascii_digit() || word.starts_with('.') {
            return word
                .parse::<i64>()
                .map(Num::Int)
                .or_else(|_| word.parse::<f64>().map(Num::Float))
                .map_err(|_| format!("`{word}` is not a number"));
        }
        if !self.eat("(") {
            return Err(format!("unknown name `{word}`"));
        }
        let mut args = vec![self.sum()?];
        while self.eat(",") {
            args.push(self.sum()?);
        }
        let n = self.call(word, &args)?;
        self.close(n)
    }

    fn close(&mut self, n: Num) -> Result<Num, String> {
        if self.eat(")") {
            Ok(n)
        } else {
            Err("expected `)`".to_owned())
        }
    }

    fn call(&self, name: &str, args: &[Num]) -> Result<Num, String> {
        let want = |n: usize| {
            if args.len() == n {
                Ok(())
            } else {
                Err(format!("{name}() takes {n} argument(s)"))
            }
        };
        match name {
            // milabench's `auto(value, default)`: the system's value when `options.cpu` is
            // enabled, else the configuration's default.
            "auto" => {
                want(2)?;
                Ok(if self.sizing.cpu_enabled {
                    args[0]
                } else {
                    args[1]
                })
            }
            "auto_batch" => {
                want(1)?;
                let b = args[0];
                let s = self.sizing;
                if !s.batch_auto {
                    Ok(b)
                } else if s.batch_mult.is_some() || s.batch_add.is_some() {
                    let scaled = (b.f() * s.batch_mult.unwrap_or(1.0)) as i64;
                    Ok(Num::Int((scaled + s.batch_add.unwrap_or(0)).max(1)))
                } else if let Some(size) = s.batch_size {
                    Ok(Num::Int(size))
                } else {
                    let (Some(table), Some(capacity)) = (&s.scaling, s.capacity) else {
                        return Err("options.sizer.auto needs the GPU's memory (gpu.capacity) and a scaling table".to_owned());
                    };
                    Ok(Num::Int(
                        table.size(self.bench, capacity, s.multiple, s.power),
                    ))
                }
            }
            "expr" => {
                want(1)?;
                Ok(args[0])
            }
            "int" => {
                want(1)?;
                Ok(Num::Int(args[0].f() as i64))
            }
            "min" | "max" if !args.is_empty() => {
                let pick = |a: Num, b: Num| {
                    let first = if name == "min" {
                        b.f() < a.f()
                    } else {
                        b.f() > a.f()
                    };
                    if first { b } else { a }
                };
                Ok(args[1..].iter().fold(args[0], |a, b| pick(a, *b)))
            }
            other => Err(format!("unknown function `{other}`")),
        }
    }
}

fn arith(
    a: Num,
    b: Num,
    int: impl Fn(i64, i64) -> Option<i64>,
    float: impl Fn(f64, f64) -> f64,
) -> Result<Num, String> {
    match (a, b) {
        (Num::Int(x), Num::Int(y)) => int(x, y)
            .map(Num::Int)
            .ok_or_else(|| "integer overflow".to_owned()),
        (x, y) => Ok(Num::Float(float(x.f(), y.f()))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positional_keys_come_first_and_raw_arguments_follow_their_place() {
        let v: Value = serde_norway::from_str(
            "--a: 1\nbench/x.py: true\n--flag: true\n--none: null\n--: [--raw, 2]\n--list: [1, 2]\nepochs=1: true\n",
        )
        .unwrap();
        assert_eq!(
            assemble(&v).unwrap(),
            [
                "bench/x.py",
                "epochs=1",
                "--a",
                "1",
                "--flag",
                "--raw",
                "2",
                "--list",
                "1,2"
            ]
        );
    }

    fn resolve_(arg: &str, sizing: &Sizing) -> Result<String, String> {
        resolve(arg, sizing, "b")
    }

    #[test]
    fn auto_auto_batch_and_expr_resolve_as_milabench_sizer() {
        let off = Sizing::default();
        assert_eq!(resolve_("auto(8, 4)", &off).unwrap(), "4");
        assert_eq!(resolve_("auto_batch(256)", &off).unwrap(), "256");
        assert_eq!(
            resolve_("train.bs=auto_batch(32)", &off).unwrap(),
            "train.bs=32"
        );
        assert_eq!(resolve_("expr(8 * 2 + 1)", &off).unwrap(), "17");
        assert_eq!(resolve_("expr(7 / 2)", &off).unwrap(), "3.5");
        assert_eq!(resolve_("repo=\"a/b\"", &off).unwrap(), "repo=\"a/b\"");
        assert_eq!(
            resolve_("automatic(1)", &off).unwrap_err(),
            "\"automatic(1)\": unknown function `automatic`"
        );
        assert_eq!(resolve_("auto", &off).unwrap(), "auto");
        let on = Sizing {
            cpu_enabled: true,
            batch_auto: true,
            batch_mult: Some(0.5),
            batch_add: Some(8),
            ..Sizing::default()
        };
        assert_eq!(resolve_("auto(8, 4)", &on).unwrap(), "8");
        assert_eq!(resolve_("auto_batch(256)", &on).unwrap(), "136");
    }
}

//! Rewrites a function body so each assignment of a plain variable and each loop iteration
//! reports to the function's probe frame.
//!
//! Closures, `async` blocks and nested items are left alone: ptera instruments one function's
//! own code, and a closure is another function.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::visit_mut::{self, VisitMut};
use syn::{BinOp, Block, Expr, Ident, Pat, Stmt, parse_quote};

use crate::args::Options;
use crate::vars::Vars;

/// The name of the frame reference inside the generated code; hygienic, so it never clashes
/// with the user's names.
pub(crate) fn frame_ident() -> Ident {
    Ident::new("__giving_frame", Span::mixed_site())
}

/// The expression that turns `reference` (a `&T`) into a `giving::Value`: the value for the
/// types giving converts, the type's name otherwise. Decided at run time by the type's id, so
/// the hook compiles whatever `T` is, even while it is still being inferred.
pub(crate) fn to_value(reference: TokenStream) -> TokenStream {
    quote!(::giving::__private::probe::value_of(#reference))
}

/// The expression that gives the error of `reference` if it is an `Err`: its `Display` where
/// it has one, its type's name otherwise; `None` for anything else.
pub(crate) fn to_error(reference: TokenStream) -> TokenStream {
    quote! {{
        #[allow(unused_imports)]
        use ::giving::__private::probe::spec::{ErrDisplay as _, ErrName as _, NotResult as _};
        (&&&::giving::__private::probe::spec::Probed(#reference)).probe_error()
    }}
}

/// The statement that reports the current value of `ident` (variable number `index`); the
/// frame converts it, and reads its run-time type, only if some probe reads it.
fn report(ident: &Ident, index: usize) -> Stmt {
    let frame = frame_ident();
    parse_quote! { #frame.var(#index, &#ident); }
}

/// The name a tag (`x:Tensor`) matches for a written type: its last path segment, references,
/// parentheses and generics aside; `""` for a type without one (tuple, slice, `impl Trait`),
/// which then only the run-time type can match.
pub(crate) fn type_tag(ty: &syn::Type) -> String {
    match ty {
        syn::Type::Reference(r) => type_tag(&r.elem),
        syn::Type::Paren(p) => type_tag(&p.elem),
        syn::Type::Group(g) => type_tag(&g.elem),
        syn::Type::Path(p) => p
            .path
            .segments
            .last()
            .map(|s| s.ident.to_string())
            .unwrap_or_default(),
        _ => String::new(),
    }
}

/// The plain identifier a pattern binds, if it is one (`x`, `mut x`, `x: T`), with its `mut`.
pub(crate) fn plain_binding(pat: &Pat) -> Option<(&Ident, Option<syn::token::Mut>)> {
    match pat {
        Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => Some((&p.ident, p.mutability)),
        Pat::Type(t) => plain_binding(&t.pat),
        _ => None,
    }
}

/// The statement that passes overridable variable `ident` (number `index`) through the
/// override hook and rebinds it, with `mutability`, to what the hook returns.
fn rebind_overridable(ident: &Ident, mutability: Option<syn::token::Mut>, index: usize) -> Stmt {
    let frame = frame_ident();
    let value = to_value(quote!(__giving_value));
    parse_quote! {
        let #mutability #ident = #frame.overridable(#index, #ident, |__giving_value| #value);
    }
}

/// Removes the `mut` of a plain binding (`mut x`, `mut x: T`).
fn unset_mut(pat: &mut Pat) {
    match pat {
        Pat::Ident(p) => p.mutability = None,
        Pat::Type(t) => unset_mut(&mut t.pat),
        _ => {}
    }
}

/// The identifiers a `for` pattern binds, each with its `mut`: `x`, `(i, mut x)`, nested
/// tuples.
fn loop_bindings(pat: &Pat, out: &mut Vec<(Ident, Option<syn::token::Mut>)>) {
    match pat {
        Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => {
            out.push((p.ident.clone(), p.mutability))
        }
        Pat::Tuple(t) => t.elems.iter().for_each(|p| loop_bindings(p, out)),
        Pat::Paren(p) => loop_bindings(&p.pat, out),
        Pat::Type(t) => loop_bindings(&t.pat, out),
        _ => {}
    }
}

/// Removes the `mut` of the bindings of a `for` pattern that `which` selects.
fn unset_loop_mut(pat: &mut Pat, which: &impl Fn(&Ident) -> bool) {
    match pat {
        Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() && which(&p.ident) => {
            p.mutability = None
        }
        Pat::Tuple(t) => t.elems.iter_mut().for_each(|p| unset_loop_mut(p, which)),
        Pat::Paren(p) => unset_loop_mut(&mut p.pat, which),
        Pat::Type(t) => unset_loop_mut(&mut t.pat, which),
        _ => {}
    }
}

/// The body rewriter; registers every variable it instruments in `vars`.
pub(crate) struct Rewriter<'a> {
    pub(crate) vars: &'a mut Vars,
    pub(crate) options: &'a Options,
}

impl Rewriter<'_> {
    fn local(&mut self, local: &mut syn::Local, out: &mut Vec<Stmt>) {
        if let Some(init) = &mut local.init {
            self.visit_expr_mut(&mut init.expr);
            if let Some((_, diverge)) = &mut init.diverge {
                self.visit_expr_mut(diverge);
            }
        }
        let has_init = local.init.is_some();
        let binding = plain_binding(&local.pat).map(|(i, m)| (i.clone(), m));
        let Some((ident, mutability)) = binding else {
            out.push(Stmt::Local(local.clone()));
            return;
        };
        let mut first = local.clone();
        if has_init && self.options.is_overridable(&ident.to_string()) {
            // The value is moved into the override hook at once and rebound below with the
            // binding's `mut`: the first binding never needs one.
            unset_mut(&mut first.pat);
        }
        out.push(Stmt::Local(first));
        let index = self.vars.add(ident.to_string());
        if let Pat::Type(typed) = &local.pat {
            self.vars.set_type(index, type_tag(&typed.ty));
        }
        if !has_init {
            // `let x;`: declared here, reported at each assignment.
            return;
        }
        if self.options.is_overridable(&ident.to_string()) {
            out.push(rebind_overridable(&ident, mutability, index));
        } else {
            out.push(report(&ident, index));
        }
    }

    /// `x = e` / `x += e` on an instrumented variable: the assignment, then a report.
    fn assignment(&mut self, expr: &mut Expr) -> bool {
        let target = match expr {
            Expr::Assign(a) => &a.left,
            Expr::Binary(b) if is_compound_assignment(&b.op) => &b.left,
            _ => return false,
        };
        let Expr::Path(path) = &**target else {
            return false;
        };
        let Some(ident) = path.path.get_ident().cloned() else {
            return false;
        };
        let Some(index) = self.vars.index_of(&ident.to_string()) else {
            return false;
        };
        match expr {
            Expr::Assign(a) => self.visit_expr_mut(&mut a.right),
            Expr::Binary(b) => self.visit_expr_mut(&mut b.right),
            _ => {}
        }
        if self.options.is_overridable(&ident.to_string()) {
            // The value assigned goes through the override hook: `x = e` assigns the hook's
            // result (a `let x;` assigned later stays assigned once); `x += e` is computed,
            // then passed through the hook and assigned back.
            let frame = frame_ident();
            let value = to_value(quote!(__giving_value));
            *expr = match expr {
                Expr::Assign(a) => {
                    let right = &a.right;
                    parse_quote! {
                        #ident = #frame.overridable(#index, #right, |__giving_value| #value)
                    }
                }
                _ => {
                    let compound = expr.clone();
                    parse_quote! {{
                        #compound;
                        #ident = #frame.overridable(#index, #ident, |__giving_value| #value);
                    }}
                }
            };
            return true;
        }
        let report = report(&ident, index);
        let assign = expr.clone();
        *expr = parse_quote! {{ #assign; #report }};
        true
    }

    fn for_loop(&mut self, for_loop: &mut syn::ExprForLoop) {
        self.visit_expr_mut(&mut for_loop.expr);
        let mut idents = Vec::new();
        loop_bindings(&for_loop.pat, &mut idents);
        let mut reports = Vec::new();
        let mut begins = Vec::new();
        let mut ends = Vec::new();
        for (ident, mutability) in &idents {
            let index = self.vars.add(ident.to_string());
            reports.push(if self.options.is_overridable(&ident.to_string()) {
                // Rebound at the top of the body, through the override hook.
                rebind_overridable(ident, *mutability, index)
            } else {
                report(ident, index)
            });
            begins.push(self.vars.add(format!("#loop_{ident}")));
            ends.push(self.vars.add(format!("#endloop_{ident}")));
        }
        // An overridable variable is rebound, with its `mut`, at the top of the body: the
        // pattern's own binding is only moved from.
        unset_loop_mut(&mut for_loop.pat, &|ident| {
            self.options.is_overridable(&ident.to_string())
        });
        self.visit_block_mut(&mut for_loop.body);
        if idents.is_empty() {
            return;
        }
        let frame = frame_ident();
        let guard = Ident::new("__giving_iteration", Span::mixed_site());
        let stmts = &for_loop.body.stmts;
        for_loop.body = parse_quote! {{
            #(#reports)*
            let #guard = #frame.iteration(&[#(#begins),*], &[#(#ends),*]);
            #(#stmts)*
        }};
    }
}

fn is_compound_assignment(op: &BinOp) -> bool {
    matches!(
        op,
        BinOp::AddAssign(_)
            | BinOp::SubAssign(_)
            | BinOp::MulAssign(_)
            | BinOp::DivAssign(_)
            | BinOp::RemAssign(_)
            | BinOp::BitXorAssign(_)
            | BinOp::BitAndAssign(_)
            | BinOp::BitOrAssign(_)
            | BinOp::ShlAssign(_)
            | BinOp::ShrAssign(_)
    )
}

impl VisitMut for Rewriter<'_> {
    fn visit_block_mut(&mut self, block: &mut Block) {
        let mut out = Vec::with_capacity(block.stmts.len());
        for mut stmt in std::mem::take(&mut block.stmts) {
            match &mut stmt {
                Stmt::Local(local) => self.local(local, &mut out),
                Stmt::Item(_) => out.push(stmt),
                _ => {
                    self.visit_stmt_mut(&mut stmt);
                    out.push(stmt);
                }
            }
        }
        block.stmts = out;
    }

    fn visit_expr_mut(&mut self, expr: &mut Expr) {
        match expr {
            Expr::Closure(_) | Expr::Async(_) => {}
            Expr::ForLoop(for_loop) => self.for_loop(for_loop),
            _ => {
                if !self.assignment(expr) {
                    visit_mut::visit_expr_mut(self, expr);
                }
            }
        }
    }

    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    fn variables(body: syn::Block, overridable: &[&str]) -> Vec<String> {
        let options = Options {
            overridable: overridable
                .iter()
                .map(|n| Ident::new(n, Span::call_site()))
                .collect(),
        };
        let mut vars = Vars::new();
        let mut body = body;
        Rewriter {
            vars: &mut vars,
            options: &options,
        }
        .visit_block_mut(&mut body);
        vars.names()[4..].to_vec()
    }

    #[test]
    fn bindings_loops_and_assignments_become_variables_in_order() {
        let body: syn::Block = parse_quote!({
            let a = 1;
            let (b, c) = (2, 3); // a pattern: not a probe variable
            let mut d: u32;
            d = a;
            for (i, item) in [4].iter().enumerate() {
                let inner = item + 1;
                d += inner;
            }
            let closure = |x: u32| {
                let hidden = x;
                hidden
            };
            a + b + c + d + closure(1)
        });
        assert_eq!(
            variables(body, &[]),
            [
                "a",
                "d",
                "i",
                "#loop_i",
                "#endloop_i",
                "item",
                "#loop_item",
                "#endloop_item",
                "inner",
                "closure"
            ]
        );
    }

    #[test]
    fn an_overridable_binding_is_rebound_through_the_hook_without_its_first_mut() {
        let mut body: syn::Block = parse_quote!({
            let mut loader = make();
            loader
        });
        let options = Options {
            overridable: vec![Ident::new("loader", Span::call_site())],
        };
        let mut vars = Vars::new();
        Rewriter {
            vars: &mut vars,
            options: &options,
        }
        .visit_block_mut(&mut body);
        let text = quote!(#body).to_string();
        assert!(
            text.starts_with("{ let loader = make () ; let mut loader ="),
            "{text}"
        );
        assert!(text.contains(". overridable (4usize , loader"), "{text}");
    }
}

//! `#[probe]`: makes a function's variables observable by ptera-style selectors
//! (`given.probe("train > loss")`), compiled in, one relaxed load per call when nobody probes.
//!
//! Use it through `giving`, which re-exports it as `giving::probe` and documents it; this crate
//! only generates code. See `docs/probes.md` for the selector grammar.

use proc_macro::TokenStream;
use quote::ToTokens;
use syn::spanned::Spanned;
use syn::{Item, parse_macro_input};

mod args;
mod body;
mod instrument;
mod vars;

/// Instruments a function (free, method, `async`) or every method of an `impl` block so that
/// `giving` probes can observe its arguments, `let` bindings, return value, entry, exit and
/// loops. See the documentation of `giving::probe` (the re-export) for the full description.
#[proc_macro_attribute]
pub fn probe(attr: TokenStream, item: TokenStream) -> TokenStream {
    let options = parse_macro_input!(attr as args::Options);
    let item = parse_macro_input!(item as Item);
    match expand(&options, item) {
        Ok(tokens) => tokens.into(),
        Err(error) => error.to_compile_error().into(),
    }
}

fn expand(options: &args::Options, item: Item) -> syn::Result<proc_macro2::TokenStream> {
    match item {
        Item::Fn(function) => instrument::function(options, function, None),
        Item::Impl(mut block) => {
            let type_name = instrument::impl_type_name(&block.self_ty)?;
            for item in &mut block.items {
                // A `const fn` cannot run probe hooks; on a whole block it is left as is.
                if let syn::ImplItem::Fn(method) = item
                    && method.sig.constness.is_none()
                {
                    let function = syn::ItemFn {
                        attrs: std::mem::take(&mut method.attrs),
                        vis: method.vis.clone(),
                        sig: method.sig.clone(),
                        block: Box::new(method.block.clone()),
                    };
                    let expanded = instrument::function(options, function, Some(&type_name))?;
                    *method = syn::parse2(expanded)?;
                }
            }
            Ok(block.into_token_stream())
        }
        other => Err(syn::Error::new(
            item_span(&other),
            format!(
                "#[probe] instruments functions, methods and impl blocks, not {}",
                item_kind(&other)
            ),
        )),
    }
}

/// Where to point an error about an item the macro cannot instrument: its keyword and name.
fn item_span(item: &Item) -> proc_macro2::Span {
    match item {
        Item::Struct(s) => s
            .struct_token
            .span
            .join(s.ident.span())
            .unwrap_or(s.ident.span()),
        Item::Enum(e) => e
            .enum_token
            .span
            .join(e.ident.span())
            .unwrap_or(e.ident.span()),
        Item::Trait(t) => t
            .trait_token
            .span
            .join(t.ident.span())
            .unwrap_or(t.ident.span()),
        Item::Const(c) => c.ident.span(),
        Item::Static(s) => s.ident.span(),
        Item::Mod(m) => m.ident.span(),
        Item::Type(t) => t.ident.span(),
        Item::Union(u) => u.ident.span(),
        Item::Use(u) => u.use_token.span,
        other => other.span(),
    }
}

fn item_kind(item: &Item) -> &'static str {
    match item {
        Item::Struct(_) => "a struct",
        Item::Enum(_) => "an enum",
        Item::Trait(_) => "a trait (annotate the impl block or the method)",
        Item::Const(_) => "a constant",
        Item::Static(_) => "a static",
        Item::Mod(_) => "a module",
        Item::Type(_) => "a type alias",
        Item::Union(_) => "a union",
        Item::Use(_) => "a use declaration",
        Item::ForeignMod(_) => "an extern block",
        Item::Macro(_) => "a macro invocation",
        _ => "this item",
    }
}

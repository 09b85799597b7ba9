//! Instruments one function: registers its probe site, opens its frame, reports its arguments,
//! runs its body (rewritten by [`crate::body`]) and reports its return value.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote};
use syn::visit_mut::VisitMut;
use syn::{FnArg, Ident, ItemFn, ReturnType, Type};

use crate::args::Options;
use crate::body::{Rewriter, frame_ident, plain_binding, to_error, to_value, type_tag};
use crate::vars::{ENTER, Vars};

/// The name a method of `impl Type` / `impl Trait for Type` is registered under: `Type`.
pub(crate) fn impl_type_name(ty: &Type) -> syn::Result<String> {
    match ty {
        Type::Path(path) => match path.path.segments.last() {
            Some(segment) => Ok(segment.ident.to_string()),
            None => Err(syn::Error::new_spanned(
                ty,
                "#[probe] cannot name this type",
            )),
        },
        Type::Reference(reference) => impl_type_name(&reference.elem),
        Type::Paren(paren) => impl_type_name(&paren.elem),
        _ => Err(syn::Error::new_spanned(
            ty,
            "#[probe] on an impl block needs a named type (`impl Name { .. }`); annotate the \
             methods one by one instead",
        )),
    }
}

/// Whether `ty` mentions `impl Trait`, which a `let` cannot name.
fn mentions_impl_trait(ty: &Type) -> bool {
    ty.to_token_stream()
        .into_iter()
        .any(|t| matches!(t, proc_macro2::TokenTree::Ident(i) if i == "impl"))
}

fn mentions_impl_trait_output(output: &ReturnType) -> bool {
    matches!(output, ReturnType::Type(_, ty) if mentions_impl_trait(ty))
}

/// `if false { let r: R = loop {}; return r; }`: fixes the body's return type, so that `?`
/// inside the closure or async block that holds the body infers its error conversion (the
/// technique of `tracing::instrument`).
fn return_type_hint(output: &ReturnType) -> TokenStream {
    let ReturnType::Type(_, ty) = output else {
        return TokenStream::new();
    };
    if mentions_impl_trait(ty) || matches!(**ty, Type::Never(_)) {
        return TokenStream::new();
    }
    let fake = Ident::new("__giving_fake_return", Span::mixed_site());
    quote! {
        #[allow(
            unknown_lints,
            unreachable_code,
            clippy::diverging_sub_expression,
            clippy::empty_loop,
            clippy::let_unit_value,
            clippy::let_with_type_underscore,
            clippy::needless_return,
            clippy::unreachable
        )]
        if false {
            let #fake: #ty = loop {};
            return #fake;
        }
    }
}

/// Whether the declared return type is a `Result` (`Result<T, E>`, `io::Result<T>`,
/// `anyhow::Result<T>`): `#value` is then the `Ok` value.
fn returns_result(output: &ReturnType) -> bool {
    match output {
        ReturnType::Type(_, ty) => match &**ty {
            Type::Path(path) => path
                .path
                .segments
                .last()
                .is_some_and(|s| s.ident == "Result"),
            _ => false,
        },
        ReturnType::Default => false,
    }
}

/// Instruments `function`; `type_name` is the `Type` of the impl block it belongs to, if the
/// attribute was put on the block.
pub(crate) fn function(
    options: &Options,
    mut function: ItemFn,
    type_name: Option<&str>,
) -> syn::Result<TokenStream> {
    let sig = &function.sig;
    if let Some(constness) = &sig.constness {
        return Err(syn::Error::new(
            constness.span,
            "#[probe] cannot instrument a `const fn`: its probe hooks run at run time",
        ));
    }
    if let Some(variadic) = &sig.variadic {
        return Err(syn::Error::new_spanned(
            variadic,
            "#[probe] cannot instrument a variadic function",
        ));
    }
    let name = match type_name {
        Some(ty) => format!("{ty}::{}", sig.ident),
        None => sig.ident.to_string(),
    };
    let mut vars = Vars::new();
    let frame = frame_ident();

    // Arguments: reported at entry, after `#enter`.
    let mut argument_hooks = Vec::new();
    let mut override_hooks = Vec::new();
    for input in &sig.inputs {
        match input {
            FnArg::Receiver(receiver) => {
                // `self`'s tag is the impl's type (`Self` on a method annotated alone).
                let index =
                    vars.add_argument("self".to_owned(), type_name.unwrap_or("Self").to_owned());
                let self_token = &receiver.self_token;
                argument_hooks.push(quote! { #frame.argument(#index, &#self_token); });
            }
            FnArg::Typed(typed) => {
                let Some((ident, mutability)) = plain_binding(&typed.pat) else {
                    continue;
                };
                let index = vars.add_argument(ident.to_string(), type_tag(&typed.ty));
                argument_hooks.push(quote! { #frame.argument(#index, &#ident); });
                if options.is_overridable(&ident.to_string()) {
                    // After every argument is kept (an override's conditions may read the
                    // others), before their events.
                    let value = to_value(quote!(__giving_value));
                    override_hooks.push(quote! {
                        let #mutability #ident =
                            #frame.override_argument(#index, #ident, |__giving_value| #value);
                    });
                }
            }
        }
    }

    // The body as written, run when no probe names the function (see below).
    let original = function.block.clone();
    Rewriter {
        vars: &mut vars,
        options,
    }
    .visit_block_mut(&mut function.block);

    for ident in &options.overridable {
        if vars.index_of(&ident.to_string()).is_none() {
            return Err(syn::Error::new(
                ident.span(),
                format!("`{ident}` is not an argument or a `let` binding of `{name}`"),
            ));
        }
    }

    let is_async = function.sig.asyncness.is_some();
    let names = vars.names();
    let types = vars.types();
    let arguments = vars.arguments();
    let overridable: Vec<String> = options.overridable.iter().map(|i| i.to_string()).collect();
    let site = Ident::new("__GIVING_SITE", Span::mixed_site());
    let owned = Ident::new("__giving_owned_frame", Span::mixed_site());
    let result = Ident::new("__giving_result", Span::mixed_site());
    let hint = return_type_hint(&function.sig.output);
    let stmts = &function.block.stmts;
    let value = if returns_result(&function.sig.output) {
        quote!(::giving::__private::probe::ok_value_of(&#result))
    } else {
        to_value(quote!(&#result))
    };
    let error = to_error(quote!(&#result));
    let enter = if is_async {
        quote!(::giving::__private::probe::Frame::enter_async(&#site))
    } else {
        quote!(::giving::__private::probe::Frame::enter(&#site))
    };
    let run = if is_async {
        quote! {
            ::giving::__private::probe::in_frame(#frame, async move { #hint #(#stmts)* }).await
        }
    } else {
        quote! {
            ::giving::__private::probe::call(move || { #hint #(#stmts)* })
        }
    };
    // The body moved into a closure or an `async move` block makes rustc see a field assigned
    // there (`x.y = 3` on an argument) as a captured copy whose value is never read, a warning
    // the function as written does not have. Allowed where the body is also emitted as
    // written (the dispatch below), which keeps the warnings that body really has.
    let instrumented = |enter: &TokenStream, written_too: bool| {
        let allow = written_too.then(|| quote!(#[allow(unused_assignments)]));
        quote! {{
            let #owned = #enter;
            let #frame = &#owned;
            #frame.fire(#ENTER);
            #(#argument_hooks)*
            #(#override_hooks)*
            #frame.arguments_bound(#arguments);
            #allow
            let #result = #run;
            #frame.returned(|| #value, || #error);
            #result
        }}
    };
    // Zero cost when unused: the function runs its body exactly as written, after one relaxed
    // load. Not for `impl Trait` returns, where two copies of the body may return two
    // different types (two closures): those always run the instrumented body, whose hooks
    // are each a branch on a local `None` when nobody probes.
    let dispatch = if mentions_impl_trait_output(&function.sig.output) {
        instrumented(&enter, false)
    } else if is_async {
        let instrumented = instrumented(&enter, true);
        quote! {
            if !::giving::__private::probe::is_active(&#site) #original else #instrumented
        }
    } else {
        // The instrumented body goes in a separate cold function, so the hot path needs no
        // stack frame of its own: load, test, branch, then the body as written. It enters
        // without testing again whether a probe names the function.
        let instrumented = instrumented(
            &quote!(::giving::__private::probe::Frame::enter_probed(&#site)),
            true,
        );
        quote! {
            if !::giving::__private::probe::is_active(&#site) #original else {
                ::giving::__private::probe::cold(move || #instrumented)
            }
        }
    };

    let body = quote! {{
        static #site: ::giving::__private::probe::Site = ::giving::__private::probe::Site::new(
            ::giving::__private::probe::SiteInfo {
                name: #name,
                module: ::core::module_path!(),
                file: ::core::file!(),
                line: ::core::line!(),
                variables: &[#(#names),*],
                arguments: #arguments,
                types: &[#(#types),*],
                overridable: &[#(#overridable),*],
                is_async: #is_async,
            },
        );
        ::giving::__private::probe::inventory::submit! {
            ::giving::__private::probe::SiteRef(&#site)
        }
        #dispatch
    }};
    function.block = syn::parse2(body)?;
    Ok(function.into_token_stream())
}

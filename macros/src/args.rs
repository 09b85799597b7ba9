//! The attribute's options: `#[probe]` or `#[probe(overridable(loader, model))]`.

use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{Ident, Token};

/// What `#[probe(...)]` says.
#[derive(Default)]
pub(crate) struct Options {
    /// Variables whose value a probe may replace (`Probe::override_with`). Opt-in, because a
    /// replaced value goes through `dyn Any`, which needs an owned (`'static`) type.
    pub(crate) overridable: Vec<Ident>,
}

impl Options {
    pub(crate) fn is_overridable(&self, name: &str) -> bool {
        self.overridable.iter().any(|i| i == name)
    }
}

impl Parse for Options {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let mut options = Options::default();
        while !input.is_empty() {
            let key: Ident = input
                .parse()
                .map_err(|e| syn::Error::new(e.span(), "expected `overridable(name, ...)`"))?;
            if key != "overridable" {
                return Err(syn::Error::new(
                    key.span(),
                    format!("unknown #[probe] option `{key}`: expected `overridable(name, ...)`"),
                ));
            }
            let content;
            syn::parenthesized!(content in input);
            let names = Punctuated::<Ident, Token![,]>::parse_terminated(&content)?;
            options.overridable.extend(names);
            if !input.is_empty() {
                input.parse::<Token![,]>()?;
            }
        }
        Ok(options)
    }
}

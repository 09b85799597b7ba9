//! A crate's module tree read from its sources with syn: every module (file or inline), what
//! it defines, what it imports, and every path its code names, each with its file and line.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use syn::visit::Visit;
use syn::{Item, UseTree};

/// A module's path from the crate root (`[]` is the root, `["dash", "model"]` is
/// `crate::dash::model`).
pub type ModulePath = Vec<String>;

/// Where something is written: a file relative to the workspace, and a 1-based line.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Site {
    pub file: String,
    pub line: usize,
}

/// One name a `use` brings in: `use a::b::C as D;` is the name `D` for the path `a::b::C`.
/// A glob (`use a::b::*;`) has no name.
#[derive(Clone, Debug)]
pub struct Import {
    pub name: Option<String>,
    pub path: Vec<String>,
    /// Any visibility but private: a re-export others may reach through this module.
    pub reexport: bool,
    pub site: Site,
}

/// A path written in the module's code (`crate::x::Y`, `super::f`, `Thing::new`).
#[derive(Clone, Debug)]
pub struct UsedPath {
    pub segments: Vec<String>,
    /// Written in a `use` inside a function body, where a path may name a module.
    pub in_use: bool,
    pub site: Site,
}

/// One module of the crate.
#[derive(Clone, Debug, Default)]
pub struct Module {
    /// The file holding the module's items.
    pub file: String,
    /// Names of its child modules.
    pub children: Vec<String>,
    /// Names it defines: types, traits, functions, constants, statics, macros.
    pub items: Vec<String>,
    pub imports: Vec<Import>,
    pub paths: Vec<UsedPath>,
}

/// A crate's modules by path.
pub type Tree = BTreeMap<ModulePath, Module>;

/// Reads a source file; `plant` may rewrite its text before it is parsed (a test plants a
/// cycle in memory this way, the files on disk untouched).
pub type Source<'a> = &'a dyn Fn(&Path) -> Option<String>;

/// Reads the crate whose root file is `root` (lib.rs or main.rs). `workspace` is only used to
/// write files relative to it.
pub fn read_crate(root: &Path, workspace: &Path, source: Source) -> Result<Tree, String> {
    let mut tree = Tree::new();
    let dir = root.parent().ok_or("a crate root has a folder")?;
    read_file_module(
        root,
        dir.to_path_buf(),
        Vec::new(),
        workspace,
        source,
        &mut tree,
    )?;
    Ok(tree)
}

fn read_file_module(
    file: &Path,
    children_dir: PathBuf,
    path: ModulePath,
    workspace: &Path,
    source: Source,
    tree: &mut Tree,
) -> Result<(), String> {
    let text = source(file).ok_or_else(|| format!("cannot read {}", file.display()))?;
    let parsed = syn::parse_file(&text).map_err(|e| format!("{}: {e}", file.display()))?;
    let relative = file
        .strip_prefix(workspace)
        .unwrap_or(file)
        .display()
        .to_string();
    let context = Context {
        relative,
        workspace,
        source,
    };
    read_items(&parsed.items, &children_dir, path, &context, tree)
}

struct Context<'a> {
    relative: String,
    workspace: &'a Path,
    source: Source<'a>,
}

fn read_items(
    items: &[Item],
    children_dir: &Path,
    path: ModulePath,
    context: &Context,
    tree: &mut Tree,
) -> Result<(), String> {
    let mut module = Module {
        file: context.relative.clone(),
        ..Module::default()
    };
    let mut collector = PathCollector {
        file: &context.relative,
        found: Vec::new(),
    };
    for item in items {
        match item {
            Item::Mod(declared) => {
                let name = declared.ident.to_string();
                module.children.push(name.clone());
                let mut child = path.clone();
                child.push(name.clone());
                let explicit = path_attribute(&declared.attrs);
                if let Some((_, inline)) = &declared.content {
                    let dir = match &explicit {
                        Some(p) => children_dir.join(p),
                        None => children_dir.join(&name),
                    };
                    read_items(inline, &dir, child, context, tree)?;
                } else {
                    let (file, dir) = module_file(children_dir, &name, explicit.as_deref())
                        .ok_or_else(|| {
                            format!(
                                "{}: the file of module {name} is not found",
                                context.relative
                            )
                        })?;
                    read_file_module(&file, dir, child, context.workspace, context.source, tree)?;
                }
            }
            Item::Use(used) => {
                let reexport = !matches!(used.vis, syn::Visibility::Inherited);
                let site = site(&context.relative, used.use_token.span);
                flatten_use(&used.tree, Vec::new(), reexport, &site, &mut module.imports);
            }
            other => {
                if let Some(name) = defined_name(other) {
                    module.items.push(name);
                }
                collector.visit_item(other);
            }
        }
    }
    module.paths = collector.found;
    tree.insert(path, module);
    Ok(())
}

/// `#[path = "x.rs"]` on a `mod` item.
fn path_attribute(attrs: &[syn::Attribute]) -> Option<String> {
    attrs.iter().find_map(|attr| {
        let syn::Meta::NameValue(pair) = &attr.meta else {
            return None;
        };
        if !pair.path.is_ident("path") {
            return None;
        }
        match &pair.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Some(s.value()),
            _ => None,
        }
    })
}

/// The file of `mod name;` declared in a module whose children live in `dir`, and the folder
/// of that file's own children.
fn module_file(dir: &Path, name: &str, explicit: Option<&str>) -> Option<(PathBuf, PathBuf)> {
    if let Some(explicit) = explicit {
        let file = dir.join(explicit);
        let stem = file.with_extension("");
        return file.exists().then_some((file, stem));
    }
    let flat = dir.join(format!("{name}.rs"));
    if flat.exists() {
        return Some((flat, dir.join(name)));
    }
    let nested = dir.join(name).join("mod.rs");
    nested.exists().then(|| (nested, dir.join(name)))
}

fn defined_name(item: &Item) -> Option<String> {
    let ident = match item {
        Item::Const(i) => &i.ident,
        Item::Enum(i) => &i.ident,
        Item::Fn(i) => &i.sig.ident,
        Item::Static(i) => &i.ident,
        Item::Struct(i) => &i.ident,
        Item::Trait(i) => &i.ident,
        Item::TraitAlias(i) => &i.ident,
        Item::Type(i) => &i.ident,
        Item::Union(i) => &i.ident,
        Item::Macro(i) => i.ident.as_ref()?,
        _ => return None,
    };
    Some(ident.to_string())
}

fn site(file: &str, span: proc_macro2::Span) -> Site {
    Site {
        file: file.to_owned(),
        line: span.start().line,
    }
}

/// `use a::{b, c::D as E, f::*};` → one import per leaf.
fn flatten_use(
    tree: &UseTree,
    prefix: Vec<String>,
    reexport: bool,
    at: &Site,
    out: &mut Vec<Import>,
) {
    let extend = |segment: String| {
        let mut path = prefix.clone();
        path.push(segment);
        path
    };
    match tree {
        UseTree::Path(p) => flatten_use(&p.tree, extend(p.ident.to_string()), reexport, at, out),
        UseTree::Name(n) => {
            let name = n.ident.to_string();
            // `use a::b::{self}` imports `b` itself.
            let (path, name) = if name == "self" {
                let last = prefix.last().cloned();
                (prefix.clone(), last)
            } else {
                (extend(name.clone()), Some(name))
            };
            out.push(Import {
                name,
                path,
                reexport,
                site: at.clone(),
            });
        }
        UseTree::Rename(r) => {
            let original = r.ident.to_string();
            let path = if original == "self" {
                prefix.clone()
            } else {
                extend(original)
            };
            out.push(Import {
                name: Some(r.rename.to_string()),
                path,
                reexport,
                site: at.clone(),
            });
        }
        UseTree::Glob(_) => out.push(Import {
            name: None,
            path: prefix,
            reexport,
            site: at.clone(),
        }),
        UseTree::Group(g) => {
            for inner in &g.items {
                flatten_use(inner, prefix.clone(), reexport, at, out);
            }
        }
    }
}

/// Every path written in an item's code (types, expressions, patterns, trait bounds, macro
/// invocations), with its line. Nested `mod` items are read as modules of their own.
struct PathCollector<'a> {
    file: &'a str,
    found: Vec<UsedPath>,
}

impl<'ast> Visit<'ast> for PathCollector<'_> {
    fn visit_path(&mut self, path: &'ast syn::Path) {
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        if let Some(first) = path.segments.first() {
            self.found.push(UsedPath {
                segments,
                in_use: false,
                site: site(self.file, first.ident.span()),
            });
        }
        syn::visit::visit_path(self, path);
    }

    fn visit_item_mod(&mut self, _: &'ast syn::ItemMod) {}

    /// A `use` inside a function body imports as much as one at the top.
    fn visit_item_use(&mut self, used: &'ast syn::ItemUse) {
        let at = site(self.file, used.use_token.span);
        let mut imports = Vec::new();
        flatten_use(&used.tree, Vec::new(), false, &at, &mut imports);
        self.found
            .extend(imports.into_iter().map(|import| UsedPath {
                segments: import.path,
                in_use: true,
                site: import.site,
            }));
    }

    fn visit_attribute(&mut self, _: &'ast syn::Attribute) {}

    /// `pub(crate)` and `pub(super)` say who may see an item, not what it uses.
    fn visit_visibility(&mut self, _: &'ast syn::Visibility) {}
}

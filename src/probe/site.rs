//! Probe sites: one static per `#[probe]` function, registered at link time, listing what a
//! selector can name in it.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use arc_swap::ArcSwapOption;

use super::plan::{SiteKey, SitePlan};
use super::specials::SPECIALS;
use crate::Origin;

/// What the macro knows about an instrumented function.
#[doc(hidden)]
#[derive(Debug)]
pub struct SiteInfo {
    /// `f`, or `Type::method` for a method of an annotated impl block.
    pub name: &'static str,
    /// `module_path!()` where the function is defined.
    pub module: &'static str,
    /// `file!()` of the function.
    pub file: &'static str,
    /// `line!()` of the attribute.
    pub line: u32,
    /// Every name a selector can use: `#enter`, `#exit`, `#value`, `#error` (in that order),
    /// the arguments, then bindings and loop markers in the order they appear.
    pub variables: &'static [&'static str],
    /// How many of `variables` (after the four specials) are arguments.
    pub arguments: usize,
    /// Per variable, the name of its type as written (`Tensor` for `x: &Tensor<B, 2>`; the
    /// impl's type for `self`), `""` where the source writes none: what a tag (`x:Tensor`)
    /// is checked against before the run; the others are checked by their run-time type.
    pub types: &'static [&'static str],
    /// The variables whose value a probe may replace.
    pub overridable: &'static [&'static str],
    /// Whether the function is `async`.
    pub is_async: bool,
}

/// The static of one instrumented function: its description and how many probes concern it.
#[doc(hidden)]
#[derive(Debug)]
pub struct Site {
    pub(crate) info: SiteInfo,
    /// Active probes that name this function (as the focus or as an enclosing call): the one
    /// relaxed load an instrumented call makes.
    pub(crate) active: AtomicUsize,
    /// What the probes that name this function do in its frames, rebuilt by each change of the
    /// probe set (`active::rebuild`): a probed call reads it without a lock, and only when
    /// its thread's pooled frame holds an older one (see `epoch`).
    pub(crate) plan: ArcSwapOption<SitePlan>,
    /// The epoch of `plan`, stored after it: a thread whose pooled frame of this site holds
    /// the plan of this epoch reuses it and its matching, with this one load and a compare.
    pub(crate) epoch: AtomicU64,
    /// The plan's [`SitePlan::direct`] variables (bit `i`): while non-zero, a call takes no
    /// frame and these variables' hooks give their lone `f > x` events by themselves. Stored
    /// before `epoch`.
    pub(crate) direct: AtomicU64,
    pub(crate) origin: Origin,
}

impl Site {
    /// A site for the macro's static.
    pub const fn new(info: SiteInfo) -> Site {
        Site {
            origin: Origin {
                file: info.file,
                line: info.line,
                module: info.module,
            },
            info,
            active: AtomicUsize::new(0),
            plan: ArcSwapOption::const_empty(),
            // No plan has epoch 0: the registry counts from 1.
            epoch: AtomicU64::new(0),
            direct: AtomicU64::new(0),
        }
    }

    /// The identity plans and resolved selectors know this site by.
    pub(crate) fn key(&'static self) -> SiteKey {
        SiteKey::new(self as *const Site as usize)
    }

    /// Whether some probe names this function now.
    #[inline(always)]
    pub(crate) fn is_active(&self) -> bool {
        self.active.load(Ordering::Relaxed) != 0
    }

    /// The epoch of the plan last stored (the field `epoch`).
    #[inline(always)]
    pub(crate) fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::Acquire)
    }

    pub(crate) fn variable(&self, name: &str) -> Option<usize> {
        self.info.variables.iter().position(|v| *v == name)
    }

    /// The written type name of variable `index`, `""` if none.
    pub(crate) fn written_type(&self, index: usize) -> &'static str {
        self.info.types.get(index).copied().unwrap_or("")
    }

    /// The arguments and bindings, what `*` stands for (not the specials or loop markers).
    pub(crate) fn plain_variables(&self) -> impl Iterator<Item = usize> + '_ {
        (SPECIALS..self.info.variables.len()).filter(|i| !self.info.variables[*i].starts_with('#'))
    }

    /// Bit `i` (for `i` below 64): variable `i` is a binding whose assignments reach the
    /// frame's `var` hook, the one a frameless call keeps: not a special, loop marker or
    /// argument (their hooks need a frame), nor an overridable binding (its hook applies the
    /// probes' overrides).
    pub(crate) fn var_hooked(&self) -> u64 {
        let arguments = SPECIALS + self.info.arguments;
        self.plain_variables()
            .filter(|i| *i >= arguments && *i < 64)
            .filter(|i| !self.info.overridable.contains(&self.info.variables[*i]))
            .fold(0, |mask, i| mask | 1 << i)
    }

    /// The path segments a selector matches against: the module's, then the name's.
    pub(crate) fn segments(&self) -> impl Iterator<Item = &'static str> {
        self.info
            .module
            .split("::")
            .chain(self.info.name.split("::"))
    }

    /// `crate::module::name`.
    pub(crate) fn qualified(&self) -> String {
        format!("{}::{}", self.info.module, self.info.name)
    }
}

/// The link-time registration of a site (`inventory`).
#[doc(hidden)]
pub struct SiteRef(pub &'static Site);

inventory::collect!(SiteRef);

/// Every instrumented function linked into this program.
pub(crate) fn all() -> impl Iterator<Item = &'static Site> {
    inventory::iter::<SiteRef>.into_iter().map(|r| r.0)
}

/// A function instrumented with `#[probe]`, as [`sites`] lists it.
#[derive(Debug, Clone, Copy)]
pub struct ProbeSite {
    site: &'static Site,
}

impl ProbeSite {
    /// The name a selector uses: `f`, or `Type::method`.
    pub fn name(&self) -> &'static str {
        self.site.info.name
    }

    /// The module that defines it (`module_path!()`): `crate::module`.
    pub fn module(&self) -> &'static str {
        self.site.info.module
    }

    /// The absolute name, `crate::module::f`, which a selector may use as well.
    pub fn qualified_name(&self) -> String {
        self.site.qualified()
    }

    /// The source file and line of the function.
    pub fn location(&self) -> (&'static str, u32) {
        (self.site.info.file, self.site.info.line)
    }

    /// Whether it is an `async fn`.
    pub fn is_async(&self) -> bool {
        self.site.info.is_async
    }

    /// Its arguments, in order (`self` for a method's receiver).
    pub fn arguments(&self) -> &'static [&'static str] {
        &self.site.info.variables[SPECIALS..SPECIALS + self.site.info.arguments]
    }

    /// Its `let` bindings and `for` loop variables, in the order they appear.
    pub fn variables(&self) -> impl Iterator<Item = &'static str> {
        self.site.info.variables[SPECIALS + self.site.info.arguments..]
            .iter()
            .copied()
            .filter(|v| !v.starts_with('#'))
    }

    /// The specials a selector can name: `#enter`, `#exit`, `#value`, `#error`, and
    /// `#loop_X` / `#endloop_X` for each `for X in` loop.
    pub fn specials(&self) -> impl Iterator<Item = &'static str> {
        self.site
            .info
            .variables
            .iter()
            .copied()
            .filter(|v| v.starts_with('#'))
    }

    /// The variables a probe may replace (`#[probe(overridable(..))]`).
    pub fn overridable(&self) -> &'static [&'static str] {
        self.site.info.overridable
    }
}

/// Every function instrumented with [`#[probe]`](macro@crate::probe) in this program, sorted by
/// absolute name: what `giving probes` lists.
///
/// ```
/// #[giving::probe]
/// fn scale(x: f64) -> f64 {
///     let y = x * 2.0;
///     y
/// }
///
/// let site = giving::probe::sites().into_iter().find(|s| s.name() == "scale").unwrap();
/// assert_eq!(site.arguments(), ["x"]);
/// assert_eq!(site.variables().collect::<Vec<_>>(), ["y"]);
/// # assert_eq!(scale(1.0), 2.0);
/// ```
pub fn sites() -> Vec<ProbeSite> {
    let mut sites: Vec<ProbeSite> = all().map(|site| ProbeSite { site }).collect();
    sites.sort_by_key(|s| (s.qualified_name(), s.location()));
    sites
}

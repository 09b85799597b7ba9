//! The names a probe can select in one function: specials, arguments, bindings, loop markers.

/// The specials every instrumented function has, at fixed indices that the runtime relies on
/// (`#enter` 0, `#exit` 1, `#value` 2, `#error` 3; see `giving::probe`'s site module).
pub(crate) const ENTER: usize = 0;
const SPECIALS: [&str; 4] = ["#enter", "#exit", "#value", "#error"];

/// The variable table of one function, in the order the runtime indexes it.
pub(crate) struct Vars {
    names: Vec<String>,
    /// Per name, its type's name as written (`""` where none is): what a tag is checked
    /// against.
    types: Vec<String>,
    arguments: usize,
}

impl Vars {
    pub(crate) fn new() -> Self {
        Self {
            names: SPECIALS.iter().map(|s| (*s).to_owned()).collect(),
            types: vec![String::new(); SPECIALS.len()],
            arguments: 0,
        }
    }

    /// Registers an argument (arguments come first after the specials) and its written type.
    pub(crate) fn add_argument(&mut self, name: String, ty: String) -> usize {
        let index = self.add(name);
        self.set_type(index, ty);
        self.arguments = self.names.len() - SPECIALS.len();
        index
    }

    /// The index of `name`, registered on first sight (a name bound twice is one variable, as
    /// in ptera, where a probe selects by name).
    pub(crate) fn add(&mut self, name: String) -> usize {
        match self.index_of(&name) {
            Some(index) => index,
            None => {
                self.names.push(name);
                self.types.push(String::new());
                self.names.len() - 1
            }
        }
    }

    /// Records the written type name of variable `index`; the first one written wins (a name
    /// bound twice with two types has the first one's tag, and the run-time check below it).
    pub(crate) fn set_type(&mut self, index: usize, ty: String) {
        if self.types[index].is_empty() {
            self.types[index] = ty;
        }
    }

    pub(crate) fn types(&self) -> &[String] {
        &self.types
    }

    pub(crate) fn index_of(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }

    pub(crate) fn names(&self) -> &[String] {
        &self.names
    }

    pub(crate) fn arguments(&self) -> usize {
        self.arguments
    }
}

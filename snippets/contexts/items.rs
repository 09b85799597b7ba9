//! Items (a `fn main`), compiled as they are.

// SNIPPET

//! How `give!` converts each value, so that a value giving does not know (a burn tensor above
//! all) gets `give!`'s own error rather than rustc's note on a nested `From` bound.
//!
//! [`ToValue`] is implemented for every `Clone + Into<Value>` type by one blanket impl, and
//! rustc reports a failed blanket impl by its innermost bound ("`Value: From<Tensor>` is not
//! satisfied"), never by the `#[diagnostic::on_unimplemented]` of the trait asked for. So the
//! macros pick the conversion by method resolution (autoref specialization): a `&&Give` finds
//! [`ViaToValue`] where `T: ToValue`, and only otherwise derefs to [`NotAValue`], whose method
//! requires [`GivenValue`], a trait nothing implements, carrying the message.

use crate::{ToValue, Value};

/// A value passed to `give!`, borrowed.
pub struct Give<'a, T: ?Sized>(pub &'a T);

/// The conversion of a value giving knows.
pub trait ViaToValue {
    /// The value, converted by [`ToValue`].
    fn give_value(&self) -> Value;
}

impl<T: ToValue + ?Sized> ViaToValue for &Give<'_, T> {
    #[inline(always)]
    fn give_value(&self) -> Value {
        self.0.to_value()
    }
}

/// What method resolution falls back to for any other type: its bound fails to compile, with
/// the message of [`GivenValue`].
pub trait NotAValue<T: ?Sized> {
    /// Never called: `T: GivenValue` holds for no type.
    fn give_value(&self) -> Value
    where
        T: GivenValue;
}

impl<T: ?Sized> NotAValue<T> for Give<'_, T> {
    fn give_value(&self) -> Value
    where
        T: GivenValue,
    {
        T::unreachable()
    }
}

/// Implemented by no type: the bound that names what `give!` takes when a value is not one.
#[diagnostic::on_unimplemented(
    message = "`give!` cannot give a `{Self}`: it is not a value giving knows (`Clone` and `Into<giving::Value>`)",
    label = "given here",
    note = "a burn tensor is given lazily, read by the consumer off the training thread: `give!(loss = giving_burn::LazyTensor::detached(&loss))`",
    note = "a type of your own: implement `From<{Self}> for giving::Value` (and `Clone`), or give its fields"
)]
pub trait GivenValue {
    /// Never called.
    fn unreachable() -> Value;
}

/// The value of one `give!` field, converted as [`ToValue`] does.
#[doc(hidden)]
#[macro_export]
macro_rules! __give_value {
    ($value:expr) => {{
        #[allow(unused_imports)]
        use $crate::__private::{NotAValue as _, ViaToValue as _};
        (&&$crate::__private::Give(&$value)).give_value()
    }};
}

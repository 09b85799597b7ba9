/// An incremental reduction of a stream of `T`.
///
/// A reducer is fed every item with [`push`](Reducer::push). Its current value is read with
/// [`value`](Reducer::value) after every item by the running and rolling variants, and once at
/// completion with [`finish`](Reducer::finish) by the final variant.
pub trait Reducer<T> {
    /// The value emitted by the running and rolling variants, and by the one-item stream of a
    /// [`Reduce`](super::Reduce).
    type Value;
    /// What awaiting a [`Reduce`](super::Reduce) gives: `Option<Self::Value>` for most reducers (`None` for an
    /// empty stream), a plain value where an empty stream has a natural answer (`count` → `0`).
    type Output;

    /// Feeds one item.
    fn push(&mut self, item: T);

    /// The current value, if any (`None` while nothing comparable has been seen yet). The
    /// running and rolling variants emit nothing for an item after which the value is `None`.
    fn value(&mut self) -> Option<Self::Value>;

    /// The final value, once the stream has completed (or [`is_done`](Reducer::is_done)).
    fn finish(self) -> Self::Output;

    /// The final output as the one item of the stream form of [`Reduce`](super::Reduce) (`None`: no item).
    fn output_value(output: Self::Output) -> Option<Self::Value>;

    /// `true` once no further item can change the final value (`first`, `element_at`): the
    /// final variant then stops polling the stream and completes early.
    fn is_done(&self) -> bool {
        false
    }
}

use std::collections::HashMap;
use std::fmt;
use std::hash::Hash;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use futures::Stream;
use futures::channel::mpsc;
use futures::stream::FusedStream;
use pin_project_lite::pin_project;

pin_project! {
    /// Stream for [`StreamOps::group_by`](crate::StreamOps::group_by).
    #[must_use = "streams do nothing unless polled"]
    pub struct GroupBy<S: Stream, F, K> {
        #[pin]
        stream: S,
        key: F,
        groups: HashMap<K, mpsc::UnboundedSender<S::Item>>,
    }
}

impl<S: Stream, F, K> GroupBy<S, F, K> {
    pub(crate) fn new(stream: S, key: F) -> Self {
        Self {
            stream,
            key,
            groups: HashMap::new(),
        }
    }
}

impl<S, F, K> Stream for GroupBy<S, F, K>
where
    S: Stream,
    F: FnMut(&S::Item) -> K,
    K: Hash + Eq + Clone,
{
    type Item = (K, Group<S::Item>);

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let mut this = self.project();
        loop {
            let Some(item) = ready!(this.stream.as_mut().poll_next(cx)) else {
                // Completing the upstream completes every group.
                this.groups.clear();
                return Poll::Ready(None);
            };
            let key = (this.key)(&item);
            match this.groups.get(&key) {
                Some(sender) => {
                    // A dropped group discards its later items.
                    let _ = sender.unbounded_send(item);
                }
                None => {
                    let (sender, receiver) = mpsc::unbounded();
                    let _ = sender.unbounded_send(item);
                    this.groups.insert(key.clone(), sender);
                    return Poll::Ready(Some((key, Group { receiver })));
                }
            }
        }
    }
}

/// The items of one group of [`StreamOps::group_by`](crate::StreamOps::group_by), in order.
///
/// Fed while the outer `GroupBy` stream is polled; completes when the upstream completes.
#[derive(Debug)]
#[must_use = "streams do nothing unless polled"]
pub struct Group<T> {
    receiver: mpsc::UnboundedReceiver<T>,
}

impl<T> Stream for Group<T> {
    type Item = T;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<T>> {
        Pin::new(&mut self.receiver).poll_next(cx)
    }
}

impl<S: Stream, F, K> fmt::Debug for GroupBy<S, F, K>
where
    S: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GroupBy")
            .field("stream", &self.stream)
            .field("groups", &self.groups.len())
            .finish_non_exhaustive()
    }
}

impl<S: Stream, F, K> FusedStream for GroupBy<S, F, K>
where
    S: FusedStream,
    Self: Stream,
{
    fn is_terminated(&self) -> bool {
        self.stream.is_terminated()
    }
}

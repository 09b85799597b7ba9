//! [`Incoming`]: one decoded item of what a child sends, in either of the protocol's forms.

use giving::Event;

use crate::header::LogHeader;

/// What a child sent, decoded.
#[derive(Debug)]
pub enum Incoming {
    /// An event.
    Event(Event),
    /// A writer's header (MessagePack form): a run started in the child, with what wrote it.
    Header(Box<LogHeader>),
    /// A writer's end record (MessagePack form): a run ended cleanly.
    End,
    /// Bytes that could not be read: reported, skipped.
    Garbage(String),
}

//! serde for [`Value`] and [`Event`]: a value serialises as the plain data it holds (a lazy value
//! is resolved first), an event as a map of its fields.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Error as _, Serialize, SerializeMap, SerializeSeq, Serializer};

use crate::{Event, Value};

impl Serialize for Value {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Value::Null => serializer.serialize_unit(),
            Value::Bool(b) => serializer.serialize_bool(*b),
            Value::I64(x) => serializer.serialize_i64(*x),
            Value::U64(x) => serializer.serialize_u64(*x),
            Value::F64(x) => serializer.serialize_f64(*x),
            Value::Str(s) => serializer.serialize_str(s),
            Value::Bytes(b) => serializer.serialize_bytes(b),
            Value::List(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Value::Map(map) => {
                let mut out = serializer.serialize_map(Some(map.len()))?;
                for (key, item) in map {
                    out.serialize_entry(key, item)?;
                }
                out.end()
            }
            Value::Lazy(lazy) => lazy
                .resolve()
                .map_err(S::Error::custom)?
                .serialize(serializer),
        }
    }
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a value (null, bool, number, string, bytes, list or map)")
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        Value::deserialize(deserializer)
    }

    fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }

    fn visit_i64<E>(self, x: i64) -> Result<Value, E> {
        Ok(Value::I64(x))
    }

    fn visit_u64<E>(self, x: u64) -> Result<Value, E> {
        Ok(Value::U64(x))
    }

    fn visit_f64<E>(self, x: f64) -> Result<Value, E> {
        Ok(Value::F64(x))
    }

    fn visit_str<E>(self, s: &str) -> Result<Value, E> {
        Ok(Value::Str(Arc::from(s)))
    }

    fn visit_bytes<E>(self, b: &[u8]) -> Result<Value, E> {
        Ok(Value::Bytes(b.to_vec()))
    }

    fn visit_byte_buf<E>(self, b: Vec<u8>) -> Result<Value, E> {
        Ok(Value::Bytes(b))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::List(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let mut map = BTreeMap::new();
        while let Some((key, item)) = access.next_entry::<MapKey, Value>()? {
            map.insert(key.0, item);
        }
        Ok(Value::Map(map))
    }
}

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(ValueVisitor)
    }
}

/// A map key read from formats whose keys need not be strings (MessagePack): numbers and
/// booleans are accepted and written as text, so `gpudata: {0: …}` reads back.
struct MapKey(String);

impl<'de> Deserialize<'de> for MapKey {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<MapKey, D::Error> {
        match Value::deserialize(deserializer)? {
            Value::Str(s) => Ok(MapKey(s.to_string())),
            key @ (Value::I64(_) | Value::U64(_) | Value::F64(_) | Value::Bool(_)) => {
                Ok(MapKey(key.to_string()))
            }
            other => Err(de::Error::custom(format_args!(
                "map key must be a string or a number, found {}",
                other.kind()
            ))),
        }
    }
}

impl Serialize for Event {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.len()))?;
        for (key, value) in self.iter() {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

struct EventVisitor;

impl<'de> Visitor<'de> for EventVisitor {
    type Value = Event;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an event: a map of string keys to values")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Event, A::Error> {
        let mut builder = Event::builder();
        while let Some((key, value)) = access.next_entry::<MapKey, Value>()? {
            builder = builder.field(key.0, value);
        }
        Ok(builder.build())
    }
}

/// Reads an event from a map, in the map's order, timestamped now: a format that stores the
/// time separately (the MessagePack log) sets it with [`EventBuilder::time`](crate::EventBuilder::time).
impl<'de> Deserialize<'de> for Event {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Event, D::Error> {
        deserializer.deserialize_map(EventVisitor)
    }
}

//! Reading a Perfetto trace back, packet by packet, up to the last complete one: for tests,
//! tools, and to check that a trace cut by a killed process still reads.

use std::path::Path;

use prost::Message;
use prost::encoding::{WireType, decode_key, decode_varint};

use super::error::TraceError;
use super::proto::TracePacket;

/// `Trace.packet`'s field number.
const TRACE_PACKET_FIELD: u32 = 1;
/// The longest packet header: a one-byte key and a ten-byte length.
const MAX_HEADER: usize = 11;

/// The packets of a trace, and how it ended.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Decoded {
    /// Every complete packet, in file order.
    pub packets: Vec<TracePacket>,
    /// `Some(offset)` when the file ends inside a packet that starts at `offset` (a cut
    /// trace); `None` when it ends at a packet boundary.
    pub cut_at: Option<usize>,
}

/// Decodes a Perfetto trace held in memory: every complete packet, then where it was cut.
///
/// A file that holds something other than `Trace.packet` fields, or a packet that is not a
/// valid `TracePacket`, is an error naming its offset ([`TraceError::Damaged`]).
///
/// ```
/// use giving_instruments::timeline::{decode, proto::{Trace, TracePacket}};
/// use prost::Message;
///
/// let trace = Trace { packet: vec![TracePacket { timestamp: Some(5), ..Default::default() }; 2] };
/// let bytes = trace.encode_to_vec();
/// let whole = decode(&bytes).unwrap();
/// assert_eq!((whole.packets.len(), whole.cut_at), (2, None));
/// let cut = decode(&bytes[..bytes.len() - 1]).unwrap();
/// assert_eq!((cut.packets.len(), cut.cut_at), (1, Some(bytes.len() / 2)));
/// ```
pub fn decode(bytes: &[u8]) -> Result<Decoded, TraceError> {
    let mut decoded = Decoded::default();
    let mut rest = bytes;
    while !rest.is_empty() {
        let offset = bytes.len() - rest.len();
        let mut cursor = rest;
        let header = decode_key(&mut cursor).and_then(|key| {
            let len = decode_varint(&mut cursor)?;
            Ok((key, len))
        });
        let (key, len) = match header {
            Ok(header) => header,
            // Near the end, a header that does not decode is a header cut short (a key and a
            // length take at most 11 bytes): the file ends inside this packet.
            Err(_) if rest.len() <= MAX_HEADER => {
                decoded.cut_at = Some(offset);
                break;
            }
            Err(error) => return Err(damaged(offset, error.to_string())),
        };
        if key != (TRACE_PACKET_FIELD, WireType::LengthDelimited) {
            return Err(damaged(
                offset,
                format!(
                    "field {} (wire type {:?}), not a trace packet",
                    key.0, key.1
                ),
            ));
        }
        let Ok(len) = usize::try_from(len) else {
            return Err(damaged(offset, format!("packet length {len}")));
        };
        if cursor.len() < len {
            decoded.cut_at = Some(offset);
            break;
        }
        let packet = TracePacket::decode(&cursor[..len])
            .map_err(|error| damaged(offset, error.to_string()))?;
        decoded.packets.push(packet);
        rest = &cursor[len..];
    }
    Ok(decoded)
}

/// Reads and decodes the trace at `path` (see [`decode`]).
pub fn read(path: impl AsRef<Path>) -> Result<Decoded, TraceError> {
    let path = path.as_ref();
    let bytes = std::fs::read(path).map_err(|source| TraceError::Io {
        action: "read",
        path: path.to_path_buf(),
        source,
    })?;
    decode(&bytes)
}

fn damaged(offset: usize, message: String) -> TraceError {
    TraceError::Damaged { offset, message }
}

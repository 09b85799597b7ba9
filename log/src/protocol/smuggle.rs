//! [`Unsmuggler`]: voir's data smuggled into a child's stdout as escape sequences, split from
//! the plain output.

use crate::protocol::data::DataDecoder;
use crate::protocol::incoming::Incoming;

/// voir's smuggled form: data written into stdout as `ESC [ <hex digits 0-9:;<=>?> z`
/// sequences, which terminals ignore. Splits a stdout stream into its plain output and the
/// smuggled data: voir's JSON lines, or a giving log's bytes (a giving child whose `DATA_FD`
/// is 1), read as [`DataDecoder`] reads a pipe.
#[derive(Default)]
pub struct Unsmuggler {
    code: Vec<u8>,
    coding: bool,
    /// The decoded payloads, one stream: voir's JSON lines or a giving log's bytes.
    data: DataDecoder,
}

impl Unsmuggler {
    /// A decoder that has seen nothing yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Splits `bytes`: plain output is appended to `plain`, decoded data to `out`.
    pub fn push(&mut self, bytes: &[u8], plain: &mut Vec<u8>, out: &mut Vec<Incoming>) {
        for &b in bytes {
            if self.coding {
                self.code.push(b);
                // A sequence ends at its first byte outside `0-9:;<=>?` (after `ESC [`).
                let ended = if self.code.len() == 2 {
                    b != b'['
                } else {
                    !(0x30..=0x3f).contains(&b)
                };
                if ended {
                    self.end_code(plain, out);
                }
            } else if b == 0x1b {
                self.coding = true;
                self.code.push(b);
            } else {
                plain.push(b);
            }
        }
    }

    fn end_code(&mut self, plain: &mut Vec<u8>, out: &mut Vec<Incoming>) {
        self.coding = false;
        let code = std::mem::take(&mut self.code);
        let smuggled = code.len() >= 3 && code.ends_with(b"z") && code.starts_with(b"\x1b[");
        let decoded = smuggled.then(|| unhex(&code[2..code.len() - 1])).flatten();
        match decoded {
            Some(data) => out.extend(self.data.push(&data)),
            None => plain.extend_from_slice(&code),
        }
    }
}

/// voir's hex digits are `0123456789:;<=>?` for 0..16.
fn unhex(digits: &[u8]) -> Option<Vec<u8>> {
    if !digits.len().is_multiple_of(2) {
        return None;
    }
    digits
        .chunks(2)
        .map(|pair| {
            let hi = pair[0].checked_sub(0x30).filter(|d| *d < 16)?;
            let lo = pair[1].checked_sub(0x30).filter(|d| *d < 16)?;
            Some(hi << 4 | lo)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use giving::Value;

    use super::*;

    /// voir's encoding, for the tests.
    fn smuggle(text: &str) -> Vec<u8> {
        smuggle_bytes(text.as_bytes())
    }

    fn smuggle_bytes(bytes: &[u8]) -> Vec<u8> {
        let mut out = b"\x1b[".to_vec();
        for b in bytes {
            out.push(0x30 + (b >> 4));
            out.push(0x30 + (b & 15));
        }
        out.push(b'z');
        out
    }

    #[test]
    fn a_smuggled_giving_log_is_decoded_across_sequences() {
        use crate::{LogHeader, LogWriter};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l");
        let mut log = LogWriter::create(&path, &LogHeader::for_this_process()).unwrap();
        log.write(&giving::event!(rate = 9.5)).unwrap();
        log.close(0).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        // Smuggled in two sequences cut mid-record, with plain output between them.
        let (a, b) = bytes.split_at(bytes.len() / 2);
        let mut stdout = smuggle_bytes(a);
        stdout.extend(b"plain\n");
        stdout.extend(smuggle_bytes(b));
        let (mut plain, mut out) = (Vec::new(), Vec::new());
        let mut u = Unsmuggler::new();
        for chunk in stdout.chunks(7) {
            u.push(chunk, &mut plain, &mut out);
        }
        assert_eq!(plain, b"plain\n");
        let kinds: Vec<&str> = out
            .iter()
            .map(|i| match i {
                Incoming::Header(_) => "header",
                Incoming::Event(_) => "event",
                Incoming::End => "end",
                Incoming::Garbage(_) => "garbage",
            })
            .collect();
        assert_eq!(kinds, ["header", "event", "end"]);
    }

    #[test]
    fn smuggled_data_is_split_from_plain_output() {
        let mut stdout = b"hello \x1b[1mbold\x1b[0m\n".to_vec();
        stdout.extend(smuggle("{\"rate\": 3.5}\n"));
        stdout.extend(b"bye\n");
        let (mut plain, mut out) = (Vec::new(), Vec::new());
        let mut u = Unsmuggler::new();
        for chunk in stdout.chunks(3) {
            u.push(chunk, &mut plain, &mut out);
        }
        assert_eq!(
            String::from_utf8(plain).unwrap(),
            "hello \x1b[1mbold\x1b[0m\nbye\n"
        );
        assert_eq!(out.len(), 1);
        let Incoming::Event(e) = &out[0] else {
            panic!("{out:?}")
        };
        assert_eq!(e.get("rate"), Some(&Value::F64(3.5)));
    }
}

//! TFRecord framing, as TensorFlow's `RecordWriter` writes it: the data's length (`u64`, little
//! endian), the length's masked CRC-32C, the data, the data's masked CRC-32C.

/// TensorFlow's mask of a CRC-32C (`crc32c::Mask`): stored checksums of data that holds
/// checksums are then not checksums of themselves.
pub(crate) fn masked_crc(bytes: &[u8]) -> u32 {
    let crc = crc32c::crc32c(bytes);
    crc.rotate_right(15).wrapping_add(0xa282_ead8)
}

/// Appends one record holding `data` to `out`.
pub(crate) fn frame(data: &[u8], out: &mut Vec<u8>) {
    let len = (data.len() as u64).to_le_bytes();
    out.extend_from_slice(&len);
    out.extend_from_slice(&masked_crc(&len).to_le_bytes());
    out.extend_from_slice(data);
    out.extend_from_slice(&masked_crc(data).to_le_bytes());
}

/// The records of `bytes`, checked: each record's data, or why the bytes at that offset are
/// not a record (for tests and tools; TensorBoard reads the files itself).
#[cfg(test)]
pub(crate) fn unframe(mut bytes: &[u8]) -> Result<Vec<Vec<u8>>, String> {
    let mut records = Vec::new();
    while !bytes.is_empty() {
        if bytes.len() < 12 {
            return Err(format!("{} bytes left, less than a header", bytes.len()));
        }
        let (header, rest) = bytes.split_at(12);
        let (len, crc) = header.split_at(8);
        if masked_crc(len).to_le_bytes() != crc {
            return Err("bad length checksum".to_owned());
        }
        let len = u64::from_le_bytes(len.try_into().expect("8 bytes")) as usize;
        if rest.len() < len + 4 {
            return Err("record cut".to_owned());
        }
        let (data, rest) = rest.split_at(len);
        let (crc, rest) = rest.split_at(4);
        if masked_crc(data).to_le_bytes() != crc {
            return Err("bad data checksum".to_owned());
        }
        records.push(data.to_vec());
        bytes = rest;
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32c_and_its_mask_match_tensorflow() {
        // CRC-32C check value (RFC 3720, iSCSI): "123456789" → 0xE3069283.
        assert_eq!(crc32c::crc32c(b"123456789"), 0xe306_9283);
        // TensorFlow's mask, ((crc >> 15) | (crc << 17)) + 0xa282ead8, worked out by hand.
        assert_eq!(masked_crc(b"123456789"), 0xc78a_b0e5);
    }

    #[test]
    fn a_known_record_is_framed_byte_for_byte() {
        // An empty record: length 0, its masked CRC, no data, the empty data's masked CRC
        // (crc32c("") = 0, masked: 0xa282ead8).
        let mut out = Vec::new();
        frame(b"", &mut out);
        assert_eq!(&out[..8], &[0; 8]);
        assert_eq!(&out[12..], &0xa282_ead8u32.to_le_bytes());
        assert_eq!(out.len(), 16);
    }

    #[test]
    fn records_read_back_and_damage_is_caught() {
        let mut out = Vec::new();
        frame(b"first", &mut out);
        frame(&[7; 300], &mut out);
        assert_eq!(unframe(&out).unwrap(), [b"first".to_vec(), vec![7; 300]]);
        let mut damaged = out.clone();
        damaged[14] ^= 1;
        assert_eq!(unframe(&damaged).unwrap_err(), "bad data checksum");
        damaged = out.clone();
        damaged[3] ^= 1;
        assert_eq!(unframe(&damaged).unwrap_err(), "bad length checksum");
        assert_eq!(unframe(&out[..out.len() - 1]).unwrap_err(), "record cut");
    }
}

//! QUIC's variable-length integers (RFC 9000 §16): the two high bits of the
//! first byte give the length (1, 2, 4 or 8 bytes), the rest the value, so
//! values below 2^62 take 1 to 8 bytes.

use super::DecodeError;

/// Bytes `v` takes.
pub(super) fn len(v: u64) -> usize {
    match v {
        0..=63 => 1,
        64..=16_383 => 2,
        16_384..=1_073_741_823 => 4,
        _ => 8,
    }
}

/// Appends `v` (below 2^62).
pub(super) fn put(out: &mut Vec<u8>, v: u64) {
    debug_assert!(v < 1 << 62, "{v} does not fit a varint");
    match len(v) {
        1 => out.push(v as u8),
        2 => out.extend_from_slice(&(v as u16 | 0x4000).to_be_bytes()),
        4 => out.extend_from_slice(&(v as u32 | 0x8000_0000).to_be_bytes()),
        _ => out.extend_from_slice(&(v | 0xc000_0000_0000_0000).to_be_bytes()),
    }
}

/// Reads one varint from the front of `buf`, advancing it.
pub(super) fn take(buf: &mut &[u8]) -> Result<u64, DecodeError> {
    let first = *buf.first().ok_or(DecodeError::Truncated)?;
    let n = 1 << (first >> 6);
    let bytes = buf.get(..n).ok_or(DecodeError::Truncated)?;
    let mut v = u64::from(first & 0x3f);
    for &b in &bytes[1..] {
        v = (v << 8) | u64::from(b);
    }
    *buf = &buf[n..];
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boundaries_round_trip_in_the_shortest_form() {
        for (v, n) in
            [(0, 1), (63, 1), (64, 2), (16_383, 2), (16_384, 4), ((1 << 30) - 1, 4), (1 << 30, 8), ((1 << 62) - 1, 8)]
        {
            let mut out = Vec::new();
            put(&mut out, v);
            assert_eq!(out.len(), n, "{v}");
            let mut rest = &out[..];
            assert_eq!(take(&mut rest), Ok(v));
            assert!(rest.is_empty());
        }
        // RFC 9000 §A.1's examples.
        let mut rest: &[u8] = &[0x9d, 0x7f, 0x3e, 0x7d];
        assert_eq!(take(&mut rest), Ok(494_878_333));
        let mut rest: &[u8] = &[0x7b, 0xbd];
        assert_eq!(take(&mut rest), Ok(15_293));
        assert_eq!(take(&mut &[0x40][..]), Err(DecodeError::Truncated));
    }
}

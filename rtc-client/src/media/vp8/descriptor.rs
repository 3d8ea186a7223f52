//! The VP8 RTP payload descriptor (RFC 7741, section 4.2) and the key-frame bit of the VP8
//! payload header (RFC 7741 section 4.3, RFC 6386 section 9.1), read from an RTP payload.
//!
//! ```text
//!       0 1 2 3 4 5 6 7
//!      +-+-+-+-+-+-+-+-+
//!      |X|R|N|S|R| PID | (REQUIRED)
//!      +-+-+-+-+-+-+-+-+
//! X:   |I|L|T|K| RSV   | (OPTIONAL)
//!      +-+-+-+-+-+-+-+-+
//! I:   |M| PictureID   | (OPTIONAL, 7 or 15 bits)
//!      +-+-+-+-+-+-+-+-+
//! L:   |   TL0PICIDX   | (OPTIONAL)
//!      +-+-+-+-+-+-+-+-+
//! T/K: |TID|Y| KEYIDX  | (OPTIONAL)
//!      +-+-+-+-+-+-+-+-+
//! ```
//!
//! A frame starts in the packet with S = 1 and PID = 0; the marker bit ends it (RFC 7741
//! section 4.1). In that first packet, the VP8 payload header follows the descriptor, and its
//! first byte's lowest bit (P, the inverse key-frame flag) is 0 for a key frame. The two reserved
//! bits are 0 in every valid descriptor: the synthetic codec's header, which starts with 0x4C
//! (R set), can never be mistaken for one.

/// What a payload's descriptor says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Descriptor {
    /// S: the payload starts a VP8 partition.
    pub start: bool,
    /// PID: the partition index.
    pub partition: u8,
    /// The picture id (7 or 15 bits), when present.
    pub picture_id: Option<u16>,
    /// Whether the picture id is 15 bits wide.
    pub long_picture_id: bool,
    /// The descriptor's length; the VP8 data starts here.
    pub len: usize,
    /// For the first packet of a frame (S = 1, PID = 0) with data: whether the frame is a key
    /// frame; `None` otherwise.
    pub key_frame: Option<bool>,
}

impl Descriptor {
    /// Whether this packet starts a frame (S = 1 and PID = 0).
    pub fn starts_frame(&self) -> bool {
        self.start && self.partition == 0
    }
}

/// Why a payload is not VP8.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DescriptorError {
    /// The payload is empty or ends inside the descriptor.
    #[error("VP8 payload of {0} bytes ends inside its descriptor")]
    Truncated(usize),
    /// A reserved bit is set.
    #[error("VP8 payload descriptor {0:#04x} has a reserved bit set (RFC 7741 section 4.2)")]
    Reserved(u8),
}

/// Reads the descriptor at the start of `payload`.
///
/// # Errors
///
/// [`DescriptorError`] when the payload is too short or a reserved bit is set.
pub fn parse(payload: &[u8]) -> Result<Descriptor, DescriptorError> {
    let short = || DescriptorError::Truncated(payload.len());
    let first = *payload.first().ok_or_else(short)?;
    if first & 0x48 != 0 {
        return Err(DescriptorError::Reserved(first));
    }
    let mut at = 1;
    let mut picture_id = None;
    let mut long_picture_id = false;
    if first & 0x80 != 0 {
        let ext = *payload.get(at).ok_or_else(short)?;
        at += 1;
        if ext & 0x80 != 0 {
            let b = *payload.get(at).ok_or_else(short)?;
            at += 1;
            if b & 0x80 != 0 {
                let low = *payload.get(at).ok_or_else(short)?;
                at += 1;
                picture_id = Some((u16::from(b & 0x7F) << 8) | u16::from(low));
                long_picture_id = true;
            } else {
                picture_id = Some(u16::from(b));
            }
        }
        if ext & 0x40 != 0 {
            at += 1;
        }
        if ext & 0x30 != 0 {
            at += 1;
        }
        if at > payload.len() {
            return Err(short());
        }
    }
    let start = first & 0x10 != 0;
    let partition = first & 0x07;
    let key_frame = (start && partition == 0)
        .then(|| payload.get(at).map(|b| b & 0x01 == 0))
        .flatten();
    Ok(Descriptor {
        start,
        partition,
        picture_id,
        long_picture_id,
        len: at,
        key_frame,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptors_parse() {
        // X, S, I with a 15-bit picture id 0x1234, then a key frame's first byte (P = 0).
        let d = parse(&[0x90, 0x80, 0x92, 0x34, 0x10, 0x02]).unwrap();
        assert!(d.starts_frame());
        assert_eq!(d.picture_id, Some(0x1234));
        assert!(d.long_picture_id);
        assert_eq!(d.len, 4);
        assert_eq!(d.key_frame, Some(true));
        // A continuation packet with a 7-bit picture id: no key-frame verdict.
        let d = parse(&[0x80, 0x80, 0x05, 0xFF]).unwrap();
        assert!(!d.starts_frame());
        assert_eq!((d.picture_id, d.key_frame), (Some(5), None));
        // The minimal descriptor on a delta frame (P = 1).
        let d = parse(&[0x10, 0x01]).unwrap();
        assert_eq!((d.len, d.key_frame), (1, Some(false)));
        // L and T/K bytes are skipped.
        let d = parse(&[0x90, 0xE0, 0x07, 0x00, 0x00, 0x00]).unwrap();
        assert_eq!((d.len, d.key_frame), (5, Some(true)));
    }

    #[test]
    fn bad_payloads_are_named() {
        assert_eq!(parse(&[]), Err(DescriptorError::Truncated(0)));
        assert_eq!(parse(&[0x90, 0x80]), Err(DescriptorError::Truncated(2)));
        assert_eq!(
            parse(&[0x90, 0x80, 0x80]),
            Err(DescriptorError::Truncated(3))
        );
        // The synthetic codec's magic starts with 0x4C: R is set.
        assert_eq!(parse(&[0x4C, 0x50]), Err(DescriptorError::Reserved(0x4C)));
    }
}

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
//!
//! The temporal fields: TL0PICIDX (L = 1) counts base-layer (TID 0) frames, 8 bits wrapping;
//! TID (T = 1) is the frame's temporal layer and Y says it is a layer-sync frame, one that
//! references only its base-layer frame; KEYIDX (K = 1) counts key frames, 5 bits. The T/K byte
//! is present when T or K is set; its TID and Y are meaningful only with T = 1, its KEYIDX only
//! with K = 1 (RFC 7741 section 4.2). What the framer makes of them: [`super::framer`].

/// A frame's temporal layer, from the T/K byte when T = 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TemporalLayer {
    /// TID: the temporal layer, 0 (the base layer) to 3.
    pub id: u8,
    /// Y: a layer-sync frame, which references only its base-layer frame (the TID 0 frame of
    /// its TL0PICIDX).
    pub sync: bool,
}

/// What a payload's descriptor says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Descriptor {
    /// N: the frame is a non-reference frame (no other frame references it).
    pub non_reference: bool,
    /// S: the payload starts a VP8 partition.
    pub start: bool,
    /// PID: the partition index.
    pub partition: u8,
    /// The picture id (7 or 15 bits), when present.
    pub picture_id: Option<u16>,
    /// Whether the picture id is 15 bits wide.
    pub long_picture_id: bool,
    /// TL0PICIDX, when present (L = 1).
    pub tl0_pic_idx: Option<u8>,
    /// TID and Y, when present (T = 1).
    pub layer: Option<TemporalLayer>,
    /// KEYIDX, when present (K = 1).
    pub key_idx: Option<u8>,
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
    let mut next = || {
        let b = payload.get(at).copied().ok_or_else(short);
        at += 1;
        b
    };
    let mut picture_id = None;
    let mut long_picture_id = false;
    let mut tl0_pic_idx = None;
    let mut layer = None;
    let mut key_idx = None;
    if first & 0x80 != 0 {
        let ext = next()?;
        if ext & 0x80 != 0 {
            let b = next()?;
            if b & 0x80 != 0 {
                let low = next()?;
                picture_id = Some((u16::from(b & 0x7F) << 8) | u16::from(low));
                long_picture_id = true;
            } else {
                picture_id = Some(u16::from(b));
            }
        }
        if ext & 0x40 != 0 {
            tl0_pic_idx = Some(next()?);
        }
        if ext & 0x30 != 0 {
            let tk = next()?;
            if ext & 0x20 != 0 {
                layer = Some(TemporalLayer {
                    id: tk >> 6,
                    sync: tk & 0x20 != 0,
                });
            }
            if ext & 0x10 != 0 {
                key_idx = Some(tk & 0x1F);
            }
        }
    }
    let start = first & 0x10 != 0;
    let partition = first & 0x07;
    let key_frame = (start && partition == 0)
        .then(|| payload.get(at).map(|b| b & 0x01 == 0))
        .flatten();
    Ok(Descriptor {
        non_reference: first & 0x20 != 0,
        start,
        partition,
        picture_id,
        long_picture_id,
        tl0_pic_idx,
        layer,
        key_idx,
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
        // I (7 bits), L and T/K: TL0PICIDX 0, TID 0, no Y.
        let d = parse(&[0x90, 0xE0, 0x07, 0x00, 0x00, 0x00]).unwrap();
        assert_eq!((d.len, d.key_frame), (5, Some(true)));
        assert_eq!(d.tl0_pic_idx, Some(0));
        assert_eq!(d.layer, Some(TemporalLayer { id: 0, sync: false }));
        assert_eq!(d.key_idx, None);
        // N, I (15 bits), L = 0xFE, T/K with TID 1, Y and KEYIDX 21 (both T and K set).
        let d = parse(&[0xB0, 0xF0, 0xFF, 0xFF, 0xFE, 0x75, 0x01]).unwrap();
        assert!(d.non_reference);
        assert_eq!(d.picture_id, Some(0x7FFF));
        assert_eq!(d.tl0_pic_idx, Some(0xFE));
        assert_eq!(d.layer, Some(TemporalLayer { id: 1, sync: true }));
        assert_eq!(d.key_idx, Some(21));
        assert_eq!((d.len, d.key_frame), (6, Some(false)));
        // K alone: the T/K byte's TID and Y mean nothing.
        let d = parse(&[0x80, 0x10, 0xFF]).unwrap();
        assert_eq!((d.layer, d.key_idx, d.len), (None, Some(31), 3));
    }

    #[test]
    fn bad_payloads_are_named() {
        assert_eq!(parse(&[]), Err(DescriptorError::Truncated(0)));
        assert_eq!(parse(&[0x90, 0x80]), Err(DescriptorError::Truncated(2)));
        assert_eq!(
            parse(&[0x90, 0x80, 0x80]),
            Err(DescriptorError::Truncated(3))
        );
        // Ends inside TL0PICIDX, then inside the T/K byte.
        assert_eq!(
            parse(&[0x90, 0xC0, 0x80, 0x01]),
            Err(DescriptorError::Truncated(4))
        );
        assert_eq!(
            parse(&[0x90, 0xE0, 0x80, 0x01, 0x05]),
            Err(DescriptorError::Truncated(5))
        );
        assert_eq!(parse(&[0x80, 0x30]), Err(DescriptorError::Truncated(2)));
        // The synthetic codec's magic starts with 0x4C: R is set.
        assert_eq!(parse(&[0x4C, 0x50]), Err(DescriptorError::Reserved(0x4C)));
    }
}

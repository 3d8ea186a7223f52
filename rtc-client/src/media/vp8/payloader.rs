//! The VP8 RTP payloader of our sender (RFC 7741 section 4): a frame's bitstream split into
//! payloads that each start with the payload descriptor, carrying the picture id and the
//! temporal fields a receiver's reference finder needs to tell a discardable frame from a base
//! frame (docs/architecture.md, "Discardable frames").
//!
//! Every payload starts with the same 6-byte descriptor ([`DESCRIPTOR_LEN`]; fields in
//! [`super::descriptor`]):
//!
//! - X = 1, with I = 1 (a 15-bit picture id, M = 1), L = 1 (TL0PICIDX) and T = 1 (TID and Y);
//!   K = 0 (no KEYIDX: the receiver needs none, and its 5 bits are written 0).
//! - S = 1 and PID = 0 on a frame's first payload, S = 0 on the others (one partition per frame,
//!   as libvpx gives it with `VP8E_SET_TOKEN_PARTITIONS` 0).
//! - N = 1 on a frame no other frame references (a discardable frame).
//!
//! The layering follows libwebrtc's VP8 sender, which the receiving browser's reference finder
//! (`modules/video_coding/rtp_vp8_ref_finder.cc`, `RtpVp8RefFinder::ManageFrameInternal`) reads
//! back:
//!
//! - The picture id goes up by one per frame sent (15 bits, wrapping).
//! - A base frame (every frame that is not discardable, key frames included) is TID 0 with
//!   Y = 0, and TL0PICIDX goes up by one on it (8 bits, wrapping), as libwebrtc increments it
//!   on each TID 0 frame. The reference finder makes a TID 0 frame reference the previous base
//!   frame (the TID 0 frame of TL0PICIDX - 1) and a key frame nothing.
//! - A discardable frame is TID 1 with Y = 1 and the TL0PICIDX of the last base frame: the
//!   reference finder makes a layer-sync frame reference only the TID 0 frame of its TL0PICIDX,
//!   and since no TID 0 frame references a TID 1 frame, losing it stalls nothing. The base frame
//!   after a window of them references the base frame before the window, as the encoder built
//!   it (`vp8enc::FrameReferences::Discardable` updates no reference buffer).
//!
//! The frame is split into as few payloads as fit `max_payload` (descriptor included), of
//! sizes that differ by at most one byte, as libwebrtc's `RtpPacketizerVp8` splits a frame
//! about equally (`modules/rtp_rtcp/source/rtp_format_vp8.cc`).

/// The descriptor's length in every payload this payloader writes.
pub const DESCRIPTOR_LEN: usize = 6;

/// The picture id's range (15 bits).
const PICTURE_ID_MODULUS: u16 = 1 << 15;

/// What a frame is, for its temporal fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layer {
    /// A base-layer frame (TID 0): every key frame and every frame that is not discardable.
    Base,
    /// A discardable frame: temporal layer 1, layer sync, referencing only the last base frame.
    Discardable,
}

/// The descriptor fields of one frame's payloads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameDescriptor {
    /// The 15-bit picture id.
    pub picture_id: u16,
    /// TL0PICIDX.
    pub tl0_pic_idx: u8,
    /// TID, 0 to 3.
    pub tid: u8,
    /// Y: layer sync.
    pub layer_sync: bool,
    /// N: no frame references this one.
    pub non_reference: bool,
}

/// Why a frame could not be packetized.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PayloaderError {
    /// An empty frame: there is no VP8 data to send.
    #[error("a VP8 frame of 0 bytes cannot be packetized")]
    EmptyFrame,
    /// The payload size leaves no room for data after the descriptor.
    #[error(
        "a maximum payload of {0} bytes leaves no room for VP8 data after the {DESCRIPTOR_LEN}-byte descriptor"
    )]
    MaxPayloadTooSmall(usize),
    /// A field out of its range.
    #[error("VP8 descriptor field {field} = {value} does not fit its {bits} bits")]
    FieldRange {
        /// The field's name.
        field: &'static str,
        /// The value given.
        value: u16,
        /// Its width.
        bits: u8,
    },
    /// A discardable frame before any base frame: there is nothing for it to reference.
    #[error("a discardable VP8 frame needs a base frame before it; none was sent")]
    NoBaseFrame,
}

/// Splits `frame` into payloads of at most `max_payload` bytes, each starting with the
/// descriptor `d` (S = 1 on the first).
///
/// # Errors
///
/// [`PayloaderError`] for an empty frame, a `max_payload` of at most [`DESCRIPTOR_LEN`], or a
/// picture id or TID out of range.
pub fn write_payloads(
    frame: &[u8],
    d: &FrameDescriptor,
    max_payload: usize,
) -> Result<Vec<Vec<u8>>, PayloaderError> {
    if frame.is_empty() {
        return Err(PayloaderError::EmptyFrame);
    }
    if d.picture_id >= PICTURE_ID_MODULUS {
        return Err(PayloaderError::FieldRange {
            field: "PictureID",
            value: d.picture_id,
            bits: 15,
        });
    }
    if d.tid > 3 {
        return Err(PayloaderError::FieldRange {
            field: "TID",
            value: u16::from(d.tid),
            bits: 2,
        });
    }
    let room = max_payload
        .checked_sub(DESCRIPTOR_LEN)
        .filter(|&r| r > 0)
        .ok_or(PayloaderError::MaxPayloadTooSmall(max_payload))?;
    let count = frame.len().div_ceil(room);
    let (small, larger) = (frame.len() / count, frame.len() % count);
    let n = if d.non_reference { 0x20 } else { 0 };
    let [high, low] = d.picture_id.to_be_bytes();
    let tk = (d.tid << 6) | if d.layer_sync { 0x20 } else { 0 };
    let mut at = 0;
    let mut out = Vec::with_capacity(count);
    for i in 0..count {
        // The larger parts go last, as libwebrtc's about-equal split puts them.
        let len = small + usize::from(i >= count - larger);
        let s = if i == 0 { 0x10 } else { 0 };
        let mut payload = Vec::with_capacity(DESCRIPTOR_LEN + len);
        payload.extend_from_slice(&[0x80 | n | s, 0xE0, 0x80 | high, low, d.tl0_pic_idx, tk]);
        payload.extend_from_slice(&frame[at..at + len]);
        at += len;
        out.push(payload);
    }
    Ok(out)
}

/// The payloader's state across frames: the next picture id and TL0PICIDX (see the module
/// documentation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vp8Payloader {
    next_picture_id: u16,
    /// The TL0PICIDX the next base frame gets.
    next_tl0_pic_idx: u8,
    /// Whether a base frame was packetized.
    has_base: bool,
}

impl Vp8Payloader {
    /// A payloader whose first frame gets picture id `first_picture_id` (taken modulo 2^15)
    /// and whose first base frame TL0PICIDX `first_tl0_pic_idx`.
    pub fn new(first_picture_id: u16, first_tl0_pic_idx: u8) -> Self {
        Self {
            next_picture_id: first_picture_id % PICTURE_ID_MODULUS,
            next_tl0_pic_idx: first_tl0_pic_idx,
            has_base: false,
        }
    }

    /// Whether a base frame was packetized (a discardable frame needs one).
    pub fn has_base(&self) -> bool {
        self.has_base
    }

    /// Packetizes one frame on `layer` into payloads of at most `max_payload` bytes, and moves
    /// the picture id (and, for a base frame, TL0PICIDX) on. Returns the frame's descriptor
    /// fields and its payloads, the first with S = 1.
    ///
    /// # Errors
    ///
    /// As [`write_payloads`], and [`PayloaderError::NoBaseFrame`] for a discardable frame
    /// before any base frame; the state does not move on an error.
    pub fn packetize(
        &mut self,
        frame: &[u8],
        layer: Layer,
        max_payload: usize,
    ) -> Result<(FrameDescriptor, Vec<Vec<u8>>), PayloaderError> {
        let d = match layer {
            Layer::Base => FrameDescriptor {
                picture_id: self.next_picture_id,
                tl0_pic_idx: self.next_tl0_pic_idx,
                tid: 0,
                layer_sync: false,
                non_reference: false,
            },
            Layer::Discardable if self.has_base => FrameDescriptor {
                picture_id: self.next_picture_id,
                tl0_pic_idx: self.next_tl0_pic_idx.wrapping_sub(1),
                tid: 1,
                layer_sync: true,
                non_reference: true,
            },
            Layer::Discardable => return Err(PayloaderError::NoBaseFrame),
        };
        let payloads = write_payloads(frame, &d, max_payload)?;
        self.next_picture_id = (self.next_picture_id + 1) % PICTURE_ID_MODULUS;
        if layer == Layer::Base {
            self.next_tl0_pic_idx = self.next_tl0_pic_idx.wrapping_add(1);
            self.has_base = true;
        }
        Ok((d, payloads))
    }
}

#[cfg(test)]
mod tests {
    use super::super::descriptor::{self, TemporalLayer};
    use super::*;
    use proptest::prelude::*;

    fn frame(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 7 + 1) as u8).collect()
    }

    #[test]
    fn a_frame_splits_into_about_equal_payloads_within_the_maximum() {
        let d = FrameDescriptor {
            picture_id: 0x1234,
            tl0_pic_idx: 9,
            tid: 0,
            layer_sync: false,
            non_reference: false,
        };
        let data = frame(2_500);
        let payloads = write_payloads(&data, &d, 1_200).unwrap();
        let lens: Vec<usize> = payloads.iter().map(Vec::len).collect();
        // 2500 bytes in 1194-byte rooms: three parts of 833, 833 and 834.
        assert_eq!(lens, vec![839, 839, 840]);
        assert_eq!(&payloads[0][..6], &[0x90, 0xE0, 0x92, 0x34, 9, 0x00]);
        assert_eq!(&payloads[1][..6], &[0x80, 0xE0, 0x92, 0x34, 9, 0x00]);
        let joined: Vec<u8> = payloads.iter().flat_map(|p| p[6..].to_vec()).collect();
        assert_eq!(joined, data);
        // Exactly one room: one payload of the maximum.
        let one = write_payloads(&frame(1_194), &d, 1_200).unwrap();
        assert_eq!(one.iter().map(Vec::len).collect::<Vec<_>>(), vec![1_200]);
    }

    #[test]
    fn base_frames_count_tl0picidx_and_discardable_ones_carry_the_last_base_s() {
        let mut p = Vp8Payloader::new(32_766, 254);
        assert_eq!(
            p.packetize(&[1], Layer::Discardable, 1_200),
            Err(PayloaderError::NoBaseFrame)
        );
        let mut seen = Vec::new();
        for layer in [
            Layer::Base,
            Layer::Base,
            Layer::Discardable,
            Layer::Discardable,
            Layer::Base,
        ] {
            let (d, payloads) = p.packetize(&[0x11, 2, 3], layer, 1_200).unwrap();
            let parsed = descriptor::parse(&payloads[0]).unwrap();
            assert_eq!(parsed.picture_id, Some(d.picture_id));
            seen.push((
                d.picture_id,
                d.tl0_pic_idx,
                d.tid,
                d.layer_sync,
                d.non_reference,
            ));
        }
        assert_eq!(
            seen,
            vec![
                (32_766, 254, 0, false, false),
                (32_767, 255, 0, false, false),
                (0, 255, 1, true, true),
                (1, 255, 1, true, true),
                (2, 0, 0, false, false),
            ]
        );
    }

    #[test]
    fn bad_requests_are_named_and_leave_the_state_alone() {
        let mut p = Vp8Payloader::new(5, 0);
        assert_eq!(
            p.packetize(&[], Layer::Base, 1_200),
            Err(PayloaderError::EmptyFrame)
        );
        assert_eq!(
            p.packetize(&[1], Layer::Base, 6),
            Err(PayloaderError::MaxPayloadTooSmall(6))
        );
        let (d, _) = p.packetize(&[1], Layer::Base, 7).unwrap();
        assert_eq!((d.picture_id, d.tl0_pic_idx), (5, 0));
        let bad = FrameDescriptor { tid: 4, ..d };
        assert!(
            write_payloads(&[1], &bad, 100)
                .unwrap_err()
                .to_string()
                .contains("TID = 4")
        );
        let bad = FrameDescriptor {
            picture_id: 1 << 15,
            ..d
        };
        assert!(matches!(
            write_payloads(&[1], &bad, 100),
            Err(PayloaderError::FieldRange { bits: 15, .. })
        ));
    }

    proptest! {
        #[test]
        fn payloads_parse_back_to_their_fields_and_data(
            len in 1usize..20_000,
            max_payload in 7usize..1_500,
            picture_id in 0u16..(1 << 15),
            tl0_pic_idx in any::<u8>(),
            tid in 0u8..4,
            layer_sync in any::<bool>(),
            non_reference in any::<bool>(),
        ) {
            let d = FrameDescriptor { picture_id, tl0_pic_idx, tid, layer_sync, non_reference };
            let data = frame(len);
            let payloads = write_payloads(&data, &d, max_payload).unwrap();
            let mut joined = Vec::with_capacity(len);
            for (i, payload) in payloads.iter().enumerate() {
                prop_assert!(payload.len() <= max_payload);
                prop_assert!(payload.len() > DESCRIPTOR_LEN);
                let parsed = descriptor::parse(payload).unwrap();
                prop_assert_eq!(parsed.starts_frame(), i == 0);
                prop_assert_eq!(parsed.picture_id, Some(picture_id));
                prop_assert!(parsed.long_picture_id);
                prop_assert_eq!(parsed.tl0_pic_idx, Some(tl0_pic_idx));
                prop_assert_eq!(parsed.layer, Some(TemporalLayer { id: tid, sync: layer_sync }));
                prop_assert_eq!(parsed.key_idx, None);
                prop_assert_eq!(parsed.non_reference, non_reference);
                prop_assert_eq!(parsed.len, DESCRIPTOR_LEN);
                joined.extend_from_slice(&payload[parsed.len..]);
            }
            // As few payloads as fit, of sizes at most one byte apart.
            prop_assert_eq!(payloads.len(), len.div_ceil(max_payload - DESCRIPTOR_LEN));
            let lens: Vec<usize> = payloads.iter().map(Vec::len).collect();
            prop_assert!(lens.iter().max().unwrap() - lens.iter().min().unwrap() <= 1);
            prop_assert_eq!(joined, data);
        }
    }
}

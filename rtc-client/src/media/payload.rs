//! The synthetic codec's payload header: what a receiver needs to rebuild frames without a real
//! codec.
//!
//! Every RTP payload of the synthetic video stream starts with this fixed 24-byte header, then
//! filler bytes up to the packet's size. Carrying the frame structure and the capture instant in
//! the payload (rather than in a side channel) is what lets the same receiver and QoE meter run
//! behind a simulated link and behind a real peer connection, where only RTP crosses the wire.
//!
//! Layout (big-endian):
//!
//! | bytes | field |
//! |---|---|
//! | 0..2 | magic `0x4C50` ("LP") |
//! | 2 | version (1) |
//! | 3 | flags: bit 0 = key frame |
//! | 4..8 | frame id (wrapping `u32`, consecutive per stream) |
//! | 8..10 | index of this packet within the frame, 0-based |
//! | 10..12 | packets in the frame |
//! | 12..20 | capture instant, nanoseconds since the call's epoch |
//! | 20..24 | the frame's size in bytes (all its payloads, headers included) |
//!
//! Version 2 (28 bytes) is the same with one more field, for a frame whose reference is not the
//! frame before it (docs/architecture.md, "Discardable frames"):
//!
//! | bytes | field |
//! |---|---|
//! | 3 | flags: bit 1 = temporal layer 1, a layer-sync frame: it references only its base-layer frame and no frame references it (discardable); bit 1 clear = a base-layer frame |
//! | 24..28 | the id of the frame it references (the last base-layer frame before it) |
//!
//! A version-1 frame (no temporal fields) references the frame before it, as libwebrtc's VP8
//! reference finder treats frames without temporal fields (`rtp_vp8_ref_finder.cc`: they go to
//! the sequence-number finder, each frame depending on the previous one). A key frame references
//! nothing and is always version 1 (RFC 7741 and `rtp_vp8_ref_finder.cc`: a key frame is on the
//! base layer). Frames of a stream that never uses the action are version 1, byte for byte as
//! before version 2 existed.

use thiserror::Error;

/// Length of the (version-1) header at the start of every payload.
pub const HEADER_LEN: usize = 24;

/// Length of the version-2 header: [`HEADER_LEN`] and the reference frame id.
pub const LAYERED_HEADER_LEN: usize = HEADER_LEN + 4;

const MAGIC: u16 = 0x4C50;
const VERSION: u8 = 1;
const LAYERED_VERSION: u8 = 2;
const KEY_FRAME: u8 = 0x01;
const TEMPORAL_LAYER_1: u8 = 0x02;

/// A frame's place in the temporal layers, when it is not the linear chain's (version 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Temporal {
    /// A temporal-layer-1 layer-sync frame: it references only [`Self::reference`], its
    /// base-layer frame, and no frame references it, so losing it stalls nothing. `false`: a
    /// base-layer frame, which later base frames reference.
    pub discardable: bool,
    /// The id of the frame it references: the last base-layer frame before it.
    pub reference: u32,
}

/// The per-packet description of the frame it belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PayloadHeader {
    /// Whether the frame is a key frame (decodable without references).
    pub key_frame: bool,
    /// The frame's id; consecutive frames of a stream have consecutive ids (wrapping).
    pub frame_id: u32,
    /// This packet's index within the frame.
    pub index: u16,
    /// How many packets the frame has.
    pub packets_in_frame: u16,
    /// The frame's capture instant, nanoseconds since the call's epoch.
    pub capture_ns: u64,
    /// The frame's size in bytes.
    pub frame_bytes: u32,
    /// Its temporal layer and reference (version 2); `None`: it references the frame before it
    /// (or nothing, a key frame).
    pub temporal: Option<Temporal>,
}

/// Why a payload could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum PayloadError {
    /// Fewer bytes than the header.
    #[error("payload of {0} bytes is shorter than the {HEADER_LEN}-byte synthetic-codec header")]
    TooShort(usize),
    /// The magic number is wrong: not a synthetic-codec payload.
    #[error("payload does not start with the synthetic-codec magic 0x4C50 (found {0:#06x})")]
    BadMagic(u16),
    /// An unknown header version.
    #[error("synthetic-codec header version {0} is not supported (expected 1)")]
    BadVersion(u8),
    /// Flag bits the version does not define.
    #[error("synthetic-codec header version {version} has unknown flags {flags:#04x}")]
    BadFlags {
        /// The version read.
        version: u8,
        /// The flags byte read.
        flags: u8,
    },
    /// A version-2 header on a key frame, which references nothing.
    #[error("key frame {0} carries a reference (a key frame is a version-1 header)")]
    KeyFrameWithReference(u32),
    /// A frame that says it references itself.
    #[error("frame {0} references itself")]
    SelfReference(u32),
    /// The index is not below the packet count, or the count is zero.
    #[error("packet index {index} is not within a frame of {packets} packets")]
    BadIndex {
        /// The index read.
        index: u16,
        /// The packet count read.
        packets: u16,
    },
}

impl PayloadHeader {
    /// The header's length: [`LAYERED_HEADER_LEN`] with temporal fields, else [`HEADER_LEN`].
    pub fn header_len(&self) -> usize {
        if self.temporal.is_some() {
            LAYERED_HEADER_LEN
        } else {
            HEADER_LEN
        }
    }

    /// Writes the header into the first [`Self::header_len`] bytes of `out`.
    ///
    /// `out` must be at least that long; shorter buffers are left untouched and `false` is
    /// returned.
    pub fn write(&self, out: &mut [u8]) -> bool {
        let Some(out) = out.get_mut(..self.header_len()) else {
            return false;
        };
        out[0..2].copy_from_slice(&MAGIC.to_be_bytes());
        out[2] = if self.temporal.is_some() {
            LAYERED_VERSION
        } else {
            VERSION
        };
        let layer = match self.temporal {
            Some(t) if t.discardable => TEMPORAL_LAYER_1,
            _ => 0,
        };
        out[3] = if self.key_frame { KEY_FRAME } else { 0 } | layer;
        if let Some(t) = self.temporal {
            out[24..28].copy_from_slice(&t.reference.to_be_bytes());
        }
        out[4..8].copy_from_slice(&self.frame_id.to_be_bytes());
        out[8..10].copy_from_slice(&self.index.to_be_bytes());
        out[10..12].copy_from_slice(&self.packets_in_frame.to_be_bytes());
        out[12..20].copy_from_slice(&self.capture_ns.to_be_bytes());
        out[20..24].copy_from_slice(&self.frame_bytes.to_be_bytes());
        true
    }

    /// Reads the header at the start of `payload`.
    pub fn read(payload: &[u8]) -> Result<Self, PayloadError> {
        let Some(h) = payload.get(..HEADER_LEN) else {
            return Err(PayloadError::TooShort(payload.len()));
        };
        let magic = u16::from_be_bytes([h[0], h[1]]);
        if magic != MAGIC {
            return Err(PayloadError::BadMagic(magic));
        }
        let (version, flags) = (h[2], h[3]);
        let known = match version {
            VERSION => KEY_FRAME,
            LAYERED_VERSION => KEY_FRAME | TEMPORAL_LAYER_1,
            other => return Err(PayloadError::BadVersion(other)),
        };
        if flags & !known != 0 {
            return Err(PayloadError::BadFlags { version, flags });
        }
        let index = u16::from_be_bytes([h[8], h[9]]);
        let packets = u16::from_be_bytes([h[10], h[11]]);
        if packets == 0 || index >= packets {
            return Err(PayloadError::BadIndex { index, packets });
        }
        let key_frame = flags & KEY_FRAME != 0;
        let frame_id = u32::from_be_bytes([h[4], h[5], h[6], h[7]]);
        let temporal = if version == LAYERED_VERSION {
            let Some(r) = payload.get(HEADER_LEN..LAYERED_HEADER_LEN) else {
                return Err(PayloadError::TooShort(payload.len()));
            };
            if key_frame {
                return Err(PayloadError::KeyFrameWithReference(frame_id));
            }
            let reference = u32::from_be_bytes([r[0], r[1], r[2], r[3]]);
            if reference == frame_id {
                return Err(PayloadError::SelfReference(frame_id));
            }
            Some(Temporal {
                discardable: flags & TEMPORAL_LAYER_1 != 0,
                reference,
            })
        } else {
            None
        };
        let mut capture = [0; 8];
        capture.copy_from_slice(&h[12..20]);
        Ok(Self {
            key_frame,
            frame_id,
            index,
            packets_in_frame: packets,
            capture_ns: u64::from_be_bytes(capture),
            frame_bytes: u32::from_be_bytes([h[20], h[21], h[22], h[23]]),
            temporal,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> PayloadHeader {
        PayloadHeader {
            key_frame: true,
            frame_id: 0xDEAD_BEEF,
            index: 2,
            packets_in_frame: 7,
            capture_ns: 123_456_789_012,
            frame_bytes: 8_100,
            temporal: None,
        }
    }

    #[test]
    fn a_header_round_trips_through_its_24_bytes() {
        let mut buf = [0u8; 40];
        assert!(header().write(&mut buf));
        assert_eq!(&buf[0..4], &[0x4C, 0x50, 1, 1]);
        assert_eq!(PayloadHeader::read(&buf), Ok(header()));
    }

    #[test]
    fn bad_payloads_are_named_not_panics() {
        assert_eq!(
            PayloadHeader::read(&[0; 10]),
            Err(PayloadError::TooShort(10))
        );
        let mut buf = [0u8; 24];
        assert_eq!(PayloadHeader::read(&buf), Err(PayloadError::BadMagic(0)));
        header().write(&mut buf);
        buf[2] = 9;
        assert_eq!(PayloadHeader::read(&buf), Err(PayloadError::BadVersion(9)));
        header().write(&mut buf);
        buf[8..10].copy_from_slice(&7u16.to_be_bytes());
        assert_eq!(
            PayloadHeader::read(&buf),
            Err(PayloadError::BadIndex {
                index: 7,
                packets: 7
            })
        );
        assert!(!header().write(&mut [0u8; 23]));
        let mut v1 = [0u8; 24];
        header().write(&mut v1);
        v1[3] = 0x03;
        assert_eq!(
            PayloadHeader::read(&v1),
            Err(PayloadError::BadFlags {
                version: 1,
                flags: 0x03
            })
        );
    }

    fn layered(discardable: bool) -> PayloadHeader {
        PayloadHeader {
            key_frame: false,
            frame_id: 41,
            temporal: Some(Temporal {
                discardable,
                reference: 37,
            }),
            ..header()
        }
    }

    #[test]
    fn a_layered_header_round_trips_through_28_bytes_and_a_plain_one_stays_version_1() {
        for discardable in [true, false] {
            let mut buf = [0u8; 40];
            assert!(layered(discardable).write(&mut buf));
            assert_eq!(buf[2], 2);
            assert_eq!(buf[3], if discardable { 0x02 } else { 0 });
            assert_eq!(&buf[24..28], &37u32.to_be_bytes());
            assert_eq!(PayloadHeader::read(&buf), Ok(layered(discardable)));
            assert_eq!(layered(discardable).header_len(), LAYERED_HEADER_LEN);
        }
        assert!(!layered(true).write(&mut [0u8; 27]));
        let mut buf = [0u8; 24];
        assert!(header().write(&mut buf));
        assert_eq!(buf[2], 1, "no temporal fields: version 1, as before");
    }

    #[test]
    fn bad_layered_headers_are_named() {
        let mut buf = [0u8; 28];
        layered(true).write(&mut buf);
        assert_eq!(
            PayloadHeader::read(&buf[..26]),
            Err(PayloadError::TooShort(26))
        );
        buf[3] = 0x03;
        assert_eq!(
            PayloadHeader::read(&buf),
            Err(PayloadError::KeyFrameWithReference(41))
        );
        buf[3] = 0x06;
        assert_eq!(
            PayloadHeader::read(&buf),
            Err(PayloadError::BadFlags {
                version: 2,
                flags: 0x06
            })
        );
        buf[3] = 0x02;
        buf[24..28].copy_from_slice(&41u32.to_be_bytes());
        assert_eq!(
            PayloadHeader::read(&buf),
            Err(PayloadError::SelfReference(41))
        );
    }
}

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

use thiserror::Error;

/// Length of the header at the start of every payload.
pub const HEADER_LEN: usize = 24;

const MAGIC: u16 = 0x4C50;
const VERSION: u8 = 1;
const KEY_FRAME: u8 = 0x01;

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
    /// Writes the header into the first [`HEADER_LEN`] bytes of `out`.
    ///
    /// `out` must be at least [`HEADER_LEN`] long; shorter buffers are left untouched and `false`
    /// is returned.
    pub fn write(&self, out: &mut [u8]) -> bool {
        let Some(out) = out.get_mut(..HEADER_LEN) else {
            return false;
        };
        out[0..2].copy_from_slice(&MAGIC.to_be_bytes());
        out[2] = VERSION;
        out[3] = if self.key_frame { KEY_FRAME } else { 0 };
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
        if h[2] != VERSION {
            return Err(PayloadError::BadVersion(h[2]));
        }
        let index = u16::from_be_bytes([h[8], h[9]]);
        let packets = u16::from_be_bytes([h[10], h[11]]);
        if packets == 0 || index >= packets {
            return Err(PayloadError::BadIndex { index, packets });
        }
        let mut capture = [0; 8];
        capture.copy_from_slice(&h[12..20]);
        Ok(Self {
            key_frame: h[3] & KEY_FRAME != 0,
            frame_id: u32::from_be_bytes([h[4], h[5], h[6], h[7]]),
            index,
            packets_in_frame: packets,
            capture_ns: u64::from_be_bytes(capture),
            frame_bytes: u32::from_be_bytes([h[20], h[21], h[22], h[23]]),
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
    }
}

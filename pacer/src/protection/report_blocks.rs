//! The loss reports in inbound RTCP: the report blocks of sender and receiver reports.
//!
//! libwebrtc reads the fraction lost of every report block, in receiver reports and in sender
//! reports alike (`RTCPReceiver::HandleReportBlock`, `modules/rtp_rtcp/source/rtcp_receiver.cc`).
//! The pacer does not link `rtc-rtcp`, so rather than downcasting webrtc-rs's packet types this
//! reads the marshalled packet, whose layout RFC 3550 fixes (sections 6.4.1 and 6.4.2).

use rtc_shared::marshal::{Marshal, MarshalSize};

/// RTCP packet type of a sender report (RFC 3550 section 6.4.1).
const SENDER_REPORT: u8 = 200;
/// RTCP packet type of a receiver report (RFC 3550 section 6.4.2).
const RECEIVER_REPORT: u8 = 201;
/// Common header and sender SSRC.
const REPORT_HEADER_BYTES: usize = 8;
/// The sender-info section of a sender report: NTP and RTP timestamps, packet and octet counts.
const SENDER_INFO_BYTES: usize = 20;
/// One report block.
const REPORT_BLOCK_BYTES: usize = 24;

/// A report block's source and fraction lost (out of 256).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LossReport {
    pub(crate) ssrc: u32,
    pub(crate) fraction_lost: u8,
}

/// The report blocks of one RTCP packet, or none if it is not a sender or receiver report (or
/// does not marshal).
pub(crate) fn loss_reports<P: Marshal + MarshalSize + ?Sized>(packet: &P) -> Vec<LossReport> {
    let mut buffer = vec![0u8; packet.marshal_size()];
    match packet.marshal_to(&mut buffer) {
        Ok(written) => {
            buffer.truncate(written);
            parse(&buffer)
        }
        Err(_) => Vec::new(),
    }
}

/// The report blocks of every sender or receiver report in a (compound) RTCP buffer; a truncated
/// packet ends the walk.
pub(crate) fn parse(mut data: &[u8]) -> Vec<LossReport> {
    let mut reports = Vec::new();
    while data.len() >= 4 {
        let count = usize::from(data[0] & 0x1F);
        let packet_type = data[1];
        let length = (usize::from(u16::from_be_bytes([data[2], data[3]])) + 1) * 4;
        let Some(packet) = data.get(..length) else {
            break;
        };
        let blocks_at = match packet_type {
            SENDER_REPORT => Some(REPORT_HEADER_BYTES + SENDER_INFO_BYTES),
            RECEIVER_REPORT => Some(REPORT_HEADER_BYTES),
            _ => None,
        };
        if let Some(start) = blocks_at {
            for block in packet
                .get(start..)
                .unwrap_or_default()
                .chunks_exact(REPORT_BLOCK_BYTES)
                .take(count)
            {
                reports.push(LossReport {
                    ssrc: u32::from_be_bytes([block[0], block[1], block[2], block[3]]),
                    fraction_lost: block[4],
                });
            }
        }
        data = &data[length..];
    }
    reports
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn receiver_and_sender_report_blocks_are_read_and_other_packets_skipped() {
        let mut data = Vec::new();
        // RR, 2 blocks: header (V=2, RC=2, PT=201, length 13 words), sender SSRC.
        data.extend([0x82, 201, 0, 13, 0, 0, 0, 9]);
        for (ssrc, lost) in [(0x0A0B_0C0Du32, 13u8), (7, 0)] {
            data.extend(ssrc.to_be_bytes());
            data.push(lost);
            data.extend([0; 19]);
        }
        // A PLI (PT 206, FMT 1, length 2): skipped.
        data.extend([0x81, 206, 0, 2, 0, 0, 0, 9, 0, 0, 0, 5]);
        // SR, 1 block: header, sender SSRC, 20 bytes of sender info, the block.
        data.extend([0x81, 200, 0, 12, 0, 0, 0, 9]);
        data.extend([0; 20]);
        data.extend(5u32.to_be_bytes());
        data.push(26);
        data.extend([0; 19]);
        assert_eq!(
            parse(&data),
            vec![
                LossReport {
                    ssrc: 0x0A0B_0C0D,
                    fraction_lost: 13
                },
                LossReport {
                    ssrc: 7,
                    fraction_lost: 0
                },
                LossReport {
                    ssrc: 5,
                    fraction_lost: 26
                },
            ]
        );
    }

    #[test]
    fn a_truncated_report_yields_only_what_is_whole() {
        // An RR claiming 2 blocks and 13 words, cut after the first block.
        let mut data = vec![0x82, 201, 0, 13, 0, 0, 0, 9];
        data.extend(3u32.to_be_bytes());
        data.push(40);
        data.extend([0; 19]);
        assert!(
            parse(&data).is_empty(),
            "the packet is shorter than its length"
        );
        assert!(parse(&[0x80, 201]).is_empty());
    }
}

//! The receive side of RTX (RFC 4588): [`RtxReceiver`] restores the original packet inside a
//! receive chain, with the wire format of [`pacer::nack::rtx_decapsulate`].

use pacer::nack::{rtx_decapsulate, supports_nack};
use rtc_interceptor::{Attribute, Interceptor, Packet, StreamInfo, TaggedPacket};
use rtc_shared::error::Error;
use sansio::Protocol;
use std::collections::VecDeque;
use std::time::Instant;

/// One bound stream with RTX: the RTX SSRC it answers on and the original's SSRC and payload
/// type.
#[derive(Debug, Clone, Copy)]
struct RtxBinding {
    rtx_ssrc: u32,
    media_ssrc: u32,
    media_payload_type: u8,
}

/// The receive side of RTX, for [`crate::nack::RTX_RECEIVER_SLOT`]: an RTP packet on a bound
/// stream's RTX SSRC is replaced by the original packet it carries, marked
/// `Attribute::Retransmission` (so the NACK generator counts it as recovered and stops asking).
/// A malformed RTX packet (no OSN) is dropped and counted. Everything else passes unchanged.
#[derive(Default)]
pub struct RtxReceiver {
    bindings: Vec<RtxBinding>,
    restored: u64,
    malformed: u64,
    read_queue: VecDeque<TaggedPacket>,
    write_queue: VecDeque<TaggedPacket>,
}

impl RtxReceiver {
    /// A receiver with no streams bound.
    pub fn new() -> Self {
        Self::default()
    }

    /// RTX packets restored so far.
    pub fn restored(&self) -> u64 {
        self.restored
    }

    /// RTX packets dropped for lack of an OSN.
    pub fn malformed(&self) -> u64 {
        self.malformed
    }
}

impl Protocol<TaggedPacket, TaggedPacket, ()> for RtxReceiver {
    type Rout = TaggedPacket;
    type Wout = TaggedPacket;
    type Eout = ();
    type Error = Error;
    type Time = Instant;

    fn handle_read(&mut self, mut msg: TaggedPacket) -> Result<(), Self::Error> {
        if let Packet::Rtp(rtp) = &msg.message.packet
            && let Some(binding) = self.bindings.iter().find(|b| b.rtx_ssrc == rtp.header.ssrc)
        {
            match rtx_decapsulate(rtp, binding.media_ssrc, binding.media_payload_type) {
                Some(original) => {
                    self.restored += 1;
                    msg.message.packet = Packet::Rtp(original);
                    if !msg.message.has(&Attribute::Retransmission) {
                        msg.message.add(Attribute::Retransmission);
                    }
                }
                None => {
                    self.malformed += 1;
                    return Ok(());
                }
            }
        }
        self.read_queue.push_back(msg);
        Ok(())
    }

    fn poll_read(&mut self) -> Option<Self::Rout> {
        self.read_queue.pop_front()
    }

    fn handle_write(&mut self, msg: TaggedPacket) -> Result<(), Self::Error> {
        self.write_queue.push_back(msg);
        Ok(())
    }

    fn poll_write(&mut self) -> Option<Self::Wout> {
        self.write_queue.pop_front()
    }

    fn poll_timeout(&mut self) -> Option<Self::Time> {
        None
    }
}

impl Interceptor for RtxReceiver {
    fn bind_local_stream(&mut self, _info: &StreamInfo) {}

    fn unbind_local_stream(&mut self, _info: &StreamInfo) {}

    fn bind_remote_stream(&mut self, info: &StreamInfo) {
        if let (Some(rtx_ssrc), true) = (info.ssrc_rtx, supports_nack(info)) {
            self.bindings.retain(|b| b.rtx_ssrc != rtx_ssrc);
            self.bindings.push(RtxBinding {
                rtx_ssrc,
                media_ssrc: info.ssrc,
                media_payload_type: info.payload_type,
            });
        }
    }

    fn unbind_remote_stream(&mut self, info: &StreamInfo) {
        self.bindings.retain(|b| b.media_ssrc != info.ssrc);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pacer::nack::rtx_encapsulate;
    use rtc_interceptor::{AttributedPacket, RTCPFeedback};
    use rtc_shared::TransportContext;

    fn original(seq: u16) -> rtc_rtp::Packet {
        rtc_rtp::Packet {
            header: rtc_rtp::Header {
                version: 2,
                ssrc: 1,
                payload_type: 96,
                sequence_number: seq,
                timestamp: 9000,
                marker: true,
                ..Default::default()
            },
            payload: vec![7u8, 8, 9].into(),
        }
    }

    #[test]
    fn the_receiver_restores_bound_rtx_packets_and_passes_the_rest() {
        let mut rx = RtxReceiver::new();
        rx.bind_remote_stream(&StreamInfo {
            ssrc: 1,
            ssrc_rtx: Some(2),
            payload_type: 96,
            payload_type_rtx: Some(97),
            rtcp_feedback: vec![RTCPFeedback {
                typ: "nack".into(),
                parameter: String::new(),
            }],
            ..Default::default()
        });
        let tagged = |p: rtc_rtp::Packet| TaggedPacket {
            now: Instant::now(),
            transport: TransportContext::default(),
            message: AttributedPacket::new(Packet::Rtp(p)),
        };
        rx.handle_read(tagged(original(3))).unwrap();
        rx.handle_read(tagged(rtx_encapsulate(&original(4), 2, 97, 0)))
            .unwrap();
        let mut bad = rtx_encapsulate(&original(5), 2, 97, 1);
        bad.payload = vec![].into();
        rx.handle_read(tagged(bad)).unwrap();
        let first = rx.poll_read().unwrap();
        assert!(!first.message.has(&Attribute::Retransmission));
        let second = rx.poll_read().unwrap();
        assert!(second.message.has(&Attribute::Retransmission));
        let Packet::Rtp(restored) = &second.message.packet else {
            panic!("rtp")
        };
        assert_eq!(restored, &original(4));
        assert!(rx.poll_read().is_none());
        assert_eq!((rx.restored(), rx.malformed()), (1, 1));
    }
}

//! The receive side of FlexFEC-03: repair packets rebuild lost media before the jitter buffer
//! (docs/architecture.md, "The call engine").
//!
//! The sender protects with [`pacer::LossProtection`] at `Slot::FecEncoder`, which sees a media
//! packet before the TWCC sender adds the transport-wide sequence number below it. A packet that
//! arrives therefore carries an extension the repair packets were not computed over, so
//! [`FecReceiver`] removes it ([`pacer::without_header_extension`]) from the copy it hands
//! webrtc-rs's `FlexFec03Decoder`; the packet itself travels on unchanged. The receiver sits at
//! [`FEC_RECEIVER_SLOT`] (webrtc-rs's `Slot::FecDecoder`), wire-ward of the RTX receiver and the
//! NACK generator, so a rebuilt packet reaches them as received and stops its NACKs (libwebrtc
//! `NackRequester::OnReceivedPacket` with `is_recovered`). The TWCC receiver and the receiver
//! reports sit wire-ward of it ([`TWCC_RECEIVER_SLOT`], [`RECEIVER_REPORT_SLOT`]): they see repair
//! packets as they arrive and never a rebuilt packet, as libwebrtc's transport feedback and
//! receive statistics do (`RtpVideoStreamReceiver2` leaves recovered packets out of them).

use rtc_interceptor::{
    Attribute, AttributedPacket, FlexFec03Decoder, Interceptor, Packet, ReceiverReportBuilder,
    ReceiverReportInterceptor, Slot, StreamInfo, TaggedPacket,
};
use rtc_rtcp::receiver_report::ReceiverReport;
use rtc_shared::error::Error;
use sansio::Protocol;
use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Where the FEC receiver sits: webrtc-rs's `Slot::FecDecoder`.
pub const FEC_RECEIVER_SLOT: Slot = Slot::FecDecoder;
/// Where the TWCC receiver sits in this project's receive chains: wire-ward of the FEC receiver
/// (webrtc-rs's default `Slot::TwccReceiver` is above it, where it would never see a repair
/// packet and would see rebuilt packets as arrivals).
pub const TWCC_RECEIVER_SLOT: Slot = Slot::Custom(5_500);
/// Where the receiver reports are generated: wire-ward of the FEC receiver, so that their
/// fraction lost is the network's, which libwebrtc's protection controller decides from.
pub const RECEIVER_REPORT_SLOT: Slot = Slot::Custom(5_400);

/// What a [`FecReceiver`] has done, cumulative.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FecReceiverStats {
    /// Repair packets that arrived on a bound repair SSRC.
    pub repair_received: u64,
    /// Media packets rebuilt from them.
    pub rebuilt: u64,
    /// Rebuilt packets whose original arrived afterwards (the repair packet came first).
    pub rebuilt_then_arrived: u64,
}

impl FecReceiverStats {
    /// Rebuilt packets whose original has not arrived: the losses FEC repaired.
    pub fn recovered(&self) -> u64 {
        self.rebuilt.saturating_sub(self.rebuilt_then_arrived)
    }
}

/// A cloneable handle on a [`FecReceiver`]'s counters.
#[derive(Debug, Clone, Default)]
pub struct FecReceiverHandle {
    repair_received: Arc<AtomicU64>,
    rebuilt: Arc<AtomicU64>,
    rebuilt_then_arrived: Arc<AtomicU64>,
}

impl FecReceiverHandle {
    /// The counters so far.
    pub fn stats(&self) -> FecReceiverStats {
        FecReceiverStats {
            repair_received: self.repair_received.load(Ordering::Relaxed),
            rebuilt: self.rebuilt.load(Ordering::Relaxed),
            rebuilt_then_arrived: self.rebuilt_then_arrived.load(Ordering::Relaxed),
        }
    }
}

/// One protected stream: its decoder and the ids that matter.
struct Protected {
    media_ssrc: u32,
    repair_ssrc: u32,
    /// The transport-wide sequence number's extension id on the media stream, if negotiated.
    transport_cc_id: Option<u8>,
    decoder: FlexFec03Decoder,
    /// The sequence numbers rebuilt whose original has not arrived (yet).
    rebuilt: RebuiltSet,
}

/// Which sequence numbers of a stream were rebuilt and not yet received, to tell a rebuilt packet
/// whose original arrives later (the pacer serves the repair SSRC round-robin with the media, so
/// a repair packet can overtake the media it protects) from one the link really lost. One bit per
/// sequence number; an arrival also clears the number half the sequence space away, so a rebuild
/// whose original never came is forgotten long before the numbers wrap back to it.
struct RebuiltSet {
    bits: Box<[u64; 1024]>,
}

impl RebuiltSet {
    fn new() -> Self {
        Self {
            bits: Box::new([0; 1024]),
        }
    }

    fn slot(sequence_number: u16) -> (usize, u64) {
        (
            usize::from(sequence_number >> 6),
            1 << (sequence_number & 63),
        )
    }

    fn insert(&mut self, sequence_number: u16) {
        let (word, bit) = Self::slot(sequence_number);
        self.bits[word] |= bit;
    }

    /// Notes the arrival of `sequence_number`; returns whether it had been rebuilt.
    fn arrived(&mut self, sequence_number: u16) -> bool {
        let (stale_word, stale_bit) = Self::slot(sequence_number ^ 0x8000);
        self.bits[stale_word] &= !stale_bit;
        let (word, bit) = Self::slot(sequence_number);
        let was = self.bits[word] & bit != 0;
        self.bits[word] &= !bit;
        was
    }
}

/// FlexFEC-03 recovery for the streams bound with a repair SSRC and payload type. Repair packets
/// are consumed; media packets pass on, followed by whatever they or a repair packet made
/// recoverable, marked `Attribute::RecoveredByFec`. Everything else passes unchanged. An
/// original that arrives after its rebuilt copy passes on too (the receivers above drop
/// duplicates) and is counted, so that [`FecReceiverStats::recovered`] counts real repairs.
#[derive(Default)]
pub struct FecReceiver {
    streams: Vec<Protected>,
    handle: FecReceiverHandle,
    read_queue: VecDeque<TaggedPacket>,
    write_queue: VecDeque<TaggedPacket>,
}

impl FecReceiver {
    /// A receiver and the handle on its counters.
    pub fn new() -> (Self, FecReceiverHandle) {
        let receiver = Self::default();
        let handle = receiver.handle.clone();
        (receiver, handle)
    }

    fn queue_rebuilt(
        &mut self,
        stream: usize,
        now: Instant,
        transport: rtc_shared::TransportContext,
        packets: Vec<rtc_rtp::Packet>,
    ) {
        for packet in packets {
            self.handle.rebuilt.fetch_add(1, Ordering::Relaxed);
            self.streams[stream]
                .rebuilt
                .insert(packet.header.sequence_number);
            let mut message = AttributedPacket::new(Packet::Rtp(packet));
            message.add(Attribute::RecoveredByFec);
            self.read_queue.push_back(TaggedPacket {
                now,
                transport,
                message,
            });
        }
    }
}

impl Protocol<TaggedPacket, TaggedPacket, ()> for FecReceiver {
    type Rout = TaggedPacket;
    type Wout = TaggedPacket;
    type Eout = ();
    type Error = Error;
    type Time = Instant;

    fn handle_read(&mut self, msg: TaggedPacket) -> Result<(), Self::Error> {
        let Packet::Rtp(rtp) = &msg.message.packet else {
            self.read_queue.push_back(msg);
            return Ok(());
        };
        let ssrc = rtp.header.ssrc;
        if let Some(index) = self.streams.iter().position(|s| s.repair_ssrc == ssrc) {
            self.handle.repair_received.fetch_add(1, Ordering::Relaxed);
            let rebuilt = self.streams[index].decoder.decode(rtp.clone());
            self.queue_rebuilt(index, msg.now, msg.transport, rebuilt);
            return Ok(());
        }
        let Some(index) = self.streams.iter().position(|s| s.media_ssrc == ssrc) else {
            self.read_queue.push_back(msg);
            return Ok(());
        };
        let stream = &mut self.streams[index];
        let sequence_number = rtp.header.sequence_number;
        if stream.rebuilt.arrived(sequence_number) {
            self.handle
                .rebuilt_then_arrived
                .fetch_add(1, Ordering::Relaxed);
        }
        let as_protected = match stream.transport_cc_id {
            Some(id) => pacer::without_header_extension(rtp, id),
            None => rtp.clone(),
        };
        let rebuilt = stream.decoder.decode(as_protected);
        let (now, transport) = (msg.now, msg.transport);
        self.read_queue.push_back(msg);
        self.queue_rebuilt(index, now, transport, rebuilt);
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

    fn handle_timeout(&mut self, _now: Instant) -> Result<(), Self::Error> {
        Ok(())
    }

    fn poll_timeout(&mut self) -> Option<Self::Time> {
        None
    }
}

impl Interceptor for FecReceiver {
    fn bind_remote_stream(&mut self, info: &StreamInfo) {
        let (Some(repair_ssrc), Some(_)) = (info.ssrc_fec, info.payload_type_fec) else {
            return;
        };
        let transport_cc_id = info
            .rtp_header_extensions
            .iter()
            .find(|e| e.uri == crate::call::streams::TRANSPORT_CC_URI)
            .and_then(|e| u8::try_from(e.id).ok());
        self.streams.retain(|s| s.media_ssrc != info.ssrc);
        self.streams.push(Protected {
            media_ssrc: info.ssrc,
            repair_ssrc,
            transport_cc_id,
            decoder: FlexFec03Decoder::new(repair_ssrc, info.ssrc),
            rebuilt: RebuiltSet::new(),
        });
    }

    fn unbind_remote_stream(&mut self, info: &StreamInfo) {
        self.streams.retain(|s| s.media_ssrc != info.ssrc);
    }

    fn bind_local_stream(&mut self, _info: &StreamInfo) {}

    fn unbind_local_stream(&mut self, _info: &StreamInfo) {}
}

/// webrtc-rs's receiver reports (one every second per bound stream), in SSRC order.
///
/// The stock interceptor walks its streams in `HashMap` order, so the reports of one instant
/// leave in an order that changes from run to run; on an emulated link that order decides which
/// report a loss or a queue hits, and the determinism rule (docs/architecture.md) would not hold.
/// This wrapper sorts each run of consecutive reports by reporter SSRC and passes everything else
/// in order.
pub struct OrderedReceiverReports {
    inner: ReceiverReportInterceptor,
    ready: VecDeque<TaggedPacket>,
}

impl Default for OrderedReceiverReports {
    fn default() -> Self {
        Self {
            inner: ReceiverReportBuilder::new().build(),
            ready: VecDeque::new(),
        }
    }
}

/// The media SSRC of a packet that is a receiver report about one stream, if it is one.
fn report_ssrc(packet: &TaggedPacket) -> Option<u32> {
    let Packet::Rtcp(rtcp) = &packet.message.packet else {
        return None;
    };
    let [only] = rtcp.as_slice() else {
        return None;
    };
    let report = only.as_any().downcast_ref::<ReceiverReport>()?;
    Some(report.reports.first().map_or(0, |r| r.ssrc))
}

impl Protocol<TaggedPacket, TaggedPacket, ()> for OrderedReceiverReports {
    type Rout = TaggedPacket;
    type Wout = TaggedPacket;
    type Eout = ();
    type Error = Error;
    type Time = Instant;

    fn handle_read(&mut self, msg: TaggedPacket) -> Result<(), Self::Error> {
        self.inner.handle_read(msg)
    }

    fn poll_read(&mut self) -> Option<Self::Rout> {
        self.inner.poll_read()
    }

    fn handle_write(&mut self, msg: TaggedPacket) -> Result<(), Self::Error> {
        self.inner.handle_write(msg)
    }

    fn poll_write(&mut self) -> Option<Self::Wout> {
        if self.ready.is_empty() {
            let mut pending: Vec<TaggedPacket> =
                std::iter::from_fn(|| self.inner.poll_write()).collect();
            let mut start = 0;
            while start < pending.len() {
                let mut end = start;
                while end < pending.len() && report_ssrc(&pending[end]).is_some() {
                    end += 1;
                }
                pending[start..end].sort_by_key(|p| report_ssrc(p).unwrap_or(0));
                start = end + 1;
            }
            self.ready.extend(pending);
        }
        self.ready.pop_front()
    }

    fn handle_timeout(&mut self, now: Instant) -> Result<(), Self::Error> {
        self.inner.handle_timeout(now)
    }

    fn poll_timeout(&mut self) -> Option<Self::Time> {
        self.inner.poll_timeout()
    }
}

impl Interceptor for OrderedReceiverReports {
    fn bind_remote_stream(&mut self, info: &StreamInfo) {
        self.inner.bind_remote_stream(info);
    }

    fn unbind_remote_stream(&mut self, info: &StreamInfo) {
        self.inner.unbind_remote_stream(info);
    }

    fn bind_local_stream(&mut self, info: &StreamInfo) {
        self.inner.bind_local_stream(info);
    }

    fn unbind_local_stream(&mut self, info: &StreamInfo) {
        self.inner.unbind_local_stream(info);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtc_shared::TransportContext;
    use std::time::Duration;

    fn rtp(ssrc: u32, sequence_number: u16) -> TaggedPacket {
        TaggedPacket {
            now: Instant::now(),
            transport: TransportContext::default(),
            message: AttributedPacket::new(Packet::Rtp(rtc_rtp::Packet {
                header: rtc_rtp::Header {
                    version: 2,
                    ssrc,
                    sequence_number,
                    ..Default::default()
                },
                payload: vec![0u8; 10].into(),
            })),
        }
    }

    #[test]
    fn a_rebuilt_number_counts_once_when_its_original_arrives_and_is_forgotten_half_a_wrap_later() {
        let mut set = RebuiltSet::new();
        set.insert(10);
        set.insert(65_535);
        assert!(!set.arrived(11));
        assert!(set.arrived(10));
        assert!(!set.arrived(10), "counted once");
        assert!(set.arrived(65_535), "the top of the sequence space");
        set.insert(100);
        assert!(
            !set.arrived(100 + 0x8000),
            "another number half the space away"
        );
        assert!(!set.arrived(100), "forgotten by then");
    }

    #[test]
    fn the_reports_of_one_instant_leave_in_ssrc_order() {
        let ssrcs = [
            0x9000_0001u32,
            0x1000_0002,
            0x5000_0003,
            0x3000_0004,
            0x7000_0005,
        ];
        let mut reports = OrderedReceiverReports::default();
        for ssrc in ssrcs {
            reports.bind_remote_stream(&StreamInfo {
                ssrc,
                clock_rate: 90_000,
                ..Default::default()
            });
        }
        let start = Instant::now();
        for (i, ssrc) in ssrcs.into_iter().enumerate() {
            let mut packet = rtp(ssrc, 1);
            packet.now = start + Duration::from_millis(i as u64);
            reports.handle_read(packet).unwrap();
        }
        while reports.poll_read().is_some() {}
        let due = reports.poll_timeout().expect("a report is due");
        reports.handle_timeout(due).unwrap();
        let order: Vec<u32> = std::iter::from_fn(|| reports.poll_write())
            .map(|p| report_ssrc(&p).expect("a receiver report"))
            .collect();
        let mut sorted = ssrcs.to_vec();
        sorted.sort_unstable();
        assert_eq!(order, sorted);
    }
}

//! The receive side of FlexFEC-03: repair packets rebuild lost media before the jitter buffer
//! (docs/architecture.md, "The call engine").
//!
//! The sender protects with [`pacer::LossProtection`] below its TWCC sender
//! ([`pacer::FEC_GENERATOR_SLOT`]), over each media packet as it leaves, transport-wide sequence
//! number included, as libwebrtc does (`RtpSenderEgress::SendPacket`). A packet arrives as it was
//! protected, so [`FecReceiver`] hands webrtc-rs's `FlexFec03Decoder` a copy of it unchanged
//! (through a gate that shows it only the packets that can matter), as libwebrtc's
//! `FlexfecReceiver` inserts the whole packet, header extensions included; a rebuilt packet
//! carries its original transport-wide sequence number. The receiver sits at
//! [`FEC_RECEIVER_SLOT`] (webrtc-rs's `Slot::FecDecoder`), wire-ward of the RTX receiver and the
//! NACK generator, so a rebuilt packet reaches them as received and stops its NACKs (libwebrtc
//! `NackRequester::OnReceivedPacket` with `is_recovered`). The TWCC receiver and the receiver
//! reports sit wire-ward of it ([`TWCC_RECEIVER_SLOT`], [`RECEIVER_REPORT_SLOT`]): they see repair
//! packets as they arrive and never a rebuilt packet, as libwebrtc's transport feedback and
//! receive statistics do (`RtpVideoStreamReceiver2` leaves recovered packets out of them).

mod gate;

use gate::GatedDecoder;
use rtc_interceptor::{
    Attribute, AttributedPacket, Interceptor, Packet, ReceiverReportBuilder,
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
    decoder: GatedDecoder,
    /// Which media packets arrived and which were rebuilt.
    seen: SeenPackets,
}

/// Which of a stream's sequence numbers arrived and which were rebuilt without their original
/// having arrived, one bit each, over the half of the sequence space behind the highest number
/// that arrived.
///
/// Two things need it. A repair packet can overtake the media it protects (the pacer serves the
/// repair SSRC round-robin with the media): its rebuild is no repair of a loss, and is counted
/// when the original arrives. And the decoder keeps only its latest 100 media packets, so a late
/// repair packet can "rebuild" one that arrived long before: that copy is dropped. As the highest
/// number advances, the numbers it passes are cleared from the arrivals (they are new in this
/// wrap) and the ones half the space ahead are cleared from the rebuilds, so nothing stale is
/// matched whatever was lost.
struct SeenPackets {
    highest: Option<u16>,
    arrived: SequenceBits,
    rebuilt: SequenceBits,
}

impl SeenPackets {
    fn new() -> Self {
        Self {
            highest: None,
            arrived: SequenceBits::new(),
            rebuilt: SequenceBits::new(),
        }
    }

    /// A media packet arrived; returns whether it had been rebuilt first.
    fn arrived(&mut self, sequence_number: u16) -> bool {
        match self.highest {
            None => self.highest = Some(sequence_number),
            Some(highest) => {
                let ahead = sequence_number.wrapping_sub(highest);
                if (1..0x8000).contains(&ahead) {
                    for k in 1..=ahead {
                        let passed = highest.wrapping_add(k);
                        self.arrived.set(passed, false);
                        self.rebuilt.set(passed ^ 0x8000, false);
                    }
                    self.highest = Some(sequence_number);
                }
            }
        }
        self.arrived.set(sequence_number, true);
        let was_rebuilt = self.rebuilt.get(sequence_number);
        self.rebuilt.set(sequence_number, false);
        was_rebuilt
    }

    /// Whether a sequence number has neither arrived nor been rebuilt. Arrival bits ahead of the
    /// highest number are the previous wrap's, so only the rebuilds count there.
    fn missing(&self, sequence_number: u16) -> bool {
        let ahead = self
            .highest
            .is_some_and(|h| gate::is_newer(h, sequence_number));
        let arrived = !ahead && self.arrived.get(sequence_number);
        !arrived && !self.rebuilt.get(sequence_number)
    }

    /// A packet was rebuilt; returns whether to keep it (its original has not arrived).
    fn rebuilt(&mut self, sequence_number: u16) -> bool {
        let behind = self
            .highest
            .is_some_and(|h| h.wrapping_sub(sequence_number) < 0x8000);
        if behind && self.arrived.get(sequence_number) {
            return false;
        }
        self.rebuilt.set(sequence_number, true);
        true
    }
}

/// One bit per sequence number.
struct SequenceBits {
    words: Box<[u64; 1024]>,
}

impl SequenceBits {
    fn new() -> Self {
        Self {
            words: Box::new([0; 1024]),
        }
    }

    fn get(&self, sequence_number: u16) -> bool {
        self.words[usize::from(sequence_number >> 6)] & (1 << (sequence_number & 63)) != 0
    }

    fn set(&mut self, sequence_number: u16, on: bool) {
        let word = &mut self.words[usize::from(sequence_number >> 6)];
        let bit = 1 << (sequence_number & 63);
        if on {
            *word |= bit;
        } else {
            *word &= !bit;
        }
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
            let protected = &mut self.streams[stream];
            let sequence_number = packet.header.sequence_number;
            if !protected.seen.rebuilt(sequence_number) {
                continue;
            }
            self.handle.rebuilt.fetch_add(1, Ordering::Relaxed);
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
            let Protected { decoder, seen, .. } = &mut self.streams[index];
            let rebuilt = decoder.repair(rtp.clone(), |s| seen.missing(s));
            self.queue_rebuilt(index, msg.now, msg.transport, rebuilt);
            return Ok(());
        }
        let Some(index) = self.streams.iter().position(|s| s.media_ssrc == ssrc) else {
            self.read_queue.push_back(msg);
            return Ok(());
        };
        let stream = &mut self.streams[index];
        let sequence_number = rtp.header.sequence_number;
        if stream.seen.arrived(sequence_number) {
            self.handle
                .rebuilt_then_arrived
                .fetch_add(1, Ordering::Relaxed);
        }
        let highest = stream.seen.highest.unwrap_or(sequence_number);
        let rebuilt = stream.decoder.media(rtp, highest);
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
        let mutable_extensions = info
            .rtp_header_extensions
            .iter()
            .filter(|e| pacer::protection::MUTABLE_EXTENSION_URIS.contains(&e.uri.as_str()))
            .filter_map(|e| u8::try_from(e.id).ok())
            .collect();
        self.streams.retain(|s| s.media_ssrc != info.ssrc);
        self.streams.push(Protected {
            media_ssrc: info.ssrc,
            repair_ssrc,
            decoder: GatedDecoder::new(repair_ssrc, info.ssrc, mutable_extensions),
            seen: SeenPackets::new(),
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
    fn arrivals_and_rebuilds_are_told_apart_across_wraps_and_loss_bursts() {
        let mut seen = SeenPackets::new();
        // 0..=9 arrive but 5; 5 is rebuilt (a repair), 9 is rebuilt again (already here: dropped).
        for s in (0..10).filter(|&s| s != 5) {
            assert!(!seen.arrived(s));
        }
        assert!(seen.rebuilt(5));
        assert!(!seen.rebuilt(9), "arrived already");
        // A repair overtakes media 10: kept, and its original's arrival says so.
        assert!(seen.rebuilt(10));
        assert!(seen.arrived(10));
        assert!(!seen.arrived(10), "said once");
        // A repair for 11 comes first, and 11 itself is lost in the burst below.
        assert!(seen.rebuilt(11));
        // A burst loses everything from 11 to 30 000, then the stream goes on past a wrap: the
        // numbers 5 and 11 come round again, and neither is taken for the old packets.
        assert!(!seen.arrived(30_001));
        for s in (30_002..=65_535).chain(0..=4) {
            seen.arrived(s);
        }
        assert!(
            seen.rebuilt(5),
            "lost in this wrap: a repair, not an old arrival"
        );
        for s in 6..=10 {
            assert!(!seen.arrived(s));
        }
        assert!(
            !seen.arrived(11),
            "the old wrap's rebuild of 11 is forgotten"
        );
    }

    fn media(sequence_number: u16, payload: u8) -> rtc_rtp::Packet {
        rtc_rtp::Packet {
            header: rtc_rtp::Header {
                version: 2,
                payload_type: 96,
                ssrc: 1,
                sequence_number,
                ..Default::default()
            },
            payload: vec![payload; 20].into(),
        }
    }

    fn receiver() -> (FecReceiver, FecReceiverHandle) {
        let (mut receiver, handle) = FecReceiver::new();
        receiver.bind_remote_stream(&StreamInfo {
            ssrc: 1,
            ssrc_fec: Some(2),
            payload_type_fec: Some(98),
            clock_rate: 90_000,
            ..Default::default()
        });
        (receiver, handle)
    }

    fn read(receiver: &mut FecReceiver, packet: rtc_rtp::Packet) -> Vec<(u16, bool)> {
        let mut tagged = rtp(packet.header.ssrc, packet.header.sequence_number);
        tagged.message = AttributedPacket::new(Packet::Rtp(packet));
        receiver.handle_read(tagged).unwrap();
        std::iter::from_fn(|| receiver.poll_read())
            .filter_map(|p| match &p.message.packet {
                Packet::Rtp(rtp) => Some((
                    rtp.header.sequence_number,
                    p.message.has(&Attribute::RecoveredByFec),
                )),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_lost_packet_is_rebuilt_and_counted_a_repair_that_overtook_its_media_is_not() {
        let block: Vec<rtc_rtp::Packet> = (0..4).map(|i| media(100 + i, i as u8 + 1)).collect();
        let repair = rtc_interceptor::FlexFec03Encoder::new(98, 2).encode(&block, 1);
        assert_eq!(repair.len(), 1);

        // Media 102 lost: rebuilt from the repair packet, marked, counted.
        let (mut lossy, handle) = receiver();
        for packet in [&block[0], &block[1], &block[3]] {
            read(&mut lossy, packet.clone());
        }
        assert_eq!(read(&mut lossy, repair[0].clone()), vec![(102, true)]);
        let stats = handle.stats();
        assert_eq!((stats.repair_received, stats.recovered()), (1, 1));

        // The repair packet overtakes media 103, which then arrives: no loss was repaired.
        let (mut early, handle) = receiver();
        for packet in &block[..3] {
            read(&mut early, packet.clone());
        }
        assert_eq!(read(&mut early, repair[0].clone()), vec![(103, true)]);
        assert_eq!(read(&mut early, block[3].clone()), vec![(103, false)]);
        let stats = handle.stats();
        assert_eq!((stats.rebuilt, stats.recovered()), (1, 0));
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

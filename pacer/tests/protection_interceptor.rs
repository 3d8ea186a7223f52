//! `LossProtection` inside a webrtc-rs interceptor chain: receiver reports in, media and FlexFEC
//! repair packets out, and webrtc-rs's FlexFEC decoder recovering what a lossy path dropped.

use pacer::pacing::FrameInfo;
use pacer::protection::{
    BlockGenerator, BlockShape, PacketInfo, Protection, ProtectionHandle, without_header_extension,
};
use pacer::{FecMode, LossProtection};
use rtc_interceptor::{
    AttributedPacket, FlexFec03Decoder, FlexFec03SendBuilder, Interceptor, Packet, RTCPFeedback,
    RTPHeaderExtension, Registry, Slot, StreamInfo, TaggedPacket, TwccSenderBuilder,
};
use rtc_rtcp::receiver_report::ReceiverReport;
use rtc_rtcp::reception_report::ReceptionReport;
use rtc_shared::TransportContext;
use rtc_shared::marshal::{Marshal, MarshalSize};
use sansio::Protocol;
use std::time::{Duration, Instant};

const VIDEO: u32 = 0x5A7E_111E;
const VIDEO_PT: u8 = 96;
const FEC: u32 = 0x5A7E_FEC0;
const FEC_PT: u8 = 49;
const TRANSPORT_CC_URI: &str =
    "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01";
const TRANSPORT_CC_ID: u8 = 5;
const FRAME_INTERVAL: Duration = Duration::from_nanos(33_333_333);
const PAYLOAD_BYTES: usize = 1000;

fn video_stream(transport_cc: bool) -> StreamInfo {
    StreamInfo {
        ssrc: VIDEO,
        ssrc_fec: Some(FEC),
        payload_type: VIDEO_PT,
        payload_type_fec: Some(FEC_PT),
        clock_rate: 90_000,
        mime_type: "video/VP8".to_owned(),
        rtcp_feedback: vec![RTCPFeedback {
            typ: "nack".to_owned(),
            parameter: String::new(),
        }],
        rtp_header_extensions: if transport_cc {
            vec![RTPHeaderExtension {
                uri: TRANSPORT_CC_URI.to_owned(),
                id: u16::from(TRANSPORT_CC_ID),
            }]
        } else {
            Vec::new()
        },
        ..Default::default()
    }
}

/// The repair stream as a local stream of its own, so the TWCC sender numbers it.
fn repair_stream() -> StreamInfo {
    StreamInfo {
        ssrc: FEC,
        payload_type: FEC_PT,
        clock_rate: 90_000,
        mime_type: "video/flexfec-03".to_owned(),
        rtp_header_extensions: vec![RTPHeaderExtension {
            uri: TRANSPORT_CC_URI.to_owned(),
            id: u16::from(TRANSPORT_CC_ID),
        }],
        ..Default::default()
    }
}

/// The first payload byte says whether the packet belongs to a key frame.
fn frame_info(packet: &rtc_rtp::packet::Packet) -> FrameInfo {
    FrameInfo {
        key_frame: packet.payload.first() == Some(&1),
        first_packet_of_frame: false,
    }
}

struct Call {
    chain: rtc_interceptor::BoxedInterceptor,
    handle: ProtectionHandle,
    t0: Instant,
    sequence_number: u16,
    frame: u32,
    /// Everything the chain wrote, in order.
    out: Vec<rtc_rtp::Packet>,
}

impl Call {
    fn new(mode: FecMode, with_twcc: bool) -> Self {
        let (fec, handle) = LossProtection::builder(mode).frame_info(frame_info).build();
        let mut registry = Registry::new().with(Slot::FecEncoder, fec);
        if with_twcc {
            registry = registry.with(Slot::TwccSender, TwccSenderBuilder::new().build());
        }
        let mut chain: rtc_interceptor::BoxedInterceptor = Box::new(registry.build());
        if with_twcc {
            chain.bind_local_stream(&repair_stream());
        }
        chain.bind_local_stream(&video_stream(with_twcc));
        handle.set_network(2_500_000, Duration::from_millis(150));
        handle.set_resolution(1280, 720);
        Self {
            chain,
            handle,
            t0: Instant::now(),
            sequence_number: 1000,
            frame: 0,
            out: Vec::new(),
        }
    }

    fn now(&self) -> Instant {
        self.t0 + FRAME_INTERVAL * self.frame
    }

    /// A receiver report from the remote with `fraction_lost` for the video stream.
    fn report_loss(&mut self, fraction_lost: u8) {
        let report = ReceiverReport {
            ssrc: 0x0BAD_CAFE,
            reports: vec![ReceptionReport {
                ssrc: VIDEO,
                fraction_lost,
                ..Default::default()
            }],
            ..Default::default()
        };
        let now = self.now();
        self.chain
            .handle_read(TaggedPacket {
                now,
                transport: TransportContext::default(),
                message: AttributedPacket::new(Packet::Rtcp(vec![Box::new(report)])),
            })
            .expect("read");
        while self.chain.poll_read().is_some() {}
    }

    /// Writes one frame of `packets` packets and collects what leaves.
    fn send_frame(&mut self, packets: usize, key_frame: bool) {
        let now = self.now();
        for index in 0..packets {
            let sequence_number = self.sequence_number;
            self.sequence_number = self.sequence_number.wrapping_add(1);
            let mut payload = vec![0u8; PAYLOAD_BYTES];
            payload[0] = u8::from(key_frame);
            for (offset, byte) in payload.iter_mut().enumerate().skip(1) {
                *byte = (usize::from(sequence_number) * 7 + offset) as u8;
            }
            let packet = rtc_rtp::Packet {
                header: rtc_rtp::Header {
                    version: 2,
                    marker: index + 1 == packets,
                    payload_type: VIDEO_PT,
                    sequence_number,
                    timestamp: self.frame * 3000,
                    ssrc: VIDEO,
                    ..Default::default()
                },
                payload: payload.into(),
            };
            self.chain
                .handle_write(TaggedPacket {
                    now,
                    transport: TransportContext::default(),
                    message: AttributedPacket::new(Packet::Rtp(packet)),
                })
                .expect("write");
            while let Some(out) = self.chain.poll_write() {
                if let Packet::Rtp(rtp) = out.message.packet {
                    self.out.push(rtp);
                }
            }
        }
        self.frame += 1;
    }

    fn repair(&self) -> Vec<&rtc_rtp::Packet> {
        self.out.iter().filter(|p| p.header.ssrc == FEC).collect()
    }

    fn media(&self) -> Vec<&rtc_rtp::Packet> {
        self.out.iter().filter(|p| p.header.ssrc == VIDEO).collect()
    }
}

fn bytes(packet: &rtc_rtp::Packet) -> Vec<u8> {
    let mut buffer = vec![0u8; packet.marshal_size()];
    let written = packet.marshal_to(&mut buffer).expect("marshals");
    buffer.truncate(written);
    buffer
}

#[test]
fn five_percent_loss_at_two_and_a_half_megabits_and_150_ms_protects_each_frame_as_the_generator_does()
 {
    let mut call = Call::new(FecMode::Libwebrtc, false);
    // Ten frames before any loss report: no FEC.
    for _ in 0..10 {
        call.send_frame(8, false);
    }
    assert!(call.repair().is_empty());
    // 13/255 = 5 % lost. Ten frame ends at 30 fps: 83 kbit per frame at 1280x720, rate index 11,
    // table[11][13] = 48 -> the first-partition 51 -> converted 64; frames per block 6.
    call.report_loss(13);
    let stats = call.handle.stats();
    assert_eq!(
        (
            stats.delta_factor,
            stats.key_factor,
            stats.max_fec_frames,
            stats.filtered_loss_255
        ),
        (64, 170, 6, 13)
    );
    for _ in 0..30 {
        call.send_frame(8, false);
    }
    // Each 8-packet frame closes its own block: (8 x 64 + 128) >> 8 = 2 repair packets, with the
    // overhead exactly the one asked for.
    let mut generator = BlockGenerator::adaptive();
    generator.set_protection(Protection {
        delta_factor: 64,
        key_factor: 170,
        max_fec_frames: 6,
        filtered_loss_255: 13,
    });
    let mut expected = Vec::new();
    for packet in &call.media()[80..] {
        let info = PacketInfo {
            sequence_number: packet.header.sequence_number,
            marker: packet.header.marker,
            key_frame: false,
        };
        if let Some(block) = generator.push(info, ()) {
            expected.push(block.shape());
        }
    }
    assert_eq!(expected, vec![BlockShape { media: 8, fec: 2 }; 30]);

    let repair = call.repair();
    assert_eq!(repair.len(), 60);
    assert!(repair.iter().all(|p| p.header.payload_type == FEC_PT));
    assert_eq!(
        repair
            .iter()
            .map(|p| p.header.sequence_number)
            .collect::<Vec<_>>(),
        (0..60).collect::<Vec<u16>>(),
        "the repair stream numbers its own packets"
    );
    // The repair packets follow the marker packet that closed their block.
    for (index, packet) in call.out.iter().enumerate() {
        if packet.header.ssrc == FEC {
            let previous = &call.out[index - 1];
            assert!(previous.header.ssrc == FEC || previous.header.marker);
        }
    }
    let stats = call.handle.stats();
    assert_eq!(stats.fec_packets_sent, 60);
    assert_eq!(stats.blocks, 30);
    assert_eq!(stats.media_packets_protected, 240);
    assert_eq!(stats.media_packets_seen, 320);
    assert_eq!(stats.media_bytes_seen, 320 * 1012);
    assert_eq!(
        stats.fec_bytes_sent,
        repair.iter().map(|p| p.marshal_size() as u64).sum::<u64>()
    );
    assert_eq!(stats.at, Some(call.t0 + FRAME_INTERVAL * 39));
}

#[test]
fn no_reported_loss_means_no_repair_packets() {
    let mut call = Call::new(FecMode::Libwebrtc, false);
    call.report_loss(0);
    for _ in 0..30 {
        call.send_frame(8, false);
    }
    assert!(call.repair().is_empty());
    assert_eq!(call.out.len(), 240);
    assert_eq!(call.handle.stats().fec_packets_sent, 0);
}

#[test]
fn fec_mode_off_passes_every_packet_unchanged() {
    let mut call = Call::new(FecMode::Off, false);
    call.send_frame(8, false);
    call.report_loss(13);
    for _ in 0..30 {
        call.send_frame(8, false);
    }
    assert!(call.repair().is_empty());
    assert_eq!(call.out.len(), 248);
    let stats = call.handle.stats();
    assert_eq!((stats.fec_packets_sent, stats.delta_factor), (0, 0));
    // The video rate is still measured: frames 0 to 30 (at 0 and 999.99999 ms) are all within
    // the last second, 31 frames of 8 packets of 1012 bytes.
    assert_eq!(stats.video_rate_bps, 31 * 8 * 1012 * 8);
}

#[test]
fn a_key_frame_block_gets_the_key_factor_and_raises_the_key_boost() {
    let mut call = Call::new(FecMode::Libwebrtc, false);
    for _ in 0..10 {
        call.send_frame(8, false);
    }
    call.report_loss(13);
    call.send_frame(8, false);
    let before = call.repair().len();
    // A 30-packet key frame: (30 x 170 + 128) >> 8 = 20 repair packets.
    call.send_frame(30, true);
    assert_eq!(call.repair().len() - before, 20);
    // The key frame was 30 packets, the delta frames 8: boost 30 / 8 = 3, key rate index
    // 1 + (3 x 64 - 5) / 5 = 38, table[38][13] = 103 > 2 x 51 -> 0.5 + 255 x 103 / 152 = 173.
    let stats = call.handle.stats();
    assert_eq!((stats.delta_factor, stats.key_factor), (64, 173));
}

#[test]
fn a_fixed_shape_produces_what_webrtc_rs_flexfec_sender_produces() {
    let mut ours = Call::new(
        FecMode::Fixed {
            media: 5,
            repair: 2,
        },
        false,
    );
    let mut stock = Call::new(FecMode::Off, false);
    stock.chain = Box::new(
        Registry::new()
            .with(Slot::FecEncoder, FlexFec03SendBuilder::new().build())
            .build(),
    );
    stock.chain.bind_local_stream(&video_stream(false));
    for _ in 0..10 {
        ours.send_frame(8, false);
        stock.send_frame(8, false);
    }
    // 80 packets in blocks of 5: 16 blocks of 2 repair packets, byte for byte the stock ones.
    assert_eq!(ours.repair().len(), 32);
    assert_eq!(
        ours.out.iter().map(bytes).collect::<Vec<_>>(),
        stock.out.iter().map(bytes).collect::<Vec<_>>()
    );
}

#[test]
fn flexfec_decoder_recovers_a_dropped_packet_of_every_block_byte_identically() {
    let mut call = Call::new(FecMode::Libwebrtc, false);
    for _ in 0..10 {
        call.send_frame(8, false);
    }
    call.report_loss(13);
    for _ in 0..30 {
        call.send_frame(8, false);
    }
    // Drop one media packet of each protected frame (a different position each time) and give
    // the decoder everything else in sending order.
    let mut decoder = FlexFec03Decoder::new(FEC, VIDEO);
    let mut dropped = Vec::new();
    let mut recovered = Vec::new();
    for packet in &call.out {
        let offset = packet.header.sequence_number.wrapping_sub(1000);
        let frame = offset / 8;
        if packet.header.ssrc == VIDEO && frame >= 10 && offset % 8 == frame % 8 {
            dropped.push(bytes(packet));
            continue;
        }
        recovered.extend(decoder.decode(packet.clone()).iter().map(bytes));
    }
    assert_eq!(dropped.len(), 30);
    assert_eq!(recovered, dropped);
}

#[test]
fn behind_the_twcc_sender_recovery_needs_the_transport_cc_extension_removed() {
    let mut call = Call::new(FecMode::Libwebrtc, true);
    for _ in 0..10 {
        call.send_frame(8, false);
    }
    call.report_loss(13);
    for _ in 0..3 {
        call.send_frame(8, false);
    }
    // Media and repair packets both leave numbered: the repair stream is bound with the
    // transport-wide-cc extension.
    assert!(
        call.out
            .iter()
            .all(|p| p.header.get_extension(TRANSPORT_CC_ID).is_some())
    );
    assert_eq!(call.repair().len(), 6);
    // Frame 10's third packet is lost.
    let lost = call.media()[82].clone();
    let arrived: Vec<&rtc_rtp::Packet> = call.out.iter().filter(|p| **p != lost).collect();

    // Fed the packets as they arrived, the decoder XORs bytes the encoder never saw.
    let mut naive = FlexFec03Decoder::new(FEC, VIDEO);
    let naive_recovered: Vec<Vec<u8>> = arrived
        .iter()
        .flat_map(|p| naive.decode((*p).clone()))
        .map(|p| bytes(&p))
        .collect();
    assert!(!naive_recovered.contains(&bytes(&lost)));

    // Without the extension the media packets are what was protected: the lost packet comes
    // back exactly as it was written, before the TWCC sender numbered it.
    let mut decoder = FlexFec03Decoder::new(FEC, VIDEO);
    let recovered: Vec<Vec<u8>> = arrived
        .iter()
        .map(|p| match p.header.ssrc {
            VIDEO => without_header_extension(p, TRANSPORT_CC_ID),
            _ => (*p).clone(),
        })
        .flat_map(|p| decoder.decode(p))
        .map(|p| bytes(&p))
        .collect();
    assert_eq!(
        recovered,
        vec![bytes(&without_header_extension(&lost, TRANSPORT_CC_ID))]
    );
}

#[test]
fn without_its_own_binding_the_repair_stream_is_not_numbered_by_the_twcc_sender() {
    let (fec, handle) = LossProtection::builder(FecMode::Fixed {
        media: 2,
        repair: 1,
    })
    .build();
    let mut chain = Registry::new()
        .with(Slot::FecEncoder, fec)
        .with(Slot::TwccSender, TwccSenderBuilder::new().build())
        .build();
    chain.bind_local_stream(&video_stream(true));
    let now = Instant::now();
    let mut out = Vec::new();
    for sequence_number in 0..2u16 {
        let packet = rtc_rtp::Packet {
            header: rtc_rtp::Header {
                version: 2,
                sequence_number,
                ssrc: VIDEO,
                ..Default::default()
            },
            payload: vec![9; 100].into(),
        };
        chain
            .handle_write(TaggedPacket {
                now,
                transport: TransportContext::default(),
                message: AttributedPacket::new(Packet::Rtp(packet)),
            })
            .expect("write");
        while let Some(packet) = chain.poll_write() {
            if let Packet::Rtp(rtp) = packet.message.packet {
                out.push(rtp);
            }
        }
    }
    let numbered: Vec<(u32, bool)> = out
        .iter()
        .map(|p| {
            (
                p.header.ssrc,
                p.header.get_extension(TRANSPORT_CC_ID).is_some(),
            )
        })
        .collect();
    assert_eq!(numbered, vec![(VIDEO, true), (VIDEO, true), (FEC, false)]);
    assert_eq!(handle.stats().fec_packets_sent, 1);
}

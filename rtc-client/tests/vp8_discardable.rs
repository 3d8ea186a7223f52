//! Discardable frames on real libvpx (docs/architecture.md, "Discardable frames"): 90 frames of
//! the live calls' moving test pattern, a window of 9 (the action's 300 ms at 30 fps) encoded
//! with `FrameReferences::Discardable`, sent through our RFC 7741 payloader and read back
//! through the descriptor parser.
//!
//! - libvpx's decoder, handed every frame and then every frame but the window's, gives
//!   bit-identical pictures for every frame after the window; handed every frame but one normal
//!   frame, it gives different pictures for every frame after that one (the control that shows
//!   the comparison can fail).
//! - The same packets through our framer and receiver: a window frame lost is skipped and the
//!   base frame after the window decodes; a normal frame lost stalls until a key frame.
//!
//! libvpx is linked only with the `vp8` feature (scripts/test.sh turns it on).

#![cfg(feature = "vp8")]

use rtc_client::link::Time;
use rtc_client::media::packetizer::DEFAULT_MAX_PAYLOAD;
use rtc_client::media::receiver::{Playout, Receiver, ReceiverConfig};
use rtc_client::media::vp8::descriptor::{self, TemporalLayer};
use rtc_client::media::vp8::framer::Vp8Framer;
use rtc_client::media::vp8::pattern::TestPattern;
use rtc_client::media::vp8::payloader::{Layer, Vp8Payloader};
use std::ops::Range;
use std::time::Duration;
use vp8enc::{Config, FrameReferences, Vp8Decoder, Vp8Encoder};

const FRAMES: usize = 90;
/// The discardable window: 9 frames.
const WINDOW: Range<usize> = 40..49;
/// The normal frame the control leaves out.
const NORMAL: usize = 20;

/// One frame as sent: its RTP payloads and the VP8 data read back from them.
struct Sent {
    payloads: Vec<Vec<u8>>,
    data: Vec<u8>,
}

/// Encodes and packetizes the stream, checking every payload's descriptor on the way.
fn send() -> Vec<Sent> {
    let config = Config {
        target_bps: 1_000_000,
        drop_frame_threshold: 0,
        ..Config::default()
    };
    let mut encoder = Vp8Encoder::new(config).unwrap();
    let mut pattern = TestPattern::new(config.width, config.height, 11);
    let mut payloader = Vp8Payloader::new(32_700, 250);
    let mut sent = Vec::new();
    let mut last_base_tl0 = None;
    for n in 0..FRAMES {
        let discardable = WINDOW.contains(&n);
        let references = if discardable {
            FrameReferences::Discardable
        } else {
            FrameReferences::Normal
        };
        let frame = encoder
            .encode_with(pattern.draw(n as u64), n as i64 * 3000, n == 0, references)
            .unwrap()
            .expect("no frame dropping");
        assert_eq!(frame.key_frame, n == 0);
        assert_eq!(frame.droppable, discardable, "frame {n}");
        let layer = if discardable {
            Layer::Discardable
        } else {
            Layer::Base
        };
        let (d, payloads) = payloader
            .packetize(&frame.data, layer, DEFAULT_MAX_PAYLOAD)
            .unwrap();
        let mut data = Vec::new();
        for (i, payload) in payloads.iter().enumerate() {
            assert!(payload.len() <= DEFAULT_MAX_PAYLOAD);
            let parsed = descriptor::parse(payload).unwrap();
            assert_eq!(parsed.starts_frame(), i == 0);
            assert_eq!(parsed.picture_id, Some(d.picture_id));
            assert_eq!(parsed.tl0_pic_idx, Some(d.tl0_pic_idx));
            assert_eq!(
                parsed.layer,
                Some(TemporalLayer {
                    id: u8::from(discardable),
                    sync: discardable
                })
            );
            if i == 0 {
                assert_eq!(parsed.key_frame, Some(n == 0));
            }
            data.extend_from_slice(&payload[parsed.len..]);
        }
        assert_eq!(data, frame.data, "frame {n}");
        let expected_tl0 = match last_base_tl0 {
            None => d.tl0_pic_idx,
            Some(t) if discardable => t,
            Some(t) => u8::wrapping_add(t, 1),
        };
        assert_eq!(d.tl0_pic_idx, expected_tl0, "frame {n}");
        if !discardable {
            last_base_tl0 = Some(d.tl0_pic_idx);
        }
        sent.push(Sent { payloads, data });
    }
    sent
}

/// The pictures libvpx decodes from every frame `keep` accepts (`None` for the others).
fn decode(sent: &[Sent], keep: impl Fn(usize) -> bool) -> Vec<Option<Vec<u8>>> {
    let mut decoder = Vp8Decoder::new().unwrap();
    sent.iter()
        .enumerate()
        .map(|(n, frame)| {
            keep(n).then(|| {
                decoder
                    .decode(&frame.data)
                    .unwrap()
                    .expect("every frame is shown")
                    .i420
            })
        })
        .collect()
}

#[test]
fn frames_after_a_lost_discardable_window_decode_bit_identical_and_after_a_lost_normal_frame_not() {
    let sent = send();
    let all = decode(&sent, |_| true);
    let without_window = decode(&sent, |n| !WINDOW.contains(&n));
    let without_normal = decode(&sent, |n| n != NORMAL);
    // The content moves: the window's pictures differ from the base frame before them.
    for n in WINDOW {
        assert_ne!(all[n], all[WINDOW.start - 1], "frame {n}");
    }
    for n in WINDOW.end..FRAMES {
        assert!(
            all[n] == without_window[n],
            "frame {n} after the window decodes differently without the window"
        );
    }
    let differing: Vec<usize> = (NORMAL + 1..FRAMES)
        .filter(|&n| all[n] != without_normal[n])
        .collect();
    assert_eq!(
        differing,
        (NORMAL + 1..FRAMES).collect::<Vec<_>>(),
        "without normal frame {NORMAL}, every later frame must decode differently"
    );
}

/// Our framer and receiver on the sent packets, leaving out every packet of the frames `lose`
/// names; returns the receiver 2 s after the last frame.
fn receive(sent: &[Sent], lose: impl Fn(usize) -> bool) -> Receiver {
    let mut framer = Vp8Framer::new();
    let mut receiver = Receiver::new(ReceiverConfig {
        playout: Playout::Immediate,
        loss_timeout: Duration::from_millis(500),
        ..ReceiverConfig::default()
    });
    let mut sequence = 0u16;
    for (n, frame) in sent.iter().enumerate() {
        let now = Time::from_millis(n as u64 * 33);
        let last = frame.payloads.len() - 1;
        for (i, payload) in frame.payloads.iter().enumerate() {
            if !lose(n) {
                let rtp = (sequence, n as u32 * 3000, i == last);
                framer.deliver(&mut receiver, now, rtp, payload, None);
            }
            sequence = sequence.wrapping_add(1);
        }
        receiver.handle_timeout(now);
    }
    receiver.handle_timeout(Time::from_secs(5));
    receiver
}

#[test]
fn our_receiver_skips_a_lost_discardable_frame_and_stalls_on_a_lost_normal_one() {
    let sent = send();
    let rx = receive(&sent, |_| false);
    assert_eq!(rx.stats().frames_rendered, FRAMES as u64);
    let mut rx = receive(&sent, |n| n == WINDOW.start + 3);
    let stats = rx.stats();
    assert_eq!(stats.frames_rendered, FRAMES as u64 - 1);
    assert_eq!(stats.frames_skipped, 1);
    assert!(
        !rx.poll_pli(Time::from_secs(5)),
        "no key frame is asked for"
    );
    let mut rx = receive(&sent, |n| n == NORMAL);
    let stats = rx.stats();
    assert_eq!(stats.frames_rendered, NORMAL as u64);
    assert_eq!(stats.frames_skipped, 0);
    assert!(rx.waiting_for_key_frame());
    assert!(rx.poll_pli(Time::from_secs(5)));
}

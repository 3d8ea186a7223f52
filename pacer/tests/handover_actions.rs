//! Acceptance tests of the handover-timed actions (docs/architecture.md, "Handover-timed
//! actions"), each a short scripted run in virtual time: the hold delays media by its duration
//! and no more, the guard keeps a handover's delay spike and loss burst from cutting GoogCC's
//! estimate, the boost raises FEC only inside its window, and the duplicate sends the window's
//! video once more when it ends.

mod scripted;

use pacer::actions::{Action, ActionWindow};
use pacer::pacing::FrameInfo;
use pacer::protection::ProtectionHandle;
use pacer::{
    ActionConfig, ActionsHandle, FecMode, GoogCc, GoogCcConfig, HandoverAwarePacer, LossProtection,
    PacingConfig, PacingController, PacketKind,
};
use rtc_interceptor::{
    AttributedPacket, BandwidthEstimator, Interceptor, Packet, PacketReport, RTCPFeedback,
    Registry, Slot, StreamInfo, TaggedPacket,
};
use rtc_rtcp::receiver_report::ReceiverReport;
use rtc_rtcp::reception_report::ReceptionReport;
use rtc_shared::TransportContext;
use sansio::Protocol;
use std::time::{Duration, Instant};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Only `action` on, with `window`.
fn only(action: Action, window: ActionWindow) -> ActionConfig {
    let mut config = ActionConfig::disabled();
    match action {
        Action::Hold => config.hold = window,
        Action::Guard => config.guard = window,
        Action::Boost => {
            config.boost.enabled = window.enabled;
            config.boost.offset_ms = window.offset_ms;
            config.boost.duration_ms = window.duration_ms;
        }
        Action::KeyframeBlock => config.keyframe_block = window,
        Action::Duplicate => config.duplicate = window,
        Action::Playout => {
            config.playout.enabled = window.enabled;
            config.playout.offset_ms = window.offset_ms;
            config.playout.duration_ms = window.duration_ms;
        }
        Action::Discardable => config.discardable = window,
    }
    config
}

// ----- the hold -----

const VIDEO: u32 = 0x5A7E_111E;
const AUDIO: u32 = 0xA0D1_0000;
const RTX: u32 = 0x5A7E_111F;

/// One packet of a scripted hold run.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Sent {
    kind: PacketKind,
    enqueued_ms: f64,
    released_ms: f64,
}

/// 2.5 s at a 1 Mbit/s target (1.1 Mbit/s pacing) and the default 2-s limit: a 25-fps video
/// stream of three 1000-byte packets per frame (600 kbit/s), 100-byte audio every 20 ms, and a
/// 1000-byte retransmission every 50 ms, with the pacer driven by its own timer and polled at
/// every enqueue. `hold`: the hold windows, set at the start.
fn hold_run(hold: &[(Duration, Duration)]) -> Vec<Sent> {
    let start = Instant::now();
    let mut pacer = PacingController::new(
        PacingConfig {
            initial_target_bitrate_bps: 1_000_000,
            ..PacingConfig::default()
        },
        start,
    );
    pacer.set_hold_windows(
        start,
        hold.iter().map(|&(from, to)| (start + from, start + to)),
    );
    let mut events: Vec<(Duration, u32, PacketKind, u64)> = Vec::new();
    for frame in 0..62u64 {
        for _ in 0..3 {
            events.push((ms(frame * 40), VIDEO, PacketKind::Video, 1000));
        }
    }
    for k in 0..125u64 {
        events.push((ms(k * 20 + 5), AUDIO, PacketKind::Audio, 100));
    }
    for k in 0..50u64 {
        events.push((ms(k * 50 + 7), RTX, PacketKind::Retransmission, 1000));
    }
    events.sort_by_key(|e| e.0);
    let mut sent = Vec::new();
    // Whole microseconds, so that whole milliseconds compare exactly.
    let at_ms = |t: Instant| t.duration_since(start).as_micros() as f64 / 1000.0;
    let mut drain = |pacer: &mut PacingController<PacketKind>, now: Instant| {
        while let Some(packet) = pacer.poll_send(now) {
            sent.push(Sent {
                kind: packet.kind,
                enqueued_ms: at_ms(packet.enqueued_at),
                released_ms: at_ms(packet.released_at),
            });
        }
    };
    for (offset, ssrc, kind, size) in events {
        let at = start + offset;
        while let Some(next) = pacer.next_send_time().filter(|&next| next <= at) {
            drain(&mut pacer, next);
        }
        pacer.enqueue(at, ssrc, kind, size, kind);
        drain(&mut pacer, at);
    }
    while let Some(next) = pacer.next_send_time() {
        drain(&mut pacer, next);
    }
    sent
}

#[test]
fn a_hold_delays_media_by_its_duration_and_no_more_and_never_holds_audio_or_retransmissions() {
    let (from, to) = (1000.0, 1120.0);
    let free = hold_run(&[]);
    let held = hold_run(&[(ms(1000), ms(1120))]);
    assert_eq!(free.len(), held.len());
    let video = |run: &[Sent]| -> Vec<Sent> {
        run.iter()
            .filter(|s| s.kind == PacketKind::Video)
            .copied()
            .collect()
    };
    let (free_video, held_video) = (video(&free), video(&held));
    assert_eq!(free_video.len(), 186);

    // Nothing of the video leaves inside the window; what arrived in it leaves at its end.
    assert!(
        held_video
            .iter()
            .all(|s| s.released_ms < from || s.released_ms >= to)
    );
    let in_window: Vec<&Sent> = held_video
        .iter()
        .filter(|s| (from..to).contains(&s.enqueued_ms))
        .collect();
    assert_eq!(in_window.len(), 9, "frames at 1000, 1040 and 1080 ms");
    assert_eq!(
        in_window[0].released_ms, to,
        "the first leaves at the window's end"
    );

    // Delayed by the hold and no more: no packet later than in the free run by more than the
    // window, and the one enqueued at its start by exactly the window.
    let extra: Vec<f64> = free_video
        .iter()
        .zip(&held_video)
        .map(|(f, h)| {
            assert_eq!(f.enqueued_ms, h.enqueued_ms);
            h.released_ms - f.released_ms
        })
        .collect();
    println!("hold: extra delay per video packet, ms: {extra:?}");
    let worst = extra.iter().copied().fold(0.0, f64::max);
    assert_eq!(worst, 120.0, "{extra:?}");
    assert!(extra.iter().all(|&e| e >= 0.0));

    // Released through the normal drain: the debt was repaid during the hold, so six 1000-byte
    // packets (7.27 ms each at the 1.1-Mbit/s pacing rate) leave at once, until the debt
    // passes one 40-ms burst window, and the other three at the pacing rate.
    let last_held = in_window.iter().map(|s| s.released_ms).fold(0.0, f64::max);
    println!("hold: the 9 held packets left from {to} ms to {last_held} ms");
    let releases: Vec<f64> = in_window.iter().map(|s| s.released_ms).collect();
    assert_eq!(
        releases,
        [to, to, to, to, to, to, 1123.636, 1130.909, 1138.181]
    );
    // The backlog is gone 120 ms after the window: from the frame at 1240 ms on, every packet
    // leaves as in the free run (the 0.5 Mbit/s the pacing rate has over the stream clears 9
    // held packets and the frames behind them in three frame intervals).
    let last_late = held_video
        .iter()
        .zip(&extra)
        .filter(|(_, e)| **e > 0.0)
        .map(|(h, _)| h.enqueued_ms)
        .fold(0.0, f64::max);
    assert_eq!(last_late, 1200.0);

    // Audio leaves at its enqueue instant and retransmissions as in the free run, window or not.
    for kind in [PacketKind::Audio, PacketKind::Retransmission] {
        let pick = |run: &[Sent]| -> Vec<(f64, f64)> {
            run.iter()
                .filter(|s| s.kind == kind)
                .map(|s| (s.enqueued_ms, s.released_ms))
                .collect()
        };
        let (f, h) = (pick(&free), pick(&held));
        let during: Vec<_> = h.iter().filter(|(e, _)| (from..to).contains(e)).collect();
        assert!(!during.is_empty(), "{kind:?} was sent inside the window");
        for (enqueued, released) in &during {
            assert_eq!(enqueued, released, "{kind:?} waited inside the hold");
        }
        if kind == PacketKind::Audio {
            assert_eq!(f, h);
        }
    }
}

/// A 1000-byte RTP packet of `ssrc` handed to the chain at `now`.
fn rtp_packet(now: Instant, ssrc: u32, sequence_number: u16) -> TaggedPacket {
    scripted::rtp(now, ssrc, sequence_number, 1000)
}

/// A pacer interceptor at `bps` applying `actions`, with the video stream bound.
fn pacer_with_actions(actions: &ActionsHandle, bps: u64) -> HandoverAwarePacer {
    let (mut pacer, _handle) = HandoverAwarePacer::builder(PacingConfig {
        initial_target_bitrate_bps: bps,
        ..PacingConfig::default()
    })
    .actions(actions.clone())
    .build();
    pacer.bind_local_stream(&StreamInfo {
        ssrc: VIDEO,
        mime_type: "video/VP8".to_owned(),
        clock_rate: 90_000,
        ..Default::default()
    });
    pacer
}

#[test]
fn the_interceptor_takes_its_hold_windows_from_the_actions_handle() {
    let actions = ActionsHandle::new(only(
        Action::Hold,
        ActionWindow {
            enabled: true,
            offset_ms: -20,
            duration_ms: 120,
        },
    ))
    .unwrap();
    let mut pacer = pacer_with_actions(&actions, 1_000_000);
    let start = Instant::now();
    actions.set_predictions(start, [(start + ms(100), 0.9)]);
    let write = |pacer: &mut HandoverAwarePacer, at: Instant, sequence_number: u16| {
        pacer
            .handle_write(rtp_packet(at, VIDEO, sequence_number))
            .unwrap();
    };
    write(&mut pacer, start, 1);
    assert_eq!(pacer.poll_write().map(|p| p.now), Some(start));
    // Inside the window [80 ms, 200 ms): it waits for the end.
    write(&mut pacer, start + ms(90), 2);
    assert!(pacer.poll_write().is_none());
    let mut wake = pacer.poll_timeout().expect("a packet waits");
    while wake < start + ms(200) {
        pacer.handle_timeout(wake).unwrap();
        assert!(pacer.poll_write().is_none(), "released at {wake:?}");
        wake = pacer.poll_timeout().expect("a packet waits");
    }
    assert_eq!(wake, start + ms(200));
    pacer.handle_timeout(wake).unwrap();
    assert_eq!(pacer.poll_write().map(|p| p.now), Some(start + ms(200)));
    let stats = actions.take_stats(start + ms(1000));
    assert_eq!((stats.hold.applied, stats.hold.total), (1, ms(120)));
}

#[test]
fn keep_alives_are_not_held_and_a_probe_cluster_waits_for_the_holds_end() {
    let start = Instant::now();
    let config = PacingConfig {
        initial_target_bitrate_bps: 1_000_000,
        padding_ssrc: Some(0xBAD0),
        ..PacingConfig::default()
    };

    // Congested (the window's pacer mode) during a hold: the keep-alive is due 500 ms after the
    // last send, inside the hold, and leaves; the video waits.
    let mut pacer = PacingController::new(config.clone(), start);
    pacer.enqueue(start, VIDEO, PacketKind::Video, 1000, 0u32);
    assert!(pacer.poll_send(start).is_some());
    pacer.set_hold_windows(start, [(start + ms(100), start + ms(900))]);
    pacer.set_congested(start + ms(100), true);
    pacer.enqueue(start + ms(100), VIDEO, PacketKind::Video, 1000, 1);
    assert_eq!(pacer.next_send_time(), Some(start + ms(500)));
    assert!(pacer.poll_send(start + ms(500)).is_none());
    assert!(pacer.poll_keepalive(start + ms(500)).is_some());

    // A probe cluster posted inside a hold sends nothing (no media, no padding) until its end,
    // then its first packet is the held video.
    let mut pacer = PacingController::new(config, start);
    pacer.enqueue(start, VIDEO, PacketKind::Video, 1000, 0u32);
    assert!(pacer.poll_send(start).is_some());
    pacer.set_hold_windows(start, [(start + ms(100), start + ms(220))]);
    pacer.create_probe_cluster(
        start + ms(150),
        pacer::pacing::ProbeClusterConfig::new(1, 3_000_000),
    );
    pacer.enqueue(start + ms(150), VIDEO, PacketKind::Video, 1000, 1);
    assert!(pacer.poll_send(start + ms(150)).is_none());
    assert!(pacer.poll_padding(start + ms(150)).is_none());
    assert_eq!(pacer.next_send_time(), Some(start + ms(220)));
    let released = pacer.poll_send(start + ms(220)).expect("due at the end");
    assert_eq!((released.payload, released.probe_cluster), (1, Some(1)));
    assert!(!pacer.is_holding(start + ms(220)));
}

// ----- the guard -----

/// One scripted packet: sent every 10 ms, 1200 bytes; its fate on the path.
struct Path {
    /// The predicted handover, ms.
    handover_ms: u64,
    /// An unpredicted loss burst, ms (congestion the guard must not hide).
    later_burst_ms: u64,
}

impl Path {
    /// `(arrival_ms, lost)` of the packet sent at `send_ms`: 30 ms one way; at the handover
    /// everything sent in the first 200 ms is lost, what is sent in the next 200 ms sees its
    /// delay grow by 1 ms per ms (to 230 ms), and what is sent in the 200 ms after that arrives
    /// together as the queue empties (delay back to 30 ms, order kept); at the later burst 15 %
    /// of a second's packets are lost as a block.
    fn fate(&self, send_ms: u64) -> (u64, bool) {
        let h = self.handover_ms;
        if (h..h + 200).contains(&send_ms) {
            return (0, true);
        }
        if (h + 200..h + 400).contains(&send_ms) {
            return (send_ms + 30 + (send_ms - (h + 200)), false);
        }
        if (h + 400..h + 600).contains(&send_ms) {
            return (h + 630, false);
        }
        if (self.later_burst_ms..self.later_burst_ms + 150).contains(&send_ms) {
            return (0, true);
        }
        (send_ms + 30, false)
    }
}

/// Runs 30 s of the scripted path into a `GoogCc` (guarded by `actions` if given): feedback
/// every 100 ms, covering every packet sent up to the last one that arrived, reaching the sender
/// 30 ms later. Returns the target every 100 ms.
fn guard_run(epoch: Instant, path: &Path, actions: Option<ActionsHandle>) -> Vec<(u64, f64)> {
    let config = GoogCcConfig {
        start_bps: 1_000_000.0,
        ..GoogCcConfig::default()
    };
    let mut cc = match actions {
        Some(actions) => GoogCc::new(config).guarded_by(actions),
        None => GoogCc::new(config),
    };
    let mut next_unreported = 0u64; // send ms of the next packet not yet reported
    let mut targets = Vec::new();
    for feedback_ms in (100..30_000u64).step_by(100) {
        // Highest send instant that has arrived by the feedback instant.
        let mut covered_until = None;
        for send_ms in (next_unreported..feedback_ms).step_by(10) {
            let (arrival, lost) = path.fate(send_ms);
            if !lost && arrival <= feedback_ms {
                covered_until = Some(send_ms);
            }
        }
        let mut reports = Vec::new();
        if let Some(until) = covered_until {
            for send_ms in (next_unreported..=until).step_by(10) {
                let (arrival, lost) = path.fate(send_ms);
                let arrived = !lost && arrival <= feedback_ms;
                let id = send_ms / 10;
                reports.push(PacketReport {
                    ssrc: VIDEO,
                    id,
                    rtp_sequence_number: id as u16,
                    is_twcc: true,
                    twcc_sequence_number: id as u16,
                    size: 1200,
                    arrived,
                    departure: epoch + ms(send_ms),
                    arrival: arrived.then(|| ms(arrival)),
                    ecn: Default::default(),
                });
            }
            next_unreported = until + 10;
        }
        let at = epoch + ms(feedback_ms + 30);
        cc.handle_timeout(at);
        cc.on_reports(at, &reports);
        targets.push((feedback_ms + 30, cc.target_bitrate()));
    }
    targets
}

#[test]
fn the_guard_keeps_a_predicted_handovers_spike_and_burst_from_cutting_the_estimate_and_nothing_else()
 {
    let epoch = Instant::now();
    let path = Path {
        handover_ms: 12_000,
        later_burst_ms: 22_000,
    };
    // The default guard window, [t - 50 ms, t + 400 ms).
    let actions = ActionsHandle::new(only(Action::Guard, ActionConfig::default().guard)).unwrap();
    actions.set_predictions(epoch, [(epoch + ms(12_000), 0.8)]);
    let unguarded = guard_run(epoch, &path, None);
    let guarded = guard_run(epoch, &path, Some(actions.clone()));

    let at = |run: &[(u64, f64)], t: u64| run.iter().find(|(at, _)| *at >= t).unwrap().1;
    let min_between = |run: &[(u64, f64)], from: u64, to: u64| {
        run.iter()
            .filter(|(at, _)| (from..to).contains(at))
            .map(|(_, target)| *target)
            .fold(f64::INFINITY, f64::min)
    };
    let before = at(&unguarded, 12_000);
    assert_eq!(before, at(&guarded, 12_000), "identical until the window");
    // Without the guard the handover cuts the estimate.
    let unguarded_low = min_between(&unguarded, 12_000, 15_000);
    assert!(
        unguarded_low < 0.9 * before,
        "unguarded: {unguarded_low} after {before}"
    );
    // With it the estimate never falls below where it was.
    let guarded_low = min_between(&guarded, 12_000, 15_000);
    assert!(
        guarded_low >= before,
        "guarded: {guarded_low} after {before}"
    );
    // And it resumes: an unpredicted burst later cuts the guarded estimate too.
    let guarded_before_burst = at(&guarded, 22_000);
    let guarded_after_burst = min_between(&guarded, 22_000, 25_000);
    assert!(
        guarded_after_burst < 0.95 * guarded_before_burst,
        "later burst: {guarded_after_burst} after {guarded_before_burst}"
    );
    let stats = actions.take_stats(epoch + ms(30_000));
    assert_eq!((stats.guard.applied, stats.guard.total), (1, ms(450)));
    println!(
        "guard: before {before:.0}, unguarded min {unguarded_low:.0}, guarded min \
         {guarded_low:.0}; later burst {guarded_before_burst:.0} -> {guarded_after_burst:.0}"
    );
}

// ----- the boost -----

const FEC_SSRC: u32 = 0x5A7E_FEC0;
const FRAME_INTERVAL: Duration = Duration::from_nanos(33_333_333);

/// A protected video stream: 8 packets of 1000 bytes per frame at 30 fps, 2.5 Mbit/s, 150 ms RTT,
/// 5 % loss reported before the first frame. Returns, per frame, (media, repair) packets written
/// while the frame was written, and the updates the boost made.
fn boost_run(actions: Option<ActionsHandle>, t0: Instant, frames: u32) -> (Vec<(u32, u32)>, u64) {
    let mut builder =
        LossProtection::builder(FecMode::Libwebrtc).frame_info(|_| FrameInfo::default());
    if let Some(actions) = actions {
        builder = builder.actions(actions);
    }
    let (fec, handle): (LossProtection, ProtectionHandle) = builder.build();
    let mut chain: rtc_interceptor::BoxedInterceptor =
        Box::new(Registry::new().with(Slot::FecEncoder, fec).build());
    chain.bind_local_stream(&StreamInfo {
        ssrc: VIDEO,
        ssrc_fec: Some(FEC_SSRC),
        payload_type: 96,
        payload_type_fec: Some(49),
        clock_rate: 90_000,
        mime_type: "video/VP8".to_owned(),
        rtcp_feedback: vec![RTCPFeedback {
            typ: "nack".to_owned(),
            parameter: String::new(),
        }],
        ..Default::default()
    });
    handle.set_network(2_500_000, ms(150));
    handle.set_resolution(1280, 720);
    let report = ReceiverReport {
        ssrc: 0x0BAD_CAFE,
        reports: vec![ReceptionReport {
            ssrc: VIDEO,
            fraction_lost: 13,
            ..Default::default()
        }],
        ..Default::default()
    };
    chain
        .handle_read(TaggedPacket {
            now: t0,
            transport: TransportContext::default(),
            message: AttributedPacket::new(Packet::Rtcp(vec![Box::new(report)])),
        })
        .unwrap();
    while chain.poll_read().is_some() {}
    let mut sequence_number = 1000u16;
    let mut per_frame = Vec::new();
    for frame in 0..frames {
        let now = t0 + FRAME_INTERVAL * frame;
        let (mut media, mut repair) = (0, 0);
        for index in 0..8 {
            let packet = rtc_rtp::Packet {
                header: rtc_rtp::Header {
                    version: 2,
                    marker: index == 7,
                    payload_type: 96,
                    sequence_number,
                    timestamp: frame * 3000,
                    ssrc: VIDEO,
                    ..Default::default()
                },
                payload: vec![index as u8; 1000].into(),
            };
            sequence_number = sequence_number.wrapping_add(1);
            chain
                .handle_write(TaggedPacket {
                    now,
                    transport: TransportContext::default(),
                    message: AttributedPacket::new(Packet::Rtp(packet)),
                })
                .unwrap();
            while let Some(out) = chain.poll_write() {
                if let Packet::Rtp(rtp) = out.message.packet {
                    if rtp.header.ssrc == FEC_SSRC {
                        repair += 1;
                    } else {
                        media += 1;
                    }
                }
            }
        }
        per_frame.push((media, repair));
    }
    (per_frame, handle.stats().boosted_updates)
}

#[test]
fn the_boost_raises_fec_only_inside_its_window() {
    let t0 = Instant::now();
    let actions = ActionsHandle::new(only(
        Action::Boost,
        ActionWindow {
            enabled: true,
            offset_ms: -50,
            duration_ms: 350,
        },
    ))
    .unwrap();
    // A handover at frame 60 (2000 ms): the window is [1950, 2300) ms, frames 59 to 69 (frame
    // 69 is written at 2299.99998 ms).
    actions.set_predictions(t0, [(t0 + ms(2000), 1.0)]);
    let (normal, no_updates) = boost_run(None, t0, 120);
    let (boosted, updates) = boost_run(Some(actions.clone()), t0, 120);
    assert_eq!(no_updates, 0);
    // One as the window opens (at frame 59's first packet), one per frame end inside it.
    assert_eq!(updates, 1 + 11);
    let inside = |frame: u32| {
        let at = FRAME_INTERVAL * frame;
        at >= ms(1950) && at < ms(2300)
    };
    let ratio = |frames: &[(u32, u32)]| {
        let (media, repair) = frames
            .iter()
            .fold((0, 0), |(m, r), &(fm, fr)| (m + fm, r + fr));
        f64::from(repair) / f64::from(media)
    };
    let window: Vec<u32> = (0..120).filter(|&f| inside(f)).collect();
    assert_eq!(window, (59..=69).collect::<Vec<u32>>());
    let (lo, hi) = (59usize, 70usize);
    // Outside the window: frame for frame what the normal table gives.
    assert_eq!(normal[..lo], boosted[..lo]);
    assert_eq!(normal[hi..], boosted[hi..]);
    // Inside: at least one repair packet per two media packets, more than the table's.
    let normal_inside = ratio(&normal[lo..hi]);
    let boosted_inside = ratio(&boosted[lo..hi]);
    assert!(boosted_inside >= 0.5, "{boosted_inside}");
    assert!(
        boosted_inside > normal_inside,
        "{boosted_inside} vs {normal_inside}"
    );
    println!(
        "boost: repair per media inside {boosted_inside:.3} (normal {normal_inside:.3}), outside {:.3}",
        ratio(&boosted[..lo])
    );
    let stats = actions.take_stats(t0 + ms(4000));
    assert_eq!((stats.boost.applied, stats.boost.total), (1, ms(350)));
}

#[test]
fn no_key_frame_is_allowed_inside_the_key_frame_blocks_window() {
    let start = Instant::now();
    let actions = ActionsHandle::new(ActionConfig::default()).unwrap();
    actions.set_predictions(
        start,
        [(start + ms(12_000), 0.7), (start + ms(27_000), 0.3)],
    );
    let blocked: Vec<u64> = (0..30_000u64)
        .step_by(10)
        .filter(|&t| !actions.keyframe_allowed(start + ms(t)))
        .collect();
    assert_eq!(blocked.first(), Some(&11_950));
    assert_eq!(blocked.last(), Some(&12_390));
    assert_eq!(
        blocked.len(),
        45,
        "450 ms, and nothing at the unlikely 27 s"
    );
}

#[test]
fn the_default_guard_holds_the_estimate_when_the_prediction_is_off_by_fifty_ms_either_way() {
    let epoch = Instant::now();
    for error_ms in [-50i64, 50] {
        let path = Path {
            handover_ms: 12_000,
            later_burst_ms: 22_000,
        };
        let actions =
            ActionsHandle::new(only(Action::Guard, ActionConfig::default().guard)).unwrap();
        let predicted = epoch + ms(12_000u64.saturating_add_signed(error_ms));
        actions.set_predictions(epoch, [(predicted, 0.8)]);
        let guarded = guard_run(epoch, &path, Some(actions));
        let before = guarded.iter().find(|(at, _)| *at >= 12_000).unwrap().1;
        let low = guarded
            .iter()
            .filter(|(at, _)| (12_000..15_000).contains(at))
            .map(|(_, target)| *target)
            .fold(f64::INFINITY, f64::min);
        println!("guard, prediction off by {error_ms} ms: {before:.0} -> min {low:.0}");
        assert!(low >= before, "off by {error_ms} ms: {low} after {before}");
    }
}

// ----- the delayed duplicate -----

#[test]
fn the_duplicate_sends_the_windows_video_again_when_it_ends_and_nothing_else() {
    let actions = ActionsHandle::new(only(
        Action::Duplicate,
        ActionWindow {
            enabled: true,
            offset_ms: -50,
            duration_ms: 350,
        },
    ))
    .unwrap();
    let mut pacer = pacer_with_actions(&actions, 10_000_000);
    pacer.bind_local_stream(&StreamInfo {
        ssrc: AUDIO,
        mime_type: "audio/opus".to_owned(),
        clock_rate: 48_000,
        ..Default::default()
    });
    let start = Instant::now();
    // The window: [950 ms, 1300 ms).
    actions.set_predictions(start, [(start + ms(1000), 0.9)]);
    let mut sent: Vec<(u64, u32, u16)> = Vec::new();
    let mut record = |pacer: &mut HandoverAwarePacer| {
        while let Some(packet) = pacer.poll_write() {
            if let Packet::Rtp(rtp) = &packet.message.packet {
                let at = packet.now.duration_since(start).as_millis() as u64;
                sent.push((at, rtp.header.ssrc, rtp.header.sequence_number));
            }
        }
    };
    // A video packet and an audio packet every 50 ms for 2 s.
    for k in 0..40u16 {
        let at = start + ms(50 * u64::from(k));
        while let Some(wake) = pacer.poll_timeout().filter(|&wake| wake < at) {
            pacer.handle_timeout(wake).unwrap();
            record(&mut pacer);
        }
        for (ssrc, sequence_number) in [(VIDEO, k), (AUDIO, 1000 + k)] {
            pacer
                .handle_write(rtp_packet(at, ssrc, sequence_number))
                .unwrap();
            record(&mut pacer);
        }
    }
    while let Some(wake) = pacer.poll_timeout().filter(|&w| w < start + ms(3000)) {
        pacer.handle_timeout(wake).unwrap();
        record(&mut pacer);
    }
    let copies = |ssrc: u32, sequence_number: u16| {
        sent.iter()
            .filter(|&&(_, s, n)| s == ssrc && n == sequence_number)
            .map(|&(at, _, _)| at)
            .collect::<Vec<_>>()
    };
    // Video sent at 950..1250 ms (sequence numbers 19..=25) goes twice: the copy leaves at the
    // window's end, 1300 ms.
    for k in 19..=25u16 {
        assert_eq!(copies(VIDEO, k), vec![50 * u64::from(k), 1300], "video {k}");
    }
    // Video outside the window, and audio inside it, go once.
    for k in (0..19u16).chain(26..40) {
        assert_eq!(copies(VIDEO, k).len(), 1, "video {k}");
    }
    for k in 0..40u16 {
        assert_eq!(copies(AUDIO, 1000 + k).len(), 1, "audio {k}");
    }
    let stats = actions.take_stats(start + ms(3000));
    assert_eq!(
        (stats.duplicate.applied, stats.duplicate.total),
        (1, ms(350))
    );
}

//! `GoogCc` driven through `BandwidthEstimator::on_reports` by the deterministic path model in
//! `googcc_sim` (1-ms virtual ticks, 30 ms one-way delay, feedback every 100 ms).

mod googcc_sim;

use googcc_sim::{Path, Run, simulate};
use pacer::googcc::BandwidthUsage;
use pacer::{GoogCc, GoogCcConfig};
use rtc_interceptor::{BandwidthEstimator, CongestionControlBuilder, Registry, Slot};
use std::time::Duration;

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

fn run(start_bps: f64, path: &Path, length: Duration) -> Run {
    let cc = GoogCc::new(GoogCcConfig {
        start_bps,
        ..GoogCcConfig::default()
    });
    let handle = cc.handle();
    simulate(cc, Some(&handle), path, length)
}

#[test]
fn a_one_point_four_times_overdrive_is_detected_within_a_second_and_the_queue_stays_short() {
    let r = run(1_400_000.0, &Path::constant(1_000_000.0), secs(30));
    let detected = r.first_overuse.expect("overuse detected");
    assert!(detected < Duration::from_secs(1), "{detected:?}");
    assert_eq!(r.first_decrease, Some(detected), "the target falls at once");
    let peak = r.max_queue_ms(secs(0), secs(30));
    assert!(peak < 200.0, "largest queue {peak} ms");
    let standing = r.mean_queue_ms(secs(5), secs(30));
    assert!(standing < 200.0, "standing queue {standing} ms");
}

#[test]
fn after_an_overdrive_the_target_settles_below_capacity() {
    let r = run(1_400_000.0, &Path::constant(1_000_000.0), secs(60));
    let settled = r.mean_target(secs(30), secs(60));
    assert!(settled < 1_000_000.0, "{settled}");
    assert!(settled > 500_000.0, "{settled}");
    assert!(
        r.window(secs(5), secs(60)).all(|s| s.target < 1_100_000.0),
        "never more than 10 % above capacity after the first back-off"
    );
}

#[test]
fn a_four_times_overdrive_is_detected_within_a_second() {
    let r = run(4_000_000.0, &Path::constant(1_000_000.0), secs(20));
    let detected = r.first_overuse.expect("overuse detected");
    assert!(detected < Duration::from_secs(1), "{detected:?}");
    assert!(r.mean_target(secs(10), secs(20)) < 1_000_000.0);
}

#[test]
fn one_percent_random_loss_does_not_collapse_the_target_and_twenty_percent_does_reduce_it() {
    let mean_with = |loss: f64| {
        let mut path = Path::constant(2_000_000.0);
        path.loss = loss;
        run(1_000_000.0, &path, secs(40)).mean_target(secs(10), secs(40))
    };
    let clean = mean_with(0.0);
    let one = mean_with(0.01);
    let twenty = mean_with(0.2);
    assert!(clean > 1_500_000.0, "{clean}");
    assert!(one > 0.9 * clean, "1 %: {one} vs {clean}");
    assert!(twenty < 0.5 * clean, "20 %: {twenty} vs {clean}");
}

#[test]
fn on_a_clean_link_the_target_ramps_without_queueing() {
    let r = run(300_000.0, &Path::constant(5_000_000.0), secs(20));
    // Ramp-up without probing: 8 % per second of the last second's minimum.
    let at = |t: u64| {
        r.window(secs(t), secs(t) + Duration::from_millis(100))
            .next()
            .unwrap()
            .target
    };
    assert!(at(10) > at(5) && at(15) > at(10) && at(20) > at(15));
    assert!(r.max_queue_ms(secs(0), secs(20)) < 20.0);
    assert!(
        r.samples
            .iter()
            .all(|s| s.state != Some(BandwidthUsage::Overusing))
    );
}

#[test]
fn the_same_path_and_seed_give_the_same_trajectory() {
    let mut path = Path::constant(1_000_000.0);
    path.loss = 0.05;
    let a = run(800_000.0, &path, secs(10));
    let b = run(800_000.0, &path, secs(10));
    let targets = |r: &Run| {
        r.samples
            .iter()
            .map(|s| s.target.to_bits())
            .collect::<Vec<_>>()
    };
    assert_eq!(targets(&a), targets(&b));
}

#[test]
fn the_handle_shows_what_the_estimator_reports() {
    let cc = GoogCc::new(GoogCcConfig {
        start_bps: 1_400_000.0,
        ..GoogCcConfig::default()
    });
    let handle = cc.handle();
    let r = simulate(cc, Some(&handle), &Path::constant(1_000_000.0), secs(5));
    let snap = handle.snapshot();
    assert_eq!(r.samples.last().unwrap().target, snap.target_bps);
    assert!(snap.target_bps <= snap.delay_based_bps);
    let rtt = snap.rtt.expect("rtt measured");
    // 60 ms of propagation, plus what the newest packet of the feedback waited at the receiver
    // for the next 100-ms feedback (libwebrtc subtracts only the others' waits), plus a short
    // queue.
    assert!(
        rtt >= Duration::from_millis(60) && rtt < Duration::from_millis(170),
        "{rtt:?}"
    );
    let acked = snap.acknowledged_bps.expect("acknowledged rate");
    assert!(acked > 100_000.0 && acked < 1_000_000.0, "{acked}");
    assert!(snap.threshold_ms >= 6.0 && snap.threshold_ms <= 600.0);
}

#[test]
fn googcc_plugs_into_the_congestion_control_interceptor_unchanged() {
    let cc = GoogCc::default();
    let handle = cc.handle();
    let interceptor = CongestionControlBuilder::new(cc).build();
    assert_eq!(300_000.0, interceptor.estimator().target_bitrate());
    let _registry = Registry::new().with(Slot::CongestionControl, interceptor);
    assert_eq!(300_000.0, handle.target_bps());
}

/// `GoogCc` inside the real webrtc-rs chain: `CongestionControl(GoogCc)` + `TwccSender` +
/// `HandoverAwarePacer` on the sender, `TwccReceiver` on the receiver, a 1 Mbit/s FIFO
/// bottleneck with 30 ms one way between them, an encoder following the target. Virtual time,
/// discrete events, as `tests/harness`.
mod chain {
    use pacer::{GoogCcHandle, HandoverAwarePacer, PacingConfig};
    use rtc_interceptor::{
        AttributedPacket, BandwidthEstimator, CongestionControlBuilder, Interceptor, Packet,
        RTCPFeedback, RTPHeaderExtension, Registry, Slot, StreamInfo, TaggedPacket,
        TwccReceiverBuilder, TwccSenderBuilder,
    };
    use rtc_shared::TransportContext;
    use rtc_shared::marshal::MarshalSize;
    use sansio::Protocol;
    use std::collections::BTreeMap;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::{Duration, Instant};

    const SSRC: u32 = 0x600C_CC01;
    const PAYLOAD_TYPE: u8 = 96;
    const MAX_PAYLOAD: usize = 1200;
    const CAPACITY_BPS: u64 = 1_000_000;
    const ONE_WAY: Duration = Duration::from_millis(30);

    /// What a run recorded, every frame.
    pub struct Trace {
        /// `(t, target, bottleneck backlog)`.
        pub samples: Vec<(Duration, f64, Duration)>,
        /// When the target first went down.
        pub first_decrease: Option<Duration>,
    }

    /// Reads the target of any estimator from outside the chain.
    struct Observed<E> {
        inner: E,
        target: Arc<AtomicU64>,
    }

    impl<E: BandwidthEstimator> BandwidthEstimator for Observed<E> {
        fn on_reports(&mut self, now: Instant, reports: &[rtc_interceptor::PacketReport]) {
            self.inner.on_reports(now, reports);
            self.target
                .store(self.inner.target_bitrate().to_bits(), Ordering::Relaxed);
        }
        fn target_bitrate(&self) -> f64 {
            self.inner.target_bitrate()
        }
        fn handle_timeout(&mut self, now: Instant) {
            self.inner.handle_timeout(now);
            self.target
                .store(self.inner.target_bitrate().to_bits(), Ordering::Relaxed);
        }
        fn poll_timeout(&self) -> Option<Instant> {
            self.inner.poll_timeout()
        }
    }

    fn stream() -> StreamInfo {
        StreamInfo {
            ssrc: SSRC,
            clock_rate: 90_000,
            mime_type: "video/VP8".to_owned(),
            payload_type: PAYLOAD_TYPE,
            rtcp_feedback: vec![RTCPFeedback {
                typ: "transport-cc".to_owned(),
                parameter: String::new(),
            }],
            rtp_header_extensions: vec![RTPHeaderExtension {
                uri: "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01"
                    .to_owned(),
                id: 5,
            }],
            ..Default::default()
        }
    }

    fn rtp(now: Instant, sequence_number: u16, timestamp: u32, size: usize) -> TaggedPacket {
        TaggedPacket {
            now,
            transport: TransportContext::default(),
            message: AttributedPacket::new(Packet::Rtp(rtc_rtp::Packet {
                header: rtc_rtp::Header {
                    version: 2,
                    payload_type: PAYLOAD_TYPE,
                    sequence_number,
                    timestamp,
                    ssrc: SSRC,
                    ..Default::default()
                },
                payload: vec![0xAB; size].into(),
            })),
        }
    }

    /// Runs `estimator` for `duration`, the encoder starting at `start_bps`.
    pub fn run<E: BandwidthEstimator + 'static>(
        estimator: E,
        start_bps: f64,
        burst_interval: Duration,
        duration: Duration,
        on_tick: &mut dyn FnMut(Duration),
    ) -> Trace {
        let epoch = Instant::now();
        let target = Arc::new(AtomicU64::new(start_bps.to_bits()));
        let observed = Observed {
            inner: estimator,
            target: target.clone(),
        };
        let (pacer, _pacer_handle) = HandoverAwarePacer::builder(PacingConfig {
            initial_target_bitrate_bps: start_bps as u64,
            burst_interval,
            ..PacingConfig::default()
        })
        .build();
        let mut sender = Registry::new()
            .with(
                Slot::CongestionControl,
                CongestionControlBuilder::new(observed).build(),
            )
            .with(Slot::TwccSender, TwccSenderBuilder::new().build())
            .with(Slot::Pacer, pacer)
            .build();
        sender.bind_local_stream(&stream());
        let mut receiver = Registry::new()
            .with(Slot::TwccReceiver, TwccReceiverBuilder::new().build())
            .build();
        receiver.bind_remote_stream(&stream());

        let mut busy_until = epoch;
        let mut forward: BTreeMap<(Instant, u64), TaggedPacket> = BTreeMap::new();
        let mut reverse: BTreeMap<(Instant, u64), TaggedPacket> = BTreeMap::new();
        let mut id = 0u64;
        let mut trace = Trace {
            samples: Vec::new(),
            first_decrease: None,
        };
        let frame_interval = Duration::from_nanos(33_333_333);
        let end = epoch + duration;
        let mut next_frame = epoch;
        let mut frame = 0u32;
        let mut sequence_number = 0u16;
        let mut now = epoch;
        let mut last_target = start_bps;
        loop {
            let next = [
                Some(next_frame),
                sender.poll_timeout(),
                receiver.poll_timeout(),
                forward.keys().next().map(|k| k.0),
                reverse.keys().next().map(|k| k.0),
            ]
            .into_iter()
            .flatten()
            .min()
            .expect("frames never stop");
            now = if next <= now && now > epoch {
                now + Duration::from_millis(1)
            } else {
                next
            };
            if now >= end {
                break;
            }
            let t = now - epoch;
            let bps = f64::from_bits(target.load(Ordering::Relaxed));
            if bps < last_target && trace.first_decrease.is_none() {
                trace.first_decrease = Some(t);
            }
            last_target = bps;
            on_tick(t);

            if next_frame <= now {
                let frame_bytes = (bps / 30.0 / 8.0) as usize;
                let packets = frame_bytes.div_ceil(MAX_PAYLOAD).max(1);
                for k in 0..packets {
                    let size = if k + 1 == packets {
                        frame_bytes - MAX_PAYLOAD * (packets - 1)
                    } else {
                        MAX_PAYLOAD
                    };
                    sender
                        .handle_write(rtp(now, sequence_number, frame * 3000, size.max(1)))
                        .expect("write");
                    sequence_number = sequence_number.wrapping_add(1);
                }
                trace
                    .samples
                    .push((t, bps, busy_until.saturating_duration_since(now)));
                frame += 1;
                next_frame = epoch + frame_interval * frame;
            }

            while let Some(entry) = reverse.first_entry() {
                if entry.key().0 > now {
                    break;
                }
                let mut feedback = entry.remove();
                feedback.now = now;
                sender.handle_read(feedback).expect("sender read");
                while sender.poll_read().is_some() {}
            }
            sender.handle_timeout(now).expect("sender timeout");
            while let Some(packet) = sender.poll_write() {
                let Packet::Rtp(rtp) = &packet.message.packet else {
                    continue;
                };
                let bytes = rtp.marshal_size() as u64;
                let start = busy_until.max(now);
                busy_until = start + Duration::from_nanos(bytes * 8 * 1_000_000_000 / CAPACITY_BPS);
                id += 1;
                forward.insert((busy_until + ONE_WAY, id), packet);
            }

            while let Some(entry) = forward.first_entry() {
                if entry.key().0 > now {
                    break;
                }
                let mut packet = entry.remove();
                packet.now = now;
                receiver.handle_read(packet).expect("receiver read");
                while receiver.poll_read().is_some() {}
            }
            receiver.handle_timeout(now).expect("receiver timeout");
            while let Some(feedback) = receiver.poll_write() {
                id += 1;
                reverse.insert((now + ONE_WAY, id), feedback);
            }
        }
        trace
    }

    /// Whether `handle` said overusing, recorded by the tick callback.
    pub fn overuse_watch(
        handle: GoogCcHandle,
        first: &mut Option<Duration>,
    ) -> impl FnMut(Duration) + '_ {
        move |t| {
            if first.is_none() && handle.state() == pacer::googcc::BandwidthUsage::Overusing {
                *first = Some(t);
            }
        }
    }
}

fn chain_overdrive(burst_interval: Duration) -> (Option<Duration>, chain::Trace) {
    let cc = GoogCc::new(GoogCcConfig {
        start_bps: 1_400_000.0,
        ..GoogCcConfig::default()
    });
    let handle = cc.handle();
    let mut overuse = None;
    let trace = chain::run(
        cc,
        1_400_000.0,
        burst_interval,
        secs(20),
        &mut chain::overuse_watch(handle, &mut overuse),
    );
    (overuse, trace)
}

fn max_queue_from(trace: &chain::Trace, from: Duration) -> Duration {
    trace
        .samples
        .iter()
        .filter(|s| s.0 >= from)
        .map(|s| s.2)
        .max()
        .unwrap_or_default()
}

fn mean_target_from(trace: &chain::Trace, from: Duration) -> f64 {
    let late: Vec<f64> = trace
        .samples
        .iter()
        .filter(|s| s.0 >= from)
        .map(|s| s.1)
        .collect();
    late.iter().sum::<f64>() / late.len() as f64
}

#[test]
fn in_the_real_chain_with_smooth_pacing_googcc_catches_a_1_4x_overdrive_within_a_second() {
    let (overuse, trace) = chain_overdrive(Duration::ZERO);
    let detected = overuse.expect("overuse detected");
    assert!(detected < secs(1), "{detected:?}");
    let peak = max_queue_from(&trace, Duration::ZERO);
    assert!(peak < Duration::from_millis(200), "{peak:?}");
    let mean = mean_target_from(&trace, secs(10));
    assert!(mean < 1_000_000.0, "settles below capacity: {mean}");
}

/// With the pacer's default 40-ms bursts a whole frame leaves within one 5-ms group, so the
/// trendline sees about 30 groups a second and needs its 20-group window before it reports a
/// slope: detection takes longer, and the queue peaks higher, than with smooth pacing.
#[test]
fn in_the_real_chain_with_40_ms_bursts_googcc_still_drains_the_queue_that_gcc_lets_grow() {
    let (overuse, ours) = chain_overdrive(Duration::from_millis(40));
    let detected = overuse.expect("overuse detected");
    assert!(detected < Duration::from_millis(1500), "{detected:?}");
    let standing = max_queue_from(&ours, secs(5));
    assert!(standing < Duration::from_millis(200), "{standing:?}");
    let mean = mean_target_from(&ours, secs(10));
    assert!(mean < 1_000_000.0, "settles below capacity: {mean}");

    let theirs = chain::run(
        rtc_interceptor::Gcc::new(1_400_000.0, 100_000.0, 100e6),
        1_400_000.0,
        Duration::from_millis(40),
        secs(20),
        &mut |_| {},
    );
    let theirs_standing = max_queue_from(&theirs, secs(5));
    assert!(
        theirs_standing > Duration::from_millis(500),
        "webrtc-rs Gcc lets the queue grow: {theirs_standing:?}"
    );
}

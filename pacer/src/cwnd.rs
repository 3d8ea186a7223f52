//! libwebrtc's congestion window: outstanding-data accounting, the window, encoder pushback, and
//! the shared channel that connects them across the interceptor chain.
//!
//! Sources (modern libwebrtc, as summarised in
//! `../shared/reference/libwebrtc-pacer-and-webrtc-rs.md`, sections 1.3, 1.5 and 1.6):
//!
//! - `modules/congestion_controller/goog_cc/goog_cc_network_control.cc`:
//!   `OnTransportPacketsFeedback` keeps the maximum feedback RTT of each feedback in a 32-entry
//!   window (`feedback_max_rtts_`, `kMaxFeedbackRttWindow`), and `UpdateCongestionWindowSize`
//!   computes `(min of that window + QueueSize) x last_loss_based_target_rate_`, averaged with the
//!   previous window and floored at `kMinCwnd` = 2 x 1500 bytes.
//!   `MaybeTriggerOnNetworkChanged` (run after feedback and every 25-ms process interval) asks
//!   the pushback controller for the pushback target, floors it at the minimum bitrate and, with
//!   `DropFrame`, keeps the target and hands `cwnd_reduce_ratio` = (target - pushback) / target
//!   to the encoder; the pacing rate (`GetPacingRates`) stays on the pre-pushback target.
//!   Without a pushback controller the window goes to the pacer instead
//!   (`update.congestion_window`).
//! - `modules/congestion_controller/goog_cc/congestion_window_pushback_controller.cc`:
//!   `UpdateOutstandingData`, `SetDataWindow`, `UpdateTargetBitrate` (the ratio rules).
//! - `rtc_base/experiments/rate_control_settings.cc`: field trial `WebRTC-CongestionWindow`,
//!   default "QueueSize:350,MinBitrate:30000,DropFrame:true".
//! - `call/rtp_transport_controller_send.cc` `UpdateCongestedState`: the pacer is congested while
//!   outstanding data >= the window (`PacingController::SetCongested`).
//! - `modules/congestion_controller/rtp/transport_feedback_adapter.cc`: outstanding data
//!   (`in_flight_`) grows on every sent packet and shrinks when transport feedback reports the
//!   packet, received or lost.
//!
//! Here the pacer records what it releases ([`CwndChannel::on_sent`]) and a wrapper around the
//! bandwidth estimator (the application's: the estimator is boxed inside webrtc-rs's
//! congestion-control interceptor, reference 3.4) hands the channel every feedback's
//! `PacketReport`s ([`CwndChannel::on_feedback`]) and every process tick
//! ([`CwndChannel::on_process`]).

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// `QueueSize` of the default `WebRTC-CongestionWindow` field trial: time added to the minimum
/// feedback RTT to size the window (`rate_control_settings.cc`, "QueueSize:350").
pub(crate) const QUEUE_SIZE: Duration = Duration::from_millis(350);

/// `MinBitrate` of the default `WebRTC-CongestionWindow` field trial: pushback never lowers the
/// target below this, unless the estimate itself is lower (`rate_control_settings.cc`,
/// "MinBitrate:30000"; `CongestionWindowPushbackController::min_pushback_target_bitrate_bps_`).
pub(crate) const MIN_PUSHBACK_BITRATE_BPS: u64 = 30_000;

/// The smallest window: `kMinCwnd` = 2 x 1500 bytes (`goog_cc_network_control.cc`,
/// `UpdateCongestionWindowSize`).
pub(crate) const MIN_CWND_BYTES: u64 = 2 * 1500;

/// Feedbacks whose maximum RTT the window takes the minimum over: `kMaxFeedbackRttWindow` = 32
/// (`goog_cc_network_control.cc`).
pub(crate) const FEEDBACK_RTT_WINDOW: usize = crate::googcc::rtt::MAX_FEEDBACK_RTT_WINDOW;

/// goog_cc's process interval, at which `MaybeTriggerOnNetworkChanged` re-runs the pushback
/// rule even without feedback (`RtpTransportControllerSend`, `process_interval_` default 25 ms).
pub(crate) const PROCESS_INTERVAL: Duration = Duration::from_millis(25);

/// While congested, the pacer sends a keep-alive this often: `kCongestedPacketInterval` = 500 ms
/// (`pacing_controller.cc`, reference 1.2).
pub(crate) const CONGESTED_PACKET_INTERVAL: Duration = Duration::from_millis(500);

/// webrtc-rs's congestion-control interceptor forgets unacknowledged packets after this long
/// (`rtc-interceptor` `cc/interceptor.rs`, `DEFAULT_PRUNE_HORIZON`, reference 3.4): feedback
/// can never name them afterwards, so the outstanding-data account lets them go at the next
/// feedback. libwebrtc keeps them for `kSendTimeHistoryWindow` = 60 s.
pub(crate) const OUTSTANDING_HORIZON: Duration = Duration::from_secs(2);

/// Where the congestion window acts on the sender.
///
/// Telemetry records it as the `sender.cwnd_mode` field (`"off"` | `"pushback"` | `"pacer"`;
/// docs/architecture.md, "The telemetry contract"), so the serde names are part of that contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CwndMode {
    /// No congestion window.
    Off,
    /// The window pushes back on the encoder's target rate (libwebrtc's default).
    Pushback,
    /// The window holds packets in the pacer (pushback disabled, as in AlphaRTC).
    Pacer,
}

/// The congestion-window settings (the `WebRTC-CongestionWindow` field trial).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CwndConfig {
    /// Where the window goes: to the encoder ([`CwndMode::Pushback`], libwebrtc's default), to
    /// the pacer ([`CwndMode::Pacer`], pushback disabled, as in AlphaRTC), or nowhere.
    pub mode: CwndMode,
    /// `QueueSize` (350 ms).
    pub queue_size: Duration,
    /// `MinBitrate` (30 kbit/s).
    pub min_bitrate_bps: u64,
    /// `DropFrame` (true): the encoder keeps its target and drops frames in proportion to the
    /// pushback; false: the encoder's target becomes the pushback target.
    pub drop_frame: bool,
}

impl Default for CwndConfig {
    fn default() -> Self {
        Self {
            mode: CwndMode::Pushback,
            queue_size: QUEUE_SIZE,
            min_bitrate_bps: MIN_PUSHBACK_BITRATE_BPS,
            drop_frame: true,
        }
    }
}

impl CwndConfig {
    /// The default settings with `mode`.
    pub fn with_mode(mode: CwndMode) -> Self {
        Self {
            mode,
            ..Self::default()
        }
    }
}

/// The window computation of `UpdateCongestionWindowSize`.
#[derive(Debug, Clone, Default)]
pub(crate) struct CongestionWindow {
    queue_size: Duration,
    feedback_max_rtts_ms: VecDeque<i64>,
    window_bytes: Option<u64>,
}

impl CongestionWindow {
    /// A window with `queue_size` added to the RTT.
    pub(crate) fn new(queue_size: Duration) -> Self {
        Self {
            queue_size,
            ..Self::default()
        }
    }

    /// Records one feedback's maximum feedback RTT (feedback time - send time over its received
    /// packets), rounded to ms as libwebrtc's `TimeDelta::ms()` does.
    pub(crate) fn on_feedback_max_rtt(&mut self, max_rtt: Duration) {
        let ms = (max_rtt.as_micros() as i64 + 500) / 1000;
        self.feedback_max_rtts_ms.push_back(ms);
        if self.feedback_max_rtts_ms.len() > FEEDBACK_RTT_WINDOW {
            self.feedback_max_rtts_ms.pop_front();
        }
    }

    /// Recomputes the window from the last loss-based target (bits per second); does nothing
    /// before the first RTT. Returns the window.
    pub(crate) fn update(&mut self, loss_based_target_bps: u64) -> Option<u64> {
        let min_rtt_ms = *self.feedback_max_rtts_ms.iter().min()?;
        let time_window_ms =
            u128::try_from(min_rtt_ms.max(0)).unwrap_or(0) + self.queue_size.as_millis();
        let data_window = u64::try_from(u128::from(loss_based_target_bps) * time_window_ms / 8000)
            .unwrap_or(u64::MAX);
        let window = match self.window_bytes {
            Some(previous) => (data_window.saturating_add(previous) / 2).max(MIN_CWND_BYTES),
            None => data_window.max(MIN_CWND_BYTES),
        };
        self.window_bytes = Some(window);
        Some(window)
    }

    /// The window, bytes, once computed.
    pub(crate) fn window_bytes(&self) -> Option<u64> {
        self.window_bytes
    }
}

/// `CongestionWindowPushbackController`.
#[derive(Debug, Clone)]
pub(crate) struct PushbackController {
    min_bitrate_bps: u64,
    ratio: f64,
}

impl PushbackController {
    /// A controller with the given floor and ratio 1.
    pub(crate) fn new(min_bitrate_bps: u64) -> Self {
        Self {
            min_bitrate_bps,
            ratio: 1.0,
        }
    }

    /// `UpdateTargetBitrate`: updates the ratio from the fill (outstanding / window) and returns
    /// the pushback target. Without a window (or an empty one) the target is returned as is.
    pub(crate) fn update_target(
        &mut self,
        target_bps: u64,
        outstanding: u64,
        window: Option<u64>,
    ) -> u64 {
        let Some(window) = window.filter(|&w| w > 0) else {
            return target_bps;
        };
        let fill = outstanding as f64 / window as f64;
        if fill > 1.5 {
            self.ratio *= 0.9;
        } else if fill > 1.0 {
            self.ratio *= 0.95;
        } else if fill < 0.1 {
            self.ratio = 1.0;
        } else {
            self.ratio = (self.ratio * 1.05).min(1.0);
        }
        let adjusted = (target_bps as f64 * self.ratio) as u64;
        if adjusted < self.min_bitrate_bps {
            target_bps.min(self.min_bitrate_bps)
        } else {
            adjusted
        }
    }

    /// The encoding-rate ratio.
    pub(crate) fn ratio(&self) -> f64 {
        self.ratio
    }
}

/// Bytes sent and not yet reported by transport feedback.
#[derive(Debug, Clone, Default)]
pub(crate) struct OutstandingData {
    packets: FxHashMap<(u32, u16), (u64, Instant)>,
    /// Send order, for expiry; entries already reported are skipped.
    order: VecDeque<((u32, u16), Instant)>,
    bytes: u64,
}

impl OutstandingData {
    /// A packet of `size` bytes on stream `ssrc` with RTP sequence number `seq` left at `at`.
    pub(crate) fn on_sent(&mut self, at: Instant, ssrc: u32, seq: u16, size: u64) {
        if let Some((old, _)) = self.packets.insert((ssrc, seq), (size, at)) {
            self.bytes -= old;
        }
        self.bytes += size;
        self.order.push_back(((ssrc, seq), at));
    }

    /// Feedback reported the packet (received or lost).
    pub(crate) fn on_reported(&mut self, ssrc: u32, seq: u16) {
        if let Some((size, _)) = self.packets.remove(&(ssrc, seq)) {
            self.bytes -= size;
        }
    }

    /// Forgets packets sent before `before`.
    pub(crate) fn expire(&mut self, before: Instant) {
        while let Some(&(key, at)) = self.order.front() {
            if at >= before {
                break;
            }
            self.order.pop_front();
            if self.packets.get(&key).is_some_and(|(_, sent)| *sent == at) {
                self.on_reported(key.0, key.1);
            }
        }
        if self.packets.is_empty() {
            self.order.clear();
        }
    }

    /// Outstanding bytes.
    pub(crate) fn bytes(&self) -> u64 {
        self.bytes
    }
}

/// What the channel says about the sender at one instant.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CwndSnapshot {
    /// The mode.
    pub mode: CwndMode,
    /// Outstanding bytes.
    pub outstanding_bytes: u64,
    /// The congestion window, bytes, once computed.
    pub window_bytes: Option<u64>,
    /// The pushback controller's encoding-rate ratio (1 without pushback).
    pub pushback_ratio: f64,
    /// The target the pushback rule was last applied to, bps.
    pub target_bps: u64,
    /// The pushback target, bps (the target itself without pushback).
    pub pushback_target_bps: u64,
    /// `(target - pushback) / target`: what the encoder drops frames by with `DropFrame`.
    pub cwnd_reduce_ratio: f64,
    /// Whether the pacer is congested (pacer mode only): outstanding >= window.
    pub congested: bool,
}

#[derive(Debug)]
struct State {
    config: CwndConfig,
    outstanding: OutstandingData,
    window: CongestionWindow,
    pushback: PushbackController,
    target_bps: u64,
    pushback_target_bps: u64,
    next_process: Option<Instant>,
}

/// The shared state between the pacer (sends), the estimator wrapper (feedback and process
/// ticks) and the application (encoder pushback, telemetry). Cloning shares it.
///
/// This is libwebrtc's congestion window (`goog_cc_network_control.cc`,
/// `UpdateCongestionWindowSize`, and `congestion_window_pushback_controller.cc`): the window is
/// (the minimum over the last 32 feedbacks of their maximum RTT + 350 ms) x the loss-based target,
/// averaged with the previous window and at least 3000 bytes; outstanding data is what the pacer
/// released and transport feedback has not yet reported. The [`CwndMode`] says where the window
/// acts: on the encoder (the pushback ratio of [`CwndSnapshot`], with [`frame_drop_interval`]),
/// or in the pacer, which holds media while outstanding data fills the window.
///
/// The pacer records what it releases ([`on_sent`](Self::on_sent); give it the channel with
/// [`HandoverAwarePacerBuilder::congestion_window`](crate::pacing::HandoverAwarePacerBuilder::congestion_window)).
/// A wrapper around the application's bandwidth estimator hands the channel every feedback's
/// reports ([`on_feedback`](Self::on_feedback)) and every process tick
/// ([`on_process`](Self::on_process)), since webrtc-rs boxes the estimator inside its
/// congestion-control interceptor.
#[derive(Debug, Clone)]
pub struct CwndChannel {
    shared: Arc<Mutex<State>>,
}

impl CwndChannel {
    /// A channel with `config`.
    pub fn new(config: CwndConfig) -> Self {
        Self {
            shared: Arc::new(Mutex::new(State {
                outstanding: OutstandingData::default(),
                window: CongestionWindow::new(config.queue_size),
                pushback: PushbackController::new(config.min_bitrate_bps),
                target_bps: 0,
                pushback_target_bps: 0,
                next_process: None,
                config,
            })),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.shared
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The configuration.
    pub fn config(&self) -> CwndConfig {
        self.lock().config
    }

    /// The pacer released an RTP packet (`UpdateOutstandingData` on `OnSentPacket`).
    pub fn on_sent(&self, at: Instant, ssrc: u32, seq: u16, size: u64) {
        let mut state = self.lock();
        if state.config.mode != CwndMode::Off {
            state.outstanding.on_sent(at, ssrc, seq, size);
        }
    }

    /// One transport feedback at `now`: its packets `(ssrc, rtp sequence number, send instant,
    /// arrived)` leave the outstanding data; the received ones give the feedback's maximum RTT;
    /// the pushback rule runs on the estimator's (loss-based) target `target_bps` with the
    /// previous window, then the window is recomputed from that target (the order of
    /// `OnTransportPacketsFeedback`).
    pub fn on_feedback(
        &self,
        now: Instant,
        packets: impl IntoIterator<Item = (u32, u16, Instant, bool)>,
        target_bps: u64,
    ) {
        let mut state = self.lock();
        if state.config.mode == CwndMode::Off {
            return;
        }
        let mut max_rtt: Option<Duration> = None;
        for (ssrc, seq, sent, arrived) in packets {
            state.outstanding.on_reported(ssrc, seq);
            if arrived {
                let rtt = now.saturating_duration_since(sent);
                max_rtt = Some(max_rtt.map_or(rtt, |m| m.max(rtt)));
            }
        }
        if let Some(before) = now.checked_sub(OUTSTANDING_HORIZON) {
            state.outstanding.expire(before);
        }
        state.apply_pushback(target_bps);
        if let Some(rtt) = max_rtt {
            state.window.on_feedback_max_rtt(rtt);
            state.window.update(target_bps);
        }
        if state.next_process.is_none() {
            state.next_process = Some(now + PROCESS_INTERVAL);
        }
    }

    /// A process tick at `now` (every 25 ms, goog_cc's process interval, once feedback has
    /// started): re-runs the pushback rule on `target_bps` if a tick is due.
    pub fn on_process(&self, now: Instant, target_bps: u64) {
        let mut state = self.lock();
        let Some(mut next) = state.next_process else {
            return;
        };
        if now < next {
            return;
        }
        while next <= now {
            next += PROCESS_INTERVAL;
        }
        state.next_process = Some(next);
        state.apply_pushback(target_bps);
    }

    /// When the next process tick is due.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.lock().next_process
    }

    /// Whether the pacer should hold media now: pacer mode, a window known, outstanding >= it.
    pub fn congested(&self) -> bool {
        self.lock().congested()
    }

    /// The current state.
    pub fn snapshot(&self) -> CwndSnapshot {
        let state = self.lock();
        let target = state.target_bps;
        let pushback = state.pushback_target_bps;
        CwndSnapshot {
            mode: state.config.mode,
            outstanding_bytes: state.outstanding.bytes(),
            window_bytes: state.window.window_bytes(),
            pushback_ratio: state.pushback.ratio(),
            target_bps: target,
            pushback_target_bps: pushback,
            cwnd_reduce_ratio: if target > 0 {
                target.saturating_sub(pushback) as f64 / target as f64
            } else {
                0.0
            },
            congested: state.congested(),
        }
    }
}

impl State {
    fn congested(&self) -> bool {
        self.config.mode == CwndMode::Pacer
            && self
                .window
                .window_bytes()
                .is_some_and(|w| self.outstanding.bytes() >= w)
    }

    /// `MaybeTriggerOnNetworkChanged`'s pushback step, with the result floored at the minimum
    /// bitrate.
    fn apply_pushback(&mut self, target_bps: u64) {
        self.target_bps = target_bps;
        self.pushback_target_bps = if self.config.mode == CwndMode::Pushback {
            self.pushback
                .update_target(
                    target_bps,
                    self.outstanding.bytes(),
                    self.window.window_bytes(),
                )
                .max(self.config.min_bitrate_bps.min(target_bps))
        } else {
            target_bps
        };
    }
}

/// Frames are never dropped more often than one in this many by pushback.
///
/// Inferred, not read in libwebrtc: its `VideoStreamEncoder` drops one frame in
/// `cwnd_frame_drop_interval_` derived from `cwnd_reduce_ratio`, but the exact derivation could
/// not be checked here. Without a floor, a ratio near 1 (the pushback target floored at 30 kbit/s
/// under a Mbit/s estimate) drops every frame, and a video-only call, which has no audio to
/// elicit feedback, never learns that its outstanding data was lost: the window stays full
/// forever. Keeping every other frame lets feedback return.
pub(crate) const MIN_FRAME_DROP_INTERVAL: u32 = 2;

/// The frame-drop interval for a `cwnd_reduce_ratio`: one frame in
/// `max(2, round(1 / ratio))` is dropped; `None` (no drops) for a ratio of zero.
pub fn frame_drop_interval(cwnd_reduce_ratio: f64) -> Option<u32> {
    (cwnd_reduce_ratio > 0.0 && cwnd_reduce_ratio.is_finite()).then(|| {
        (1.0 / cwnd_reduce_ratio)
            .round()
            .clamp(f64::from(MIN_FRAME_DROP_INTERVAL), f64::from(u32::MAX)) as u32
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_is_min_max_rtt_plus_350_ms_at_the_target_averaged_and_floored() {
        let mut w = CongestionWindow::new(QUEUE_SIZE);
        assert_eq!(None, w.update(1_000_000), "no RTT yet");
        w.on_feedback_max_rtt(Duration::from_millis(150));
        // (150 + 350) ms x 1 Mbit/s = 62 500 bytes, no previous window.
        assert_eq!(Some(62_500), w.update(1_000_000));
        w.on_feedback_max_rtt(Duration::from_millis(250));
        // min(150, 250) = 150 ms; 500 ms x 2 Mbit/s = 125 000; averaged with 62 500.
        assert_eq!(Some(93_750), w.update(2_000_000));
        // A tiny target: (3 750 + 93 750) / 2 = 48 750, then (1 875 + 48 750)/2 ...
        assert_eq!(Some(48_750), w.update(60_000));
        for _ in 0..20 {
            w.update(10_000);
        }
        assert_eq!(
            Some(MIN_CWND_BYTES),
            w.window_bytes(),
            "floored at 2 x 1500"
        );
    }

    #[test]
    fn the_rtt_window_keeps_the_last_32_feedbacks() {
        let mut w = CongestionWindow::new(QUEUE_SIZE);
        w.on_feedback_max_rtt(Duration::from_millis(10));
        for _ in 0..32 {
            w.on_feedback_max_rtt(Duration::from_millis(50));
        }
        // The 10-ms sample has left the window: (50 + 350) ms x 8 Mbit/s = 400 000 bytes.
        assert_eq!(Some(400_000), w.update(8_000_000));
    }

    #[test]
    fn the_pushback_ratio_steps_by_fill() {
        let mut p = PushbackController::new(MIN_PUSHBACK_BITRATE_BPS);
        let w = Some(10_000);
        assert_eq!(
            1_000_000,
            p.update_target(1_000_000, 20_000, None),
            "no window"
        );
        let near = |expected: u64, got: u64| assert!(expected.abs_diff(got) <= 1, "{got}");
        // fill 1.6 -> x0.9
        near(900_000, p.update_target(1_000_000, 16_000, w));
        // fill 1.2 -> x0.95
        near(855_000, p.update_target(1_000_000, 12_000, w));
        // fill 0.5 -> x1.05
        near(897_750, p.update_target(1_000_000, 5_000, w));
        // fill exactly 1 -> x1.05, capped at 1
        for _ in 0..5 {
            p.update_target(1_000_000, 10_000, w);
        }
        assert_eq!(1.0, p.ratio());
        p.update_target(1_000_000, 16_000, w);
        // fill < 0.1 -> reset
        assert_eq!(1_000_000, p.update_target(1_000_000, 999, w));
        assert_eq!(1.0, p.ratio());
    }

    #[test]
    fn the_pushback_target_is_floored_at_min_bitrate_unless_the_estimate_is_lower() {
        let mut p = PushbackController::new(MIN_PUSHBACK_BITRATE_BPS);
        for _ in 0..60 {
            p.update_target(100_000, 100_000, Some(10_000));
        }
        assert!(p.ratio() < 0.01);
        assert_eq!(30_000, p.update_target(100_000, 100_000, Some(10_000)));
        assert_eq!(20_000, p.update_target(20_000, 100_000, Some(10_000)));
    }

    #[test]
    fn outstanding_data_grows_on_sends_and_shrinks_on_reports_and_expiry() {
        let t0 = Instant::now();
        let mut o = OutstandingData::default();
        o.on_sent(t0, 1, 10, 1000);
        o.on_sent(t0 + Duration::from_millis(10), 1, 11, 500);
        o.on_sent(t0 + Duration::from_millis(20), 2, 11, 200);
        assert_eq!(1700, o.bytes());
        o.on_reported(1, 11);
        o.on_reported(1, 11);
        assert_eq!(1200, o.bytes());
        o.expire(t0 + Duration::from_millis(15));
        assert_eq!(200, o.bytes());
    }

    #[test]
    fn the_channel_congests_the_pacer_at_the_window_and_pushback_follows_the_fill() {
        let t0 = Instant::now();
        let ch = CwndChannel::new(CwndConfig::with_mode(CwndMode::Pacer));
        ch.on_sent(t0, 1, 0, 1000);
        assert!(!ch.congested(), "no window before feedback");
        // Feedback 100 ms later: max RTT 100 ms, window (100 + 350) ms x 80 kbit/s = 4500 bytes.
        ch.on_feedback(t0 + Duration::from_millis(100), [(1, 0, t0, true)], 80_000);
        assert_eq!(Some(4500), ch.snapshot().window_bytes);
        assert_eq!(0, ch.snapshot().outstanding_bytes);
        for seq in 1..=4 {
            ch.on_sent(t0 + Duration::from_millis(110), 1, seq, 1000);
            assert!(!ch.congested());
        }
        ch.on_sent(t0 + Duration::from_millis(110), 1, 5, 500);
        assert!(ch.congested(), "4500 outstanding >= 4500");
        assert_eq!(
            1.0,
            ch.snapshot().pushback_ratio,
            "no pushback in pacer mode"
        );

        let pb = CwndChannel::new(CwndConfig::default());
        pb.on_feedback(t0 + Duration::from_millis(100), [(1, 0, t0, true)], 80_000);
        for seq in 1..=8 {
            pb.on_sent(t0 + Duration::from_millis(110), 1, seq, 1000);
        }
        assert!(!pb.congested(), "pushback never congests the pacer");
        // fill 8000 / 4500 > 1.5: x0.9 at each 25-ms tick.
        assert_eq!(Some(t0 + Duration::from_millis(125)), pb.poll_timeout());
        pb.on_process(t0 + Duration::from_millis(125), 80_000);
        pb.on_process(t0 + Duration::from_millis(130), 80_000);
        pb.on_process(t0 + Duration::from_millis(150), 80_000);
        let s = pb.snapshot();
        assert!((s.pushback_ratio - 0.81).abs() < 1e-12, "{s:?}");
        assert!(s.pushback_target_bps.abs_diff(64_800) <= 1);
        assert!((s.cwnd_reduce_ratio - 0.19).abs() < 1e-4);
    }

    #[test]
    fn frames_are_dropped_one_in_round_one_over_the_ratio_but_never_every_frame() {
        assert_eq!(None, frame_drop_interval(0.0));
        assert_eq!(Some(10), frame_drop_interval(0.1));
        assert_eq!(Some(3), frame_drop_interval(0.3));
        assert_eq!(Some(2), frame_drop_interval(0.5));
        assert_eq!(Some(2), frame_drop_interval(0.9));
    }
}

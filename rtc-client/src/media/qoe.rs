//! The QoE meter: WebRTC's definitions of freezes, frame rate, bitrate, delay and loss
//! (docs/architecture.md, "The telemetry contract"; WebRTC's freeze rule as libwebrtc's
//! `video/video_stream_buffer_controller.cc` and the `getStats()` spec define it).
//!
//! The meter is fed every [`RenderedFrame`] in render order ([`QoeMeter::on_rendered`]) and the
//! cumulative packet counts of the sender and receiver ([`QoeMeter::on_packet_counts`]). It
//! reports twice over:
//!
//! - per interval: [`QoeMeter::take_interval`] returns what happened since the previous call and
//!   starts a new interval (the telemetry writes one `qoe` record per decision interval). The
//!   freeze detector's 30-gap history is *not* reset: it is continuous across intervals, so a
//!   freeze is judged the same wherever an interval boundary falls.
//! - for the whole call: [`QoeMeter::total`], which `take_interval` does not reset.
//!
//! Each gap between two rendered frames belongs to the interval of the frame that ends it. An
//! interval's video duration is the sum of its gaps, less pauses, so durations (and freezes,
//! frames, bytes) add up over intervals; for the whole call it is the last render minus the
//! first, less pauses, as in libwebrtc. The 3 s minimum libwebrtc applies before reporting
//! freezes per minute is not applied (a short interval reports its own rate); a zero duration
//! gives zero rates.
//!
//! Besides WebRTC's freezes the meter counts *stalls*: gaps above [`STALL_FACTOR`] times the
//! mean frame interval that the freeze rule does not count (so no gap is both). They are this
//! project's measure, not libwebrtc's: the hitches a viewer notices (at 30 fps, gaps of roughly
//! 70 to 190 ms) that stay under a freeze's `mean + 150 ms`, where a policy that trades freezes
//! for delay could hide its cost. The mean frame interval is that of the frames' *capture*
//! instants over the same 30 gaps, not of their render instants: after a freeze the frames that
//! waited render in a burst, a few milliseconds apart, and a render mean that collapsed with them
//! would count the next ordinary frame intervals as stalls (on lagos-trace that was a quarter to
//! half of all stalls, each a gap of one frame interval). Stalls need the same 5 gaps and skip
//! pauses as freezes do.

use super::histogram::DelayHistogram;
use super::receiver::RenderedFrame;
use crate::link::Time;
use pacer::telemetry::QoeRecord;
use std::collections::VecDeque;
use std::time::Duration;

/// Gaps in the moving mean of the freeze rule: libwebrtc's
/// `kAvgInterframeDelaysWindowSizeFrames` (reference section 1.10).
pub const FREEZE_WINDOW_GAPS: usize = 30;
/// Gaps needed before a freeze can be detected: libwebrtc's `kMinFrameSamplesToDetectFreeze`
/// (reference section 1.10).
pub const FREEZE_MIN_SAMPLES: usize = 5;
/// The least excess over the mean gap that is a freeze: libwebrtc's `kMinIncreaseForFreezeMs`
/// (reference section 1.10).
pub const FREEZE_MIN_INCREASE: Duration = Duration::from_millis(150);

/// How many times the mean gap a gap must exceed to be a stall when it is not a freeze (see the
/// module documentation).
pub const STALL_FACTOR: u64 = 2;

const NANOS_PER_MS: f64 = 1e6;

/// One freeze: the picture that stayed on screen and for how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Freeze {
    /// When the last frame before the freeze was rendered.
    pub from: Time,
    /// The gap to the next rendered frame.
    pub duration: Duration,
}

/// What the meter measured over an interval or the whole call.
#[derive(Debug, Clone, PartialEq)]
pub struct QoeReport {
    /// Video duration: the gaps between rendered frames counted here, pauses excluded.
    pub video_duration: Duration,
    /// Frames rendered.
    pub frames_rendered: u64,
    /// Bytes of the rendered frames.
    pub bytes_rendered: u64,
    /// Freezes (a rendered-frame gap >= max(3 x mean gap, mean gap + 150 ms)).
    pub freeze_count: u64,
    /// Sum of the freeze gaps.
    pub total_freeze: Duration,
    /// Every freeze, in render order (for timelines; a few a minute on a bad link, so the list
    /// stays small however long the call).
    pub freezes: Vec<Freeze>,
    /// Stalls: gaps above [`STALL_FACTOR`] x the mean gap that are not freezes.
    pub stall_count: u64,
    /// Pauses (gaps after [`QoeMeter::on_stream_inactive`]), excluded from everything else.
    pub pause_count: u64,
    /// Capture-to-render delays of the rendered frames (to 0.1 ms below 1 s).
    pub delays: DelayHistogram,
    /// RTP packets the sender sent.
    pub packets_sent: u64,
    /// Distinct RTP packets the receiver got (after retransmission).
    pub packets_received: u64,
}

impl QoeReport {
    /// Video bitrate, kbit/s: rendered bytes x 8 / video duration (0 for a zero duration).
    pub fn video_bitrate_kbps(&self) -> f64 {
        per_duration(self.bytes_rendered as f64 * 8.0, self.video_duration) / 1_000.0
    }

    /// Freezes per minute: freezes x 60 000 / video duration in ms (reference section 1.10).
    pub fn freezes_per_min(&self) -> f64 {
        per_duration(self.freeze_count as f64, self.video_duration) * 60.0
    }

    /// Seconds frozen per minute of video: the sum of the freeze gaps over the video duration,
    /// the time-weighted companion of [`QoeReport::freezes_per_min`] (ten 200-ms freezes and one
    /// 2-s freeze weigh the same here).
    pub fn frozen_s_per_min(&self) -> f64 {
        per_duration(self.total_freeze.as_secs_f64(), self.video_duration) * 60.0
    }

    /// Stalls per minute: stalls x 60 000 / video duration in ms, as freezes per minute.
    pub fn stalls_per_min(&self) -> f64 {
        per_duration(self.stall_count as f64, self.video_duration) * 60.0
    }

    /// Rendered frames per second of video duration.
    pub fn frame_rate(&self) -> f64 {
        per_duration(self.frames_rendered as f64, self.video_duration)
    }

    /// The `p`-th percentile (0 to 100) of the capture-to-render delays, nearest rank: the
    /// smallest delay with at least `p` percent of the delays at or below it, to the
    /// histogram's resolution ([`DelayHistogram::percentile`]). `None` without frames.
    pub fn delay_percentile(&self, p: f64) -> Option<Duration> {
        self.delays.percentile(p)
    }

    /// Packets never received after retransmission, percent of packets sent (0 when nothing
    /// was sent; never negative, since packets still in flight can make the receiver's count
    /// lag the sender's the other way).
    pub fn packet_loss_pct(&self) -> f64 {
        if self.packets_sent == 0 {
            return 0.0;
        }
        let lost = self.packets_sent.saturating_sub(self.packets_received);
        lost as f64 * 100.0 / self.packets_sent as f64
    }

    /// The telemetry's `qoe` record (docs/architecture.md, "The telemetry contract"); delays are 0 without frames.
    pub fn to_record(&self) -> QoeRecord {
        let ms = |p| {
            self.delay_percentile(p)
                .map_or(0.0, |d| d.as_nanos() as f64 / NANOS_PER_MS)
        };
        QoeRecord {
            video_bitrate_kbps: self.video_bitrate_kbps(),
            freeze_count: self.freeze_count,
            freezes_per_min: self.freezes_per_min(),
            total_freeze_ms: u64::try_from(self.total_freeze.as_millis()).unwrap_or(u64::MAX),
            frame_rate: self.frame_rate(),
            e2e_delay_p50_ms: ms(50.0),
            e2e_delay_p95_ms: ms(95.0),
            packet_loss_pct: self.packet_loss_pct(),
            frames_rendered: self.frames_rendered,
            frozen_s_per_min: self.frozen_s_per_min(),
            stall_count: self.stall_count,
            stalls_per_min: self.stalls_per_min(),
        }
    }
}

impl From<&QoeReport> for QoeRecord {
    fn from(report: &QoeReport) -> Self {
        report.to_record()
    }
}

/// `amount` per second of `duration`, 0 for a zero duration.
fn per_duration(amount: f64, duration: Duration) -> f64 {
    if duration.is_zero() {
        0.0
    } else {
        amount / duration.as_secs_f64()
    }
}

/// Running sums behind a [`QoeReport`].
#[derive(Debug, Clone, Default)]
struct Sums {
    gaps_ns: u64,
    pauses_ns: u64,
    frames: u64,
    bytes: u64,
    freezes: u64,
    freeze_ns: u64,
    freeze_list: Vec<Freeze>,
    stalls: u64,
    pauses: u64,
    delays: DelayHistogram,
    sent: u64,
    received: u64,
}

impl Sums {
    fn report(&self) -> QoeReport {
        QoeReport {
            video_duration: Duration::from_nanos(self.gaps_ns.saturating_sub(self.pauses_ns)),
            frames_rendered: self.frames,
            bytes_rendered: self.bytes,
            freeze_count: self.freezes,
            total_freeze: Duration::from_nanos(self.freeze_ns),
            freezes: self.freeze_list.clone(),
            stall_count: self.stalls,
            pause_count: self.pauses,
            delays: self.delays.clone(),
            packets_sent: self.sent,
            packets_received: self.received,
        }
    }
}

/// Appends `value` to a window of at most [`FREEZE_WINDOW_GAPS`] values kept with their sum.
fn push_bounded(window: &mut VecDeque<u64>, sum: &mut u64, value: u64) {
    window.push_back(value);
    *sum = sum.saturating_add(value);
    if window.len() > FREEZE_WINDOW_GAPS
        && let Some(old) = window.pop_front()
    {
        *sum = sum.saturating_sub(old);
    }
}

/// What the meter made of one gap between rendered frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Gap {
    /// Neither a freeze nor a stall (or not judged: a pause, or fewer than 5 gaps seen).
    Normal,
    /// A stall: above [`STALL_FACTOR`] x the mean capture interval, below the freeze threshold.
    Stall,
    /// A freeze by WebRTC's rule.
    Freeze,
}

/// The QoE meter (see the module documentation).
///
/// Memory is bounded: the delays go into a [`DelayHistogram`] (at most about 24 000 bins
/// however long the call) and the freeze rule keeps 30 gaps.
#[derive(Debug, Clone, Default)]
pub struct QoeMeter {
    last_render: Option<Time>,
    /// The last [`FREEZE_WINDOW_GAPS`] gaps, ns, and their sum.
    gaps: VecDeque<u64>,
    gaps_sum: u64,
    /// The capture intervals of the same frames, ns, and their sum: the stall rule's mean.
    capture_gaps: VecDeque<u64>,
    capture_gaps_sum: u64,
    last_capture: Option<Time>,
    /// Whether the next gap is a pause.
    paused: bool,
    /// The cumulative packet counts last handed in.
    sent_mark: u64,
    received_mark: u64,
    interval: Sums,
    total: Sums,
}

impl QoeMeter {
    /// A meter that has seen nothing.
    pub fn new() -> Self {
        Self::default()
    }

    /// Marks the stream inactive (e.g. the sender paused video on purpose): the next gap is a
    /// pause, excluded from the freeze rule, its window and the video duration, as libwebrtc's
    /// `OnStreamInactive` (reference section 1.10).
    pub fn on_stream_inactive(&mut self) {
        self.paused = true;
    }

    /// Counts a rendered frame; frames must come in render order (an earlier render instant than
    /// the previous frame's is taken as a zero gap).
    pub fn on_rendered(&mut self, frame: &RenderedFrame) {
        let delay = frame.rendered.saturating_duration_since(frame.capture);
        let mut verdict = Gap::Normal;
        let mut gap_ns = None;
        let mut pause = false;
        let previous = self.last_render;
        if let Some(last) = previous {
            let gap = frame.rendered.as_nanos().saturating_sub(last.as_nanos());
            let capture_gap = self.last_capture.map_or(gap, |c| {
                frame.capture.as_nanos().saturating_sub(c.as_nanos())
            });
            gap_ns = Some(gap);
            if self.paused {
                pause = true;
            } else {
                verdict = self.judge(gap, capture_gap);
            }
        }
        self.paused = false;
        self.last_capture = Some(
            self.last_capture
                .map_or(frame.capture, |t| t.max(frame.capture)),
        );
        self.last_render = Some(
            self.last_render
                .map_or(frame.rendered, |t| t.max(frame.rendered)),
        );
        for sums in [&mut self.interval, &mut self.total] {
            sums.frames += 1;
            sums.bytes += u64::from(frame.bytes);
            sums.delays.record(delay);
            if let Some(gap) = gap_ns {
                sums.gaps_ns = sums.gaps_ns.saturating_add(gap);
                if pause {
                    sums.pauses += 1;
                    sums.pauses_ns = sums.pauses_ns.saturating_add(gap);
                }
            }
            match (verdict, gap_ns, previous) {
                (Gap::Freeze, Some(gap), Some(from)) => {
                    sums.freezes += 1;
                    sums.freeze_ns = sums.freeze_ns.saturating_add(gap);
                    sums.freeze_list.push(Freeze {
                        from,
                        duration: Duration::from_nanos(gap),
                    });
                }
                (Gap::Stall, ..) => sums.stalls += 1,
                _ => {}
            }
        }
    }

    /// Adds `gap` (and the two frames' capture interval) to the window and judges it: a freeze
    /// by WebRTC's rule, else a stall when it exceeds [`STALL_FACTOR`] x the mean capture
    /// interval. The window's means include the current gap and are rounded down, as
    /// libwebrtc's `GetAverageRoundedDown` (in ns here).
    fn judge(&mut self, gap: u64, capture_gap: u64) -> Gap {
        push_bounded(&mut self.gaps, &mut self.gaps_sum, gap);
        push_bounded(
            &mut self.capture_gaps,
            &mut self.capture_gaps_sum,
            capture_gap,
        );
        if self.gaps.len() < FREEZE_MIN_SAMPLES {
            return Gap::Normal;
        }
        let mean = self.gaps_sum / self.gaps.len() as u64;
        let frame_interval = self.capture_gaps_sum / self.capture_gaps.len() as u64;
        let increase = FREEZE_MIN_INCREASE.as_nanos() as u64;
        if gap >= mean.saturating_mul(3).max(mean.saturating_add(increase)) {
            Gap::Freeze
        } else if gap > frame_interval.saturating_mul(STALL_FACTOR) {
            Gap::Stall
        } else {
            Gap::Normal
        }
    }

    /// Hands in the cumulative counts of RTP packets the sender sent and of distinct packets the
    /// receiver got (e.g. [`super::receiver::ReceiverStats::packets_received`]); the increase
    /// since the previous call is counted in the current interval. Counts that go backwards
    /// count as no increase.
    pub fn on_packet_counts(&mut self, sent_total: u64, received_total: u64) {
        let sent = sent_total.saturating_sub(self.sent_mark);
        let received = received_total.saturating_sub(self.received_mark);
        self.sent_mark = self.sent_mark.max(sent_total);
        self.received_mark = self.received_mark.max(received_total);
        for sums in [&mut self.interval, &mut self.total] {
            sums.sent += sent;
            sums.received += received;
        }
    }

    /// What happened since the previous call (or the start), and starts a new interval; the
    /// freeze detector's history carries over.
    pub fn take_interval(&mut self) -> QoeReport {
        std::mem::take(&mut self.interval).report()
    }

    /// What happened over the whole call so far.
    pub fn total(&self) -> QoeReport {
        self.total.report()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(rendered_ms: u64, delay_ms: u64) -> RenderedFrame {
        RenderedFrame {
            frame_id: 0,
            capture: Time::from_millis(rendered_ms.saturating_sub(delay_ms)),
            rendered: Time::from_millis(rendered_ms),
            bytes: 1_000,
            key_frame: false,
        }
    }

    fn frame_at(capture_ms: u64, rendered_ms: u64) -> RenderedFrame {
        RenderedFrame {
            capture: Time::from_millis(capture_ms),
            ..frame(rendered_ms, 0)
        }
    }

    /// Renders frames at the given instants (ms) with a 50-ms delay each.
    fn meter(renders: &[u64]) -> QoeMeter {
        let mut m = QoeMeter::new();
        for &t in renders {
            m.on_rendered(&frame(t, 50));
        }
        m
    }

    /// `n` frames 33 ms apart from `start`.
    fn steady(start: u64, n: u64) -> Vec<u64> {
        (0..n).map(|i| start + i * 33).collect()
    }

    #[test]
    fn a_300_ms_gap_after_steady_30_fps_is_a_freeze() {
        let mut renders = steady(0, 31); // 30 gaps of 33 ms, last render at 990
        renders.push(1_290);
        let total = meter(&renders).total();
        // Mean with the current gap: (29 x 33 + 300) / 30 = 41.9 ms; threshold 191.9 ms.
        assert_eq!(total.freeze_count, 1);
        assert_eq!(total.total_freeze, Duration::from_millis(300));
        assert_eq!(total.video_duration, Duration::from_millis(1_290));
    }

    #[test]
    fn a_100_ms_gap_after_steady_30_fps_is_a_stall_and_not_a_freeze() {
        let mut renders = steady(0, 31); // 30 gaps of 33 ms, last render at 990
        renders.push(1_090);
        // Mean with the current gap: (29 x 33 + 100) / 30 = 35.2 ms: 100 ms is above twice that
        // (70.5) and below the freeze threshold max(105.7, 185.2).
        let total = meter(&renders).total();
        assert_eq!((total.freeze_count, total.stall_count), (0, 1));
        assert_eq!(total.total_freeze, Duration::ZERO);
        assert!((total.stalls_per_min() - 60_000.0 / 1_090.0).abs() < 1e-9);
        let record = total.to_record();
        assert_eq!(record.stall_count, 1);
        assert!((record.stalls_per_min - 60_000.0 / 1_090.0).abs() < 1e-9);
        assert_eq!(record.frozen_s_per_min, 0.0);
    }

    #[test]
    fn ordinary_frame_intervals_after_a_burst_that_ends_a_freeze_are_not_stalls() {
        // 30 fps, then a 600-ms freeze after which 18 frames that waited render at one instant
        // (as a receiver shows them once the repair arrives), then 30 fps again. The render mean
        // collapses to about 1 ms after the burst; the capture mean stays at 33 ms.
        let mut m = QoeMeter::new();
        let mut capture = 0;
        for i in 0..31 {
            m.on_rendered(&frame_at(capture, i * 33 + 50));
            capture += 33;
        }
        let resume = 30 * 33 + 50 + 600;
        for _ in 0..18 {
            m.on_rendered(&frame_at(capture, resume));
            capture += 33;
        }
        for i in 1..=40 {
            m.on_rendered(&frame_at(capture, resume + i * 33));
            capture += 33;
        }
        let total = m.total();
        assert_eq!((total.freeze_count, total.stall_count), (1, 0));
        // Control: a 100-ms gap at that point still is one.
        m.on_rendered(&frame_at(capture, resume + 40 * 33 + 100));
        assert_eq!(m.total().stall_count, 1);
    }

    #[test]
    fn a_60_ms_gap_after_steady_30_fps_is_neither_a_stall_nor_a_freeze() {
        // Mean (29 x 33 + 60) / 30 = 33.9 ms: twice that is 67.8 ms, above the gap.
        let mut renders = steady(0, 31);
        renders.push(1_050);
        let total = meter(&renders).total();
        assert_eq!((total.freeze_count, total.stall_count), (0, 0));
    }

    #[test]
    fn a_freeze_is_not_also_counted_as_a_stall() {
        // The 300-ms gap is above twice the mean too, but it is a freeze, and only that.
        let mut renders = steady(0, 31);
        renders.push(1_290);
        let total = meter(&renders).total();
        assert_eq!((total.freeze_count, total.stall_count), (1, 0));
        assert_eq!(total.to_record().stalls_per_min, 0.0);
    }

    #[test]
    fn total_freeze_time_sums_the_freezes_and_is_reported_per_minute_of_video() {
        let mut renders = steady(0, 31);
        renders.push(1_290); // a 300-ms freeze
        renders.extend(steady(1_323, 30)); // 30 gaps of 33 ms: the 300 leaves the window
        renders.push(2_280 + 500); // mean (29 x 33 + 500) / 30 = 48.6 ms: a 500-ms freeze
        renders.push(2_780 + 150); // mean (28 x 33 + 650) / 30 = 52.5 ms: 150 ms is a stall
        let total = meter(&renders).total();
        assert_eq!(total.freeze_count, 2);
        assert_eq!(total.stall_count, 1);
        assert_eq!(total.total_freeze, Duration::from_millis(800));
        assert_eq!(
            total.freezes,
            [
                Freeze {
                    from: Time::from_millis(990),
                    duration: Duration::from_millis(300)
                },
                Freeze {
                    from: Time::from_millis(2_280),
                    duration: Duration::from_millis(500)
                }
            ]
        );
        assert_eq!(total.video_duration, Duration::from_millis(2_930));
        assert!((total.frozen_s_per_min() - 0.8 * 60.0 / 2.93).abs() < 1e-9);
        let record = total.to_record();
        assert_eq!(record.total_freeze_ms, 800);
        assert!((record.frozen_s_per_min - 0.8 * 60.0 / 2.93).abs() < 1e-9);
        assert!((record.stalls_per_min - 60.0 / 2.93).abs() < 1e-9);
    }

    #[test]
    fn a_120_ms_gap_after_a_33_ms_mean_is_not_a_freeze_because_it_is_below_mean_plus_150() {
        let mut renders = steady(0, 31);
        renders.push(990 + 120);
        assert_eq!(meter(&renders).total().freeze_count, 0);
    }

    #[test]
    fn the_rule_needs_5_gaps_and_the_mean_includes_the_current_gap() {
        // 3 gaps of 33 ms then a 1 s gap: only 4 samples, not judged.
        assert_eq!(meter(&[0, 33, 66, 99, 1_099]).total().freeze_count, 0);
        // 4 gaps of 33 ms then 200 ms: mean (132 + 200) / 5 = 66.4 ms, threshold 216.4: no
        // freeze (it would be one against the 33-ms mean without the current gap).
        assert_eq!(meter(&[0, 33, 66, 99, 132, 332]).total().freeze_count, 0);
        // 4 gaps of 33 ms then 240 ms: mean 74.4 ms, threshold 224.4: a freeze.
        let total = meter(&[0, 33, 66, 99, 132, 372]).total();
        assert_eq!(total.freeze_count, 1);
        assert_eq!(total.total_freeze, Duration::from_millis(240));
    }

    #[test]
    fn the_threshold_is_3_times_the_mean_when_that_is_larger() {
        // 100-ms gaps: threshold max(300, 250) with the current gap in the mean.
        // 4 x 100 + 349: mean 149.8, threshold 449.4 -> no; 4 x 100 + 600: mean 200, 600 -> yes.
        assert_eq!(meter(&[0, 100, 200, 300, 400, 749]).total().freeze_count, 0);
        assert_eq!(
            meter(&[0, 100, 200, 300, 400, 1_000]).total().freeze_count,
            1
        );
    }

    #[test]
    fn freezes_per_minute_is_freezes_times_60000_over_the_video_duration() {
        let mut renders = steady(0, 31);
        renders.push(1_290);
        renders.extend(steady(1_323, 30)); // last render 1_323 + 29 x 33 = 2_280
        let total = meter(&renders).total();
        assert_eq!(total.video_duration, Duration::from_millis(2_280));
        assert_eq!(total.freeze_count, 1);
        assert!((total.freezes_per_min() - 60_000.0 / 2_280.0).abs() < 1e-9);
        assert!((total.frame_rate() - 62.0 / 2.28).abs() < 1e-9);
        // 62 frames x 1000 bytes x 8 bits / 2.28 s.
        assert!((total.video_bitrate_kbps() - 62.0 * 8.0 / 2.28).abs() < 1e-9);
    }

    #[test]
    fn delay_percentiles_are_nearest_rank_over_frames() {
        let mut m = QoeMeter::new();
        for (i, delay) in (1..=20u64).rev().enumerate() {
            m.on_rendered(&frame(1_000 + i as u64 * 33, delay * 10));
        }
        let total = m.total();
        assert_eq!(
            total.delay_percentile(50.0),
            Some(Duration::from_millis(100))
        );
        assert_eq!(
            total.delay_percentile(95.0),
            Some(Duration::from_millis(190))
        );
        let record = total.to_record();
        assert_eq!(record.e2e_delay_p50_ms, 100.0);
        assert_eq!(record.e2e_delay_p95_ms, 190.0);
        assert_eq!(record.frames_rendered, 20);
        assert_eq!(QoeMeter::new().total().delay_percentile(50.0), None);
    }

    #[test]
    fn intervals_split_the_call_and_keep_the_freeze_history_continuous() {
        let mut m = QoeMeter::new();
        for t in steady(0, 31) {
            m.on_rendered(&frame(t, 50));
        }
        m.on_packet_counts(100, 98);
        let first = m.take_interval();
        assert_eq!(first.frames_rendered, 31);
        assert_eq!(first.video_duration, Duration::from_millis(990));
        assert!((first.packet_loss_pct() - 2.0).abs() < 1e-12);
        // The freeze is judged against the history of the previous interval.
        m.on_rendered(&frame(1_290, 50));
        m.on_packet_counts(150, 148);
        let second = m.take_interval();
        assert_eq!(second.frames_rendered, 1);
        assert_eq!(second.freeze_count, 1);
        assert!(first.freezes.is_empty());
        assert_eq!(
            second.freezes,
            [Freeze {
                from: Time::from_millis(990),
                duration: Duration::from_millis(300)
            }]
        );
        assert_eq!(second.video_duration, Duration::from_millis(300));
        assert_eq!(second.packets_sent, 50);
        assert_eq!(second.packet_loss_pct(), 0.0);
        let record = QoeRecord::from(&second);
        assert_eq!(record.freeze_count, 1);
        assert_eq!(record.total_freeze_ms, 300);
        assert!((record.freezes_per_min - 200.0).abs() < 1e-9);
        assert!((record.frame_rate - 1.0 / 0.3).abs() < 1e-9);
        let total = m.total();
        assert_eq!(total.freeze_count, 1);
        assert_eq!(total.video_duration, Duration::from_millis(1_290));
        assert!((total.packet_loss_pct() - 2.0 / 1.5).abs() < 1e-12);
        assert_eq!(m.take_interval().frames_rendered, 0);
    }

    #[test]
    fn a_gap_after_the_stream_went_inactive_is_a_pause_not_a_freeze() {
        let mut m = meter(&steady(0, 31));
        m.on_stream_inactive();
        m.on_rendered(&frame(10_990, 50));
        let total = m.total();
        assert_eq!((total.freeze_count, total.stall_count), (0, 0));
        assert_eq!(total.pause_count, 1);
        assert_eq!(total.video_duration, Duration::from_millis(990));
    }

    #[test]
    fn an_empty_meter_reports_zeros() {
        let record = QoeMeter::new().total().to_record();
        assert_eq!(record, QoeRecord::default());
    }
}

//! The playout raise on the wire: frames captured around a predicted handover ask the receiver
//! for a longer minimum playout delay, so that a packet lost at the boundary is repaired before
//! its frame is due (docs/architecture.md, "Handover-timed actions", the playout raise).
//!
//! - [`PlayoutDelayStamper`] writes the playout-delay RTP header extension
//!   (`http://www.webrtc.org/experiments/rtp-hdrext/playout-delay`, libwebrtc
//!   `docs/native-code/rtp-hdrext/playout-delay/README.md`) on every packet of a raised frame of
//!   a stream that negotiated it. A receiver that honours it (libwebrtc's
//!   `VideoReceiveStream2::UpdatePlayoutDelays`, so every Chromium) renders the frame no earlier
//!   than its expected completion plus the minimum.
//! - [`raise_at`] is the raise a frame captured at an instant gets: the full amount inside a
//!   window of [`Action::Playout`](crate::actions::Action::Playout), ramping up to it at
//!   [`RAMP_UP_SLOPE`] and down from it at [`RAMP_DOWN_SLOPE`].
//! - [`raise_amount`] is how much: one repair round as this sender measures it, plus the hold.

mod follow;
mod stamp;
mod weighed_floor;

pub use follow::FREEZE_SLACK;
pub use stamp::{PlayoutDelayStamper, PlayoutStamperHandle, PlayoutStats, STAMPER_SLOT};
pub use weighed_floor::MIN_SPAN as WEIGHED_FLOOR_MIN_SPAN;

use std::time::Duration;

/// The extension's URI (libwebrtc `RtpExtension::kPlayoutDelayUri`).
pub const PLAYOUT_DELAY_URI: &str = "http://www.webrtc.org/experiments/rtp-hdrext/playout-delay";

/// The extension's unit: both delays are whole multiples of 10 ms (libwebrtc
/// `PlayoutDelayLimits::kGranularity`).
pub const UNIT: Duration = Duration::from_millis(10);

/// The maximum playout delay every stamped packet carries: libwebrtc's default upper bound,
/// `kMaxVideoDelay` = 10 s (`modules/video_coding/timing/timing.cc`), so the extension moves only
/// the minimum. It also keeps clear of the low-latency renderer, which libwebrtc selects when
/// the minimum is 0 and the maximum at most 500 ms (`kLowLatencyStreamMaxPlayoutDelayThreshold`).
pub const MAX_PLAYOUT_DELAY: Duration = Duration::from_secs(10);

/// The fastest the raise grows, in ms of delay per ms of capture time.
///
/// A receiver applies a new minimum to the next frame in one step (libwebrtc's `VCMTiming`
/// clamps the current delay to it without smoothing), so a frame `T` after its predecessor is
/// rendered at most `0.5 T` (plus one 10-ms unit of rounding) later than its predecessor's
/// render time plus `T`. At 30 fps that is an interval of at most 53 ms: below the 67 ms
/// (twice the mean frame interval) that counts as a stall, and far below WebRTC's freeze rule,
/// `max(3 T, T + 150 ms)`. The bound holds for any frame interval of 20 ms or more (50 fps);
/// between 10 and 20 ms the rounding unit alone stays below `T`.
pub const RAMP_UP_SLOPE: f64 = 0.5;

/// The fastest the raise falls, in ms of delay per ms of capture time.
///
/// A falling minimum brings frames closer together, never further apart: at 1 a frame renders
/// at most at its predecessor's instant (render instants never go backwards), so no interval
/// grows and no step can be a stall or a freeze. The frames of the ramp are shown at up to twice
/// the frame rate, as after any catch-up. Measured on the call engine (starlink, 20 calls of
/// 10 min, the calibrated forecast, with the hold, the guard and the boost): falling at 1
/// instead of 0.5 kept freezes at 0.54 a minute and cut P95 capture-to-render delay from 390 to
/// 365 ms (docs/experiments/playout-2026-12-03.md).
pub const RAMP_DOWN_SLOPE: f64 = 1.0;

/// Which quantile of the measured repair delays the raise covers: 0.9, so that nine repairs in
/// ten arrive before their frame is due; the tail is the second round, which no single raise
/// should be sized for.
pub const REPAIR_QUANTILE: f64 = 0.9;

/// Added to the repair delay: libwebrtc's render delay, `kDefaultRenderDelay` = 10 ms
/// (`modules/video_coding/timing/timing.cc`), the time a frame needs between decoding and
/// display.
pub const RENDER_MARGIN: Duration = Duration::from_millis(10);

/// Before any repair was measured, a repair round is taken as one RTT plus this: the receiver
/// asks as soon as a later packet reveals the gap, and libwebrtc's NACK module runs every
/// `kUpdateInterval` = 20 ms (`modules/video_coding/nack_requester.cc`).
pub const NACK_ALLOWANCE: Duration = Duration::from_millis(20);

/// The raise a frame captured at `at` gets: a window's `amount` inside it (`(start, end,
/// amount)`, end excluded), less [`RAMP_UP_SLOPE`] per ms before it and [`RAMP_DOWN_SLOPE`] per
/// ms after it; the largest over all windows.
///
/// Generic over the clock, so that a receiver that keeps its own time (and raises its own
/// minimum from its own forecast) shapes the raise by the same rule.
pub fn raise_at<T>(at: T, windows: &[(T, T, Duration)]) -> Duration
where
    T: Copy + Ord + std::ops::Sub<Output = Duration>,
{
    windows
        .iter()
        .map(|&(start, end, amount)| {
            let fall = if at < start {
                (start - at).mul_f64(RAMP_UP_SLOPE)
            } else if at >= end {
                (at - end).mul_f64(RAMP_DOWN_SLOPE)
            } else {
                Duration::ZERO
            };
            amount.saturating_sub(fall)
        })
        .max()
        .unwrap_or_default()
}

/// How much the raise asks for: one repair round (the [`REPAIR_QUANTILE`] of the sender's
/// measured repair delays, or before there are enough of them the RTT plus [`NACK_ALLOWANCE`]),
/// plus [`RENDER_MARGIN`], plus `hold` (a frame the pacer held is that much later to begin
/// with), at most `max`.
pub fn raise_amount(
    repair_delay: Option<Duration>,
    rtt: Duration,
    hold: Duration,
    max: Duration,
) -> Duration {
    let repair = repair_delay.unwrap_or(rtt + NACK_ALLOWANCE);
    (repair + RENDER_MARGIN + hold).min(max)
}

/// `delay` in the extension's [`UNIT`]s, rounded down, at most the field's 4095.
pub fn to_units(delay: Duration) -> u16 {
    let units = delay.as_millis() / UNIT.as_millis();
    u16::try_from(units).unwrap_or(u16::MAX).min(4095)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn the_raise_is_full_inside_a_window_and_ramps_up_at_half_and_down_at_one_ms_per_ms() {
        let t0 = Instant::now();
        let windows = [(t0 + ms(1000), t0 + ms(1300), ms(200))];
        assert_eq!(raise_at(t0 + ms(1000), &windows), ms(200));
        assert_eq!(raise_at(t0 + ms(1299), &windows), ms(200));
        assert_eq!(raise_at(t0 + ms(900), &windows), ms(150));
        assert_eq!(raise_at(t0 + ms(1400), &windows), ms(100));
        assert_eq!(raise_at(t0 + ms(600), &windows), ms(0));
        assert_eq!(raise_at(t0 + ms(1500), &windows), ms(0));
        assert_eq!(raise_at(t0, &[]), ms(0));
    }

    #[test]
    fn a_rising_raise_never_delays_a_frame_by_more_than_half_its_interval_plus_a_unit() {
        let t0 = Instant::now();
        let windows = [
            (t0 + ms(1000), t0 + ms(1300), ms(400)),
            (t0 + ms(1500), t0 + ms(1600), ms(400)),
        ];
        for interval in [17u64, 33, 50, 100] {
            let mut previous: Option<u16> = None;
            for k in 0..(3000 / interval) {
                let units = to_units(raise_at(t0 + ms(k * interval), &windows));
                if let Some(p) = previous
                    && units > p
                {
                    let step_ms = u64::from(units - p) * 10;
                    assert!(
                        step_ms <= interval / 2 + 10,
                        "{interval} ms: step {step_ms}"
                    );
                    if interval >= 20 {
                        assert!(step_ms < interval, "{interval} ms: step {step_ms}");
                    }
                }
                previous = Some(units);
            }
        }
    }

    #[test]
    fn the_amount_is_the_measured_repair_round_plus_the_hold_within_the_maximum() {
        assert_eq!(raise_amount(Some(ms(90)), ms(40), ms(0), ms(400)), ms(100));
        assert_eq!(raise_amount(None, ms(40), ms(0), ms(400)), ms(70));
        assert_eq!(
            raise_amount(Some(ms(90)), ms(40), ms(160), ms(400)),
            ms(260)
        );
        assert_eq!(
            raise_amount(Some(ms(500)), ms(40), ms(160), ms(400)),
            ms(400)
        );
        assert_eq!(to_units(ms(259)), 25);
        assert_eq!(to_units(Duration::from_secs(100)), 4095);
    }
}

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
//!   window of [`Action::Playout`](crate::actions::Action::Playout), ramping to zero outside it
//!   at [`MAX_RAMP_SLOPE`].
//! - [`raise_amount`] is how much: one repair round as this sender measures it, plus the hold.

mod stamp;

pub use stamp::{PlayoutDelayStamper, PlayoutStamperHandle, PlayoutStats, STAMPER_SLOT};

use std::time::{Duration, Instant};

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

/// The fastest the raise changes, in ms of delay per ms of capture time.
///
/// A receiver applies a new minimum to the next frame in one step (libwebrtc's `VCMTiming`
/// clamps the current delay to it without smoothing), so a frame `T` after its predecessor is
/// rendered at most `0.5 T` (plus one 10-ms unit of rounding) later than its predecessor's
/// render time plus `T`. At 30 fps that is an interval of at most 53 ms: below the 67 ms
/// (twice the mean frame interval) that counts as a stall, and far below WebRTC's freeze rule,
/// `max(3 T, T + 150 ms)`. The bound holds for any frame interval of 20 ms or more (50 fps);
/// between 10 and 20 ms the rounding unit alone stays below `T`.
pub const MAX_RAMP_SLOPE: f64 = 0.5;

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
/// amount)`, end excluded), falling by [`MAX_RAMP_SLOPE`] per ms of distance outside it; the
/// largest over all windows.
pub fn raise_at(at: Instant, windows: &[(Instant, Instant, Duration)]) -> Duration {
    windows
        .iter()
        .map(|&(start, end, amount)| {
            let distance = if at < start {
                start - at
            } else if at >= end {
                at - end
            } else {
                Duration::ZERO
            };
            amount.saturating_sub(distance.mul_f64(MAX_RAMP_SLOPE))
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

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn the_raise_is_full_inside_a_window_and_ramps_at_half_a_ms_per_ms_outside() {
        let t0 = Instant::now();
        let windows = [(t0 + ms(1000), t0 + ms(1300), ms(200))];
        assert_eq!(raise_at(t0 + ms(1000), &windows), ms(200));
        assert_eq!(raise_at(t0 + ms(1299), &windows), ms(200));
        assert_eq!(raise_at(t0 + ms(900), &windows), ms(150));
        assert_eq!(raise_at(t0 + ms(1400), &windows), ms(150));
        assert_eq!(raise_at(t0 + ms(600), &windows), ms(0));
        assert_eq!(raise_at(t0 + ms(1700), &windows), ms(0));
        assert_eq!(raise_at(t0, &[]), ms(0));
    }

    #[test]
    fn consecutive_frames_never_differ_by_more_than_half_their_interval_plus_a_unit() {
        let t0 = Instant::now();
        let windows = [
            (t0 + ms(1000), t0 + ms(1300), ms(400)),
            (t0 + ms(1500), t0 + ms(1600), ms(400)),
        ];
        for interval in [17u64, 33, 50, 100] {
            let mut previous: Option<u16> = None;
            for k in 0..(3000 / interval) {
                let units = to_units(raise_at(t0 + ms(k * interval), &windows));
                if let Some(p) = previous {
                    let step_ms = u64::from(units.abs_diff(p)) * 10;
                    assert!(step_ms <= interval / 2 + 10, "{interval} ms: step {step_ms}");
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
        assert_eq!(
            raise_amount(Some(ms(90)), ms(40), ms(0), ms(400)),
            ms(100)
        );
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

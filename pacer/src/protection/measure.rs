//! What the protection interceptor measures of the stream it protects: the frame rate, the packets
//! per key and per delta frame, and byte rates over the last second.
//!
//! libwebrtc is told these by the encoder and the RTP module (`FecControllerDefault` receives the
//! sent frame rate, `UpdateWithEncodedData` the encoded sizes, `ProtectionRequest` the send rates
//! of `RtpSenderEgress`). An interceptor sees only packets, so it derives them from those, with
//! `now` from the packets and no clock.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// The window of the frame rate and of the byte rates: libwebrtc's send rates use
/// `kBitrateStatisticsWindowMs` = 1000 ms (`rtp_sender_egress.cc`).
pub(crate) const RATE_WINDOW: Duration = Duration::from_secs(1);

/// `_packetsPerFrame(0.9999f)` and `_packetsPerFrameKey(0.9999f)` (`VCMLossProtectionLogic`,
/// `media_opt_util.cc`): the exponential filters' factor per millisecond.
const PACKETS_PER_FRAME_ALPHA: f32 = 0.9999;

/// Frames sent over the last second, from the instants of their last packets (marker bits).
///
/// The rate is `(n - 1) / (newest - oldest)` over the `n` frame ends of the last second, so it is
/// right from the second frame on instead of ramping up over the first second; with fewer than
/// two frame ends it is 0 (the controller then uses 1, as libwebrtc does for an unknown rate).
#[derive(Debug, Clone, Default)]
pub(crate) struct FrameRateMeter {
    ends: VecDeque<Instant>,
}

impl FrameRateMeter {
    pub(crate) fn on_frame_end(&mut self, now: Instant) {
        self.ends.push_back(now);
        self.prune(now);
    }

    pub(crate) fn frame_rate(&mut self, now: Instant) -> f64 {
        self.prune(now);
        let (Some(&oldest), Some(&newest)) = (self.ends.front(), self.ends.back()) else {
            return 0.0;
        };
        let span = newest.saturating_duration_since(oldest);
        if self.ends.len() < 2 {
            0.0
        } else if span.is_zero() {
            self.ends.len() as f64
        } else {
            (self.ends.len() - 1) as f64 / span.as_secs_f64()
        }
    }

    /// Keeps the frame ends in `(now - 1 s, now]`.
    fn prune(&mut self, now: Instant) {
        while self
            .ends
            .front()
            .is_some_and(|&end| now.saturating_duration_since(end) >= RATE_WINDOW)
        {
            self.ends.pop_front();
        }
    }
}

/// libwebrtc's exponential filter of packets per frame (`rtc::ExpFilter` with `alpha` 0.9999 and
/// the milliseconds since the previous sample as the exponent; `UpdatePacketsPerFrame` and
/// `UpdatePacketsPerFrameKey` in `media_opt_util.cc`).
///
/// The sample is the number of RTP packets the frame took. libwebrtc samples the encoded size
/// divided by the maximum payload size, a lower bound of the same count that an interceptor
/// cannot compute (it sees the packets, not the encoder's output).
#[derive(Debug, Clone, Default)]
pub(crate) struct PacketsPerFrame {
    filtered: Option<f32>,
    last: Option<Instant>,
}

impl PacketsPerFrame {
    pub(crate) fn on_frame(&mut self, now: Instant, packets: u32) {
        let sample = packets as f32;
        self.filtered = Some(match (self.filtered, self.last) {
            (Some(filtered), Some(last)) => {
                let exponent = now.saturating_duration_since(last).as_millis() as f32;
                let alpha = PACKETS_PER_FRAME_ALPHA.powf(exponent);
                alpha * filtered + (1.0 - alpha) * sample
            }
            _ => sample,
        });
        self.last = Some(now);
    }

    /// The filtered packets per frame; 0 before the first frame.
    pub(crate) fn value(&self) -> f64 {
        f64::from(self.filtered.unwrap_or(0.0))
    }
}

/// Bytes sent over the last second.
#[derive(Debug, Clone, Default)]
pub(crate) struct ByteRate {
    sent: VecDeque<(Instant, u64)>,
    bytes: u64,
}

impl ByteRate {
    pub(crate) fn on_sent(&mut self, now: Instant, bytes: u64) {
        self.sent.push_back((now, bytes));
        self.bytes += bytes;
        self.prune(now);
    }

    /// Bits per second over `(now - 1 s, now]`.
    pub(crate) fn rate_bps(&mut self, now: Instant) -> u64 {
        self.prune(now);
        self.bytes * 8
    }

    fn prune(&mut self, now: Instant) {
        while let Some(&(at, bytes)) = self.sent.front() {
            if now.saturating_duration_since(at) < RATE_WINDOW {
                break;
            }
            self.sent.pop_front();
            self.bytes -= bytes;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn the_frame_rate_counts_frame_ends_over_the_last_second() {
        let t0 = Instant::now();
        let mut meter = FrameRateMeter::default();
        assert_eq!(meter.frame_rate(t0), 0.0);
        meter.on_frame_end(t0);
        assert_eq!(meter.frame_rate(t0), 0.0, "one frame is no rate");
        // Every 40 ms: 25 fps from the second frame on.
        for frame in 1..50 {
            meter.on_frame_end(t0 + ms(40 * frame));
        }
        let rate = meter.frame_rate(t0 + ms(40 * 49));
        assert!((rate - 25.0).abs() < 1e-9, "{rate}");
        // Two seconds later nothing is left.
        assert_eq!(meter.frame_rate(t0 + ms(40 * 49 + 2_000)), 0.0);
    }

    #[test]
    fn packets_per_frame_start_at_the_first_sample_and_move_by_alpha_per_millisecond() {
        let t0 = Instant::now();
        let mut filter = PacketsPerFrame::default();
        assert_eq!(filter.value(), 0.0);
        filter.on_frame(t0, 10);
        assert_eq!(filter.value(), 10.0);
        // 1000 ms later a sample of 20: alpha = 0.9999^1000 = 0.904837; 0.904837 x 10 +
        // 0.095163 x 20 = 10.9516.
        filter.on_frame(t0 + ms(1_000), 20);
        assert!(
            (filter.value() - 10.9516).abs() < 1e-3,
            "{}",
            filter.value()
        );
    }

    #[test]
    fn byte_rates_cover_the_last_second() {
        let t0 = Instant::now();
        let mut rate = ByteRate::default();
        rate.on_sent(t0, 1_000);
        rate.on_sent(t0 + ms(500), 500);
        assert_eq!(rate.rate_bps(t0 + ms(999)), 12_000);
        assert_eq!(
            rate.rate_bps(t0 + ms(1_000)),
            4_000,
            "the first has left the window"
        );
        assert_eq!(rate.rate_bps(t0 + ms(1_500)), 0);
    }
}

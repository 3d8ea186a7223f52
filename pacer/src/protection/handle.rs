//! The driver's way into a [`LossProtection`](crate::LossProtection) inside an interceptor chain.
//!
//! As with the pacer's handle, a webrtc-rs chain passes nothing but packets across its boundary,
//! so what the protection needs from outside (the target and RTT the estimator knows, the encoded
//! resolution, the NACK rate) and what it reports back travel through shared state captured at
//! build time. The interceptor reads the inputs at its next event; nothing here reads a clock.

use super::controller::{REFERENCE_HEIGHT, REFERENCE_WIDTH, media_target_bps};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// What the protection interceptor has done, cumulative since it was built (a driver diffs two
/// snapshots for an interval), and the parameters in force (libwebrtc mode only: with a fixed
/// shape or without FEC the factors stay 0).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProtectionStats {
    /// The `now` of the last packet the interceptor handled.
    pub at: Option<Instant>,
    /// Media RTP packets written on bound video streams, protected or not.
    pub media_packets_seen: u64,
    /// Their bytes (RTP header and payload, before the extensions added below the interceptor).
    pub media_bytes_seen: u64,
    /// Media packets covered by a block that was sent with repair packets.
    pub media_packets_protected: u64,
    /// Blocks sent with repair packets.
    pub blocks: u64,
    /// Repair packets sent.
    pub fec_packets_sent: u64,
    /// Their bytes.
    pub fec_bytes_sent: u64,
    /// The delta-frame factor in force (out of 256, relative to media packets).
    pub delta_factor: u8,
    /// The key-frame factor in force.
    pub key_factor: u8,
    /// The most frames a block may span.
    pub max_fec_frames: u8,
    /// The filtered loss (x255) the factors were decided from.
    pub filtered_loss_255: u8,
    /// Media bytes x 8 over the last second before [`at`](Self::at).
    pub video_rate_bps: u64,
    /// Repair bytes x 8 over the last second before [`at`](Self::at).
    pub fec_rate_bps: u64,
    /// Updates of the factors made inside a protection-boost window (docs/architecture.md,
    /// "Handover-timed actions").
    pub boosted_updates: u64,
}

/// A cloneable, thread-safe handle on a [`LossProtection`](crate::LossProtection): network inputs
/// in, [`ProtectionStats`] out.
#[derive(Debug, Clone)]
pub struct ProtectionHandle {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    inputs: Mutex<DriverInputs>,
    stats: Mutex<ProtectionStats>,
}

/// What the driver has told the handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DriverInputs {
    pub(crate) target_bps: u64,
    pub(crate) rtt: Duration,
    pub(crate) width: u32,
    pub(crate) height: u32,
    pub(crate) nack_bps: u64,
}

impl ProtectionHandle {
    /// A handle with no target, no RTT and libwebrtc's default codec size, 704x576
    /// (`VCMLossProtectionLogic`, `media_opt_util.cc`).
    pub(crate) fn new() -> Self {
        Self {
            shared: Arc::new(Shared {
                inputs: Mutex::new(DriverInputs {
                    target_bps: 0,
                    rtt: Duration::ZERO,
                    width: REFERENCE_WIDTH,
                    height: REFERENCE_HEIGHT,
                    nack_bps: 0,
                }),
                stats: Mutex::new(ProtectionStats::default()),
            }),
        }
    }

    /// The media target and the round-trip time the controller decides from (libwebrtc's
    /// `UpdateFecRates` arguments), in force from the interceptor's next frame end or loss report.
    /// Until it is called the target is 0, which the hybrid NACK/FEC method reads as too little
    /// rate for FEC.
    pub fn set_network(&self, target_bps: u64, rtt: Duration) {
        let mut inputs = lock(&self.shared.inputs);
        inputs.target_bps = target_bps;
        inputs.rtt = rtt;
    }

    /// The encoded resolution (704x576 until set).
    pub fn set_resolution(&self, width: u32, height: u32) {
        let mut inputs = lock(&self.shared.inputs);
        inputs.width = width;
        inputs.height = height;
    }

    /// The rate of NACK retransmissions (RTX included) the sender sent over the last second, in
    /// bits per second. They leave below the protection interceptor (the NACK responder sits
    /// wire-ward of `Slot::FecEncoder`), so only the driver can measure them; only
    /// [`media_target_bps`](Self::media_target_bps) uses it.
    pub fn set_nack_rate(&self, bps: u64) {
        lock(&self.shared.inputs).nack_bps = bps;
    }

    /// The interceptor's last published stats.
    pub fn stats(&self) -> ProtectionStats {
        *lock(&self.shared.stats)
    }

    /// The share of `estimate_bps` the encoder should use for media, libwebrtc's
    /// [`media_target_bps`](crate::protection::media_target_bps): the estimate less the protection overhead
    /// of the last second, at most half. The video and FEC rates are the interceptor's own over
    /// the second before its last packet ([`ProtectionStats::video_rate_bps`] and
    /// [`fec_rate_bps`](ProtectionStats::fec_rate_bps)); the NACK rate is what the driver last
    /// gave [`set_nack_rate`](Self::set_nack_rate).
    pub fn media_target_bps(&self, estimate_bps: u64) -> u64 {
        let stats = self.stats();
        let nack_bps = lock(&self.shared.inputs).nack_bps;
        media_target_bps(
            estimate_bps,
            stats.video_rate_bps,
            nack_bps,
            stats.fec_rate_bps,
        )
    }

    pub(crate) fn inputs(&self) -> DriverInputs {
        *lock(&self.shared.inputs)
    }

    pub(crate) fn publish(&self, stats: ProtectionStats) {
        *lock(&self.shared.stats) = stats;
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_clone_sees_the_inputs_and_the_media_target_uses_the_published_rates() {
        let handle = ProtectionHandle::new();
        let other = handle.clone();
        assert_eq!((handle.inputs().width, handle.inputs().height), (704, 576));
        other.set_network(1_000_000, Duration::from_millis(150));
        other.set_resolution(1280, 720);
        let inputs = handle.inputs();
        assert_eq!(
            (inputs.target_bps, inputs.rtt, inputs.width, inputs.height),
            (1_000_000, Duration::from_millis(150), 1280, 720)
        );
        assert_eq!(
            handle.media_target_bps(1_000_000),
            1_000_000,
            "nothing sent"
        );
        handle.publish(ProtectionStats {
            video_rate_bps: 600_000,
            fec_rate_bps: 150_000,
            ..ProtectionStats::default()
        });
        other.set_nack_rate(50_000);
        // (50 + 150) / 800 = 25 % protection.
        assert_eq!(other.media_target_bps(1_000_000), 750_000);
    }
}

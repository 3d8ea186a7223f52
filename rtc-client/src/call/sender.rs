//! How the encoder follows the sender (the plugin's install, [`pacer::sender`], built for a call
//! by [`super::chains`]): the target less the protection's share, and the congestion window's
//! pushback.

use crate::link::Time;
use crate::media::encoder::{Encoder, EncoderConfig};
use pacer::CwndMode;
use pacer::GoogCcConfig;
use pacer::cwnd::CwndConfig;
use pacer::cwnd::{CwndSnapshot, frame_drop_interval};
use pacer::protection::ProtectionHandle;

/// Hands the encoder the pacer's target less the protection overhead, and the congestion
/// window's pushback (libwebrtc `MaybeTriggerOnNetworkChanged`, then
/// `FecControllerDefault::UpdateFecRates`, which leaves the media the target less the share
/// NACK and FEC took over the last second, at most half: [`ProtectionHandle::media_target_bps`]).
/// In pushback mode with DropFrame the encoder keeps that target and drops one frame in
/// [`frame_drop_interval`] of the reduce ratio; without DropFrame the target becomes the
/// pushback target. In the other modes (or before the window has a target) the encoder just
/// follows the media target.
pub fn steer_encoder(
    encoder: &mut Encoder,
    now: Time,
    target_bps: u64,
    protection: &ProtectionHandle,
    window: &CwndSnapshot,
    cwnd_config: &CwndConfig,
) {
    let media_target_bps = protection.media_target_bps(target_bps);
    let pushback = cwnd_config.mode == CwndMode::Pushback && window.target_bps > 0;
    let encoder_target = if pushback && !cwnd_config.drop_frame {
        media_target_bps.min(window.pushback_target_bps)
    } else {
        media_target_bps
    };
    encoder.set_target(now, encoder_target);
    encoder.set_frame_drop_interval(
        (pushback && cwnd_config.drop_frame)
            .then(|| frame_drop_interval(window.cwnd_reduce_ratio))
            .flatten(),
    );
}

/// GoogCC's configuration in a call: the defaults, with the encoder's maximum
/// bitrate as the total allocation (what libwebrtc's `BitrateAllocator` reports), so probing
/// stops at twice it.
pub fn googcc_config() -> GoogCcConfig {
    GoogCcConfig {
        max_total_allocated_bps: Some(EncoderConfig::default().max_bps as f64),
        ..GoogCcConfig::default()
    }
}

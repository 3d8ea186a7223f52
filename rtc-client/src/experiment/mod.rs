//! A/B experiments and data collection over many simulated calls.
//!
//! The paper needed 15 hours of real-time calls per method and setting to compare queue
//! policies, and 65 hours to collect training data. Here a plan of calls (scenarios x policies x
//! seeds) runs in virtual time on every core ([`run`]), every call's telemetry is kept, and the
//! calls of each (scenario, policy) cell are summarised with a bootstrap confidence interval and
//! a paired test against WebRTC's default ([`stats`], [`report`]), then drawn in the style of the
//! paper's figures 4 to 6 (`plots`, with the `cli` feature).
//!
//! Policies are compared on identical links: call i of every cell uses seed `BASE + i`, and a
//! scenario plus a seed fully specifies the links and handovers, so each policy meets exactly the
//! same conditions and the comparison is paired.

pub mod batch;
#[cfg(feature = "cli")]
pub mod ledger;
#[cfg(feature = "cli")]
pub mod merge;
#[cfg(feature = "cli")]
pub mod plots;
pub mod report;
pub mod run;
pub mod shard;
pub mod stats;

use pacer::telemetry::QoeRecord;
use serde::Serialize;

/// One QoE metric the experiment reports (WebRTC's definitions; docs/architecture.md, "The telemetry contract").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Mean received video bitrate, kbit/s.
    VideoBitrate,
    /// Freezes per minute of video.
    FreezesPerMin,
    /// Total time frozen, ms.
    TotalFreeze,
    /// Rendered frames per second.
    FrameRate,
    /// Median capture-to-render delay, ms.
    DelayP50,
    /// 95th-percentile capture-to-render delay, ms.
    DelayP95,
    /// RTP packets lost after retransmission, percent of those sent.
    PacketLoss,
}

impl Metric {
    /// Every metric, in report order.
    pub const ALL: [Metric; 7] = [
        Metric::VideoBitrate,
        Metric::FreezesPerMin,
        Metric::TotalFreeze,
        Metric::FrameRate,
        Metric::DelayP50,
        Metric::DelayP95,
        Metric::PacketLoss,
    ];

    /// The metrics the paper's figures 4 to 6 draw, one plot each.
    pub const PLOTTED: [Metric; 5] = [
        Metric::VideoBitrate,
        Metric::FreezesPerMin,
        Metric::FrameRate,
        Metric::DelayP95,
        Metric::PacketLoss,
    ];

    /// The key in report.json: the telemetry's `qoe` field name.
    pub fn key(self) -> &'static str {
        match self {
            Self::VideoBitrate => "video_bitrate_kbps",
            Self::FreezesPerMin => "freezes_per_min",
            Self::TotalFreeze => "total_freeze_ms",
            Self::FrameRate => "frame_rate",
            Self::DelayP50 => "e2e_delay_p50_ms",
            Self::DelayP95 => "e2e_delay_p95_ms",
            Self::PacketLoss => "packet_loss_pct",
        }
    }

    /// A human name, for tables and plot titles.
    pub fn label(self) -> &'static str {
        match self {
            Self::VideoBitrate => "Video bitrate",
            Self::FreezesPerMin => "Freeze rate",
            Self::TotalFreeze => "Total freeze time",
            Self::FrameRate => "Frame rate",
            Self::DelayP50 => "E2E delay P50",
            Self::DelayP95 => "E2E delay P95",
            Self::PacketLoss => "Packet loss",
        }
    }

    /// The unit, for tables and axis labels.
    pub fn unit(self) -> &'static str {
        match self {
            Self::VideoBitrate => "kbit/s",
            Self::FreezesPerMin => "freezes/min",
            Self::TotalFreeze | Self::DelayP50 | Self::DelayP95 => "ms",
            Self::FrameRate => "fps",
            Self::PacketLoss => "%",
        }
    }

    /// Whether a larger value is the better one (bitrate, frame rate), for reading the tables.
    pub fn higher_is_better(self) -> bool {
        matches!(self, Self::VideoBitrate | Self::FrameRate)
    }

    /// The metric's value in a call's QoE record.
    pub fn of(self, qoe: &QoeRecord) -> f64 {
        match self {
            Self::VideoBitrate => qoe.video_bitrate_kbps,
            Self::FreezesPerMin => qoe.freezes_per_min,
            Self::TotalFreeze => qoe.total_freeze_ms as f64,
            Self::FrameRate => qoe.frame_rate,
            Self::DelayP50 => qoe.e2e_delay_p50_ms,
            Self::DelayP95 => qoe.e2e_delay_p95_ms,
            Self::PacketLoss => qoe.packet_loss_pct,
        }
    }
}

/// A policy name made safe as one path component (`fixed:900` -> `fixed-900`): anything but
/// ASCII letters, digits, `-`, `_` and `.` becomes `-`, so names with `:` or `/` (learned
/// policies name a model file) never create directories or break on Windows.
pub fn path_safe(name: &str) -> String {
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '-'
            }
        })
        .collect();
    match safe.as_str() {
        "" | "." | ".." => format!("policy{}", safe.replace('.', "-")),
        _ => safe,
    }
}

/// Where call `seed` of `scenario` under `policy` keeps its telemetry, relative to the output
/// directory: `telemetry/<scenario>/<policy>/seed-<n>.jsonl`.
pub fn telemetry_path(scenario: &str, policy: &str, seed: u64) -> std::path::PathBuf {
    std::path::Path::new("telemetry")
        .join(path_safe(scenario))
        .join(path_safe(policy))
        .join(format!("seed-{seed}.jsonl"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_names_become_single_path_components() {
        assert_eq!(path_safe("fixed:900"), "fixed-900");
        assert_eq!(path_safe("default"), "default");
        assert_eq!(path_safe("learned:models/p.json"), "learned-models-p.json");
        assert_eq!(path_safe(".."), "policy--");
        assert_eq!(path_safe(""), "policy");
    }

    #[test]
    fn telemetry_lives_under_scenario_and_policy() {
        assert_eq!(
            telemetry_path("starlink", "fixed:900", 7),
            std::path::Path::new("telemetry/starlink/fixed-900/seed-7.jsonl")
        );
    }

    #[test]
    fn metrics_read_their_qoe_fields() {
        let qoe = QoeRecord {
            video_bitrate_kbps: 1.0,
            freeze_count: 9,
            freezes_per_min: 2.0,
            total_freeze_ms: 3,
            frame_rate: 4.0,
            e2e_delay_p50_ms: 5.0,
            e2e_delay_p95_ms: 6.0,
            packet_loss_pct: 7.0,
            frames_rendered: 8,
        };
        let values: Vec<f64> = Metric::ALL.iter().map(|m| m.of(&qoe)).collect();
        assert_eq!(values, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]);
    }
}

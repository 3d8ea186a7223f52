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

/// One finished call as the report reads it: its seed, its whole-call QoE, the FEC share of its
/// video bytes and its number of intervals.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CallOutcome {
    /// The call's seed.
    pub seed: u64,
    /// QoE over the whole call.
    pub qoe: QoeRecord,
    /// The repair bytes' share of the video bytes the sender sent over the whole call, % (0
    /// without FEC; `sim --json`'s `counts.fec_share_pct`).
    pub fec_share_pct: f64,
    /// Decision intervals (telemetry lines).
    pub intervals: usize,
}

/// One metric the experiment reports: QoE with WebRTC's definitions (docs/architecture.md, "The
/// telemetry contract"), the stalls of rtc-client's QoE meter (`media::qoe`), and what loss
/// protection cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Mean received video bitrate, kbit/s.
    VideoBitrate,
    /// Freezes per minute of video.
    FreezesPerMin,
    /// Total time frozen, ms.
    TotalFreeze,
    /// Seconds frozen per minute of video.
    FrozenPerMin,
    /// Stalls (gaps above twice the mean that are not freezes) per minute of video.
    StallsPerMin,
    /// Rendered frames per second.
    FrameRate,
    /// Median capture-to-render delay, ms.
    DelayP50,
    /// 95th-percentile capture-to-render delay, ms.
    DelayP95,
    /// RTP packets lost after retransmission, percent of those sent.
    PacketLoss,
    /// Repair (FEC) bytes, percent of the video bytes sent.
    FecShare,
}

impl Metric {
    /// Every metric, in report order.
    pub const ALL: [Metric; 10] = [
        Metric::VideoBitrate,
        Metric::FreezesPerMin,
        Metric::TotalFreeze,
        Metric::FrozenPerMin,
        Metric::StallsPerMin,
        Metric::FrameRate,
        Metric::DelayP50,
        Metric::DelayP95,
        Metric::PacketLoss,
        Metric::FecShare,
    ];

    /// The metrics the paper's figures 4 to 6 draw, one plot each.
    pub const PLOTTED: [Metric; 5] = [
        Metric::VideoBitrate,
        Metric::FreezesPerMin,
        Metric::FrameRate,
        Metric::DelayP95,
        Metric::PacketLoss,
    ];

    /// The key in report.json: the telemetry's `qoe` field name (the FEC share: `sim --json`'s).
    pub fn key(self) -> &'static str {
        match self {
            Self::VideoBitrate => "video_bitrate_kbps",
            Self::FreezesPerMin => "freezes_per_min",
            Self::TotalFreeze => "total_freeze_ms",
            Self::FrozenPerMin => "frozen_s_per_min",
            Self::StallsPerMin => "stalls_per_min",
            Self::FrameRate => "frame_rate",
            Self::DelayP50 => "e2e_delay_p50_ms",
            Self::DelayP95 => "e2e_delay_p95_ms",
            Self::PacketLoss => "packet_loss_pct",
            Self::FecShare => "fec_share_pct",
        }
    }

    /// A human name, for tables and plot titles.
    pub fn label(self) -> &'static str {
        match self {
            Self::VideoBitrate => "Video bitrate",
            Self::FreezesPerMin => "Freeze rate",
            Self::TotalFreeze => "Total freeze time",
            Self::FrozenPerMin => "Freeze time per minute",
            Self::StallsPerMin => "Stall rate",
            Self::FrameRate => "Frame rate",
            Self::DelayP50 => "E2E delay P50",
            Self::DelayP95 => "E2E delay P95",
            Self::PacketLoss => "Packet loss",
            Self::FecShare => "FEC share",
        }
    }

    /// The unit, for tables and axis labels.
    pub fn unit(self) -> &'static str {
        match self {
            Self::VideoBitrate => "kbit/s",
            Self::FreezesPerMin => "freezes/min",
            Self::TotalFreeze | Self::DelayP50 | Self::DelayP95 => "ms",
            Self::FrozenPerMin => "s/min",
            Self::StallsPerMin => "stalls/min",
            Self::FrameRate => "fps",
            Self::PacketLoss => "%",
            Self::FecShare => "% of video bytes",
        }
    }

    /// Whether a larger value is the better one (bitrate, frame rate), for reading the tables.
    pub fn higher_is_better(self) -> bool {
        matches!(self, Self::VideoBitrate | Self::FrameRate)
    }

    /// Whether the metric is a cost rather than a quality (the FEC share: more repair buys
    /// fewer losses), so a table marks neither direction as better.
    pub fn is_cost(self) -> bool {
        matches!(self, Self::FecShare)
    }

    /// The metric's value for one call.
    pub fn of(self, call: &CallOutcome) -> f64 {
        let qoe = &call.qoe;
        match self {
            Self::VideoBitrate => qoe.video_bitrate_kbps,
            Self::FreezesPerMin => qoe.freezes_per_min,
            Self::TotalFreeze => qoe.total_freeze_ms as f64,
            Self::FrozenPerMin => qoe.frozen_s_per_min,
            Self::StallsPerMin => qoe.stalls_per_min,
            Self::FrameRate => qoe.frame_rate,
            Self::DelayP50 => qoe.e2e_delay_p50_ms,
            Self::DelayP95 => qoe.e2e_delay_p95_ms,
            Self::PacketLoss => qoe.packet_loss_pct,
            Self::FecShare => call.fec_share_pct,
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
    fn metrics_read_their_qoe_fields_and_the_fec_share() {
        let call = CallOutcome {
            seed: 1,
            qoe: QoeRecord {
                video_bitrate_kbps: 1.0,
                freeze_count: 9,
                freezes_per_min: 2.0,
                total_freeze_ms: 3,
                frozen_s_per_min: 3.5,
                stall_count: 11,
                stalls_per_min: 3.75,
                frame_rate: 4.0,
                e2e_delay_p50_ms: 5.0,
                e2e_delay_p95_ms: 6.0,
                packet_loss_pct: 7.0,
                frames_rendered: 8,
            },
            fec_share_pct: 12.5,
            intervals: 1,
        };
        let values: Vec<f64> = Metric::ALL.iter().map(|m| m.of(&call)).collect();
        assert_eq!(values, [1.0, 2.0, 3.0, 3.5, 3.75, 4.0, 5.0, 6.0, 7.0, 12.5]);
        let costs: Vec<Metric> = Metric::ALL.into_iter().filter(|m| m.is_cost()).collect();
        assert_eq!(costs, [Metric::FecShare]);
    }
}

//! What the call measured before a decision, for a policy that chooses the handover-timed
//! actions (docs/architecture.md, "Queue policies and decisions", joint policies).
//!
//! The forecast says when boundaries come; it cannot say what they cost on this path. The same
//! Starlink slot boundary loses 47.5 % of the uplink's packets in its first 100 ms on one path
//! and only brings a delay spike on another (leocc-trace), and a pacer hold helps the first and
//! makes freezes on the second (docs/experiments/timed-2026-12-02.md). The call knows which from
//! its own transport feedback: the hold gate's boundary excess loss
//! ([`ActionsHandle::boundary_excess_loss_pct`](crate::ActionsHandle::boundary_excess_loss_pct))
//! and the previous interval's packet loss. These are the joint model's second input.
//!
//! A path-aware policy reads more of what the sender measures: the loss of each 100-ms row
//! after the predicted instants and the loss away from them (the onset tracker's bins and the
//! hold gate's background rate), the RTT, how long a repair takes (the NACK responder's
//! repair delays, which size the playout raise) and the estimator's target. A card names the
//! features its model reads ([`KNOWN_FEATURES`]), each scaled to a few units.

/// The call's own measurements at a decision instant; `None` where it has none yet (the first
/// decision of a call, a call without an action schedule).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CallFeedback {
    /// How much more often packets sent in the 300 ms after predicted instants were lost than
    /// the others, percentage points (the hold gate's evidence).
    pub boundary_excess_loss_pct: Option<f64>,
    /// The previous interval's media packet loss after retransmission, % (its telemetry's
    /// `qoe.packet_loss_pct`).
    pub previous_loss_pct: Option<f64>,
    /// The loss of packets sent away from the predicted instants, % (the hold gate's background
    /// rate).
    pub outside_loss_pct: Option<f64>,
    /// The loss of packets sent in the first, second and third 100 ms after a predicted instant,
    /// % (the onset tracker's bins, unshifted); `None` for a row without packets.
    pub row_loss_pct: [Option<f64>; 3],
    /// The round-trip time the sender measures, ms.
    pub rtt_ms: Option<f64>,
    /// How long a repair takes, ms: the 0.9 quantile of the NACK responder's repair delays
    /// (what sizes the playout raise).
    pub repair_delay_ms: Option<f64>,
    /// The estimator's target, kbit/s.
    pub target_kbps: Option<f64>,
    /// How many more lost packets a slot the lossiest half second of the slot away from the
    /// predicted instants averages than the median half second, 0 to 3 (the phase raise's
    /// evidence; `None` where the phase raise has not been configured for a whole slot).
    pub phase_excess_losses: Option<f64>,
}

/// The names of [`CallFeedback::features`], in order; a joint model card lists exactly these
/// for its `telemetry` input, and a loader refuses a card that lists others.
pub const FEEDBACK_FEATURES: [&str; 3] = [
    "boundary_excess_loss_pct/10",
    "previous_loss_pct/10",
    "boundary_excess_known",
];

/// The width of the `telemetry` input: [`FEEDBACK_FEATURES`]' length.
pub const FEEDBACK_WIDTH: usize = FEEDBACK_FEATURES.len();

/// Every feature a card may name for its `telemetry` input, [`FEEDBACK_FEATURES`] first; the
/// path-aware policy reads them all ([`PATH_FEATURES`]).
pub const KNOWN_FEATURES: [&str; 11] = [
    "boundary_excess_loss_pct/10",
    "previous_loss_pct/10",
    "boundary_excess_known",
    "outside_loss_pct/10",
    "row0_loss_pct/10",
    "row1_loss_pct/10",
    "row2_loss_pct/10",
    "rtt_ms/100",
    "repair_delay_ms/100",
    "target_kbps/1000",
    "phase_excess_losses",
];

/// The features of the path-aware policy's cards (`policy-train counterfactual`).
pub const PATH_FEATURES: [&str; 11] = KNOWN_FEATURES;

/// A loss rate in % over 10, within [0, 10].
fn loss_feature(v: Option<f64>) -> f32 {
    v.map_or(0.0, |v| (v / 10.0).clamp(0.0, 10.0) as f32)
}

/// A quantity over `scale`, within [0, 20]: an RTT or repair delay up to 2 s, a target up to
/// 20 Mbit/s, beyond anything the shipped scenarios reach.
fn scaled(v: Option<f64>, scale: f64) -> f32 {
    v.map_or(0.0, |v| (v / scale).clamp(0.0, 20.0) as f32)
}

impl CallFeedback {
    /// The model's `telemetry` input `[1, 3]`: the boundary excess loss over 10 points within
    /// [-5, 5], the previous loss over 10 points within [0, 10] (0 when unknown), and 1 when the
    /// excess has been measured, else 0, so that "unknown" and "no excess" differ. The scale
    /// puts the forecast's and these features within a few units of each other; the clamps keep
    /// an odd interval from reaching far outside what training saw. A non-finite value reads as
    /// unknown.
    pub fn features(&self) -> [f32; FEEDBACK_WIDTH] {
        let excess = self.boundary_excess_loss_pct.filter(|v| v.is_finite());
        let loss = self.previous_loss_pct.filter(|v| v.is_finite());
        [
            excess.map_or(0.0, |v| (v / 10.0).clamp(-5.0, 5.0) as f32),
            loss.map_or(0.0, |v| (v / 10.0).clamp(0.0, 10.0) as f32),
            if excess.is_some() { 1.0 } else { 0.0 },
        ]
    }

    /// The feature called `name` ([`KNOWN_FEATURES`]); `None` for a name this build does not
    /// know. Unknown or non-finite measurements read as 0, like [`Self::features`]' (whose
    /// three columns these reproduce exactly).
    pub fn feature(&self, name: &str) -> Option<f32> {
        let finite = |v: Option<f64>| v.filter(|v| v.is_finite());
        let legacy = self.features();
        Some(match name {
            "boundary_excess_loss_pct/10" => legacy[0],
            "previous_loss_pct/10" => legacy[1],
            "boundary_excess_known" => legacy[2],
            "outside_loss_pct/10" => loss_feature(finite(self.outside_loss_pct)),
            "row0_loss_pct/10" => loss_feature(finite(self.row_loss_pct[0])),
            "row1_loss_pct/10" => loss_feature(finite(self.row_loss_pct[1])),
            "row2_loss_pct/10" => loss_feature(finite(self.row_loss_pct[2])),
            "rtt_ms/100" => scaled(finite(self.rtt_ms), 100.0),
            "repair_delay_ms/100" => scaled(finite(self.repair_delay_ms), 100.0),
            "target_kbps/1000" => scaled(finite(self.target_kbps), 1000.0),
            "phase_excess_losses" => {
                finite(self.phase_excess_losses).map_or(0.0, |v| v.clamp(0.0, 3.0) as f32)
            }
            _ => return None,
        })
    }

    /// The features named by `names`, in order; the first name this build does not know is the
    /// error.
    pub fn features_named<S: AsRef<str>>(&self, names: &[S]) -> Result<Vec<f32>, String> {
        names
            .iter()
            .map(|n| {
                self.feature(n.as_ref())
                    .ok_or_else(|| n.as_ref().to_owned())
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn features_scale_clamp_and_mark_what_is_known() {
        assert_eq!(CallFeedback::default().features(), [0.0, 0.0, 0.0]);
        let measured = CallFeedback {
            boundary_excess_loss_pct: Some(12.0),
            previous_loss_pct: Some(3.0),
            ..CallFeedback::default()
        };
        assert_eq!(measured.features(), [1.2, 0.3, 1.0]);
        let odd = CallFeedback {
            boundary_excess_loss_pct: Some(-400.0),
            previous_loss_pct: Some(f64::NAN),
            ..CallFeedback::default()
        };
        assert_eq!(odd.features(), [-5.0, 0.0, 1.0]);
        let none_excess = CallFeedback {
            boundary_excess_loss_pct: Some(0.0),
            previous_loss_pct: None,
            ..CallFeedback::default()
        };
        assert_eq!(none_excess.features(), [0.0, 0.0, 1.0]);
    }

    #[test]
    fn named_features_scale_clamp_and_refuse_unknown_names() {
        let feedback = CallFeedback {
            boundary_excess_loss_pct: Some(30.0),
            previous_loss_pct: Some(2.0),
            outside_loss_pct: Some(0.5),
            row_loss_pct: [Some(47.0), None, Some(f64::INFINITY)],
            rtt_ms: Some(180.0),
            repair_delay_ms: Some(9000.0),
            target_kbps: Some(2500.0),
            phase_excess_losses: Some(7.0),
        };
        let all = feedback.features_named(&KNOWN_FEATURES).unwrap();
        assert_eq!(
            all,
            vec![3.0, 0.2, 1.0, 0.05, 4.7, 0.0, 0.0, 1.8, 20.0, 2.5, 3.0]
        );
        assert_eq!(&all[..FEEDBACK_WIDTH], &feedback.features());
        assert_eq!(
            feedback.features_named(&["rtt_ms/100", "jitter"]),
            Err("jitter".to_owned())
        );
        assert!(
            CallFeedback::default()
                .features_named(&PATH_FEATURES)
                .unwrap()
                .iter()
                .all(|v| *v == 0.0)
        );
    }
}

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
        };
        assert_eq!(measured.features(), [1.2, 0.3, 1.0]);
        let odd = CallFeedback {
            boundary_excess_loss_pct: Some(-400.0),
            previous_loss_pct: Some(f64::NAN),
        };
        assert_eq!(odd.features(), [-5.0, 0.0, 1.0]);
        let none_excess = CallFeedback {
            boundary_excess_loss_pct: Some(0.0),
            previous_loss_pct: None,
        };
        assert_eq!(none_excess.features(), [0.0, 0.0, 1.0]);
    }
}

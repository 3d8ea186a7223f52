//! Whether the path loses packets around predicted handovers: the evidence the hold gate reads
//! (docs/architecture.md, "Handover-timed actions").
//!
//! A hold pays only where a handover destroys what is sent into it: on Starlink's uplink the
//! first 100-ms rows after a slot boundary lose 47.5 % and 20.3 % of the packets
//! (`traces/scenarios/starlink.toml`), and holding media out of them cuts freezes. Where a
//! boundary brings a delay spike and no loss (the LeoCC trace), the hold only adds its own delay
//! to the spike and makes freezes. The sender sees which of its packets were lost in transport
//! feedback, so it can tell the two paths apart as the call runs: it compares the loss of
//! packets sent shortly after predicted instants with the loss of the others.

use super::config::HoldGate;

/// How many packets inside the boundary spans the estimate remembers (exponential forgetting):
/// about ten boundaries' worth at 2.5 Mbit/s (some 40 packets per 170-ms span), so the verdict
/// follows a path that changes within a few minutes and does not flip on one boundary.
const INSIDE_MEMORY: f64 = 400.0;

/// How many packets outside the spans the estimate remembers: ten times the inside memory, the
/// path's background loss changing more slowly than one boundary's.
const OUTSIDE_MEMORY: f64 = 4000.0;

/// Packets sent and lost, each forgotten at the same rate.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Tally {
    sent: f64,
    lost: f64,
}

impl Tally {
    fn record(&mut self, lost: bool, memory: f64) {
        let keep = 1.0 - 1.0 / memory;
        self.sent = self.sent * keep + 1.0;
        self.lost = self.lost * keep + if lost { 1.0 } else { 0.0 };
    }

    fn rate(&self) -> Option<f64> {
        (self.sent > 0.0).then(|| self.lost / self.sent)
    }
}

/// The loss of packets sent inside the spans after predicted handovers against the loss of the
/// others, both forgotten exponentially.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct BoundaryLoss {
    inside: Tally,
    outside: Tally,
    /// Packets inside the spans reported so far, not forgotten.
    inside_seen: u64,
    /// The loss of packets sent in each of the first [`ROWS`] 100-ms rows after a predicted
    /// instant: the boundary's loss profile as this path shows it, which a path-aware policy
    /// reads (`CallFeedback::row_loss_pct`).
    rows: [Tally; ROWS],
}

/// How many 100-ms rows after a predicted instant [`BoundaryLoss`] profiles: Starlink's uplink
/// loses 47.5, 20.3 and 3.8 % in its first three (`traces/scenarios/starlink.toml`), the fourth
/// is within two points of the background.
pub(crate) const ROWS: usize = 3;

/// The width of one row, ms: the 100-ms rows of the traces the profile was measured on.
pub(crate) const ROW_MS: i64 = 100;

impl BoundaryLoss {
    /// One packet's fate from transport feedback: sent inside a boundary span or not, lost or
    /// not.
    pub(crate) fn record(&mut self, inside: bool, lost: bool) {
        if inside {
            self.inside_seen += 1;
            self.inside.record(lost, INSIDE_MEMORY);
        } else {
            self.outside.record(lost, OUTSIDE_MEMORY);
        }
    }

    /// One packet's fate for the row profile: sent `offset_ms` after its nearest predicted
    /// instant; offsets before the instant or past the last row are not profiled.
    pub(crate) fn record_offset(&mut self, offset_ms: i64, lost: bool) {
        if offset_ms < 0 {
            return;
        }
        if let Some(row) = self.rows.get_mut((offset_ms / ROW_MS) as usize) {
            row.record(lost, INSIDE_MEMORY);
        }
    }

    /// The loss of packets sent away from the spans, %; `None` before one was reported.
    pub(crate) fn outside_pct(&self) -> Option<f64> {
        self.outside.rate().map(|r| r * 100.0)
    }

    /// The loss of each profiled row after the predicted instants, %; `None` for a row without
    /// packets.
    pub(crate) fn row_pct(&self) -> [Option<f64>; ROWS] {
        self.rows.map(|row| row.rate().map(|r| r * 100.0))
    }

    /// How much more often a packet inside the spans is lost than one outside, in percentage
    /// points; `None` until both have been seen.
    pub(crate) fn excess_pct(&self) -> Option<f64> {
        Some((self.inside.rate()? - self.outside.rate()?) * 100.0)
    }

    /// Whether the hold should be applied: always with the gate off; with it on, until
    /// `min_packets` inside the spans have been seen (the `timed` policy was chosen for a LEO
    /// path), then while the excess loss reaches `min_excess_loss_pct`.
    pub(crate) fn hold_open(&self, gate: &HoldGate) -> bool {
        if !gate.enabled || self.inside_seen < gate.min_packets {
            return true;
        }
        self.excess_pct()
            .is_none_or(|excess| excess >= gate.min_excess_loss_pct)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gate() -> HoldGate {
        HoldGate::default()
    }

    /// `n` packets inside and `10 n` outside, losing the given fractions (spread evenly).
    fn fed(n: usize, inside_loss: f64, outside_loss: f64) -> BoundaryLoss {
        let mut loss = BoundaryLoss::default();
        let every = |rate: f64| {
            if rate > 0.0 {
                (1.0 / rate).round() as usize
            } else {
                0
            }
        };
        let (i_every, o_every) = (every(inside_loss), every(outside_loss));
        for k in 0..n {
            loss.record(true, i_every > 0 && k % i_every == 0);
            for j in 0..10 {
                loss.record(false, o_every > 0 && (k * 10 + j) % o_every == 0);
            }
        }
        loss
    }

    #[test]
    fn the_hold_stays_open_until_enough_packets_inside_the_spans_were_seen() {
        let gate = gate();
        let few = fed(gate.min_packets as usize - 1, 0.0, 0.0);
        assert!(few.hold_open(&gate), "too little evidence: the prior holds");
        let enough = fed(gate.min_packets as usize + 1, 0.0, 0.0);
        assert!(!enough.hold_open(&gate), "no loss at boundaries: no hold");
    }

    #[test]
    fn boundary_loss_above_the_background_opens_the_hold_and_equal_loss_does_not() {
        let gate = gate();
        let starlink = fed(500, 0.10, 0.005);
        assert!(starlink.excess_pct().unwrap() > 9.0);
        assert!(starlink.hold_open(&gate));
        let uniform = fed(500, 0.02, 0.02);
        assert!(uniform.excess_pct().unwrap().abs() < 0.5);
        assert!(
            !uniform.hold_open(&gate),
            "loss everywhere alike: a hold cannot dodge it"
        );
    }

    #[test]
    fn the_verdict_follows_a_path_that_stops_losing_at_boundaries() {
        let gate = gate();
        let mut loss = fed(500, 0.2, 0.0);
        assert!(loss.hold_open(&gate));
        for _ in 0..2000 {
            loss.record(true, false);
        }
        assert!(!loss.hold_open(&gate));
    }

    #[test]
    fn rows_profile_the_loss_after_the_instants_and_ignore_offsets_outside_them() {
        let mut loss = BoundaryLoss::default();
        assert_eq!(loss.row_pct(), [None; ROWS]);
        assert_eq!(loss.outside_pct(), None);
        for i in 0..100 {
            loss.record_offset(i, i % 2 == 0);
            loss.record_offset(100 + i, i % 10 == 0);
            loss.record_offset(-1 - i, true);
            loss.record_offset(300 + i, true);
            loss.record(false, i % 50 == 0);
        }
        let rows = loss.row_pct();
        assert!((rows[0].unwrap() - 50.0).abs() < 1.0, "{rows:?}");
        assert!((rows[1].unwrap() - 10.0).abs() < 1.0, "{rows:?}");
        assert_eq!(rows[2], None);
        assert!((loss.outside_pct().unwrap() - 2.0).abs() < 0.5);
    }

    #[test]
    fn a_gate_turned_off_always_holds() {
        let off = HoldGate {
            enabled: false,
            ..gate()
        };
        assert!(fed(1000, 0.0, 0.0).hold_open(&off));
    }
}

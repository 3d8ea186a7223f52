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

use super::config::{HoldGate, LEAD_ROW_MS, LeadTracking, MAX_LEAD_MS, ReceiverGate};
use super::loss_onset::two_proportion_z;

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
    /// The loss of packets sent in each 100-ms row before a predicted instant, the nearest
    /// first, and how many each row has seen since the call began: where the lead reaches.
    lead_rows: [(Tally, u64); LEAD_ROWS],
}

/// How many 100-ms rows before a predicted instant [`BoundaryLoss`] profiles for the lead.
pub(crate) const LEAD_ROWS: usize = (MAX_LEAD_MS / LEAD_ROW_MS) as usize;

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

    /// One packet's fate for the lead's rows: sent `offset_ms` before the predicted instant it
    /// is binned against (negative); offsets past the last row are not profiled.
    pub(crate) fn record_lead(&mut self, offset_ms: i64, lost: bool) {
        if offset_ms >= 0 {
            return;
        }
        let row = ((-offset_ms - 1) / LEAD_ROW_MS as i64) as usize;
        if let Some((tally, seen)) = self.lead_rows.get_mut(row) {
            tally.record(lost, INSIDE_MEMORY);
            *seen += 1;
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

    /// How far before the predicted instants the windows begin, ms: 0, or the rows before them
    /// from the nearest back up to `lead.max_ms`, as long as each from the second on loses
    /// significantly more than the packets sent away from the instants (`lead.min_z`; for a
    /// row within `current_ms`, two less, so that the lead does not flap with the background's
    /// bursts). The nearest row is not tested: a packet sent in the last 100 ms before a
    /// boundary leaves the bottleneck queue after it on any path with a queue (on the starlink
    /// scenario, whose boundaries lose nothing before the instant, that row loses 5 to 20 % of
    /// the sender's packets), and the windows' own offsets cover it.
    pub(crate) fn lead_ms(&self, lead: &LeadTracking, current_ms: u64) -> u64 {
        if !lead.enabled {
            return 0;
        }
        let rows = (lead.max_ms / LEAD_ROW_MS) as usize;
        let reached = self
            .lead_rows
            .iter()
            .take(rows)
            .enumerate()
            .skip(1)
            .take_while(|(i, (tally, seen))| {
                let within = (*i as u64 + 1) * LEAD_ROW_MS <= current_ms;
                let z = if within { lead.min_z - 2.0 } else { lead.min_z };
                *seen >= lead.min_packets && excess_z(*tally, self.outside) >= z
            })
            .count();
        if reached == 0 {
            0
        } else {
            (reached as u64 + 1) * LEAD_ROW_MS
        }
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

    /// Whether the playout raise and discardable frames should be applied (`open`: whether they
    /// are now): always with the gate off, and while no packet's fate has been reported at all
    /// (the sender's estimator reports none); before `min_packets` inside the spans have been
    /// seen, as `open_until_measured` says; after, while they are lost at least
    /// `min_excess_loss_pct` points more often than the others, with a two-proportion z of
    /// `min_z` (two less to stay open).
    pub(crate) fn receiver_open(&self, gate: &ReceiverGate, open: bool) -> bool {
        if !gate.enabled || (self.inside_seen == 0 && self.outside.sent == 0.0) {
            return true;
        }
        if self.inside_seen < gate.min_packets {
            return gate.open_until_measured;
        }
        let min_z = if open {
            (gate.min_z - 2.0).max(0.0)
        } else {
            gate.min_z
        };
        self.excess_pct()
            .is_some_and(|excess| excess >= gate.min_excess_loss_pct)
            && excess_z(self.inside, self.outside) >= min_z
    }
}

/// [`two_proportion_z`] of two tallies, their forgotten counts as weights.
fn excess_z(a: Tally, b: Tally) -> f64 {
    two_proportion_z((a.sent, a.lost), (b.sent, b.lost))
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

    fn lead() -> LeadTracking {
        LeadTracking::default()
    }

    /// `boundaries` boundaries of 20 packets per 100-ms row from 500 ms before the instant,
    /// losing one in `every[row]` in the rows before it (the nearest first; 0: none), and 400
    /// packets away from the instants losing one in 200 per boundary.
    fn fed_lead(boundaries: usize, every: [usize; LEAD_ROWS]) -> BoundaryLoss {
        let mut loss = BoundaryLoss::default();
        let mut k = 0usize;
        for _ in 0..boundaries {
            for (row, &every) in every.iter().enumerate() {
                for j in 0..20 {
                    k += 1;
                    let offset = -(row as i64 * 100) - 1 - j * 5;
                    loss.record_lead(offset, every > 0 && k.is_multiple_of(every));
                }
            }
            for _ in 0..400 {
                k += 1;
                loss.record(false, k.is_multiple_of(200));
            }
        }
        loss
    }

    #[test]
    fn the_lead_reaches_back_over_the_lossy_rows_before_the_instants() {
        // lagos.csv: about 5 % in each of the three rows before a boundary, 0.5 % elsewhere.
        let lagos = fed_lead(20, [20, 20, 20, 0, 0]);
        assert_eq!(lagos.lead_ms(&lead(), 0), 300);
        // Too few packets yet: no lead.
        assert_eq!(fed_lead(4, [20, 20, 20, 0, 0]).lead_ms(&lead(), 0), 0);
        // The reach stops at the first clean row from the second back, and at max_ms; the
        // nearest row alone (a queue's transit) is no lead.
        assert_eq!(fed_lead(20, [20, 20, 0, 20, 20]).lead_ms(&lead(), 0), 200);
        assert_eq!(fed_lead(20, [0, 20, 0, 0, 0]).lead_ms(&lead(), 0), 200);
        assert_eq!(fed_lead(40, [5, 0, 0, 0, 0]).lead_ms(&lead(), 0), 0);
        let short = LeadTracking {
            max_ms: 200,
            ..lead()
        };
        assert_eq!(lagos.lead_ms(&short, 0), 200);
        // The starlink scenario: nothing before the instant, no lead; off, none either.
        assert_eq!(fed_lead(40, [0, 0, 0, 0, 0]).lead_ms(&lead(), 0), 0);
        let off = LeadTracking {
            enabled: false,
            ..lead()
        };
        assert_eq!(lagos.lead_ms(&off, 0), 0);
    }

    #[test]
    fn a_row_already_reached_needs_less_evidence_to_stay() {
        // A row at about 1.7 % (lagos.csv's fourth row before a boundary) against 0.5 %.
        let marginal = fed_lead(12, [20, 20, 20, 60, 0]);
        let lead = lead();
        let z = excess_z(marginal.lead_rows[3].0, marginal.outside);
        assert!((lead.min_z - 2.0..lead.min_z).contains(&z), "z {z}");
        assert_eq!(marginal.lead_ms(&lead, 0), 300, "not reached yet");
        assert_eq!(marginal.lead_ms(&lead, 400), 400, "reached: it stays");
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

    #[test]
    fn the_receiver_gate_opens_only_on_evidenced_boundary_loss() {
        let gate = ReceiverGate::default();
        let reported_nothing = BoundaryLoss::default();
        assert!(
            reported_nothing.receiver_open(&gate, false),
            "no feedback at all: applied as before the gate"
        );
        let few = fed(gate.min_packets as usize - 1, 0.25, 0.005);
        assert!(
            !few.receiver_open(&gate, false),
            "too few packets: it waits"
        );
        let starlink = fed(gate.min_packets as usize, 0.25, 0.005);
        assert!(starlink.receiver_open(&gate, false));
        let clean = fed(1000, 0.0, 0.0);
        assert!(!clean.receiver_open(&gate, false), "delay spikes only");
        let uniform = fed(1000, 0.02, 0.02);
        assert!(
            !uniform.receiver_open(&gate, false),
            "loss everywhere alike"
        );
        let off = ReceiverGate {
            enabled: false,
            ..gate
        };
        assert!(clean.receiver_open(&off, false));
    }

    #[test]
    fn a_gate_open_until_measured_applies_the_actions_until_the_evidence_closes_it() {
        let gate = ReceiverGate {
            open_until_measured: true,
            ..ReceiverGate::default()
        };
        let few = fed(gate.min_packets as usize - 1, 0.0, 0.0);
        assert!(few.receiver_open(&gate, false), "too few packets: open");
        assert!(!fed(1000, 0.0, 0.0).receiver_open(&gate, true), "clean");
        assert!(fed(1000, 0.25, 0.005).receiver_open(&gate, true), "lossy");
    }

    #[test]
    fn an_open_receiver_gate_needs_less_evidence_to_stay_open() {
        let gate = ReceiverGate::default();
        // 4 % against 1 % over 150 boundary packets: an excess of 3 points, z below 3.
        let weak = fed(150, 0.04, 0.01);
        let z = excess_z(weak.inside, weak.outside);
        assert!((1.0..3.0).contains(&z), "z {z}");
        assert!(!weak.receiver_open(&gate, false), "not enough to open");
        assert!(weak.receiver_open(&gate, true), "enough to stay open");
        let mut faded = fed(500, 0.2, 0.0);
        assert!(faded.receiver_open(&gate, true));
        for _ in 0..3000 {
            faded.record(true, false);
        }
        assert!(
            !faded.receiver_open(&gate, true),
            "the boundaries stopped losing"
        );
    }
}

//! Where, relative to the predicted instants, the path actually loses packets: the evidence that
//! aligns the action windows with the handovers when the forecast's clock and the link's
//! disagree (docs/architecture.md, "Handover-timed actions", the onset tracker).
//!
//! A real call's host clock is the forecast's reference, and it can be tens of milliseconds off
//! the constellation's; measured on the call engine, a hold 50 ms early releases its backlog
//! into the worst 100-ms row and makes more freezes than no hold at all
//! (docs/experiments/ablation-2026-12-02.md). The sender sees where its losses fall: transport
//! feedback says which packets were lost, and each packet's send instant says how far from the
//! nearest predicted instant it left. The tracker counts the packets sent and lost per 10-ms bin
//! of that offset over the call's first boundaries (sent without the actions that change what is
//! sent) and finds the `window_ms`-wide span of offsets that loses most; if it loses
//! significantly more than all binned packets, every window moves by that span's start, for
//! the rest of the call.

use super::config::OnsetTracking;

/// The width of one offset bin, ms: the resolution of the shift. Ten bins per 100-ms row of a
/// loss profile, and finer than any window's edge has been tuned to.
pub(crate) const BIN_MS: i64 = 10;

/// The earliest offset from a predicted instant a packet is binned at, ms. It bounds
/// [`OnsetTracking::max_shift_ms`] (the span looked at reaches that far before the instant).
pub(crate) const FIRST_OFFSET_MS: i64 = -250;

/// The offset after the last bin, ms: room for the largest shift plus the widest span
/// ([`OnsetTracking::max_shift_ms`] + [`OnsetTracking::window_ms`], each at most 250).
pub(crate) const END_OFFSET_MS: i64 = 500;

const BINS: usize = ((END_OFFSET_MS - FIRST_OFFSET_MS) / BIN_MS) as usize;

/// Loss per offset from the nearest predicted instant, and the shift in force.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LossOnset {
    bins: [Span; BINS],
    shift_ms: i64,
    placed: bool,
}

impl Default for LossOnset {
    fn default() -> Self {
        Self {
            bins: [Span::default(); BINS],
            shift_ms: 0,
            placed: false,
        }
    }
}

/// Packets sent and lost: one bin, or the bins covering one span of offsets pooled.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Span {
    sent: f64,
    lost: f64,
}

impl Span {
    fn rate(&self) -> f64 {
        if self.sent > 0.0 {
            self.lost / self.sent
        } else {
            0.0
        }
    }
}

impl LossOnset {
    /// The shift in force: how far after the predicted instants the windows are placed, ms.
    pub(crate) fn shift_ms(&self) -> i64 {
        self.shift_ms
    }

    /// One packet sent `offset_ms` after its nearest predicted instant (negative: before it),
    /// lost or not; offsets outside the binned range are ignored.
    pub(crate) fn record(&mut self, offset_ms: i64, lost: bool) {
        if !(FIRST_OFFSET_MS..END_OFFSET_MS).contains(&offset_ms) {
            return;
        }
        let bin = ((offset_ms - FIRST_OFFSET_MS) / BIN_MS) as usize;
        self.bins[bin].sent += 1.0;
        if lost {
            self.bins[bin].lost += 1.0;
        }
    }

    /// Whether the shift has been placed: every span it could move to had enough packets.
    pub(crate) fn placed(&self) -> bool {
        self.placed
    }

    /// Places the shift once every span has `min_packets` packets: at the start of the span
    /// that loses most, if that span loses significantly more than all binned packets together,
    /// else at 0. Returns whether the shift changed. Once placed, the shift stays for the call:
    /// a clock's offset is steady over a call, and after placement the actions themselves (the
    /// hold's gap and the burst it releases, the boost's extra packets) move where the sender's
    /// packets meet the loss, so later bins would measure the actions, not the clock. With
    /// tracking off, the shift is 0 and unplaced.
    pub(crate) fn update(&mut self, tracking: &OnsetTracking) -> bool {
        let before = self.shift_ms;
        if !tracking.enabled {
            self.shift_ms = 0;
            self.placed = false;
            return before != 0;
        }
        if self.placed || !self.has_evidence(tracking) {
            return false;
        }
        self.placed = true;
        let max = (tracking.max_shift_ms as i64 / BIN_MS) * BIN_MS;
        let all = self.span(FIRST_OFFSET_MS, (END_OFFSET_MS - FIRST_OFFSET_MS) as u64);
        let best = (-max..=max)
            .step_by(BIN_MS as usize)
            .map(|start| (start, self.span(start, tracking.window_ms)))
            // Of equal spans the latest wins (`max_by` keeps the last): a sender sends in bursts
            // (a frame every 33 ms), so spans starting anywhere between the last clean burst and
            // the first lossy one cover the same packets, and the onset is at the lossy one.
            .max_by(|(_, a), (_, b)| a.rate().total_cmp(&b.rate()));
        self.shift_ms = best
            .filter(|(_, span)| z_score(*span, all) >= tracking.min_z)
            .map_or(0, |(start, _)| start);
        self.shift_ms != before
    }

    /// Whether every span the shift could move to has at least `min_packets` packets.
    fn has_evidence(&self, tracking: &OnsetTracking) -> bool {
        let max = (tracking.max_shift_ms as i64 / BIN_MS) * BIN_MS;
        (-max..=max)
            .step_by(BIN_MS as usize)
            .all(|start| self.span(start, tracking.window_ms).sent >= tracking.min_packets as f64)
    }

    /// The pooled loss of the bins covering `[start, start + width)`.
    fn span(&self, start_ms: i64, width_ms: u64) -> Span {
        let first = ((start_ms - FIRST_OFFSET_MS) / BIN_MS).max(0) as usize;
        let count = (width_ms as i64 / BIN_MS).max(1) as usize;
        self.bins.iter().skip(first).take(count).fold(
            Span {
                sent: 0.0,
                lost: 0.0,
            },
            |acc, bin| Span {
                sent: acc.sent + bin.sent,
                lost: acc.lost + bin.lost,
            },
        )
    }
}

/// The two-proportion z statistic of `a`'s loss rate over `b`'s.
fn z_score(a: Span, b: Span) -> f64 {
    two_proportion_z((a.sent, a.lost), (b.sent, b.lost))
}

/// The two-proportion z statistic of the loss rate of `a` over `b`, each `(sent, lost)`
/// (pooled variance); 0 when either is empty or neither loses.
pub(crate) fn two_proportion_z(a: (f64, f64), b: (f64, f64)) -> f64 {
    let ((a_sent, a_lost), (b_sent, b_lost)) = (a, b);
    if a_sent <= 0.0 || b_sent <= 0.0 {
        return 0.0;
    }
    let pooled = (a_lost + b_lost) / (a_sent + b_sent);
    let variance = pooled * (1.0 - pooled) * (1.0 / a_sent + 1.0 / b_sent);
    if variance <= 0.0 {
        return 0.0;
    }
    (a_lost / a_sent - b_lost / b_sent) / variance.sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tracking() -> OnsetTracking {
        OnsetTracking::default()
    }

    /// Boundaries whose loss begins `onset_ms` after the predicted instant: 45 % of the packets
    /// in the first 100 ms lost, 20 % in the next 100 ms, 0.5 % elsewhere (every `n`-th packet,
    /// deterministically), two packets per bin per boundary.
    fn feed(onset: &mut LossOnset, boundaries: usize, onset_ms: i64) {
        let mut k = 0usize;
        for _ in 0..boundaries {
            for offset in (FIRST_OFFSET_MS..END_OFFSET_MS).step_by(5) {
                let row = offset - onset_ms;
                let every = if (0..100).contains(&row) {
                    2 // ~50 %
                } else if (100..200).contains(&row) {
                    5
                } else {
                    200
                };
                k += 1;
                onset.record(offset, k.is_multiple_of(every));
            }
            onset.update(&tracking());
        }
    }

    #[test]
    fn aligned_loss_keeps_the_windows_where_the_forecast_puts_them() {
        let mut onset = LossOnset::default();
        feed(&mut onset, 40, 0);
        assert_eq!(onset.shift_ms(), 0);
    }

    #[test]
    fn a_forecast_early_or_late_by_50_ms_is_found_and_the_shift_then_stays() {
        let mut early = LossOnset::default();
        feed(&mut early, 40, 50);
        assert_eq!(
            early.shift_ms(),
            50,
            "loss begins 50 ms after the predicted instant"
        );
        let mut late = LossOnset::default();
        feed(&mut late, 3, -50);
        assert!(late.placed());
        assert_eq!(late.shift_ms(), -50);
        // What follows placement (the actions' own effect on where packets meet the loss) does
        // not move it.
        feed(&mut late, 200, 0);
        assert_eq!(late.shift_ms(), -50);
    }

    #[test]
    fn no_shift_before_enough_packets_or_on_a_path_without_boundary_loss() {
        let mut few = LossOnset::default();
        feed(&mut few, 2, 80);
        assert_eq!(few.shift_ms(), 0, "two boundaries are too little evidence");
        assert!(!few.placed());
        let mut flat = LossOnset::default();
        for k in 0..20_000usize {
            flat.record(FIRST_OFFSET_MS + (k as i64 % 750), k.is_multiple_of(50));
            flat.update(&tracking());
        }
        assert_eq!(
            flat.shift_ms(),
            0,
            "uniform loss: no span is significantly worse"
        );
        assert!(flat.placed());
    }

    #[test]
    fn the_shift_stays_within_its_bound_and_tracking_off_resets_it() {
        let mut onset = LossOnset::default();
        let bounded = OnsetTracking {
            max_shift_ms: 30,
            ..tracking()
        };
        for _ in 0..40 {
            for offset in (FIRST_OFFSET_MS..END_OFFSET_MS).step_by(5) {
                onset.record(offset, (100..200).contains(&offset));
            }
            onset.update(&bounded);
        }
        assert_eq!(onset.shift_ms(), 30);
        let off = OnsetTracking {
            enabled: false,
            ..tracking()
        };
        assert!(onset.update(&off));
        assert_eq!(onset.shift_ms(), 0);
        assert!(!onset.placed(), "on again, it places the shift afresh");
    }

    #[test]
    fn offsets_outside_the_binned_range_are_ignored() {
        let mut onset = LossOnset::default();
        onset.record(FIRST_OFFSET_MS - 1, true);
        onset.record(END_OFFSET_MS, true);
        assert_eq!(onset, LossOnset::default());
    }
}

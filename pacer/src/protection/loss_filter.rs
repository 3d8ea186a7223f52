//! The max-window loss filter libwebrtc's FEC controller protects against.
//!
//! Receiver reports say what fraction of packets was lost since the previous report. FEC has to be
//! in place *before* the next burst, so libwebrtc does not protect against the latest report but
//! against the worst second of the last ten: `FecControllerDefault::UpdateFecRates` asks
//! `VCMLossProtectionLogic::FilteredLoss` for `kMaxFilter`, which keeps one maximum per window of
//! `kLossPrShortFilterWinMs` = 1000 ms in a history of `kLossPrHistorySize` = 10 windows and
//! returns the largest that is at most 10 s old (`modules/video_coding/media_opt_util.{h,cc}`,
//! `UpdateMaxLossHistory` and `MaxFilteredLossPr`; reference sheet part 6).
//!
//! This follows libwebrtc's bookkeeping exactly, quirks included. A history entry is made by the
//! first sample at least 1000 ms after the previous entry, carries that sample's instant, and holds
//! the maximum of the samples since the previous entry; the sample that makes the entry is counted
//! only when those were all zero (or there was no entry yet). libwebrtc feeds the filter the latest
//! fraction lost on every rate update, many times a second, so a sample skipped this way is
//! counted at the next update; [`ProtectionController`] does the same.
//!
//! [`ProtectionController`]: crate::protection::ProtectionController

use std::time::{Duration, Instant};

/// `kLossPrHistorySize` (`modules/video_coding/media_opt_util.h`): per-window maxima kept.
pub(crate) const LOSS_HISTORY_SIZE: usize = 10;

/// `kLossPrShortFilterWinMs` (`modules/video_coding/media_opt_util.h`): one history entry per
/// window of this length.
pub(crate) const LOSS_WINDOW: Duration = Duration::from_millis(1000);

/// libwebrtc's max-window filter over loss fractions out of 255.
#[derive(Debug, Clone, Default)]
pub struct LossFilter {
    /// `(instant the entry was made, maximum it holds)`, newest first; `None` where libwebrtc has
    /// `timeMs == -1`.
    history: [Option<(Instant, u8)>; LOSS_HISTORY_SIZE],
    /// The maximum seen since the newest entry was made (`_shortMaxLossPr255`).
    short_max: u8,
}

impl LossFilter {
    /// An empty filter: it returns 0 until something is recorded.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records a loss fraction (x255) observed at `now` (`UpdateMaxLossHistory`).
    pub fn record(&mut self, now: Instant, loss255: u8) {
        match self.history[0] {
            Some((opened, _)) if now.saturating_duration_since(opened) < LOSS_WINDOW => {
                self.short_max = self.short_max.max(loss255);
            }
            newest => {
                if newest.is_none() {
                    self.short_max = loss255;
                } else {
                    self.history.rotate_right(1);
                }
                if self.short_max == 0 {
                    self.short_max = loss255;
                }
                self.history[0] = Some((now, self.short_max));
                self.short_max = 0;
            }
        }
    }

    /// The largest loss of the entries made at most 10 s before `now` and of the samples since
    /// the newest entry (`MaxFilteredLossPr`).
    pub fn filtered(&self, now: Instant) -> u8 {
        let mut max = self.short_max;
        for (opened, loss) in self.history.iter().map_while(|entry| *entry) {
            if now.saturating_duration_since(opened) > LOSS_WINDOW * LOSS_HISTORY_SIZE as u32 {
                break; // this entry and every older one are too old
            }
            max = max.max(loss);
        }
        max
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn an_empty_filter_reads_zero() {
        assert_eq!(LossFilter::new().filtered(Instant::now()), 0);
    }

    #[test]
    fn the_filter_is_the_max_of_per_second_maxima_over_ten_seconds() {
        let t0 = Instant::now();
        let mut filter = LossFilter::new();
        // One report a second, each making its own entry: 10, 40, 5, 20, 0, 0, 0, 0, 0, 0.
        let reports = [10, 40, 5, 20, 0, 0, 0, 0, 0, 0];
        for (second, &loss) in reports.iter().enumerate() {
            filter.record(t0 + ms(1000 * second as u64), loss);
        }
        assert_eq!(filter.filtered(t0 + ms(9_000)), 40);
        // 40 was recorded at 1 s: still counted at 11 s (10 s old), gone after.
        assert_eq!(filter.filtered(t0 + ms(11_000)), 40);
        assert_eq!(
            filter.filtered(t0 + ms(11_001)),
            20,
            "20 (at 3 s) is the next largest"
        );
        assert_eq!(filter.filtered(t0 + ms(13_001)), 0);
    }

    #[test]
    fn a_single_report_expires_ten_seconds_after_it_was_recorded() {
        let t0 = Instant::now();
        let mut filter = LossFilter::new();
        filter.record(t0, 50);
        assert_eq!(filter.filtered(t0), 50);
        assert_eq!(filter.filtered(t0 + ms(10_000)), 50);
        assert_eq!(filter.filtered(t0 + ms(10_001)), 0);
    }

    #[test]
    fn reports_within_a_second_share_one_entry_holding_their_maximum() {
        let t0 = Instant::now();
        let mut filter = LossFilter::new();
        filter.record(t0, 10); // the first entry, (0 ms, 10)
        filter.record(t0 + ms(300), 30); // within 1 s of it: the running maximum
        filter.record(t0 + ms(600), 20);
        assert_eq!(filter.filtered(t0 + ms(600)), 30);
        // At 1 s a new entry is made holding the samples since the first (max 30); the sample
        // that makes it, 5, is not counted, as in libwebrtc's UpdateMaxLossHistory.
        filter.record(t0 + ms(1_000), 5);
        assert_eq!(filter.filtered(t0 + ms(1_000)), 30);
        filter.record(t0 + ms(1_200), 7);
        assert_eq!(filter.filtered(t0 + ms(1_200)), 30);
        // The entries (0 ms, 10) and (1000 ms, 30): the 30 seen at 300 ms expires with its entry.
        assert_eq!(filter.filtered(t0 + ms(11_000)), 30);
        assert_eq!(
            filter.filtered(t0 + ms(11_001)),
            7,
            "only the 7 since the newest entry is left"
        );
    }

    #[test]
    fn the_history_holds_ten_entries_and_the_eleventh_pushes_the_oldest_out() {
        let t0 = Instant::now();
        let mut filter = LossFilter::new();
        filter.record(t0, 60);
        for second in 1..=9 {
            filter.record(t0 + ms(1000 * second), 0);
        }
        assert_eq!(filter.filtered(t0 + ms(9_500)), 60);
        // The eleventh entry shifts the 60 out of the history, though it is only 10 s old.
        filter.record(t0 + ms(10_000), 0);
        assert_eq!(filter.filtered(t0 + ms(10_000)), 0);
    }
}

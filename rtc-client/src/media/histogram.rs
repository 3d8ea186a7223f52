//! Capture-to-render delays kept in constant memory: a histogram whose bins are fine where
//! delays usually are and coarse where they rarely go.
//!
//! Bins are 0.1 ms wide below 1 s, 1 ms from 1 s to 10 s, 10 ms from 10 s to 60 s and 1 s beyond,
//! so a percentile is exact to the bin's width (a delay is reported as its bin's lower edge) and
//! a call of any length needs at most about 24 000 bins (stored sparsely, so a short interval
//! holds only the bins it touched). An hour at 30 fps would otherwise keep 108 000 delays.

use std::collections::BTreeMap;
use std::time::Duration;

/// `(start, width)` of each band, nanoseconds; the last band is open.
const BANDS: [(u64, u64); 4] = [
    (0, 100_000),
    (1_000_000_000, 1_000_000),
    (10_000_000_000, 10_000_000),
    (60_000_000_000, 1_000_000_000),
];

/// A histogram of delays (see the module documentation).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DelayHistogram {
    bins: BTreeMap<u64, u64>,
    count: u64,
}

impl DelayHistogram {
    /// An empty histogram.
    pub fn new() -> Self {
        Self::default()
    }

    /// Counts one delay.
    pub fn record(&mut self, delay: Duration) {
        let ns = u64::try_from(delay.as_nanos()).unwrap_or(u64::MAX);
        *self.bins.entry(bin_of(ns)).or_insert(0) += 1;
        self.count += 1;
    }

    /// Delays counted.
    pub fn len(&self) -> u64 {
        self.count
    }

    /// Whether nothing was counted.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The `p`-th percentile (0 to 100), nearest rank: the lower edge of the bin holding the
    /// smallest delay with at least `p` percent of the delays at or below it. `None` when empty.
    pub fn percentile(&self, p: f64) -> Option<Duration> {
        if self.count == 0 {
            return None;
        }
        let rank = ((p.clamp(0.0, 100.0) / 100.0) * self.count as f64).ceil() as u64;
        let rank = rank.clamp(1, self.count);
        let mut seen = 0;
        for (&bin, &n) in &self.bins {
            seen += n;
            if seen >= rank {
                return Some(Duration::from_nanos(lower_edge(bin)));
            }
        }
        None
    }
}

/// The bin index of `ns`: bins are numbered across the bands in order.
fn bin_of(ns: u64) -> u64 {
    let mut first_bin = 0;
    for (k, &(start, width)) in BANDS.iter().enumerate() {
        let end = BANDS.get(k + 1).map_or(u64::MAX, |b| b.0);
        if ns < end {
            return first_bin + (ns - start) / width;
        }
        first_bin += (end - start) / width;
    }
    first_bin
}

/// The smallest delay in bin `bin`, ns.
fn lower_edge(bin: u64) -> u64 {
    let mut first_bin = 0;
    for (k, &(start, width)) in BANDS.iter().enumerate() {
        let end = BANDS.get(k + 1).map_or(u64::MAX, |b| b.0);
        let bins = (end - start) / width;
        if bin < first_bin + bins || k + 1 == BANDS.len() {
            return start.saturating_add((bin - first_bin).saturating_mul(width));
        }
        first_bin += bins;
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: f64) -> Duration {
        Duration::from_secs_f64(v / 1000.0)
    }

    #[test]
    fn bins_are_a_tenth_of_a_ms_below_a_second_then_coarser() {
        for (delay_ns, edge_ns) in [
            (0, 0),
            (123_456_789, 123_400_000),
            (999_999_999, 999_900_000),
            (1_000_000_000, 1_000_000_000),
            (2_345_678_901, 2_345_000_000),
            (12_345_678_901, 12_340_000_000),
            (75_500_000_000, 75_000_000_000),
        ] {
            assert_eq!(lower_edge(bin_of(delay_ns)), edge_ns, "{delay_ns}");
        }
        assert_eq!(bin_of(1_000_000_000), 10_000);
        assert_eq!(bin_of(10_000_000_000), 19_000);
        assert_eq!(bin_of(60_000_000_000), 24_000);
        assert_eq!(
            lower_edge(bin_of(u64::MAX)),
            60_000_000_000 + (u64::MAX - 60_000_000_000) / 1_000_000_000 * 1_000_000_000
        );
    }

    #[test]
    fn percentiles_are_nearest_rank_to_the_bin_edge() {
        let mut h = DelayHistogram::new();
        assert_eq!(h.percentile(50.0), None);
        for v in [40.0, 10.0, 30.0, 20.0, 50.05] {
            h.record(ms(v));
        }
        assert_eq!(h.len(), 5);
        assert_eq!(h.percentile(0.0), Some(ms(10.0)));
        assert_eq!(h.percentile(50.0), Some(ms(30.0)));
        assert_eq!(h.percentile(80.0), Some(ms(40.0)));
        assert_eq!(h.percentile(81.0), Some(ms(50.0)));
        assert_eq!(h.percentile(100.0), Some(ms(50.0)));
    }

    #[test]
    fn an_hour_of_frames_needs_few_bins() {
        let mut h = DelayHistogram::new();
        for i in 0..108_000u64 {
            h.record(Duration::from_micros(60_000 + (i * 7_919) % 400_000));
        }
        assert!(h.bins.len() <= 4_000, "{}", h.bins.len());
        assert_eq!(h.len(), 108_000);
    }
}

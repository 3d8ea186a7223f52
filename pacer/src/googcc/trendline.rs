//! The trendline filter: accumulated delay variation, exponentially smoothed, and the
//! least-squares slope of the smoothed delay against arrival time over a window of groups.
//!
//! Port of the filter half of libwebrtc `modules/congestion_controller/goog_cc/trendline_estimator.cc`
//! (`TrendlineEstimator::UpdateTrendline`, `LinearFitSlope`); the detector half is in
//! [`overuse`](super::overuse).

use std::collections::VecDeque;

/// Groups in the regression window.
/// libwebrtc `goog_cc/trendline_estimator.cc`, `kDefaultTrendlineWindowSize`.
pub(super) const WINDOW_SIZE: usize = 20;

/// Smoothing coefficient of the accumulated delay.
/// libwebrtc `goog_cc/trendline_estimator.cc`, `kDefaultTrendlineSmoothingCoeff`.
pub(super) const SMOOTHING_COEFF: f64 = 0.9;

/// Cap on the delta counter.
/// libwebrtc `goog_cc/trendline_estimator.cc`, `kDeltaCounterMax`.
pub(super) const DELTA_COUNTER_MAX: u32 = 1000;

#[derive(Debug, Clone, Copy)]
struct Point {
    arrival_ms: f64,
    smoothed_delay_ms: f64,
}

/// The trendline filter.
#[derive(Debug, Clone)]
pub(super) struct Trendline {
    num_deltas: u32,
    first_arrival_ms: Option<i64>,
    accumulated_delay_ms: f64,
    smoothed_delay_ms: f64,
    history: VecDeque<Point>,
    trend: f64,
}

impl Default for Trendline {
    fn default() -> Self {
        Self::new()
    }
}

impl Trendline {
    /// An empty filter with trend 0.
    pub(super) fn new() -> Self {
        Self {
            num_deltas: 0,
            first_arrival_ms: None,
            accumulated_delay_ms: 0.0,
            smoothed_delay_ms: 0.0,
            history: VecDeque::with_capacity(WINDOW_SIZE + 1),
            trend: 0.0,
        }
    }

    /// Adds one group delta; returns the (possibly unchanged) trend. `arrival_ms` is the group's
    /// arrival time in whole milliseconds, as libwebrtc passes `receive_time.ms()`.
    pub(super) fn update(
        &mut self,
        recv_delta_ms: f64,
        send_delta_ms: f64,
        arrival_ms: i64,
    ) -> f64 {
        let delta_ms = recv_delta_ms - send_delta_ms;
        self.num_deltas = (self.num_deltas + 1).min(DELTA_COUNTER_MAX);
        let first = *self.first_arrival_ms.get_or_insert(arrival_ms);
        self.accumulated_delay_ms += delta_ms;
        self.smoothed_delay_ms = SMOOTHING_COEFF * self.smoothed_delay_ms
            + (1.0 - SMOOTHING_COEFF) * self.accumulated_delay_ms;
        self.history.push_back(Point {
            arrival_ms: (arrival_ms - first) as f64,
            smoothed_delay_ms: self.smoothed_delay_ms,
        });
        if self.history.len() > WINDOW_SIZE {
            self.history.pop_front();
        }
        if self.history.len() == WINDOW_SIZE
            && let Some(slope) = linear_fit_slope(&self.history)
        {
            self.trend = slope;
        }
        self.trend
    }

    /// Deltas seen so far (capped at [`DELTA_COUNTER_MAX`]).
    pub(super) fn num_deltas(&self) -> u32 {
        self.num_deltas
    }

    /// The current smoothed accumulated delay, ms.
    #[cfg(test)]
    pub(super) fn smoothed_delay_ms(&self) -> f64 {
        self.smoothed_delay_ms
    }
}

fn linear_fit_slope(points: &VecDeque<Point>) -> Option<f64> {
    let n = points.len() as f64;
    let (sum_x, sum_y) = points.iter().fold((0.0, 0.0), |(sx, sy), p| {
        (sx + p.arrival_ms, sy + p.smoothed_delay_ms)
    });
    let (x_avg, y_avg) = (sum_x / n, sum_y / n);
    let mut numerator = 0.0;
    let mut denominator = 0.0;
    for p in points {
        let dx = p.arrival_ms - x_avg;
        numerator += dx * (p.smoothed_delay_ms - y_avg);
        denominator += dx * dx;
    }
    (denominator != 0.0).then(|| numerator / denominator)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_trend_stays_zero_until_the_window_is_full() {
        let mut t = Trendline::new();
        for i in 0..19 {
            assert_eq!(0.0, t.update(6.0, 5.0, i * 5));
        }
        assert_eq!(19, t.num_deltas());
        assert!(t.update(6.0, 5.0, 95) > 0.0, "the 20th group fits a line");
    }

    #[test]
    fn smoothing_follows_the_exponential_filter_exactly() {
        let mut t = Trendline::new();
        t.update(6.0, 5.0, 0); // accumulated 1, smoothed 0.1
        assert!((t.smoothed_delay_ms() - 0.1).abs() < 1e-12);
        t.update(7.0, 5.0, 5); // accumulated 3, smoothed 0.09 + 0.3 = 0.39
        assert!((t.smoothed_delay_ms() - 0.39).abs() < 1e-12);
    }

    #[test]
    fn a_linear_smoothed_sequence_gives_its_slope() {
        // Points y = 2x + 1 give slope 2 exactly.
        let points: VecDeque<Point> = (0..20)
            .map(|i| Point {
                arrival_ms: f64::from(i) * 5.0,
                smoothed_delay_ms: 2.0 * f64::from(i) * 5.0 + 1.0,
            })
            .collect();
        assert_eq!(Some(2.0), linear_fit_slope(&points));
        let flat: VecDeque<Point> = (0..20)
            .map(|_| Point {
                arrival_ms: 3.0,
                smoothed_delay_ms: 1.0,
            })
            .collect();
        assert_eq!(
            None,
            linear_fit_slope(&flat),
            "a vertical line has no slope"
        );
    }

    #[test]
    fn the_slope_of_a_known_queue_build_up_matches_a_hand_computation() {
        // Every group: sent 5 ms apart, received 6 ms apart (a 1.2x overdrive), arrival in
        // steps of 6 ms. accumulated_k = k + 1, smoothed_k = sum_{j<=k} 0.1 * 0.9^(k-j) * (j+1).
        let mut t = Trendline::new();
        let mut trend = 0.0;
        for k in 0..20 {
            trend = t.update(6.0, 5.0, 6 * k);
        }
        // Hand computation of the same regression (x = 6k, y = smoothed_k).
        let mut smoothed = 0.0;
        let mut ys = Vec::new();
        for k in 0..20 {
            smoothed = 0.9 * smoothed + 0.1 * f64::from(k + 1);
            ys.push(smoothed);
        }
        let xs: Vec<f64> = (0..20).map(|k| 6.0 * f64::from(k)).collect();
        let xm = xs.iter().sum::<f64>() / 20.0;
        let ym = ys.iter().sum::<f64>() / 20.0;
        let num: f64 = xs.iter().zip(&ys).map(|(x, y)| (x - xm) * (y - ym)).sum();
        let den: f64 = xs.iter().map(|x| (x - xm) * (x - xm)).sum();
        assert!(
            (num / den - trend).abs() < 1e-15,
            "{trend} vs {}",
            num / den
        );
        // And the figure itself: 0.108388 ms of smoothed delay per ms of arrival time.
        assert!((trend - 0.108_388_389_492).abs() < 1e-12, "{trend}");
    }
}

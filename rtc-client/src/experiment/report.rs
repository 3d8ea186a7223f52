//! The experiment's report: per scenario and policy, each metric's mean over the calls, its 95 %
//! bootstrap confidence interval, its relative change against `default` and a paired test
//! against `default` on the same seeds; as a serialisable [`Report`] (report.json) and as
//! markdown (report.md, the table that goes into a closing note).
//!
//! The report holds no wall-clock figure, so it is byte-identical for the same plan whatever
//! the machine or the number of threads.

pub use super::CallOutcome;
use super::Metric;
use super::stats::{
    BOOTSTRAP_RESAMPLES, CONFIDENCE, PAIRED_TEST_NAME, SIGNIFICANCE, bootstrap_ci, mean,
    paired_permutation_p, relative_change_pct, seed_from_text,
};
use crate::call::SenderNames;
use serde::Serialize;
use std::fmt::Write;

/// Schema tag of report.json.
pub const REPORT_SCHEMA: &str = "leopace.experiment.v1";

/// The policy the others are compared with: WebRTC's fixed 2000 ms.
pub const BASELINE: &str = "default";

/// What was run: enough to run it again.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    /// Scenario names, in report order.
    pub scenarios: Vec<String>,
    /// Policy names as telemetry writes them, in report order.
    pub policies: Vec<String>,
    /// Calls per cell.
    pub calls: usize,
    /// Seed of call 0; call i uses `seed_base + i`.
    pub seed_base: u64,
    /// Call length, s.
    pub duration_s: f64,
    /// Decision interval, s.
    pub interval_s: f64,
    /// Where the policy's forecast came from (`oracle`, ...).
    pub handover: String,
    /// The sender of each scenario's calls, in `scenarios` order (the command line's flags over
    /// the scenario file's `[sender]` table over the defaults).
    pub senders: Vec<SenderNames>,
}

impl Plan {
    /// The seeds every cell uses, in order.
    pub fn seeds(&self) -> Vec<u64> {
        (0..self.calls as u64)
            .map(|i| self.seed_base.wrapping_add(i))
            .collect()
    }
}

/// How the numbers were computed, written into the report so a reader need not guess.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Method {
    /// The confidence interval's method.
    pub interval: &'static str,
    /// Bootstrap resamples.
    pub resamples: usize,
    /// Confidence level.
    pub confidence: f64,
    /// The significance test.
    pub test: &'static str,
    /// The level below which a difference is marked significant.
    pub significance: f64,
    /// The policy compared against, when it is in the plan.
    pub baseline: Option<&'static str>,
}

/// One metric of one cell.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricSummary {
    /// The metric's key (the telemetry's `qoe` field name).
    pub metric: &'static str,
    /// Its unit.
    pub unit: &'static str,
    /// Mean over the calls.
    pub mean: f64,
    /// Lower end of the 95 % bootstrap interval of the mean.
    pub ci_low: f64,
    /// Upper end of the 95 % bootstrap interval of the mean.
    pub ci_high: f64,
    /// Relative change of the mean against the baseline's, percent (`None` for the baseline
    /// itself, without a baseline, or when the baseline's mean is 0).
    pub change_vs_default_pct: Option<f64>,
    /// The paired test's two-sided p-value against the baseline on the same seeds.
    pub p_value: Option<f64>,
    /// `p_value < 0.05`.
    pub significant: Option<bool>,
    /// The per-call values, in seed order.
    pub values: Vec<f64>,
}

/// One (scenario, policy) cell.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cell {
    /// Scenario name.
    pub scenario: String,
    /// Policy name.
    pub policy: String,
    /// The seeds of its calls, in order.
    pub seeds: Vec<u64>,
    /// Decision intervals over all its calls.
    pub intervals: usize,
    /// One summary per metric, in [`Metric::ALL`] order.
    pub metrics: Vec<MetricSummary>,
}

impl Cell {
    /// The summary of `metric`.
    pub fn metric(&self, metric: Metric) -> Option<&MetricSummary> {
        self.metrics.iter().find(|m| m.metric == metric.key())
    }
}

/// Why a report cannot be built.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ReportError {
    /// The outcomes do not match the plan's shape.
    #[error("expected {expected} call outcomes (scenarios x policies x calls), got {got}")]
    Shape {
        /// scenarios x policies x calls.
        expected: usize,
        /// What was given.
        got: usize,
    },
    /// The plan has no calls.
    #[error("the plan has no calls")]
    Empty,
}

/// The whole report (report.json).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// [`REPORT_SCHEMA`].
    pub schema: &'static str,
    /// What was run.
    pub plan: Plan,
    /// How it was summarised.
    pub method: Method,
    /// Cells in plan order: scenario-major, then policy.
    pub cells: Vec<Cell>,
}

impl Report {
    /// Summarises `outcomes`, ordered scenario-major, then policy, then seed (the plan's order,
    /// as [`super::run::parallel_map`] returns it).
    pub fn build(plan: Plan, outcomes: &[CallOutcome]) -> Result<Self, ReportError> {
        let per_cell = plan.calls;
        let expected = plan.scenarios.len() * plan.policies.len() * per_cell;
        if expected == 0 {
            return Err(ReportError::Empty);
        }
        if outcomes.len() != expected {
            return Err(ReportError::Shape {
                expected,
                got: outcomes.len(),
            });
        }
        let baseline = plan.policies.iter().position(|p| p == BASELINE);
        let mut cells = Vec::new();
        for (s, scenario) in plan.scenarios.iter().enumerate() {
            let cell_calls = |p: usize| {
                let start = (s * plan.policies.len() + p) * per_cell;
                &outcomes[start..start + per_cell]
            };
            for (p, policy) in plan.policies.iter().enumerate() {
                let calls = cell_calls(p);
                let reference = baseline.filter(|&b| b != p).map(cell_calls);
                let metrics = Metric::ALL
                    .iter()
                    .map(|&metric| summarise(scenario, policy, metric, calls, reference))
                    .collect();
                cells.push(Cell {
                    scenario: scenario.clone(),
                    policy: policy.clone(),
                    seeds: calls.iter().map(|c| c.seed).collect(),
                    intervals: calls.iter().map(|c| c.intervals).sum(),
                    metrics,
                });
            }
        }
        Ok(Self {
            schema: REPORT_SCHEMA,
            method: Method {
                interval: "percentile bootstrap of the mean, seeded ChaCha8 RNG",
                resamples: BOOTSTRAP_RESAMPLES,
                confidence: CONFIDENCE,
                test: PAIRED_TEST_NAME,
                significance: SIGNIFICANCE,
                baseline: baseline.map(|_| BASELINE),
            },
            plan,
            cells,
        })
    }

    /// The cell of `scenario` and `policy`.
    pub fn cell(&self, scenario: &str, policy: &str) -> Option<&Cell> {
        self.cells
            .iter()
            .find(|c| c.scenario == scenario && c.policy == policy)
    }

    /// The report as markdown: one table per scenario, a row per metric, a column per policy,
    /// each entry "mean \[CI\]" and, against the baseline, "change %, p" with `*` when p < 0.05.
    pub fn markdown(&self) -> String {
        let mut md = String::new();
        let plan = &self.plan;
        let seeds = plan.seeds();
        let _ = writeln!(md, "# Experiment report\n");
        let _ = writeln!(
            md,
            "{} calls per cell of {} s (decision interval {} s, {} handover forecast), seeds {}..={}, \
             identical across policies.\n",
            plan.calls,
            fmt_number(plan.duration_s),
            fmt_number(plan.interval_s),
            plan.handover,
            seeds.first().copied().unwrap_or(plan.seed_base),
            seeds.last().copied().unwrap_or(plan.seed_base),
        );
        let _ = writeln!(
            md,
            "Each entry: mean over the calls [{:.0} % CI: {}, {} resamples].",
            self.method.confidence * 100.0,
            self.method.interval,
            self.method.resamples
        );
        if self.method.baseline.is_some() {
            let _ = writeln!(
                md,
                "Against `{BASELINE}`: relative change of the mean, and the p-value of a {}; \
                 `*` marks p < {}.",
                self.method.test, self.method.significance
            );
        }
        for (i, scenario) in plan.scenarios.iter().enumerate() {
            let cells: Vec<&Cell> = self
                .cells
                .iter()
                .filter(|c| &c.scenario == scenario)
                .collect();
            let _ = writeln!(md, "\n## {scenario}\n");
            if let Some(sender) = plan.senders.get(i) {
                let _ = writeln!(md, "Sender: {sender}.\n");
            }
            let _ = write!(md, "| metric |");
            for c in &cells {
                let _ = write!(md, " {} |", c.policy);
            }
            let _ = write!(md, "\n|---|");
            for _ in &cells {
                let _ = write!(md, "---|");
            }
            md.push('\n');
            for metric in Metric::ALL {
                let arrow = if metric.is_cost() {
                    ""
                } else if metric.higher_is_better() {
                    " ↑"
                } else {
                    " ↓"
                };
                let _ = write!(md, "| {} ({}){arrow} |", metric.label(), metric.unit());
                for c in &cells {
                    let entry = c.metric(metric).map(fmt_entry).unwrap_or_default();
                    let _ = write!(md, " {entry} |");
                }
                md.push('\n');
            }
        }
        md
    }
}

/// Summarises one metric of one cell, against the baseline's calls when given.
fn summarise(
    scenario: &str,
    policy: &str,
    metric: Metric,
    calls: &[CallOutcome],
    baseline: Option<&[CallOutcome]>,
) -> MetricSummary {
    let values: Vec<f64> = calls.iter().map(|c| metric.of(c)).collect();
    let stream = format!("{scenario}/{policy}/{}", metric.key());
    let mean_value = mean(&values).unwrap_or(f64::NAN);
    let ci = bootstrap_ci(
        &values,
        BOOTSTRAP_RESAMPLES,
        CONFIDENCE,
        seed_from_text(&stream),
    );
    let reference: Option<Vec<f64>> = baseline.map(|b| b.iter().map(|c| metric.of(c)).collect());
    let change = reference
        .as_deref()
        .and_then(mean)
        .and_then(|r| relative_change_pct(mean_value, r));
    let p_value = reference
        .as_deref()
        .and_then(|r| paired_permutation_p(&values, r, seed_from_text(&format!("{stream}/test"))));
    MetricSummary {
        metric: metric.key(),
        unit: metric.unit(),
        mean: mean_value,
        ci_low: ci.map_or(f64::NAN, |c| c.low),
        ci_high: ci.map_or(f64::NAN, |c| c.high),
        change_vs_default_pct: change,
        p_value,
        significant: p_value.map(|p| p < SIGNIFICANCE),
        values,
    }
}

/// A number with as many decimals as its size deserves: 1834, 29.7, 0.42.
fn fmt_number(value: f64) -> String {
    let magnitude = value.abs();
    if magnitude >= 100.0 || value == value.trunc() {
        format!("{value:.0}")
    } else if magnitude >= 10.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.2}")
    }
}

/// A relative change with one decimal and its sign; one that rounds to zero reads "0.0 %", never
/// "-0.0 %".
fn fmt_change(change: f64) -> String {
    if (change * 10.0).round() == 0.0 {
        "0.0 %".to_owned()
    } else {
        format!("{change:+.1} %")
    }
}

/// One table entry: "mean [low, high]" and, against the baseline, "+3.1 %, p=0.02*".
fn fmt_entry(m: &MetricSummary) -> String {
    let mut entry = format!(
        "{} [{}, {}]",
        fmt_number(m.mean),
        fmt_number(m.ci_low),
        fmt_number(m.ci_high)
    );
    if let Some(p) = m.p_value {
        let change = m.change_vs_default_pct.map_or("n/a".to_owned(), fmt_change);
        let star = if p < SIGNIFICANCE { "*" } else { "" };
        let _ = write!(entry, "<br>{change}, p={p:.3}{star}");
    }
    entry
}

#[cfg(test)]
mod tests {
    use super::*;
    use pacer::telemetry::QoeRecord;

    fn qoe(bitrate: f64, freezes: f64) -> QoeRecord {
        QoeRecord {
            video_bitrate_kbps: bitrate,
            freeze_count: 0,
            freezes_per_min: freezes,
            total_freeze_ms: 0,
            frame_rate: 30.0,
            e2e_delay_p50_ms: 100.0,
            e2e_delay_p95_ms: 200.0,
            packet_loss_pct: 0.5,
            frames_rendered: 100,
            frozen_s_per_min: 0.0,
            stall_count: 0,
            stalls_per_min: 0.0,
        }
    }

    fn plan(policies: &[&str], calls: usize) -> Plan {
        Plan {
            scenarios: vec!["s".into()],
            policies: policies.iter().map(|p| p.to_string()).collect(),
            calls,
            seed_base: 10,
            duration_s: 20.0,
            interval_s: 120.0,
            handover: "oracle".into(),
            senders: vec![crate::call::SenderOptions::default().names()],
        }
    }

    fn outcome(seed: u64, bitrate: f64) -> CallOutcome {
        CallOutcome {
            seed,
            qoe: qoe(bitrate, 0.0),
            fec_share_pct: 0.0,
            intervals: 1,
        }
    }

    #[test]
    fn a_cell_compares_with_default_on_the_same_seeds() {
        let outcomes = [
            outcome(10, 1000.0),
            outcome(11, 1000.0),
            outcome(12, 1000.0),
            outcome(10, 1100.0),
            outcome(11, 1200.0),
            outcome(12, 1300.0),
        ];
        let report = Report::build(plan(&["default", "heuristic"], 3), &outcomes).unwrap();
        assert_eq!(report.cells.len(), 2);
        let base = report.cell("s", "default").unwrap();
        let b = base.metric(Metric::VideoBitrate).unwrap();
        assert_eq!((b.mean, b.ci_low, b.ci_high), (1000.0, 1000.0, 1000.0));
        assert_eq!((b.change_vs_default_pct, b.p_value), (None, None));
        let h = report.cell("s", "heuristic").unwrap();
        assert_eq!(h.seeds, [10, 11, 12]);
        assert_eq!(h.intervals, 3);
        let m = h.metric(Metric::VideoBitrate).unwrap();
        assert_eq!(m.mean, 1200.0);
        assert_eq!(m.values, [1100.0, 1200.0, 1300.0]);
        assert!((m.change_vs_default_pct.unwrap() - 20.0).abs() < 1e-12);
        // Differences 100, 200, 300: only the all-plus and all-minus patterns reach 600.
        assert_eq!(m.p_value, Some(0.25));
        assert_eq!(m.significant, Some(false));
        assert!(m.ci_low >= 1100.0 && m.ci_high <= 1300.0 && m.ci_low < m.ci_high);
        // Freeze rate 0 everywhere: no relative change from zero, p = 1.
        let f = h.metric(Metric::FreezesPerMin).unwrap();
        assert_eq!((f.change_vs_default_pct, f.p_value), (None, Some(1.0)));
    }

    #[test]
    fn without_default_there_is_no_comparison() {
        let outcomes = [outcome(10, 1.0), outcome(10, 2.0)];
        let report = Report::build(plan(&["random", "heuristic"], 1), &outcomes).unwrap();
        assert_eq!(report.method.baseline, None);
        for cell in &report.cells {
            assert!(cell.metrics.iter().all(|m| m.p_value.is_none()));
        }
        assert!(!report.markdown().contains("p="));
    }

    #[test]
    fn a_plan_and_outcomes_of_different_shapes_are_refused() {
        let err = Report::build(plan(&["default"], 2), &[outcome(1, 1.0)]).unwrap_err();
        assert_eq!(
            err,
            ReportError::Shape {
                expected: 2,
                got: 1
            }
        );
        assert_eq!(
            Report::build(plan(&["default"], 0), &[]).unwrap_err(),
            ReportError::Empty
        );
    }

    #[test]
    fn the_markdown_has_a_table_per_scenario_with_marked_significance() {
        let mut outcomes: Vec<CallOutcome> = (0..6).map(|i| outcome(10 + i, 1000.0)).collect();
        outcomes.extend((0..6).map(|i| outcome(10 + i, 1500.0 + i as f64)));
        let report = Report::build(plan(&["default", "fixed:900"], 6), &outcomes).unwrap();
        let md = report.markdown();
        assert!(md.contains("## s\n"), "{md}");
        assert!(
            md.contains(
                "Sender: bwe googcc, nack libwebrtc, cwnd pushback, keyframe_flush false, fec libwebrtc.\n"
            ),
            "{md}"
        );
        assert!(md.contains("| metric | default | fixed:900 |"), "{md}");
        // Six positive differences: p = 2 / 64 = 0.03125.
        assert!(md.contains("p=0.031*"), "{md}");
        assert!(
            md.contains("| Video bitrate (kbit/s) ↑ | 1000 [1000, 1000] |"),
            "{md}"
        );
        assert!(md.contains("seeds 10..=15"), "{md}");
    }

    #[test]
    fn the_markdown_has_rows_for_freeze_time_stalls_delays_and_the_fec_share_with_tests() {
        // Policy B stalls 1 more per minute, freezes 0.5 s a minute more and spends 10 points
        // more of its bytes on FEC than default, on each of six seeds.
        let call = |seed: u64, b: bool| {
            let k = if b { 1.0 } else { 0.0 };
            let mut q = qoe(1000.0, 1.0);
            q.total_freeze_ms = 400 + 100 * b as u64;
            let spread = (seed - 10) as f64 * 0.02;
            q.frozen_s_per_min = 0.2 + 0.5 * k + spread;
            q.stalls_per_min = 2.0 + k + spread;
            CallOutcome {
                seed,
                qoe: q,
                fec_share_pct: 5.0 + 10.0 * k,
                intervals: 1,
            }
        };
        let outcomes: Vec<CallOutcome> = (0..12).map(|i| call(10 + i % 6, i >= 6)).collect();
        let report = Report::build(plan(&["default", "b"], 6), &outcomes).unwrap();
        let b = report.cell("s", "b").unwrap();
        let stalls = b.metric(Metric::StallsPerMin).unwrap();
        assert!((stalls.change_vs_default_pct.unwrap() - 100.0 / 2.05).abs() < 1e-9);
        assert_eq!(stalls.p_value, Some(0.03125));
        let fec = b.metric(Metric::FecShare).unwrap();
        assert_eq!((fec.mean, fec.ci_low, fec.ci_high), (15.0, 15.0, 15.0));
        let md = report.markdown();
        for row in [
            "| Freeze rate (freezes/min) ↓ | 1 [1, 1] |",
            "| Total freeze time (ms) ↓ | 400 [400, 400] |",
            "| Freeze time per minute (s/min) ↓ | 0.25 [",
            "| Stall rate (stalls/min) ↓ | 2.05 [",
            "| E2E delay P50 (ms) ↓ | 100 [100, 100] |",
            "| E2E delay P95 (ms) ↓ | 200 [200, 200] |",
            "| Video bitrate (kbit/s) ↑ | 1000 [1000, 1000] |",
            "| FEC share (% of video bytes) | 5 [5, 5] | 15 [15, 15]<br>+200.0 %, p=0.031* |",
        ] {
            assert!(md.contains(row), "no {row:?} in\n{md}");
        }
        let stall_row = md.lines().find(|l| l.starts_with("| Stall rate")).unwrap();
        assert!(
            stall_row.ends_with("<br>+48.8 %, p=0.031* |"),
            "{stall_row}"
        );
    }

    #[test]
    fn numbers_get_decimals_by_size() {
        assert_eq!(fmt_number(1834.4), "1834");
        assert_eq!(fmt_number(29.74), "29.7");
        assert_eq!(fmt_number(0.4249), "0.42");
        assert_eq!(fmt_number(0.0), "0");
        assert_eq!(fmt_change(-0.04), "0.0 %");
        assert_eq!(fmt_change(3.16), "+3.2 %");
        assert_eq!(fmt_change(-42.5), "-42.5 %");
    }
}

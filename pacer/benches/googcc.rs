//! Path profiles side by side for our `GoogCc` and webrtc-rs's `Gcc`, in the same run, on the
//! deterministic path model of `tests/googcc_sim` (encoder following the target, FIFO pacer at
//! 1.1 x the target, fluid bottleneck, 30 ms one-way delay, feedback every 100 ms).
//!
//! Prints one table. Times are virtual; "first decrease" is when the target first went down
//! (both estimators), "overuse" when GoogCc's detector first said overusing.

#[path = "../tests/googcc_sim/mod.rs"]
mod googcc_sim;
#[path = "../tests/googcc_sim/probing_chain.rs"]
mod probing_chain;

use googcc_sim::{Path, Run, simulate};
use pacer::{GoogCc, GoogCcConfig};
use rtc_interceptor::Gcc;
use std::time::Duration;

fn s(secs: f64) -> Duration {
    Duration::from_secs_f64(secs)
}

fn ours(start: f64, path: &Path, secs: f64) -> Run {
    let cc = GoogCc::new(GoogCcConfig {
        start_bps: start,
        ..GoogCcConfig::default()
    });
    let handle = cc.handle();
    simulate(cc, Some(&handle), path, s(secs))
}

fn theirs(start: f64, path: &Path, secs: f64) -> Run {
    let gcc = Gcc::new(
        start,
        rtc_interceptor::GCC_MIN_BITRATE,
        rtc_interceptor::GCC_MAX_BITRATE,
    );
    simulate(gcc, None, path, s(secs))
}

fn secs(d: Option<Duration>) -> String {
    d.map_or_else(
        || "never".to_owned(),
        |d| format!("{:.2} s", d.as_secs_f64()),
    )
}

fn kbps(bps: f64) -> String {
    format!("{:.0} kbit/s", bps / 1000.0)
}

fn ms(v: f64) -> String {
    format!("{v:.0} ms")
}

struct Table(Vec<[String; 4]>);

impl Table {
    fn row(&mut self, profile: &str, metric: &str, a: String, b: String) {
        self.0.push([profile.to_owned(), metric.to_owned(), a, b]);
    }

    fn print(&self) {
        let header = [
            "profile".to_owned(),
            "metric".to_owned(),
            "GoogCc (ours)".to_owned(),
            "webrtc-rs Gcc".to_owned(),
        ];
        let mut widths = [0usize; 4];
        for row in std::iter::once(&header).chain(&self.0) {
            for (w, c) in widths.iter_mut().zip(row) {
                *w = (*w).max(c.len());
            }
        }
        let line = |row: &[String; 4]| {
            println!(
                "| {:<w0$} | {:<w1$} | {:>w2$} | {:>w3$} |",
                row[0],
                row[1],
                row[2],
                row[3],
                w0 = widths[0],
                w1 = widths[1],
                w2 = widths[2],
                w3 = widths[3]
            );
        };
        line(&header);
        println!(
            "|{}|{}|{}|{}|",
            "-".repeat(widths[0] + 2),
            "-".repeat(widths[1] + 2),
            "-".repeat(widths[2] + 2),
            "-".repeat(widths[3] + 2)
        );
        for row in &self.0 {
            line(row);
        }
    }
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` runs this too, briefly.
    let quick = !std::env::args().any(|a| a == "--bench");
    let scale = if quick { 0.25 } else { 1.0 };
    let mut t = Table(Vec::new());

    // Steady 5 Mbit/s link from 300 kbit/s.
    let path = Path::constant(5_000_000.0);
    let len = 90.0 * scale;
    let (a, b) = (ours(300_000.0, &path, len), theirs(300_000.0, &path, len));
    t.row(
        "steady 5 Mbit/s from 300 kbit/s",
        "time to 90 % of capacity",
        secs(a.time_to_reach(s(0.0), 0.9)),
        secs(b.time_to_reach(s(0.0), 0.9)),
    );
    t.row(
        "",
        &format!("mean queue over the last {:.0} s", len / 3.0),
        ms(a.mean_queue_ms(s(len * 2.0 / 3.0), s(len))),
        ms(b.mean_queue_ms(s(len * 2.0 / 3.0), s(len))),
    );

    // Overdrive: start 1.4x and 4x above a 1 Mbit/s bottleneck.
    for factor in [1.4, 4.0] {
        let path = Path::constant(1_000_000.0);
        let len = 40.0 * scale.max(0.5);
        let start = factor * 1_000_000.0;
        let (a, b) = (ours(start, &path, len), theirs(start, &path, len));
        let name = format!("{factor}x overdrive of 1 Mbit/s");
        t.row(
            &name,
            "GoogCc overuse detected",
            secs(a.first_overuse),
            "-".into(),
        );
        t.row(
            "",
            "first target decrease",
            secs(a.first_decrease),
            secs(b.first_decrease),
        );
        t.row(
            "",
            "max queue in the first 5 s",
            ms(a.max_queue_ms(s(0.0), s(5.0))),
            ms(b.max_queue_ms(s(0.0), s(5.0))),
        );
        t.row(
            "",
            "standing queue (mean, 5 s to end)",
            ms(a.mean_queue_ms(s(5.0), s(len))),
            ms(b.mean_queue_ms(s(5.0), s(len))),
        );
        t.row(
            "",
            "mean target, 5 s to end",
            kbps(a.mean_target(s(5.0), s(len))),
            kbps(b.mean_target(s(5.0), s(len))),
        );
    }

    // Random loss on a 2 Mbit/s link, starting at 1 Mbit/s.
    for loss in [0.0, 0.01, 0.05, 0.2] {
        let mut path = Path::constant(2_000_000.0);
        path.loss = loss;
        let len = 60.0 * scale.max(0.5);
        let (a, b) = (
            ours(1_000_000.0, &path, len),
            theirs(1_000_000.0, &path, len),
        );
        t.row(
            &format!("{:.0} % random loss, 2 Mbit/s", loss * 100.0),
            &format!("mean target, 10 s to {len:.0} s"),
            kbps(a.mean_target(s(10.0), s(len))),
            kbps(b.mean_target(s(10.0), s(len))),
        );
    }

    // Capacity step: 2 Mbit/s, down to 500 kbit/s at 20 s, back up at 40 s.
    {
        let mut path = Path::constant(2_000_000.0);
        path.capacity = vec![
            (s(0.0), 2_000_000.0),
            (s(20.0), 500_000.0),
            (s(40.0), 2_000_000.0),
        ];
        let len = 80.0;
        let (a, b) = (
            ours(1_500_000.0, &path, len),
            theirs(1_500_000.0, &path, len),
        );
        let name = "2 -> 0.5 -> 2 Mbit/s at 20 s, 40 s";
        t.row(
            name,
            "first decrease after the drop",
            secs(a.first_drop_after(s(20.0))),
            secs(b.first_drop_after(s(20.0))),
        );
        t.row(
            "",
            "max queue, 20-40 s",
            ms(a.max_queue_ms(s(20.0), s(40.0))),
            ms(b.max_queue_ms(s(20.0), s(40.0))),
        );
        t.row(
            "",
            "mean target, 25-40 s",
            kbps(a.mean_target(s(25.0), s(40.0))),
            kbps(b.mean_target(s(25.0), s(40.0))),
        );
        t.row(
            "",
            "time to 90 % after the rise",
            secs(a.time_to_reach(s(40.0), 0.9)),
            secs(b.time_to_reach(s(40.0), 0.9)),
        );
    }

    // A 2-s outage at 20 s on a 2 Mbit/s link.
    {
        let mut path = Path::constant(2_000_000.0);
        path.outage = Some((s(20.0), s(22.0)));
        let len = 50.0;
        let (a, b) = (
            ours(1_500_000.0, &path, len),
            theirs(1_500_000.0, &path, len),
        );
        let name = "2-s outage at 20 s, 2 Mbit/s";
        t.row(
            name,
            "mean target 10-20 s",
            kbps(a.mean_target(s(10.0), s(20.0))),
            kbps(b.mean_target(s(10.0), s(20.0))),
        );
        t.row(
            "",
            "min target 20-30 s",
            kbps(a.min_target(s(20.0), s(30.0))),
            kbps(b.min_target(s(20.0), s(30.0))),
        );
        t.row(
            "",
            "mean target 22-32 s",
            kbps(a.mean_target(s(22.0), s(32.0))),
            kbps(b.mean_target(s(22.0), s(32.0))),
        );
        t.row(
            "",
            "max queue 20-30 s",
            ms(a.max_queue_ms(s(20.0), s(30.0))),
            ms(b.max_queue_ms(s(20.0), s(30.0))),
        );
    }

    // Probing, through the real webrtc-rs chain (`TwccSender`, `HandoverAwarePacer` with a
    // padding SSRC, `TwccReceiver`): GoogCc with and without probing beside webrtc-rs's Gcc.
    for capacity in [5_000_000u64, 1_000_000] {
        use probing_chain::{Estimator, Setup};
        let len = s(if quick { 10.0 } else { 40.0 });
        let setup = |estimator| Setup {
            capacity_bps: capacity,
            estimator,
            start_bps: 300_000.0,
            burst_interval: pacer::PacingConfig::default().burst_interval,
        };
        let with = probing_chain::run(setup(Estimator::GoogCc { probing: true }), len);
        let without = probing_chain::run(setup(Estimator::GoogCc { probing: false }), len);
        let gcc = probing_chain::run(setup(Estimator::WebrtcRs), len);
        let goal = 0.9 * capacity as f64;
        let name = format!(
            "real chain, {} Mbit/s from 300 kbit/s",
            capacity / 1_000_000
        );
        t.row(
            &name,
            "time to 90 %: GoogCc probing | no probing",
            secs(with.time_to(goal)),
            secs(without.time_to(goal)),
        );
        t.row(
            "",
            "time to 90 %: GoogCc probing | webrtc-rs Gcc",
            secs(with.time_to(goal)),
            secs(gcc.time_to(goal)),
        );
        t.row(
            "",
            "max queue after 5 s: probing | Gcc",
            ms(with.max_queue_from(s(5.0)).as_secs_f64() * 1000.0),
            ms(gcc.max_queue_from(s(5.0)).as_secs_f64() * 1000.0),
        );
        t.row(
            "",
            "probe clusters matched | padding packets",
            with.probe_clusters_matched.to_string(),
            with.padding_packets.to_string(),
        );
    }

    t.print();
}

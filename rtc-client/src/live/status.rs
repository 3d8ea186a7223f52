//! The caller's one-line live status (one per second) and its end-of-call summary.

use pacer::Decision;
use pacer::telemetry::QoeRecord;
use std::fmt;
use std::time::Duration;

/// One second of a call, as the caller sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct StatusLine {
    /// Time since the call's epoch.
    pub elapsed: Duration,
    /// The estimator's target, kbit/s.
    pub target_kbps: f64,
    /// What the encoder produced over the last second, kbit/s.
    pub bitrate_kbps: f64,
    /// Frames the receiver rendered in its last whole second (`None`: the answerer did not say).
    pub fps: Option<u32>,
    /// Freezes the receiver counted so far (`None`: the answerer did not say).
    pub freezes: Option<u64>,
    /// The pacer's queue time limit, ms.
    pub limit_ms: u64,
    /// The pacer's expected queue time (queued bytes over the pacing rate), ms.
    pub queue_ms: u64,
    /// The handover source's state: its name and forecast count, or the fallback and why.
    pub source: String,
}

impl StatusLine {
    /// The source column for the latest decision: `mirror (4 ho)` or
    /// `fallback 2000 ms: <reason>`.
    pub fn source_state(decision: Option<&Decision>) -> String {
        match decision {
            None => "no decision yet".into(),
            Some(d) => match &d.fallback {
                Some(why) => format!("fallback {} ms: {why}", d.queue_time_limit.as_millis()),
                None => format!(
                    "{} ({} ho forecast)",
                    d.forecast.source(),
                    d.forecast.handover_count()
                ),
            },
        }
    }
}

impl fmt::Display for StatusLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let opt = |v: Option<u64>| v.map_or_else(|| "-".to_owned(), |v| v.to_string());
        write!(
            f,
            "t={:>4}s target {:>5.0} kbit/s  bitrate {:>5.0} kbit/s  {:>3} fps  freezes {:>3}  \
             limit {:>4} ms  queue {:>4} ms  source {}",
            self.elapsed.as_secs(),
            self.target_kbps,
            self.bitrate_kbps,
            opt(self.fps.map(u64::from)),
            opt(self.freezes),
            self.limit_ms,
            self.queue_ms,
            self.source
        )
    }
}

/// The end-of-call summary lines.
pub fn summary(
    call_id: &str,
    setup: Duration,
    duration: Duration,
    qoe: &QoeRecord,
    decisions: &[Decision],
    ended_by: &str,
) -> Vec<String> {
    let mut lines = vec![
        format!(
            "call {call_id}: {ended_by} after {:.1} s (set-up {} ms)",
            duration.as_secs_f64(),
            setup.as_millis()
        ),
        format!(
            "  {:.1} kbit/s, {} freezes ({:.2} per minute, {} ms frozen), {:.1} fps, {} frames",
            qoe.video_bitrate_kbps,
            qoe.freeze_count,
            qoe.freezes_per_min,
            qoe.total_freeze_ms,
            qoe.frame_rate,
            qoe.frames_rendered
        ),
        format!(
            "  delay p50 {:.1} ms, p95 {:.1} ms; packet loss {:.2} %",
            qoe.e2e_delay_p50_ms, qoe.e2e_delay_p95_ms, qoe.packet_loss_pct
        ),
    ];
    for d in decisions {
        lines.push(format!("  decision {d}"));
    }
    lines
}

/// This process's CPU time so far (user + system), from `/proc/self/stat` (Linux; `None`
/// elsewhere). Its fields 14 and 15 count clock ticks of `USER_HZ`, which the kernel fixes at
/// 100 per second for everything it exports to user space (`proc(5)`, `times(2)`).
pub fn process_cpu_time() -> Option<Duration> {
    const USER_HZ: u64 = 100;
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
    let after = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    // `after` starts at field 3 (state), so utime (14) and stime (15) are at 11 and 12.
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some(Duration::from_millis((utime + stime) * 1000 / USER_HZ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_is_read_and_grows() {
        let Some(before) = process_cpu_time() else {
            return; // not Linux
        };
        let start = std::time::Instant::now();
        let mut x = 0u64;
        while start.elapsed() < Duration::from_millis(120) {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
        }
        let after = process_cpu_time().expect("still readable");
        assert!(after > before, "{before:?} -> {after:?}");
    }
}

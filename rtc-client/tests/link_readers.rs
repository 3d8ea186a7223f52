//! Readers name the file, the line and the field of what they refuse, and load the real traces
//! with the right counts.

mod link_common;

use link_common::data_file;
use rtc_client::link::readers::{
    Direction, LagosTrace, PingTrace, TraceError, read_delay_ms_series, read_leoreplayer_delay,
};
use rtc_client::link::{MahimahiTrace, Time};
use std::path::PathBuf;
use std::time::Duration;

/// A scratch file under the system temp directory, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str, text: &str) -> Scratch {
        let path = std::env::temp_dir().join(format!("rtc-client-{}-{name}", std::process::id()));
        std::fs::write(&path, text).unwrap();
        Scratch(path)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[test]
fn a_missing_file_is_an_io_error_naming_it() {
    let err = MahimahiTrace::load("/nonexistent/trace.down").unwrap_err();
    assert!(matches!(err, TraceError::Io { .. }));
    assert!(
        err.to_string()
            .starts_with("/nonexistent/trace.down: cannot read the file"),
        "{err}"
    );
}

#[test]
fn a_mahimahi_file_with_a_decreasing_timestamp_is_refused_naming_file_and_line() {
    let f = Scratch::new("decreasing.up", "1\n2\n2\n7\n5\n9\n");
    let err = MahimahiTrace::load(&f.0).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{}:5: column 1 (timestamp_ms): 5 is before the previous line's 7",
            f.0.display()
        )
    );
}

#[test]
fn a_leoreplayer_delay_file_with_a_bad_line_is_refused_naming_file_and_line() {
    let f = Scratch::new("delay.txt", "12\n13\n13\n12ms\n");
    let err = read_leoreplayer_delay(&f.0).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{}:4: column 1 (delay_ms): \"12ms\" is not a finite number",
            f.0.display()
        )
    );
}

#[test]
fn a_lagos_file_with_a_short_row_is_refused_naming_file_and_line() {
    let f = Scratch::new(
        "lagos.csv",
        "1,2,3,4,0,0,0\n1,2,3,4,0,0,100\n1,2,3,4,0,200\n",
    );
    let err = LagosTrace::load(&f.0).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{}:3: expected 7 fields (uplink_Mbps, downlink_Mbps, uplink_delay_ms, downlink_delay_ms, uplink_loss, downlink_loss, virtual_time_ms), found 6",
            f.0.display()
        )
    );
}

#[test]
fn a_ping_file_with_a_bad_rtt_is_refused_naming_file_line_and_column() {
    let f = Scratch::new("ping.txt", "1694478364.1\t1\t97.4\n1694478364.3\t2\tNaN\n");
    let err = PingTrace::load(&f.0).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{}:2: column 3 (rtt_ms): \"NaN\" is not a finite number",
            f.0.display()
        )
    );
}

#[test]
fn the_leocc_mahimahi_trace_has_487652_opportunities_over_120052_ms() {
    let Some(path) = data_file("starlink/leocc/bw_example.mahimahi") else {
        return;
    };
    let trace = MahimahiTrace::load(&path).unwrap();
    assert_eq!(trace.opportunities(), 487_652);
    assert_eq!(trace.period(), Duration::from_millis(120_052));
    assert_eq!(trace.busy_millis(), 35_911);
    let mbps = trace.mean_rate_bps(1500) / 1e6;
    // 487 652 x 12 000 bit / 120.052 s.
    assert_eq!(format!("{mbps:.3}"), "48.744");
}

#[test]
fn the_leocc_delay_file_has_11999_ten_millisecond_slots_from_7_to_68_ms() {
    let Some(path) = data_file("starlink/leocc/delay_example_10ms.txt") else {
        return;
    };
    let series = read_leoreplayer_delay(&path).unwrap();
    assert_eq!(series.len(), 11_999);
    assert_eq!(series.step(), Duration::from_millis(10));
    let (mean, min, max) = series.summary();
    assert_eq!(min, Duration::from_millis(7));
    assert_eq!(max, Duration::from_millis(68));
    // 127 989 ms over 11 999 slots.
    assert_eq!(mean, Duration::from_nanos(127_989_000_000 / 11_999));
    assert_eq!(series.at(Time::ZERO), Duration::from_millis(12));
    // The same file read as a generic series with another step.
    let per_second = read_delay_ms_series(&path, Duration::from_secs(1)).unwrap();
    assert_eq!(
        per_second.at(Time::from_secs(3)),
        series.at(Time::from_millis(30))
    );
}

#[test]
fn lagos_csv_has_54450_rows_of_100_ms_with_the_published_medians() {
    let Some(path) = data_file("starlink/lagos/lagos.csv") else {
        return;
    };
    let trace = LagosTrace::load(&path).unwrap();
    assert_eq!(trace.rows().len(), 54_450);
    assert_eq!(trace.duration(), Duration::from_secs(5445));
    assert_eq!(trace.rows()[0].virtual_time_ms, 0);
    assert_eq!(trace.rows()[54_449].virtual_time_ms, 5_444_900);
    let median = |f: &dyn Fn(&rtc_client::link::readers::LagosRow) -> f64| {
        let mut v: Vec<f64> = trace.rows().iter().map(f).collect();
        v.sort_by(f64::total_cmp);
        (v[v.len() / 2 - 1] + v[v.len() / 2]) / 2.0
    };
    let down = median(&|r| r.mbps(Direction::Downlink));
    let up = median(&|r| r.mbps(Direction::Uplink));
    let delay = median(&|r| r.delay_ms(Direction::Downlink));
    assert_eq!(format!("{down:.1} {up:.1} {delay:.1}"), "91.5 6.4 82.9");
    let lossy = trace
        .rows()
        .iter()
        .filter(|r| r.uplink_loss > 0.0 || r.downlink_loss > 0.0)
        .count();
    assert_eq!(lossy, 4127);
    let max_delay = trace
        .rows()
        .iter()
        .map(|r| r.downlink_delay_ms)
        .fold(0.0, f64::max);
    assert_eq!(format!("{max_delay:.1}"), "543.8");
    assert_eq!(
        trace
            .capacity(Direction::Downlink)
            .at(Time::from_millis(150)),
        54_317_555
    );
}

#[test]
fn the_mmsys24_ping_traces_have_36000_echoes_with_169_and_913_lost() {
    for (file, lost, mean_ms) in [
        (
            "starlink/mmsys24/isl-ping-gw-lagos-230911-172603-0.1s-60min.txt",
            169,
            "119.776",
        ),
        (
            "starlink/mmsys24/no-isl-ping-gw-seattle-230911-170535-0.1s-60min.txt",
            913,
            "47.495",
        ),
    ] {
        let Some(path) = data_file(file) else {
            return;
        };
        let trace = PingTrace::load(&path).unwrap();
        assert_eq!(trace.samples().len(), 36_000, "{file}");
        assert_eq!(trace.lost(), lost, "{file}");
        let mean = trace.mean_rtt().unwrap().as_secs_f64() * 1e3;
        assert_eq!(format!("{mean:.3}"), mean_ms, "{file}");
        let owd = trace.one_way_delay_per_second().unwrap();
        assert!(owd.len() >= 9000, "{file}: {} seconds", owd.len());
        eprintln!(
            "{file}: {} echoes, {} lost ({:.2} %), mean RTT {mean:.3} ms over {:.0} s",
            trace.samples().len(),
            trace.lost(),
            trace.loss_rate() * 100.0,
            trace.span_s()
        );
    }
}

#[test]
fn the_mahimahi_lte_traces_replay_at_the_published_mean_rates() {
    for (file, mbps) in [
        ("ATT-LTE-driving-2016.up", "1.9"),
        ("ATT-LTE-driving-2016.down", "4.6"),
        ("Verizon-LTE-short.up", "5.9"),
        ("Verizon-LTE-short.down", "5.0"),
        ("TMobile-LTE-short.up", "13.3"),
        ("TMobile-LTE-short.down", "16.7"),
    ] {
        let Some(path) = data_file(&format!("terrestrial/mahimahi/{file}")) else {
            return;
        };
        let trace = MahimahiTrace::load(&path).unwrap();
        assert_eq!(
            format!("{:.1}", trace.mean_rate_bps(1500) / 1e6),
            mbps,
            "{file}"
        );
    }
}

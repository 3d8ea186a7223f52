//! Calibration: the generated scenarios reproduce the figures measured on the real traces in
//! `../shared/data` (skipped, with a message, when that directory is absent).
//!
//! Every measured figure is computed here from the files, the same way as on the emulated
//! links, and the emulated figure must fall within the measured range.

mod scenario_support;

use rtc_client::link::readers::{Direction, LagosTrace};
use rtc_client::scenario::data;
use rtc_client::scenario::figures::{self, Summary};
use scenario_support as support;

const SEEDS: [u64; 4] = [1, 2, 3, 4];
const CALL_S: u64 = 600;

fn lagos(data: &std::path::Path) -> LagosTrace {
    LagosTrace::load(data.join("starlink/lagos/lagos.csv")).unwrap()
}

/// Per-slot means of a lagos.csv column (slots start at virtual seconds 12, 27, 42, 57).
fn lagos_slot_means(
    t: &LagosTrace,
    f: impl Fn(&rtc_client::link::readers::LagosRow) -> f64,
) -> Vec<f64> {
    let per_second: Vec<f64> = t
        .rows()
        .chunks(10)
        .filter(|c| c.len() == 10)
        .map(|c| c.iter().map(&f).sum::<f64>() / 10.0)
        .collect();
    let boundaries: Vec<u64> = (0..per_second.len() as u64)
        .filter(|s| s % 15 == 12)
        .collect();
    figures::slot_means(&per_second, &boundaries)
}

#[test]
fn the_starlink_boundary_rtt_change_ratio_falls_within_the_measured_mmsys24_range() {
    let Some(data) = support::shared_data("starlink boundary ratio") else {
        return;
    };
    let dir = data.join("starlink/mmsys24");
    let mut measured = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.file_name().unwrap().to_string_lossy().contains("ping") {
            let trace = data::load_ping("ping", &path).unwrap();
            let b = figures::ping_boundary_change(&trace).unwrap();
            eprintln!(
                "measured {}: boundary {:.2} ms, other {:.2} ms, ratio {:.2}",
                path.file_name().unwrap().to_string_lossy(),
                b.boundary_ms,
                b.other_ms,
                b.ratio
            );
            measured.push(b);
        }
    }
    assert_eq!(measured.len(), 2, "two mmsys24 ping traces");
    let lo = measured
        .iter()
        .map(|b| b.ratio)
        .fold(f64::INFINITY, f64::min);
    let hi = measured.iter().map(|b| b.ratio).fold(0.0, f64::max);

    let calls: Vec<_> = SEEDS
        .iter()
        .map(|&s| support::realize("starlink", s, CALL_S))
        .collect();
    let emulated = support::pooled_boundary_change(&calls);
    eprintln!(
        "emulated starlink ({} seeds x {} s): boundary {:.2} ms, other {:.2} ms, ratio {:.2}",
        SEEDS.len(),
        CALL_S,
        emulated.boundary_ms,
        emulated.other_ms,
        emulated.ratio
    );
    assert!(
        (lo..=hi).contains(&emulated.ratio),
        "emulated ratio {:.2} outside the measured [{lo:.2}, {hi:.2}]",
        emulated.ratio
    );
    for call in &calls {
        let one = support::pooled_boundary_change(std::slice::from_ref(call));
        eprintln!("  seed {}: ratio {:.2}", call.seed, one.ratio);
        assert!(
            (lo..=hi).contains(&one.ratio),
            "seed {}: ratio {:.2} outside [{lo:.2}, {hi:.2}]",
            call.seed,
            one.ratio
        );
    }
}

#[test]
fn the_starlink_capacity_per_slot_falls_within_the_measured_ranges() {
    let Some(data) = support::shared_data("starlink capacity") else {
        return;
    };
    // Forward = dish uplink: lagos.csv uplink per slot.
    let lagos = lagos(&data);
    let up = lagos_slot_means(&lagos, |r| r.mbps(Direction::Uplink));
    let up_m = Summary::of(up.iter().copied()).unwrap();
    // Reverse = downlink: LeoCC per second and per slot (slots start at 8.75 s; whole slots).
    let bw = data::load_mahimahi("bw", &data.join("starlink/leocc/bw_example.mahimahi")).unwrap();
    let leocc_s = figures::mahimahi_mbps_per_second(&bw);
    let leocc_boundaries: Vec<u64> = (0..9).map(|k| 9 + 15 * k).collect();
    let down = figures::slot_means(&leocc_s, &leocc_boundaries);
    let down_m = Summary::of(down.iter().copied()).unwrap();
    let down_s = Summary::of(leocc_s.iter().copied()).unwrap();
    eprintln!("measured lagos uplink per slot: {up_m:?}");
    eprintln!("measured LeoCC per slot: {down_m:?}; per second: {down_s:?}");

    let mut fwd_slots = Vec::new();
    let mut rev_slots = Vec::new();
    for &seed in &SEEDS {
        let r = support::realize("starlink", seed, CALL_S);
        let (f, v) = support::seconds(&r);
        let b: Vec<u64> = r
            .timeline
            .boundaries_ms
            .iter()
            .map(|ms| ms / 1000)
            .collect();
        fwd_slots.extend(figures::slot_means(
            &f.iter().map(|s| s.capacity_mbps).collect::<Vec<_>>(),
            &b,
        ));
        rev_slots.extend(figures::slot_means(
            &v.iter().map(|s| s.capacity_mbps).collect::<Vec<_>>(),
            &b,
        ));
    }
    let fwd = Summary::of(fwd_slots).unwrap();
    let rev = Summary::of(rev_slots).unwrap();
    eprintln!("emulated forward per slot: {fwd:?}");
    eprintln!("emulated reverse per slot: {rev:?}");
    assert!(
        fwd.min >= up_m.min && fwd.max <= up_m.max,
        "forward slots outside the lagos uplink range"
    );
    assert!(
        (up_m.p5..=up_m.p95).contains(&fwd.p50),
        "forward median slot {:.2} outside the lagos uplink 5-95 % range",
        fwd.p50
    );
    assert!(
        rev.min >= down_s.min && rev.max <= down_s.max,
        "reverse slots outside the LeoCC per-second range"
    );
    assert!(
        (down_m.min..=down_m.max).contains(&rev.p50),
        "reverse median slot {:.2} outside the LeoCC whole-slot range",
        rev.p50
    );
}

#[test]
fn the_starlink_loss_delay_and_handover_share_fall_within_the_measured_ranges() {
    let Some(data) = support::shared_data("starlink loss and delay") else {
        return;
    };
    let lagos = lagos(&data);
    let n = lagos.rows().len() as f64;
    let up_loss = lagos
        .rows()
        .iter()
        .map(|r| r.loss(Direction::Uplink))
        .sum::<f64>()
        / n;
    let down_loss = lagos
        .rows()
        .iter()
        .map(|r| r.loss(Direction::Downlink))
        .sum::<f64>()
        / n;
    let mut losses = vec![up_loss, down_loss];
    for name in [
        "isl-ping-gw-lagos-230911-172603-0.1s-60min.txt",
        "no-isl-ping-gw-seattle-230911-170535-0.1s-60min.txt",
    ] {
        let t = data::load_ping("ping", &data.join("starlink/mmsys24").join(name)).unwrap();
        losses.push(t.loss_rate());
    }
    let (lo, hi) = (
        losses.iter().copied().fold(f64::INFINITY, f64::min),
        losses.iter().copied().fold(0.0, f64::max),
    );
    let up_delay = Summary::of(lagos.rows().iter().map(|r| r.delay_ms(Direction::Uplink))).unwrap();
    eprintln!("measured loss figures {losses:?}; lagos uplink delay {up_delay:?}");

    let mut fwd_loss = 0.0;
    let mut fwd_delay = Vec::new();
    let (mut handovers, mut boundaries) = (0usize, 0usize);
    for &seed in &SEEDS {
        let r = support::realize("starlink", seed, CALL_S);
        let (f, _) = support::seconds(&r);
        fwd_loss += f.iter().map(|s| s.loss).sum::<f64>() / f.len() as f64;
        fwd_delay.extend(f.iter().map(|s| s.delay_ms));
        handovers += r.timeline.handovers.len();
        boundaries += r.timeline.boundaries_ms.len();
    }
    fwd_loss /= SEEDS.len() as f64;
    let fwd_delay = Summary::of(fwd_delay).unwrap();
    let share = handovers as f64 / boundaries as f64;
    eprintln!(
        "emulated forward loss {:.3} %, delay {fwd_delay:?}, handovers at {:.1} % of boundaries",
        fwd_loss * 100.0,
        share * 100.0
    );
    assert!(
        (lo..=hi).contains(&fwd_loss),
        "forward loss {fwd_loss} outside [{lo}, {hi}]"
    );
    assert!(
        fwd_delay.min >= up_delay.min && fwd_delay.max <= up_delay.max,
        "forward delay outside the lagos uplink range"
    );
    assert!(
        (up_delay.p5..=up_delay.p95).contains(&fwd_delay.p50),
        "forward median delay {:.1} outside the lagos uplink 5-95 % range",
        fwd_delay.p50
    );
    // Reference C5: the serving satellite changes at 59-86 % of boundaries.
    assert!((0.59..=0.86).contains(&share), "handover share {share}");
}

/// Per-second capacity of a Mahimahi file, Mbit/s.
fn mahimahi_seconds(path: &std::path::Path) -> Vec<f64> {
    figures::mahimahi_mbps_per_second(&data::load_mahimahi("trace", path).unwrap())
}

/// Per-call (or per-trace) medians of per-second capacity, and all seconds pooled.
fn medians_and_pool(calls: &[Vec<f64>]) -> (Summary, Summary) {
    (
        Summary::of(
            calls
                .iter()
                .map(|c| Summary::of(c.iter().copied()).unwrap().p50),
        )
        .unwrap(),
        Summary::of(calls.iter().flatten().copied()).unwrap(),
    )
}

#[test]
fn the_lte_capacity_per_second_falls_within_the_mahimahi_lte_traces() {
    let Some(data) = support::shared_data("terrestrial-lte capacity") else {
        return;
    };
    let dir = data.join("terrestrial/mahimahi");
    for (direction, suffix) in [("forward", "up"), ("reverse", "down")] {
        let traces: Vec<Vec<f64>> = [
            "ATT-LTE-driving-2016",
            "TMobile-LTE-short",
            "Verizon-LTE-short",
        ]
        .iter()
        .map(|t| mahimahi_seconds(&dir.join(format!("{t}.{suffix}"))))
        .collect();
        let (measured, measured_pool) = medians_and_pool(&traces);
        let calls: Vec<Vec<f64>> = (1..=12)
            .map(|seed| {
                let r = support::realize("terrestrial-lte", seed, 140);
                let (f, v) = support::seconds(&r);
                let s = if direction == "forward" { f } else { v };
                s.iter().map(|s| s.capacity_mbps).collect()
            })
            .collect();
        let (emulated, emulated_pool) = medians_and_pool(&calls);
        eprintln!(
            "LTE {suffix}: measured per-trace medians {measured:?}, pooled {measured_pool:?}"
        );
        eprintln!(
            "LTE {direction}: emulated per-call medians {emulated:?}, pooled {emulated_pool:?}"
        );
        // The median call sits among the traces' medians, and the pooled spread matches.
        assert!(
            (measured.min..=measured.max).contains(&emulated.p50),
            "{direction}: median call {:.2} outside the traces' medians [{:.2}, {:.2}]",
            emulated.p50,
            measured.min,
            measured.max
        );
        assert!(
            emulated_pool.p5 >= measured_pool.min && emulated_pool.p95 <= measured_pool.max,
            "{direction}: emulated 5-95 % {:.2}-{:.2} outside the traces' range {:.2}-{:.2}",
            emulated_pool.p5,
            emulated_pool.p95,
            measured_pool.min,
            measured_pool.max
        );
    }
}

#[test]
fn the_5g_capacity_and_stall_share_fall_within_the_5g_ucc_drives() {
    let Some(data) = support::shared_data("terrestrial-5g capacity") else {
        return;
    };
    let dir = data.join("terrestrial/5g-ucc");
    let mut drives: Vec<Vec<f64>> = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "csv"))
        .collect();
    files.sort();
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let mut lines = text.lines();
        let header: Vec<&str> = lines.next().unwrap().split(',').collect();
        let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
        let (mode, dl) = (col("NetworkMode"), col("DL_bitrate"));
        drives.push(
            lines
                .map(|l| l.split(',').collect::<Vec<_>>())
                .filter(|f| f.len() == header.len() && f[mode] == "5G")
                .map(|f| f[dl].parse::<f64>().unwrap() / 1000.0)
                .collect(),
        );
    }
    let stall = |v: &[f64]| v.iter().filter(|&&x| x < 1.0).count() as f64 / v.len() as f64;
    let (measured, _) = medians_and_pool(&drives);
    let measured_stalls = Summary::of(drives.iter().map(|d| stall(d))).unwrap();
    let calls: Vec<Vec<f64>> = (1..=8)
        .map(|seed| {
            let r = support::realize("terrestrial-5g", seed, 600);
            support::seconds(&r)
                .0
                .iter()
                .map(|s| s.capacity_mbps)
                .collect()
        })
        .collect();
    let (emulated, _) = medians_and_pool(&calls);
    let all: Vec<f64> = calls.iter().flatten().copied().collect();
    let emulated_stall = stall(&all);
    eprintln!(
        "5G: measured per-drive medians {measured:?}, under-1-Mbit/s share {measured_stalls:?}"
    );
    eprintln!(
        "5G: emulated per-call medians {emulated:?}, under-1-Mbit/s share {emulated_stall:.3}"
    );
    assert!(
        (measured.min..=measured.max).contains(&emulated.p50),
        "median call {:.2} outside the drives' medians [{:.2}, {:.2}]",
        emulated.p50,
        measured.min,
        measured.max
    );
    assert!(
        (measured_stalls.min..=measured_stalls.max).contains(&emulated_stall),
        "stall share {emulated_stall:.3} outside [{:.3}, {:.3}]",
        measured_stalls.min,
        measured_stalls.max
    );
}

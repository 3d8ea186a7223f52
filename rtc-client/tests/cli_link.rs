//! The `rtc-client` binary: `link` for every shipped scenario with --json and --plot, the same
//! output twice for the same seed, --compare with each trace format, and clear errors (never a
//! panic) on bad input.

mod cli_support;

use cli_support::{assert_clear_failure, root, run, stderr};
use std::path::PathBuf;
use std::process::Output;

/// A fresh directory for this test's files.
fn scratch_in(test: &str) -> PathBuf {
    cli_support::scratch("cli_link", test)
}

const SHIPPED: [&str; 8] = [
    "lagos-trace",
    "leocc-trace",
    "sparse-leo",
    "starlink",
    "starrynet-sparse",
    "terrestrial-5g",
    "terrestrial-broadband",
    "terrestrial-lte",
];

fn data() -> Option<PathBuf> {
    let d = root().join("..").join("shared").join("data");
    if d.is_dir() {
        Some(d)
    } else {
        eprintln!(
            "SKIPPED the parts that read ../shared/data: {} is absent",
            d.display()
        );
        None
    }
}

fn json(o: &Output) -> serde_json::Value {
    assert!(o.status.success(), "failed: {}", stderr(o));
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&o.stdout)))
}

#[test]
fn link_reports_and_plots_every_shipped_scenario() {
    let dir = scratch_in("every");
    let have_data = data().is_some();
    for name in SHIPPED {
        if !have_data && (name == "lagos-trace" || name == "leocc-trace") {
            continue;
        }
        let plot = dir.join(format!("{name}.png"));
        let out = run(&[
            "link",
            "--scenario",
            name,
            "--duration",
            "2m",
            "--seed",
            "1",
            "--json",
            "--plot",
            plot.to_str().unwrap(),
        ]);
        let v = json(&out);
        assert_eq!(v["schema"], "leopace.link.v1", "{name}");
        assert_eq!(v["scenario"], name);
        assert_eq!(v["duration_s"], 120.0);
        for dir in ["forward", "reverse"] {
            let seconds = v[dir]["seconds"].as_array().unwrap();
            assert_eq!(seconds.len(), 120, "{name} {dir}");
            for s in seconds {
                assert!(s["capacity_mbps"].as_f64().unwrap() >= 0.0);
                assert!(s["delay_ms"].as_f64().unwrap() > 0.0);
                let loss = s["loss"].as_f64().unwrap();
                assert!((0.0..=1.0).contains(&loss));
            }
        }
        assert!(v["rtt"]["probes"].as_u64().unwrap() == 600, "{name}");
        let offset = v["replay_offset_s"].as_f64();
        if name == "lagos-trace" {
            let offset = offset.expect("lagos-trace reports its replay offset");
            assert!(
                (0.0..5445.0).contains(&offset) && offset % 15.0 == 0.0,
                "{offset}"
            );
        } else {
            assert!(offset.is_none(), "{name} replays no lagos.csv");
        }
        let bytes = std::fs::read(&plot).unwrap_or_else(|e| panic!("{name}: no plot: {e}"));
        assert!(
            bytes.len() > 10_000,
            "{name}: plot of {} bytes",
            bytes.len()
        );
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "{name}: not a PNG");
    }
}

#[test]
fn json_output_is_byte_identical_for_the_same_seed() {
    for name in ["starlink", "sparse-leo", "terrestrial-5g"] {
        let args = [
            "link",
            "--scenario",
            name,
            "--duration",
            "90s",
            "--seed",
            "5",
            "--json",
        ];
        let a = run(&args);
        let b = run(&args);
        assert!(a.status.success(), "{}", stderr(&a));
        assert_eq!(a.stdout, b.stdout, "{name}: two runs differ");
        let c = run(&[
            "link",
            "--scenario",
            name,
            "--duration",
            "90s",
            "--seed",
            "6",
            "--json",
        ]);
        assert_ne!(
            a.stdout, c.stdout,
            "{name}: seeds 5 and 6 gave the same output"
        );
    }
}

#[test]
fn the_starlink_json_has_handovers_on_slot_boundaries_and_the_boundary_figure() {
    let v = json(&run(&[
        "link",
        "--scenario",
        "starlink",
        "--duration",
        "10m",
        "--seed",
        "1",
        "--json",
    ]));
    let h = &v["handovers"];
    assert_eq!(h["source"], "slots");
    assert_eq!(h["slot_boundaries"], 40);
    let times = h["times_s"].as_array().unwrap();
    assert_eq!(times.len() as u64, h["count"].as_u64().unwrap());
    for t in times {
        let t = t.as_f64().unwrap() as u64;
        assert!([12, 27, 42, 57].contains(&(t % 60)), "{t}");
    }
    let ratio = v["rtt"]["boundary_change"]["ratio"].as_f64().unwrap();
    assert!(ratio > 1.5, "{ratio}");
}

#[test]
fn text_output_summarises_both_directions_and_an_svg_plot_works() {
    let dir = scratch_in("text");
    let plot = dir.join("sub").join("sparse.svg");
    let out = run(&[
        "link",
        "--scenario",
        "sparse-leo",
        "--duration",
        "3m",
        "--seed",
        "2",
        "--plot",
        plot.to_str().unwrap(),
        "--table",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    for needle in [
        "scenario sparse-leo (generated)",
        "orbit: Walker star",
        "forward",
        "reverse",
        "RTT of pings",
    ] {
        assert!(text.contains(needle), "{needle:?} missing from:\n{text}");
    }
    // The table: a header and 180 seconds.
    assert_eq!(
        text.lines()
            .filter(|l| l.trim_start().starts_with(char::is_numeric))
            .count(),
        180
    );
    let svg = std::fs::read_to_string(&plot).unwrap();
    assert!(
        svg.starts_with("<svg") && svg.contains("sparse-leo"),
        "not the SVG expected"
    );
}

#[test]
fn compare_reads_each_real_trace_format() {
    let Some(data) = data() else { return };
    let dir = scratch_in("compare");
    for (file, format, has) in [
        (
            "starlink/leocc/bw_example.mahimahi",
            "mahimahi",
            "capacity_mbps",
        ),
        (
            "starlink/leocc/delay_example_10ms.txt",
            "leoreplayer",
            "delay_ms",
        ),
        ("starlink/lagos/lagos.csv", "lagos", "capacity_mbps"),
        (
            "starlink/mmsys24/isl-ping-gw-lagos-230911-172603-0.1s-60min.txt",
            "ping",
            "delay_ms",
        ),
        (
            "terrestrial/mahimahi/TMobile-LTE-short.up",
            "mahimahi",
            "capacity_mbps",
        ),
    ] {
        let path = data.join(file);
        let plot = dir.join(format!("{format}.png"));
        let v = json(&run(&[
            "link",
            "--scenario",
            "starlink",
            "--duration",
            "2m",
            "--json",
            "--compare",
            path.to_str().unwrap(),
            "--plot",
            plot.to_str().unwrap(),
        ]));
        let c = &v["compare"];
        assert_eq!(c["format"], format, "{file}");
        assert!(!c[has].as_array().unwrap().is_empty(), "{file}: no {has}");
        assert!(c["seconds"].as_u64().unwrap() >= 100, "{file}");
        assert!(plot.is_file(), "{file}: no plot");
    }
    // A ping trace carries the boundary figure (Lagos: about 3.6).
    let v = json(&run(&[
        "link",
        "--scenario",
        "starlink",
        "--duration",
        "30m",
        "--json",
        "--compare",
        data.join("starlink/mmsys24/isl-ping-gw-lagos-230911-172603-0.1s-60min.txt")
            .to_str()
            .unwrap(),
    ]));
    let ratio = v["compare"]["boundary_change"]["ratio"].as_f64().unwrap();
    assert!(ratio > 2.0, "{ratio}");
}

#[test]
fn scenarios_lists_the_shipped_ones() {
    let v = json(&run(&["scenarios", "--json"]));
    let names: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, SHIPPED.to_vec());
}

#[test]
fn bad_input_gives_a_clear_error_naming_the_culprit() {
    let dir = scratch_in("bad");
    // An unknown scenario: the name and the shipped ones.
    let o = run(&["link", "--scenario", "starlonk", "--json"]);
    assert_clear_failure(&o, "starlonk");
    assert!(stderr(&o).contains("terrestrial-lte"), "{}", stderr(&o));
    // A picture format it cannot write.
    assert_clear_failure(
        &run(&["link", "--scenario", "starlink", "--plot", "x.jpg"]),
        "x.jpg",
    );
    // Durations out of range or unreadable.
    assert_clear_failure(
        &run(&["link", "--scenario", "starlink", "--duration", "0s"]),
        "--duration",
    );
    assert_clear_failure(
        &run(&["link", "--scenario", "starlink", "--duration", "ten"]),
        "--duration",
    );
    assert_clear_failure(
        &run(&["link", "--scenario", "starlink", "--duration", "3d"]),
        "24 h",
    );
    // A --compare file that does not exist, and one in no known format.
    assert_clear_failure(
        &run(&[
            "link",
            "--scenario",
            "starlink",
            "--duration",
            "1m",
            "--compare",
            "/nonexistent/trace.txt",
        ]),
        "/nonexistent/trace.txt",
    );
    let junk = dir.join("junk.txt");
    std::fs::write(&junk, "hello world\n").unwrap();
    assert_clear_failure(
        &run(&[
            "link",
            "--scenario",
            "starlink",
            "--duration",
            "1m",
            "--compare",
            junk.to_str().unwrap(),
        ]),
        "junk.txt",
    );
    let bad_ping = dir.join("bad-ping.txt");
    std::fs::write(&bad_ping, "1694478364.1\t1\t97.4\n1694478364.3\t2\tabc\n").unwrap();
    assert_clear_failure(
        &run(&[
            "link",
            "--scenario",
            "starlink",
            "--duration",
            "1m",
            "--compare",
            bad_ping.to_str().unwrap(),
            "--compare-format",
            "ping",
        ]),
        "bad-ping.txt",
    );
    // A scenario file with an unknown key, and one with a value out of range.
    let text = std::fs::read_to_string(root().join("traces/scenarios/starlink.toml")).unwrap();
    let unknown = dir.join("unknown.toml");
    std::fs::write(
        &unknown,
        text.replace("rho = 0.855", "rho = 0.855\nroh = 1"),
    )
    .unwrap();
    assert_clear_failure(
        &run(&["link", "--scenario", unknown.to_str().unwrap()]),
        "unknown field `roh`",
    );
    let range = dir.join("range.toml");
    std::fs::write(
        &range,
        text.replace("probability = 0.74", "probability = 7.4"),
    )
    .unwrap();
    assert_clear_failure(
        &run(&["link", "--scenario", range.to_str().unwrap()]),
        "handovers.probability",
    );
    // A trace scenario without the shared data directory names the file it needs.
    assert_clear_failure(
        &run(&[
            "link",
            "--scenario",
            "leocc-trace",
            "--data",
            "/nonexistent/data",
        ]),
        "data:starlink/leocc/",
    );
}

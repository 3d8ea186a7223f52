//! Scenario files are validated: unknown keys and out-of-range values are refused with the
//! name of the key or field, never silently defaulted.

mod scenario_support;

use pacer::CwndMode;
use rtc_client::call::{
    BweChoice, FecChoice, NackChoice, PolicyChoice, SenderOptions, SenderOverrides,
};
use rtc_client::link::Time;
use rtc_client::scenario::{Scenario, ScenarioError};
use rtc_client::sim::CallConfig;
use scenario_support as support;

/// A small valid scenario to mutate.
const BASE: &str = r#"
name = "test"
description = "a test scenario"
kind = "generated"

[call]
duration_s = 60
fps = 30
min_bitrate_kbps = 50
start_bitrate_kbps = 300
max_bitrate_kbps = 2500

[handovers]
source = "slots"
probability = 0.5

[forward]
buffer_ms = 100
capacity = { kind = "lognormal", step = "slot", median_mbps = 8.0, sigma_log = 0.5, rho = 0.8, min_mbps = 1.0, max_mbps = 30.0 }
delay = { kind = "constant", ms = 40.0 }
loss = { kind = "bernoulli", rate = 0.01 }

[reverse]
buffer_bytes = 100000
capacity = { kind = "constant", mbps = 50.0 }
delay = { kind = "constant", ms = 40.0, jitter_ms = 2.0, jitter_rho = 0.9 }
loss = { kind = "none" }
"#;

fn parse(text: &str) -> Result<Scenario, ScenarioError> {
    Scenario::parse(text, "test.toml", &support::paths())
}

/// `BASE` with `from` replaced by `to` (which must occur).
fn edit(from: &str, to: &str) -> String {
    assert!(BASE.contains(from), "{from}");
    BASE.replacen(from, to, 1)
}

fn error(text: &str) -> String {
    match parse(text) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn the_base_scenario_is_valid_and_builds() {
    let s = parse(BASE).unwrap();
    let r = s.realize(1, std::time::Duration::from_secs(60)).unwrap();
    assert_eq!(
        r.timeline.boundaries_ms,
        vec![12_000, 27_000, 42_000, 57_000]
    );
}

#[test]
fn an_unknown_key_is_refused_with_its_name_at_every_level() {
    for (from, to, key) in [
        (
            "kind = \"generated\"",
            "kind = \"generated\"\ncolour = 1",
            "colour",
        ),
        ("fps = 30", "fps = 30\nframes = 1", "frames"),
        (
            "probability = 0.5",
            "probability = 0.5\nprobabilty = 0.4",
            "probabilty",
        ),
        ("buffer_ms = 100", "buffer_ms = 100\nbufer = 1", "bufer"),
        ("rho = 0.8,", "rho = 0.8, roh = 0.1,", "roh"),
        ("ms = 40.0 }", "ms = 40.0, jiter_ms = 1.0 }", "jiter_ms"),
    ] {
        let msg = error(&edit(from, to));
        assert!(
            msg.contains(&format!("unknown field `{key}`")),
            "{key}: {msg}"
        );
        assert!(msg.contains("test.toml"), "{msg}");
    }
}

#[test]
fn an_unknown_variant_is_refused_with_the_choices() {
    let msg = error(&edit("source = \"slots\"", "source = \"satellites\""));
    assert!(msg.contains("unknown variant `satellites`"), "{msg}");
    assert!(msg.contains("orbit"), "{msg}");
    let msg = error(&edit("kind = \"bernoulli\"", "kind = \"random\""));
    assert!(msg.contains("unknown variant `random`"), "{msg}");
}

#[test]
fn a_value_of_the_wrong_type_inside_a_tagged_table_is_refused_naming_its_key() {
    for (from, to, key) in [
        (
            "median_mbps = 8.0",
            "median_mbps = \"fast\"",
            "forward.capacity.median_mbps",
        ),
        ("ms = 40.0 }", "ms = true }", "forward.delay.ms"),
        ("rate = 0.01", "rate = [0.01]", "forward.loss.rate"),
        (
            "probability = 0.5",
            "probability = true",
            "handovers.probability",
        ),
        (
            "jitter_rho = 0.9",
            "jitter_rho = \"0.9\"",
            "reverse.delay.jitter_rho",
        ),
    ] {
        let msg = error(&edit(from, to));
        assert!(msg.contains("invalid type"), "{key}: {msg}");
        assert!(msg.contains(&format!("in `{key}`")), "{key}: {msg}");
    }
    // The same, written as a [header] table instead of an inline one.
    let text = edit(
        "capacity = { kind = \"lognormal\", step = \"slot\", median_mbps = 8.0, sigma_log = 0.5, rho = 0.8, min_mbps = 1.0, max_mbps = 30.0 }\n",
        "",
    ) + "\n[forward.capacity]\nkind = \"lognormal\"\nstep = \"slot\"\nmedian_mbps = 8.0\nsigma_log = \"wide\"\nrho = 0.8\nmin_mbps = 1.0\nmax_mbps = 30.0\n";
    let msg = error(&text);
    assert!(msg.contains("in `forward.capacity.sigma_log`"), "{msg}");
}

#[test]
fn a_missing_key_is_refused_with_its_name() {
    let msg = error(&edit("fps = 30\n", ""));
    assert!(msg.contains("missing field `fps`"), "{msg}");
}

#[test]
fn an_out_of_range_value_is_refused_with_the_field_name() {
    for (from, to, field) in [
        (
            "median_mbps = 8.0",
            "median_mbps = -8.0",
            "forward.capacity.median_mbps",
        ),
        ("rho = 0.8", "rho = 1.5", "forward.capacity.rho"),
        (
            "max_mbps = 30.0",
            "max_mbps = 0.5",
            "forward.capacity.max_mbps",
        ),
        (
            "probability = 0.5",
            "probability = 1.5",
            "handovers.probability",
        ),
        ("rate = 0.01", "rate = 2.0", "forward.loss.rate"),
        (
            "max_bitrate_kbps = 2500",
            "max_bitrate_kbps = 10",
            "call.max_bitrate_kbps",
        ),
        (
            "start_bitrate_kbps = 300",
            "start_bitrate_kbps = 9000",
            "call.start_bitrate_kbps",
        ),
        ("duration_s = 60", "duration_s = 0", "call.duration_s"),
        (
            "jitter_rho = 0.9",
            "jitter_rho = 1.0",
            "reverse.delay.jitter_rho",
        ),
        ("mbps = 50.0", "mbps = 0.0", "reverse.capacity.mbps"),
        ("buffer_ms = 100", "buffer_ms = 0", "forward.buffer_ms"),
        (
            "buffer_ms = 100",
            "buffer_ms = 100\nbuffer_bytes = 5000",
            "forward.buffer_ms",
        ),
        (
            "kind = \"generated\"",
            "kind = \"generated\"\nstart = \"noon\"",
            "start",
        ),
        (
            "ms = 40.0 }",
            "ms = 40.0, jitter_ms = -1.0 }",
            "forward.delay.jitter_ms",
        ),
    ] {
        let msg = error(&edit(from, to));
        assert!(
            msg.contains(&format!("test.toml: {field}: ")),
            "{field}: {msg}"
        );
    }
}

#[test]
fn a_nan_is_out_of_range() {
    let msg = error(&edit("median_mbps = 8.0", "median_mbps = nan"));
    assert!(msg.contains("forward.capacity.median_mbps"), "{msg}");
}

#[test]
fn inconsistent_combinations_are_refused_with_the_field_name() {
    // A slot-stepped capacity needs slot boundaries.
    let msg = error(&edit(
        "source = \"slots\"\nprobability = 0.5",
        "source = \"none\"",
    ));
    assert!(msg.contains("forward.capacity.step"), "{msg}");
    // Geometry delay needs an orbit source.
    let msg = error(&edit(
        "delay = { kind = \"constant\", ms = 40.0 }",
        "delay = { kind = \"geometry\" }",
    ));
    assert!(msg.contains("forward.delay.kind"), "{msg}");
    // A generated scenario does not replay files.
    let msg = error(&edit(
        "capacity = { kind = \"constant\", mbps = 50.0 }",
        "capacity = { kind = \"mahimahi\", file = \"data:x\" }",
    ));
    assert!(msg.contains("test.toml: kind: "), "{msg}");
    // An unknown city.
    let sparse = std::fs::read_to_string(support::paths().scenario_file("sparse-leo")).unwrap();
    let msg = error(&sparse.replace(
        "min_separation_km = 3000.0",
        "min_separation_km = 3000.0\nlocal = \"Atlantis\"",
    ));
    assert!(
        msg.contains("handovers.endpoints.local") && msg.contains("Atlantis"),
        "{msg}"
    );
}

/// `BASE` with a `[forward.handover]` table holding `body`.
fn with_forward_handover(body: &str) -> String {
    format!("{BASE}\n[forward.handover]\n{body}\n")
}

#[test]
fn a_bad_boundary_loss_profile_is_refused_naming_the_key_and_the_row() {
    let long = format!("boundary_loss_profile = [{}]", vec!["0.1"; 151].join(", "));
    for (body, field, says) in [
        (
            "boundary_loss_profile = [0.4, 1.2]",
            "forward.handover.boundary_loss_profile[1]",
            "must be within [0, 1], got 1.2",
        ),
        (
            "boundary_loss_profile = [-0.1]",
            "forward.handover.boundary_loss_profile[0]",
            "must be within [0, 1], got -0.1",
        ),
        (
            "no_handover_loss_profile = [0.1, nan]",
            "forward.handover.no_handover_loss_profile[1]",
            "must be within [0, 1], got NaN",
        ),
        (
            long.as_str(),
            "forward.handover.boundary_loss_profile",
            "at most 150 rows of 100 ms (one 15-s slot), got 151",
        ),
        (
            "loss_burst_rate = 0.5\nloss_burst_ms = 250\nboundary_loss_profile = [0.4]",
            "forward.handover.boundary_loss_profile",
            "give loss_burst_rate or boundary_loss_profile, not both",
        ),
    ] {
        let msg = error(&with_forward_handover(body));
        assert!(
            msg.contains(&format!("test.toml: {field}: {says}")),
            "{field}: {msg}"
        );
    }
    let msg = error(&with_forward_handover("boundary_loss_profile = 0.4"));
    assert!(msg.contains("boundary_loss_profile"), "{msg}");
}

#[test]
fn a_no_handover_loss_profile_needs_boundaries_without_handovers() {
    let grid = with_forward_handover("no_handover_loss_profile = [0.1]").replace(
        "source = \"slots\"\nprobability = 0.5",
        "source = \"grid\"\nfirst_ms = 12000\nperiod_ms = 15000",
    );
    let msg = error(&grid);
    assert!(
        msg.contains("forward.handover.no_handover_loss_profile: applies at slot boundaries"),
        "{msg}"
    );
}

#[test]
fn the_boundary_loss_profile_starts_at_every_boundary_and_the_no_handover_one_where_the_satellite_stays()
 {
    let s = parse(&with_forward_handover(
        "boundary_loss_profile = [0.5, 0.25]\nno_handover_loss_profile = [0.125]",
    ))
    .unwrap();
    let (mut handovers, mut others) = (0, 0);
    for seed in 1..=4 {
        let r = s.realize(seed, std::time::Duration::from_secs(60)).unwrap();
        let forward = r.forward_link().unwrap();
        let reverse = r.reverse_link().unwrap();
        let instants = r.timeline.instants_ms();
        let as_times: Vec<_> = instants.iter().map(|&ms| Time::from_millis(ms)).collect();
        assert_eq!(forward.handover_instants(), as_times, "seed {seed}");
        let p = |t_ms: u64| forward.burst_loss_probability_at(Time::from_millis(t_ms));
        for &b in &r.timeline.boundaries_ms {
            if instants.contains(&b) {
                handovers += 1;
                assert_eq!(
                    [p(b - 1), p(b), p(b + 99), p(b + 100), p(b + 200)],
                    [0.0, 0.5, 0.5, 0.25, 0.0]
                );
            } else {
                others += 1;
                assert_eq!(
                    [p(b - 1), p(b), p(b + 99), p(b + 100)],
                    [0.0, 0.125, 0.125, 0.0]
                );
            }
            assert_eq!(reverse.burst_loss_probability_at(Time::from_millis(b)), 0.0);
        }
    }
    assert!(handovers > 0 && others > 0, "{handovers} and {others}");
}

#[test]
fn an_unknown_scenario_name_lists_the_shipped_ones() {
    let err = Scenario::load("starlonk", &support::paths()).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("starlonk") && msg.contains("starlink, starrynet-sparse, terrestrial-5g"),
        "{msg}"
    );
}

#[test]
fn a_scenario_can_be_given_as_a_path() {
    let path = support::paths().scenario_file("starlink");
    let s = Scenario::load(path.to_str().unwrap(), &support::paths()).unwrap();
    assert_eq!(s.name(), "starlink");
}

/// `BASE` with a `[sender]` table holding `body` appended.
fn with_sender(body: &str) -> String {
    format!("{BASE}\n[sender]\n{body}\n")
}

#[test]
fn without_a_sender_table_the_call_gets_the_default_sender() {
    let s = parse(BASE).unwrap();
    assert_eq!(s.file.sender, None);
    let r = s.realize(1, std::time::Duration::from_secs(10)).unwrap();
    assert_eq!(r.sender, SenderOptions::default());
    // An empty table is the same.
    let s = parse(&with_sender("")).unwrap();
    let r = s.realize(1, std::time::Duration::from_secs(10)).unwrap();
    assert_eq!(r.sender, SenderOptions::default());
}

#[test]
fn every_sender_key_is_optional_and_each_value_reaches_the_realised_call() {
    for (body, expected) in [
        (
            "bwe = \"webrtc-rs\"",
            SenderOptions {
                bwe: BweChoice::WebrtcRs,
                ..SenderOptions::default()
            },
        ),
        (
            "nack = \"stock\"",
            SenderOptions {
                nack: NackChoice::Stock,
                ..SenderOptions::default()
            },
        ),
        (
            "nack = \"off\"\ncwnd = \"off\"",
            SenderOptions {
                nack: NackChoice::Off,
                cwnd: CwndMode::Off,
                ..SenderOptions::default()
            },
        ),
        (
            "cwnd = \"pacer\"\nkeyframe_flush = true",
            SenderOptions {
                cwnd: CwndMode::Pacer,
                keyframe_flush: true,
                ..SenderOptions::default()
            },
        ),
        (
            "fec = \"fixed:10/2\"",
            SenderOptions {
                fec: FecChoice::Fixed {
                    media: 10,
                    repair: 2,
                },
                ..SenderOptions::default()
            },
        ),
        (
            "fec = \"off\"",
            SenderOptions {
                fec: FecChoice::Off,
                ..SenderOptions::default()
            },
        ),
        (
            "bwe = \"googcc\"\nnack = \"libwebrtc\"\ncwnd = \"pushback\"\nkeyframe_flush = false\nfec = \"libwebrtc\"",
            SenderOptions::default(),
        ),
    ] {
        let s = parse(&with_sender(body)).unwrap_or_else(|e| panic!("{body}: {e}"));
        let r = s.realize(1, std::time::Duration::from_secs(10)).unwrap();
        assert_eq!(r.sender, expected, "{body}");
        // The simulated call takes them from the realisation.
        let config = CallConfig::from_realization(&r, PolicyChoice::Default);
        assert_eq!(config.sender(), expected, "{body}");
    }
}

#[test]
fn a_command_line_flag_beats_the_scenario_file_which_beats_the_default() {
    let s = parse(&with_sender("cwnd = \"pacer\"\nkeyframe_flush = true")).unwrap();
    let file = s.sender_overrides().unwrap();
    let cli = SenderOverrides {
        keyframe_flush: Some(false),
        nack: Some(NackChoice::Off),
        ..SenderOverrides::NONE
    };
    let r = s.realize(1, std::time::Duration::from_secs(10)).unwrap();
    let options = r.sender.overridden_by(&cli);
    assert_eq!(options, SenderOptions::resolve(&file, &cli));
    assert_eq!(
        options,
        SenderOptions {
            bwe: BweChoice::GoogCc,
            nack: NackChoice::Off,
            cwnd: CwndMode::Pacer,
            keyframe_flush: false,
            fec: FecChoice::Libwebrtc,
        }
    );
}

#[test]
fn a_bad_sender_value_is_refused_naming_the_file_the_key_and_the_allowed_values() {
    for (body, key, allowed) in [
        ("bwe = \"bbr\"", "sender.bwe", "\"googcc\", \"webrtc-rs\""),
        (
            "nack = \"libWebRTC\"",
            "sender.nack",
            "\"libwebrtc\", \"stock\", \"off\"",
        ),
        (
            "cwnd = \"window\"",
            "sender.cwnd",
            "\"pushback\", \"pacer\", \"off\"",
        ),
        (
            "cwnd = \"\"",
            "sender.cwnd",
            "\"pushback\", \"pacer\", \"off\"",
        ),
    ] {
        let msg = error(&with_sender(body));
        assert!(msg.starts_with(&format!("test.toml: {key}: ")), "{msg}");
        assert!(msg.contains(allowed), "{body}: {msg}");
        let value = body.split('"').nth(1).unwrap();
        assert!(msg.contains(&format!("{value:?}")), "{body}: {msg}");
    }
    for (body, expected) in [
        (
            "fec = \"ulpfec\"",
            "test.toml: sender.fec: unknown FEC mode `ulpfec`: expected libwebrtc, off or fixed:<media>/<repair> (e.g. fixed:10/2)",
        ),
        (
            "fec = \"fixed:4/5\"",
            "test.toml: sender.fec: bad fixed FEC shape `fixed:4/5`: expected fixed:<media>/<repair> with 1 <= repair <= media <= 48, e.g. fixed:10/2",
        ),
    ] {
        assert_eq!(error(&with_sender(body)), expected, "{body}");
    }
}

#[test]
fn a_sender_value_of_the_wrong_type_or_an_unknown_sender_key_is_refused() {
    let msg = error(&with_sender("keyframe_flush = \"yes\""));
    assert!(
        msg.contains("test.toml") && msg.contains("keyframe_flush") && msg.contains("boolean"),
        "{msg}"
    );
    let msg = error(&with_sender("cwnd = 3"));
    assert!(
        msg.contains("test.toml") && msg.contains("cwnd") && msg.contains("string"),
        "{msg}"
    );
    let msg = error(&with_sender("pushback = true"));
    assert!(
        msg.contains("test.toml") && msg.contains("unknown field `pushback`"),
        "{msg}"
    );
    // The unknown-key message lists the keys that exist.
    for key in ["bwe", "nack", "cwnd", "keyframe_flush"] {
        assert!(msg.contains(key), "{key}: {msg}");
    }
}

#[test]
fn a_replay_table_is_refused_where_it_moves_nothing_or_its_values_are_bad() {
    let msg = error(&format!("{BASE}\n[replay]\noffset = \"seeded\"\n"));
    assert!(
        msg.contains("replay") && msg.contains("lagos") && msg.contains("ping"),
        "a [replay] without lagos series: {msg}"
    );
    let lagos = std::fs::read_to_string(support::paths().scenario_file("lagos-trace")).unwrap();
    assert!(lagos.contains("[replay]"), "lagos-trace sets [replay]");
    assert!(parse(&lagos).is_ok());
    let msg = error(&lagos.replace("align_ms = 15000", "align_ms = 0"));
    assert!(msg.contains("replay.align_ms"), "{msg}");
    let msg = error(&lagos.replace("offset = \"seeded\"", "offset = \"later\""));
    assert!(
        msg.contains("offset") && msg.contains("\"seeded\" or a whole number of ms"),
        "{msg}"
    );
    let msg = error(&lagos.replace("offset = \"seeded\"", "offset = -15000"));
    assert!(msg.contains("offset"), "{msg}");
    assert!(parse(&lagos.replace("offset = \"seeded\"", "offset = 30000")).is_ok());
}

#[test]
fn a_ping_loss_with_a_window_or_slot_out_of_range_names_the_field() {
    let file = support::paths()
        .root
        .join("docs/experiments/mmsys24/starlink-lagos-ping.toml");
    let ping = std::fs::read_to_string(file).unwrap();
    assert!(parse(&ping).is_ok());
    for (from, to, field) in [
        (
            "window_ms = 60000",
            "window_ms = 50",
            "forward.loss.window_ms",
        ),
        (
            "window_ms = 60000",
            "window_ms = 4000000",
            "forward.loss.window_ms",
        ),
        ("slot_ms = 15000", "slot_ms = 100", "forward.loss.slot_ms"),
    ] {
        let msg = error(&ping.replace(from, to));
        assert!(msg.contains(field), "{to}: {msg}");
    }
    // No slot shape is allowed, and the defaults are the file's.
    assert!(parse(&ping.replace("slot_ms = 15000", "slot_ms = 0")).is_ok());
    assert_eq!(
        parse(&ping.replace("window_ms = 60000\nslot_ms = 15000\n", ""))
            .unwrap()
            .file,
        parse(&ping).unwrap().file
    );
}

//! Real calls between rtc-client and headless Chromium on loopback, in both directions, through
//! `rtc-client browser` (the binary): the browser decodes our VP8, our pacer's limit changes at
//! decision boundaries, and Chromium's bandwidth estimate follows our TWCC feedback and the
//! emulated capacity. These need Chromium: without it they fail and name the setup script
//! (CI installs it with scripts/setup-browser.sh). The ones where we send need real VP8, so they
//! run in builds with the `vp8` feature (scripts/test.sh turns it on); without it, the commands
//! that need VP8 must refuse at once with one line naming what to install.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One browser call at a time: two Chromiums, two webrtc stacks and two encoders on a 2-core
/// machine starve each other's real-time loops.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn out_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "leopace-browser-test-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Runs `rtc-client browser ARGS --out DIR` and returns its summary.json.
fn browser(args: &[&str], out: &Path) -> Value {
    browser_with_flags(args, out, "")
}

/// As [`browser`], with `chromium_flags` added to Chromium's command line.
fn browser_with_flags(args: &[&str], out: &Path, chromium_flags: &str) -> Value {
    let (output, _) = browser_run(args, out, chromium_flags, None);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "rtc-client browser {args:?} failed (is Chromium installed? scripts/setup-browser.sh \
         installs it):\n{stderr}\n{stdout}"
    );
    let text = std::fs::read_to_string(out.join("summary.json")).expect("summary.json");
    serde_json::from_str(&text).expect("summary.json is JSON")
}

/// Runs `rtc-client browser ARGS --out DIR`, one call at a time, with `chromium` (a path) in
/// place of the Chromium found on `PATH` if given; also how long it ran, its turn's wait not
/// counted.
fn browser_run(
    args: &[&str],
    out: &Path,
    chromium_flags: &str,
    chromium: Option<&Path>,
) -> (std::process::Output, std::time::Duration) {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let started = std::time::Instant::now();
    let mut command = Command::new(env!("CARGO_BIN_EXE_rtc-client"));
    command.env(rtc_client::live::chromium::EXTRA_FLAGS_VAR, chromium_flags);
    if let Some(path) = chromium {
        command.env("CHROMIUM", path);
    }
    let output = command
        .arg("browser")
        .args(args)
        .arg("--out")
        .arg(out)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .output()
        .expect("rtc-client runs");
    (output, started.elapsed())
}

/// An executable shell script at `dir/name` that runs `body`, with `$CHROMIUM_FOUND` set to the
/// Chromium this machine has.
fn chromium_wrapper(dir: &Path, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let real = rtc_client::live::chromium::find().expect("Chromium is installed");
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join(name);
    std::fs::write(
        &path,
        format!("#!/bin/sh\nCHROMIUM_FOUND='{}'\n{body}\n", real.display()),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// A Chromium that takes 10 s to start (a cold start on a loaded machine has been seen to take
/// more than 8) still gets the whole call: its length counts from the page being ready.
#[test]
fn a_slow_starting_chromium_still_gets_the_whole_call() {
    let out = out_dir("slow-start");
    let slow = chromium_wrapper(
        &out.join("bin"),
        "slow-chromium",
        "sleep 10\nexec \"$CHROMIUM_FOUND\" \"$@\"",
    );
    let (output, _) = browser_run(
        &["--seconds", "8", "--direction", "send"],
        &out.join("call"),
        "",
        Some(&slow),
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{}\n{stdout}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = std::fs::read_to_string(out.join("call").join("summary.json")).unwrap();
    let s: Value = serde_json::from_str(&text).unwrap();
    // 8 s of the fake camera's 20 to 30 fps, less the connection's set-up.
    assert!(number(&s, &["ours", "qoe_frames_rendered"]) > 100.0, "{s}");
    let _ = std::fs::remove_dir_all(&out);
}

/// A Chromium that exits before loading the page is named at once, with its log.
#[test]
fn a_chromium_that_exits_at_once_is_named() {
    let out = out_dir("dead-start");
    let dead = chromium_wrapper(&out.join("bin"), "dead-chromium", "exit 3");
    let (output, took) = browser_run(
        &["--seconds", "8", "--direction", "send"],
        &out.join("call"),
        "",
        Some(&dead),
    );
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{err}");
    assert!(
        err.contains("Chromium exited before its page loaded") && err.contains("chromium.log"),
        "{err}"
    );
    assert!(took < std::time::Duration::from_secs(5), "took {took:?}");
    let _ = std::fs::remove_dir_all(&out);
}

fn number(v: &Value, path: &[&str]) -> f64 {
    let mut v = v;
    for key in path {
        v = &v[*key];
    }
    v.as_f64()
        .unwrap_or_else(|| panic!("{path:?} is not a number in the summary"))
}

#[cfg(feature = "vp8")]
#[test]
fn our_sender_to_chromium_over_starlink() {
    let out = out_dir("receive");
    let s = browser(
        &[
            "--seconds",
            "20",
            "--direction",
            "receive",
            "--scenario",
            "starlink",
            "--policy",
            "random",
            "--decision-interval",
            "4s",
            "--compare-completion-model",
            "extrapolator",
        ],
        &out,
    );
    let sent = number(&s, &["ours", "frames_sent"]);
    let decoded = number(&s, &["browser", "last", "framesDecoded"]);
    // 30 fps less the set-up; a loaded 2-core machine may skip some frame slots (counted as
    // dropped, not sent), so the bar is 15 fps.
    assert!(sent > 300.0, "{sent} frames sent in 20 s");
    assert!(
        decoded >= 0.9 * sent,
        "the browser decoded {decoded} of {sent} frames"
    );
    // GoogCC's probes reach the browser as RTX payload padding on the negotiated RTX SSRC, and
    // Chromium keeps decoding (above): the target jumps past 600 kbit/s within 8 s, where
    // media-only probes left it climbing by its multiplicative increase (337 kbit/s at 8 s).
    let early_max = s["ours"]["per_second"]
        .as_array()
        .expect("per_second")
        .iter()
        .filter(|row| row[0].as_f64().is_some_and(|t| t <= 8.0))
        .filter_map(|row| row[1].as_f64())
        .fold(0.0, f64::max);
    assert!(
        early_max > 600.0,
        "the target reached only {early_max} kbit/s in 8 s"
    );
    // Both freeze counts are there, side by side.
    number(&s, &["browser", "last", "freezeCount"]);
    number(&s, &["ours", "qoe_freeze_count"]);
    // The two shadow receivers, one per model of expected completion, saw the same datagrams.
    assert_eq!(s["receiver"]["completion_model"], "average", "{s}");
    assert_eq!(
        s["receiver_compared"]["completion_model"], "extrapolator",
        "{s}"
    );
    assert_eq!(
        s["receiver"]["packets"], s["receiver_compared"]["packets"],
        "{s}"
    );
    assert!(number(&s, &["receiver", "packets"]) > 0.0);
    number(&s, &["receiver_compared", "mean_playout_delay_ms"]);
    // The random policy draws a limit at every boundary: they are not all the same.
    let limits: Vec<u64> = s["ours"]["decisions"]
        .as_array()
        .expect("decisions")
        .iter()
        .filter_map(|d| d["limit_ms"].as_u64())
        .collect();
    assert!(limits.len() >= 4, "{limits:?}");
    assert!(limits.windows(2).any(|w| w[0] != w[1]), "{limits:?}");
    assert!(out.join("browser-call.png").is_file(), "no screenshot");
    let _ = std::fs::remove_dir_all(&out);
}

/// A scenario of `seconds` over a constant 4 Mbit/s forward link with a 60-ms delay and
/// Bernoulli `loss`, and a clean reverse link.
#[cfg(feature = "vp8")]
fn lossy_scenario(dir: &Path, loss: f64) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join("lossy.toml");
    let link = |name: &str, mbps: f64, loss: &str| {
        format!(
            "[{name}]\nbuffer_ms = 300\n\n[{name}.capacity]\nkind = \"constant\"\nmbps = {mbps}\n\n\
             [{name}.delay]\nkind = \"constant\"\nms = 60.0\njitter_ms = 0.0\njitter_rho = 0.0\n\n\
             [{name}.loss]\n{loss}\n\n"
        )
    };
    let text = format!(
        "name = \"lossy\"\ndescription = \"test: Bernoulli loss\"\nkind = \"generated\"\n\n\
         [call]\nduration_s = 120\nfps = 30\nmin_bitrate_kbps = 50\nstart_bitrate_kbps = 300\n\
         max_bitrate_kbps = 2500\n\n[handovers]\nsource = \"none\"\n\n{}{}",
        link(
            "forward",
            4.0,
            &format!("kind = \"bernoulli\"\nrate = {loss}")
        ),
        link("reverse", 50.0, "kind = \"none\""),
    );
    std::fs::write(&path, text).unwrap();
    path
}

/// Our FlexFEC-03 reaches Chromium, which rebuilds lost packets from it: the repair packets are
/// computed as libwebrtc computes them (below the TWCC sender, mutable header extensions
/// zeroed), so Chromium's `FlexfecReceiver` recovers media with them. getStats has no recovered
/// count, so Chromium's own log line for each recovered packet (flexfec_receiver.cc, at verbose
/// level 1) is counted.
#[cfg(feature = "vp8")]
#[test]
fn chromium_decodes_our_video_and_recovers_lost_packets_from_our_flexfec() {
    let out = out_dir("fec");
    let scenario = lossy_scenario(&out.join("scenario"), 0.03);
    let s = browser_with_flags(
        &[
            "--seconds",
            "40",
            "--direction",
            "receive",
            "--scenario",
            scenario.to_str().unwrap(),
        ],
        &out.join("call"),
        "--enable-logging=stderr --vmodule=*/webrtc/modules/rtp_rtcp/source/flexfec_receiver*=1",
    );
    let sent = number(&s, &["ours", "frames_sent"]);
    let decoded = number(&s, &["browser", "last", "framesDecoded"]);
    let fec_sent = number(&s, &["ours", "fec_packets_sent"]);
    let fec_received = number(&s, &["browser", "last", "fecPacketsReceived"]);
    // Chromium 156 leaves fecPacketsDiscarded out of video stats; where it reports it, few are.
    let discarded = s["browser"]["last"]["fecPacketsDiscarded"]
        .as_f64()
        .unwrap_or(0.0);
    let log = std::fs::read_to_string(out.join("call").join("chromium.log")).unwrap_or_default();
    let recovered = log.matches("Recovered media packet").count();
    eprintln!(
        "frames sent {sent}, decoded {decoded}; repair packets sent {fec_sent}, received \
         {fec_received}, discarded {discarded}; packets Chromium recovered {recovered}"
    );
    assert!(sent > 600.0, "{sent} frames sent in 40 s");
    assert!(
        fec_received > 0.5 * fec_sent && fec_received > 20.0,
        "Chromium received {fec_received} of {fec_sent} repair packets"
    );
    assert!(
        discarded <= 0.1 * fec_received,
        "{discarded} of {fec_received} discarded"
    );
    assert!(recovered >= 1, "Chromium recovered no packet from our FEC");
    assert!(
        decoded >= 0.9 * sent,
        "the browser decoded {decoded} of {sent} frames"
    );
    let _ = std::fs::remove_dir_all(&out);
}

/// A scenario whose forward link (browser to us) follows `trace` (a Mahimahi file: one line per
/// 1500-byte delivery opportunity, milliseconds) and whose reverse link is a plain 50 Mbit/s.
fn trace_scenario(dir: &Path, trace: &str) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let trace_path = dir.join("forward.mahimahi");
    std::fs::write(&trace_path, trace).unwrap();
    let path = dir.join("step.toml");
    let link = |name: &str, capacity: String, buffer_ms: u32| {
        format!(
            "[{name}]\nbuffer_ms = {buffer_ms}\n\n[{name}.capacity]\n{capacity}\n\n\
             [{name}.delay]\nkind = \"constant\"\nms = 20.0\njitter_ms = 0.0\njitter_rho = 0.0\n\n\
             [{name}.loss]\nkind = \"none\"\n\n"
        )
    };
    let text = format!(
        "name = \"step\"\ndescription = \"test: a capacity step\"\nkind = \"trace\"\n\n\
         [call]\nduration_s = 60\nfps = 30\nmin_bitrate_kbps = 50\nstart_bitrate_kbps = 300\n\
         max_bitrate_kbps = 2500\n\n[handovers]\nsource = \"none\"\n\n{}{}",
        link(
            "forward",
            format!("kind = \"mahimahi\"\nfile = \"{}\"", trace_path.display()),
            300
        ),
        link(
            "reverse",
            "kind = \"constant\"\nmbps = 50.0".to_owned(),
            100
        ),
    );
    std::fs::write(&path, text).unwrap();
    path
}

/// Mahimahi lines: one opportunity every `every_ms` from `from_ms` to `to_ms`.
fn opportunities(from_ms: u64, to_ms: u64, every_ms: u64) -> String {
    (from_ms..to_ms)
        .step_by(every_ms as usize)
        .map(|t| format!("{t}\n"))
        .collect()
}

/// (seconds since the first sample, availableOutgoingBitrate) of a summary's series.
fn available(s: &Value) -> Vec<(f64, f64)> {
    s["browser"]["series"]
        .as_array()
        .expect("series")
        .iter()
        .filter_map(|row| Some((row[0].as_f64()?, row[1].as_f64()?)))
        .collect()
}

fn mean_between(series: &[(f64, f64)], from: f64, to: f64) -> f64 {
    let values: Vec<f64> = series
        .iter()
        .filter(|(t, _)| (from..to).contains(t))
        .map(|(_, v)| *v)
        .collect();
    assert!(
        !values.is_empty(),
        "no sample between {from} and {to} s: {series:?}"
    );
    values.iter().sum::<f64>() / values.len() as f64
}

#[test]
fn chromium_to_our_receiver_follows_our_feedback() {
    let out = out_dir("send");
    // Loopback: our TWCC feedback lets Chromium's estimate climb from its 300 kbit/s start.
    let free = browser(&["--seconds", "12", "--direction", "send"], &out);
    assert!(
        number(&free, &["ours", "qoe_frames_rendered"]) > 150.0,
        "{free}"
    );
    let free_max = available(&free).iter().map(|(_, v)| *v).fold(0.0, f64::max);
    assert!(
        free_max > 1_000_000.0,
        "availableOutgoingBitrate peaked at {free_max}"
    );
    // Through a link of 2 Mbit/s that drops to 0.1 Mbit/s (below the fake camera's ~200
    // kbit/s) after 12 s, the estimate follows it down.
    let trace = opportunities(0, 12_000, 6) + &opportunities(12_000, 60_000, 120);
    let scenario = trace_scenario(&out.join("scenario"), &trace);
    let step = browser(
        &[
            "--seconds",
            "24",
            "--direction",
            "send",
            "--scenario",
            scenario.to_str().unwrap(),
        ],
        &out.join("step"),
    );
    let series = available(&step);
    let before = mean_between(&series, 4.0, 12.0);
    let after = mean_between(&series, 18.0, 24.0);
    assert!(
        after < 0.5 * before && after < 300_000.0,
        "availableOutgoingBitrate {before:.0} before the step, {after:.0} after: {series:?}"
    );
    assert!(
        number(&step, &["ours", "qoe_frames_rendered"]) > 150.0,
        "{step}"
    );
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn chromium_to_our_receiver_over_starlink_with_our_receivers_own_raise() {
    // 60 s: the raise needs 8 measured repairs first, and Chromium's sender falls to about 190
    // kbit/s (one or two packets a frame) after the first boundary, so they come slowly
    // (docs/experiments/receiver-raise-2026-12-04.md).
    let out = out_dir("send-raise");
    let raised = browser(
        &[
            "--seconds",
            "60",
            "--direction",
            "send",
            "--scenario",
            "starlink",
            "--handover",
            "calibrated",
            "--receiver-raise",
            "--seed",
            "9301",
        ],
        &out,
    );
    assert_eq!(raised["ours"]["receiver_raise"], "calibrated", "{raised}");
    assert!(
        number(&raised, &["ours", "frames_raised_by_forecast"]) > 0.0,
        "no frame was raised: {raised}"
    );
    assert!(
        number(&raised, &["ours", "qoe_frames_rendered"]) > 900.0,
        "{raised}"
    );
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn receiver_flags_are_refused_where_they_cannot_apply() {
    let out = out_dir("raise-refused");
    for (args, message) in [
        (
            &[
                "--direction",
                "send",
                "--handover",
                "calibrated",
                "--receiver-raise",
            ][..],
            "--receiver-raise needs a --scenario",
        ),
        (
            &[
                "--direction",
                "send",
                "--scenario",
                "starlink",
                "--receiver-raise",
            ][..],
            "--receiver-raise needs a --handover source",
        ),
        (
            &[
                "--direction",
                "send",
                "--scenario",
                "starlink",
                "--compare-completion-model",
                "extrapolator",
            ][..],
            "--compare-completion-model is for --direction receive",
        ),
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_rtc-client"))
            .arg("browser")
            .args(args)
            .args(["--out", out.to_str().unwrap()])
            .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
            .output()
            .expect("rtc-client runs");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            !o.status.success() && err.contains(message),
            "{args:?}: {err}"
        );
    }
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn an_offer_with_only_unsupported_codecs_gets_a_clear_422() {
    use rtc_client::live::answer::{AnswerConfig, AnswerServer};
    use rtc_client::live::http::{Peer, request_raw};
    use rtc_client::live::web::WebConfig;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let server = AnswerServer::start(
            AnswerConfig {
                listen: "127.0.0.1:0".parse().unwrap(),
                allow_non_loopback: false,
                fec: false,
                web: Some(WebConfig::default()),
                token: None,
                tls: None,
                receiver_raise: None,
            },
            |_| {},
        )
        .await
        .unwrap();
        let peer = Peer::plain(&format!("http://{}", server.local_addr())).unwrap();
        let sdp = "v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\na=group:BUNDLE 0\r\n\
                   m=video 9 UDP/TLS/RTP/SAVPF 49\r\nc=IN IP4 0.0.0.0\r\na=mid:0\r\na=sendonly\r\n\
                   a=rtpmap:49 H265/90000\r\na=candidate:1 1 udp 1 127.0.0.1 40000 typ host\r\n";
        let body = serde_json::json!({"offer": {"type": "offer", "sdp": sdp}}).to_string();
        for path in ["/calls", "/web/send"] {
            let started = std::time::Instant::now();
            let response = request_raw(
                &peer,
                "POST",
                path,
                "application/json",
                body.as_bytes(),
                std::time::Duration::from_secs(5),
            )
            .await
            .expect("an answer, not a hang");
            assert_eq!(response.status, 422, "{path}: {}", response.text());
            assert!(
                response.text().contains("H265/90000") && response.text().contains("VP8/90000"),
                "{}",
                response.text()
            );
            assert!(started.elapsed() < std::time::Duration::from_secs(2));
        }
        // The page is served from the same origin.
        let page = request_raw(
            &peer,
            "GET",
            "/",
            "text/plain",
            b"",
            std::time::Duration::from_secs(5),
        )
        .await
        .unwrap();
        assert_eq!(page.status, 200);
        assert!(page.text().contains("requestVideoFrameCallback"));
        server.shutdown().await;
    });
}

/// Without the `vp8` feature, `call --video vp8` and `browser --direction receive` fail before
/// they open anything (no answerer listens at the peer URL, no Chromium is started), with one
/// error line that names the packages and the feature, and no panic.
#[cfg(not(feature = "vp8"))]
#[test]
fn without_the_vp8_feature_real_video_is_refused_in_one_line_naming_libvpx() {
    let out = out_dir("no-vp8");
    let commands: [Vec<&str>; 2] = [
        vec!["call", "--video", "vp8", "--peer", "http://127.0.0.1:9"],
        vec![
            "browser",
            "--direction",
            "receive",
            "--out",
            out.to_str().unwrap(),
        ],
    ];
    for args in commands {
        let output = Command::new(env!("CARGO_BIN_EXE_rtc-client"))
            .args(&args)
            .env("RUST_LOG", "warn")
            .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
            .output()
            .expect("rtc-client runs");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{args:?}: not one line: {stderr}");
        for needle in [
            "error:",
            "libvpx-dev",
            "pkg-config",
            "setup-browser.sh",
            "--features vp8",
        ] {
            assert!(
                lines[0].contains(needle),
                "{args:?}: no {needle:?} in {stderr}"
            );
        }
        assert!(output.stdout.is_empty(), "{args:?} printed before refusing");
    }
}

//! Real calls between rtc-client and headless Chromium on loopback, in both directions, through
//! `rtc-client browser` (the binary): the browser decodes our VP8, our pacer's limit changes at
//! decision boundaries, and Chromium's bandwidth estimate follows our TWCC feedback and the
//! emulated capacity. These need Chromium: without it they fail and name the setup script
//! (CI installs it with scripts/setup-browser.sh).

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
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let output = Command::new(env!("CARGO_BIN_EXE_rtc-client"))
        .arg("browser")
        .args(args)
        .arg("--out")
        .arg(out)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .output()
        .expect("rtc-client runs");
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

fn number(v: &Value, path: &[&str]) -> f64 {
    let mut v = v;
    for key in path {
        v = &v[*key];
    }
    v.as_f64()
        .unwrap_or_else(|| panic!("{path:?} is not a number in the summary"))
}

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
        ],
        &out,
    );
    let sent = number(&s, &["ours", "frames_sent"]);
    let decoded = number(&s, &["browser", "last", "framesDecoded"]);
    assert!(sent > 400.0, "{sent} frames sent in 20 s");
    assert!(
        decoded >= 0.9 * sent,
        "the browser decoded {decoded} of {sent} frames"
    );
    // Both freeze counts are there, side by side.
    number(&s, &["browser", "last", "freezeCount"]);
    number(&s, &["ours", "qoe_freeze_count"]);
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

/// A scenario whose forward link (browser to us) is a constant `mbps`.
fn constant_scenario(dir: &Path, mbps: f64) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join("constant.toml");
    let link = |mbps: f64| {
        format!(
            "buffer_ms = 200\n\n[{{0}}.capacity]\nkind = \"constant\"\nmbps = {mbps}\n\n\
             [{{0}}.delay]\nkind = \"constant\"\nms = 20.0\njitter_ms = 0.0\njitter_rho = 0.0\n\n\
             [{{0}}.loss]\nkind = \"none\"\n"
        )
    };
    let text = format!(
        "name = \"constant\"\ndescription = \"test: constant capacity\"\nkind = \"generated\"\n\n\
         [call]\nduration_s = 60\nfps = 30\nmin_bitrate_kbps = 50\nstart_bitrate_kbps = 300\n\
         max_bitrate_kbps = 2500\n\n[handovers]\nsource = \"none\"\n\n[forward]\n{}\n[reverse]\n{}",
        link(mbps).replace("{0}", "forward"),
        link(50.0).replace("{0}", "reverse"),
    );
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn chromium_to_our_receiver_follows_our_feedback() {
    let out = out_dir("send");
    let free = browser(&["--seconds", "12", "--direction", "send"], &out);
    assert!(
        number(&free, &["ours", "qoe_frames_rendered"]) > 150.0,
        "{free}"
    );
    let max_available = |s: &Value| {
        s["browser"]["series"]
            .as_array()
            .expect("series")
            .iter()
            .filter_map(|row| row[1].as_f64())
            .fold(0.0f64, f64::max)
    };
    // Our TWCC feedback lets Chromium's estimate climb from its 300 kbit/s start.
    let free_max = max_available(&free);
    assert!(
        free_max > 1_000_000.0,
        "availableOutgoingBitrate peaked at {free_max}"
    );
    // Through a 0.5 Mbit/s emulated link, the estimate stays near that capacity.
    let scenario = constant_scenario(&out.join("scenario"), 0.5);
    let slow = browser(
        &[
            "--seconds",
            "12",
            "--direction",
            "send",
            "--scenario",
            scenario.to_str().unwrap(),
        ],
        &out.join("slow"),
    );
    let slow_max = max_available(&slow);
    assert!(
        slow_max < 0.5 * free_max && slow_max < 900_000.0,
        "{slow_max} vs {free_max}"
    );
    assert!(
        number(&slow, &["ours", "qoe_frames_rendered"]) > 100.0,
        "{slow}"
    );
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn an_offer_with_only_unsupported_codecs_gets_a_clear_422() {
    use rtc_client::live::answer::{AnswerConfig, AnswerServer};
    use rtc_client::live::http::{PeerUrl, request_raw};
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
            },
            |_| {},
        )
        .await
        .unwrap();
        let peer = PeerUrl::parse(&format!("http://{}", server.local_addr())).unwrap();
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

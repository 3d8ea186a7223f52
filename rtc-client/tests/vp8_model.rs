//! The simulator's frame-size model against libvpx: at three targets, the real VP8 encoder (on
//! the live calls' test pattern) and the synthetic encoder must agree on the mean delta-frame
//! size within 15 %. Measured (8-s runs, the first 2 s left out): libvpx 1254 / 3306 / 6060 B
//! against the model's 1164 / 3088 / 5782 B at 300 / 800 / 1500 kbit/s (7 to 8 % apart).
//!
//! They do not agree on the rest, and the bounds say so rather than hide it: the model's key
//! frames are 5x a delta frame and its delta frames spread with a coefficient of variation of
//! 0.22 (talking-head figures), while on the noise-dominated test pattern libvpx's key frames are
//! 1.1x to 3x a delta frame (noise costs as much in a delta frame as in a key frame) and its
//! delta frames spread 0.08 to 0.13. So: libvpx's key frames are larger than its delta frames
//! but within the model's ratio, its ratio grows with the target, and both spreads stay under
//! 0.3.
//!
//! libvpx is linked only with the `vp8` feature (scripts/test.sh turns it on).

#![cfg(feature = "vp8")]

use rtc_client::link::Time;
use rtc_client::media::encoder::{Encoder, EncoderConfig};
use rtc_client::media::vp8::pattern::TestPattern;
use vp8enc::{Config, Vp8Encoder};

/// (mean delta bytes, key / mean delta, coefficient of variation of delta sizes)
fn stats(sizes: &[(u32, bool)]) -> (f64, f64, f64) {
    let delta: Vec<f64> = sizes
        .iter()
        .filter(|(_, k)| !k)
        .map(|(s, _)| f64::from(*s))
        .collect();
    let key: Vec<f64> = sizes
        .iter()
        .filter(|(_, k)| *k)
        .map(|(s, _)| f64::from(*s))
        .collect();
    let mean = delta.iter().sum::<f64>() / delta.len() as f64;
    let sd = (delta.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / delta.len() as f64).sqrt();
    let key_mean = key.iter().sum::<f64>() / key.len().max(1) as f64;
    (mean, key_mean / mean, sd / mean)
}

/// 8 s at 30 fps, a key frame forced every 2 s after the first (as PLIs would); the first
/// 2 s (rate control settling) are left out.
fn real(target_bps: u64) -> (f64, f64, f64) {
    let mut encoder = Vp8Encoder::new(Config {
        target_bps,
        drop_frame_threshold: 0,
        ..Config::default()
    })
    .unwrap();
    let mut pattern = TestPattern::new(640, 360, 3);
    let mut sizes = Vec::new();
    for n in 0..240u64 {
        let frame = pattern.draw(n).to_vec();
        if let Some(f) = encoder
            .encode(&frame, (n * 3000) as i64, n % 60 == 0)
            .unwrap()
            && n >= 60
        {
            sizes.push((f.data.len() as u32, f.key_frame));
        }
    }
    stats(&sizes)
}

fn model(target_bps: u64) -> (f64, f64, f64) {
    let mut encoder = Encoder::new(
        EncoderConfig {
            seed: 3,
            ..EncoderConfig::default()
        },
        Time::ZERO,
    );
    let mut sizes = Vec::new();
    for n in 0..240u64 {
        let now = Time::from_nanos(n * 1_000_000_000 / 30);
        encoder.set_target(now, target_bps);
        if n % 60 == 0 {
            encoder.request_key_frame();
        }
        if let Some(f) = encoder.poll_frame(now, false)
            && n >= 60
        {
            sizes.push((f.size_bytes, f.key_frame));
        }
    }
    stats(&sizes)
}

#[test]
fn libvpx_and_the_model_agree_on_frame_sizes() {
    let mut ratios = Vec::new();
    for target in [300_000u64, 800_000, 1_500_000] {
        let (r, m) = (real(target), model(target));
        println!(
            "target {target}: libvpx mean {:.0} B, key/delta {:.2}, cv {:.2}; model mean {:.0} B, \
             key/delta {:.2}, cv {:.2}",
            r.0, r.1, r.2, m.0, m.1, m.2
        );
        assert!(
            (r.0 / m.0 - 1.0).abs() < 0.15,
            "mean: libvpx {r:?}, model {m:?}"
        );
        assert!(
            r.1 > 1.0 && r.1 <= m.1,
            "key/delta: libvpx {r:?}, model {m:?}"
        );
        assert!(r.2 < 0.3 && m.2 < 0.3, "spread: libvpx {r:?}, model {m:?}");
        ratios.push(r.1);
    }
    assert!(
        ratios.windows(2).all(|w| w[1] > w[0]),
        "key/delta by target: {ratios:?}"
    );
}

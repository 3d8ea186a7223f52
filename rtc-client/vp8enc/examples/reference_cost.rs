//! What a discardable frame costs in bits: libvpx VP8 at a fixed quantizer over natural moving
//! content, once with the normal reference chain and once with discardable windows
//! (docs/experiments/discardable-frames-2026-12-03.md, which gives the commands and the numbers).
//!
//! The content is a 640x360 crop panning over a photograph (bilinear, sub-pixel positions, the
//! photograph scaled so that its height is `2 x 360`), moving back and forth at `speed` pixels a
//! frame. Each frame inside a window is encoded discardable
//! ([`FrameReferences::Discardable`]: it references only the last frame buffer, which holds the
//! last base-layer frame, and updates nothing), so the k-th frame of a window is predicted from
//! a frame k frames old, and the first frame after a window of n from one n + 1 frames old.
//! Bits are compared with the normal chain's same frames at the same quantizer.
//!
//! ```text
//! cargo run --release -p vp8enc --example reference_cost -- PHOTO.png SPEED_PX QUANTIZER
//! ```
//!
//! Prints one line per run: `dense` (a 9-frame window every 45 frames: the cost by reference
//! distance 1..9 and of the base frame after, distance 10) and `action` (a 9-frame window every
//! 450 frames, the action's 300 ms at 30 fps: what the whole stream pays).

use std::fs::File;
use vp8enc::{Config, FrameReferences, Vp8Encoder};

const WIDTH: u32 = 640;
const HEIGHT: u32 = 360;
const FRAMES: usize = 900;
/// The action's default window, [t - 50 ms, t + 250 ms), at 30 fps: 9 frames.
const WINDOW: usize = 9;

/// A photograph as luma and chroma planes (BT.601, full range), f32.
struct Photo {
    width: usize,
    height: usize,
    y: Vec<f32>,
    u: Vec<f32>,
    v: Vec<f32>,
}

fn load(path: &str) -> Result<Photo, String> {
    let file = File::open(path).map_err(|e| format!("{path}: {e}"))?;
    let mut decoder = png::Decoder::new(file);
    decoder.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = decoder.read_info().map_err(|e| format!("{path}: {e}"))?;
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader
        .next_frame(&mut buf)
        .map_err(|e| format!("{path}: {e}"))?;
    let channels = info.color_type.samples();
    let (width, height) = (info.width as usize, info.height as usize);
    let mut photo = Photo {
        width,
        height,
        y: Vec::with_capacity(width * height),
        u: Vec::with_capacity(width * height),
        v: Vec::with_capacity(width * height),
    };
    for px in buf[..width * height * channels].chunks(channels) {
        let (r, g, b) = if channels >= 3 {
            (f32::from(px[0]), f32::from(px[1]), f32::from(px[2]))
        } else {
            let l = f32::from(px[0]);
            (l, l, l)
        };
        photo.y.push(0.299 * r + 0.587 * g + 0.114 * b);
        photo
            .u
            .push(128.0 - 0.168_736 * r - 0.331_264 * g + 0.5 * b);
        photo
            .v
            .push(128.0 + 0.5 * r - 0.418_688 * g - 0.081_312 * b);
    }
    Ok(photo)
}

fn bilinear(plane: &[f32], width: usize, height: usize, x: f32, y: f32) -> u8 {
    let x = x.clamp(0.0, (width - 1) as f32);
    let y = y.clamp(0.0, (height - 1) as f32);
    let (x0, y0) = (x.floor() as usize, y.floor() as usize);
    let (x1, y1) = ((x0 + 1).min(width - 1), (y0 + 1).min(height - 1));
    let (fx, fy) = (x - x0 as f32, y - y0 as f32);
    let at = |xx: usize, yy: usize| plane[yy * width + xx];
    let top = at(x0, y0) * (1.0 - fx) + at(x1, y0) * fx;
    let bottom = at(x0, y1) * (1.0 - fx) + at(x1, y1) * fx;
    (top * (1.0 - fy) + bottom * fy).round().clamp(0.0, 255.0) as u8
}

/// Frame `t` of the pan: the crop's top-left corner moves `speed` px a frame to the right and a
/// third of that down, bouncing at the edges of the scaled photograph.
fn frame(photo: &Photo, speed: f32, t: usize) -> Vec<u8> {
    let scale = (2 * HEIGHT) as f32 / photo.height as f32;
    let (sw, sh) = (photo.width as f32 * scale, photo.height as f32 * scale);
    let bounce = |pos: f32, span: f32| {
        let period = 2.0 * span;
        let p = pos.rem_euclid(period);
        if p <= span { p } else { period - p }
    };
    let ox = bounce(speed * t as f32, (sw - WIDTH as f32).max(1.0));
    let oy = bounce(speed / 3.0 * t as f32, (sh - HEIGHT as f32).max(1.0));
    let (w, h) = (WIDTH as usize, HEIGHT as usize);
    let mut out = vec![0u8; vp8enc::i420_len(WIDTH, HEIGHT)];
    let src = |px: f32, py: f32| ((ox + px) / scale, (oy + py) / scale);
    for yy in 0..h {
        for xx in 0..w {
            let (sx, sy) = src(xx as f32, yy as f32);
            out[yy * w + xx] = bilinear(&photo.y, photo.width, photo.height, sx, sy);
        }
    }
    let (cw, ch) = (w / 2, h / 2);
    for yy in 0..ch {
        for xx in 0..cw {
            let (sx, sy) = src(2.0 * xx as f32 + 0.5, 2.0 * yy as f32 + 0.5);
            out[w * h + yy * cw + xx] = bilinear(&photo.u, photo.width, photo.height, sx, sy);
            out[w * h + cw * ch + yy * cw + xx] =
                bilinear(&photo.v, photo.width, photo.height, sx, sy);
        }
    }
    out
}

/// Bytes of every frame, with `discardable(t)` choosing each frame's references.
fn encode(
    frames: &[Vec<u8>],
    quantizer: u32,
    discardable: impl Fn(usize) -> bool,
) -> Result<Vec<usize>, String> {
    let mut encoder = Vp8Encoder::new(Config {
        width: WIDTH,
        height: HEIGHT,
        fixed_quantizer: Some(quantizer),
        drop_frame_threshold: 0,
        ..Config::default()
    })
    .map_err(|e| e.to_string())?;
    let mut sizes = Vec::with_capacity(frames.len());
    for (t, raw) in frames.iter().enumerate() {
        let references = if discardable(t) {
            FrameReferences::Discardable
        } else {
            FrameReferences::Normal
        };
        let out = encoder
            .encode_with(raw, t as i64 * 3000, t == 0, references)
            .map_err(|e| e.to_string())?
            .ok_or_else(|| format!("frame {t} was dropped at a fixed quantizer"))?;
        sizes.push(out.data.len());
    }
    Ok(sizes)
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let [_, path, speed, quantizer] = args.as_slice() else {
        return Err("usage: reference_cost PHOTO.png SPEED_PX QUANTIZER".into());
    };
    let speed: f32 = speed.parse().map_err(|e| format!("speed: {e}"))?;
    let quantizer: u32 = quantizer.parse().map_err(|e| format!("quantizer: {e}"))?;
    let photo = load(path)?;
    let frames: Vec<Vec<u8>> = (0..FRAMES).map(|t| frame(&photo, speed, t)).collect();
    let normal = encode(&frames, quantizer, |_| false)?;
    let name = std::path::Path::new(path)
        .file_stem()
        .map_or_else(|| path.clone(), |s| s.to_string_lossy().into_owned());
    for (run, period, first) in [("dense", 45, 30), ("action", 450, 200)] {
        let in_window = |t: usize| t >= first && (t - first) % period < WINDOW;
        let layered = encode(&frames, quantizer, in_window)?;
        // Bytes against the normal chain's same frames, by reference distance: the k-th frame
        // of a window has distance k, the frame after it WINDOW + 1. A ratio of sums, since
        // single frames of the normal chain vary (libvpx refreshes its golden frame now and
        // then).
        let mut by_distance = [(0usize, 0usize); WINDOW + 2];
        for t in first..FRAMES {
            let k = (t - first) % period;
            let distance = if k < WINDOW {
                k + 1
            } else if k == WINDOW {
                WINDOW + 1
            } else {
                continue;
            };
            by_distance[distance].0 += layered[t];
            by_distance[distance].1 += normal[t];
        }
        let means: Vec<String> = by_distance[1..]
            .iter()
            .map(|(bytes, normal)| format!("{:.3}", *bytes as f64 / (*normal).max(1) as f64))
            .collect();
        let window_bytes: usize = (first..FRAMES)
            .filter(|&t| (t - first) % period <= WINDOW)
            .map(|t| layered[t])
            .sum();
        let window_normal: usize = (first..FRAMES)
            .filter(|&t| (t - first) % period <= WINDOW)
            .map(|t| normal[t])
            .sum();
        let total: usize = layered.iter().sum();
        let total_normal: usize = normal.iter().sum();
        println!(
            "{name} speed={speed} q={quantizer} run={run} mean_normal_bytes={:.0} \
             ratio_by_distance_1..{}=[{}] window_plus_next_ratio={:.3} stream_ratio={:.4}",
            total_normal as f64 / FRAMES as f64,
            WINDOW + 1,
            means.join(", "),
            window_bytes as f64 / window_normal as f64,
            total as f64 / total_normal as f64,
        );
    }
    Ok(())
}

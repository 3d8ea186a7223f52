//! The synthetic camera of real-video calls: an I420 test pattern that moves and shows its frame
//! number, so a screenshot of the far end says which frame it is and a frozen picture is
//! visible as one.
//!
//! Each frame has a diagonal luma gradient that scrolls, low-amplitude noise that changes every
//! frame (camera sensor noise: it is what makes the encoder spend its budget, as a real camera's
//! picture does, rather than coding a static scene in a few bytes), a bright square bouncing
//! across the picture, a coloured band, and the frame number in large seven-segment digits on a
//! dark box in the top-left corner.
//!
//! Drawing is row copies only, so that a debug build draws a frame in well under a millisecond
//! (a per-pixel noise pass took 13 ms): the noisy gradient is drawn once into [`NOISY_ROWS`]
//! double-width rows (a seeded xorshift generator: the same seed gives the same frames), and
//! each frame's row `y` copies a window of row `(31 y + 17 n) mod NOISY_ROWS` at the scroll
//! offset, so the noise moves unpredictably from frame to frame.

/// The frame number's digits (at most this many, the lowest ones).
const DIGITS: usize = 6;
/// One digit's cell, pixels (width, height); segments are `SEGMENT` thick.
const DIGIT_W: usize = 28;
const DIGIT_H: usize = 48;
const SEGMENT: usize = 6;
/// Pre-drawn noisy gradient rows (a prime, so consecutive frames pick different rows).
pub const NOISY_ROWS: usize = 97;
/// The bouncing square's side, pixels.
const SQUARE: usize = 56;

/// Seven-segment masks for 0-9: bits a (top), b (top right), c (bottom right), d (bottom),
/// e (bottom left), f (top left), g (middle).
const SEGMENTS: [u8; 10] = [
    0b011_1111, 0b000_0110, 0b101_1011, 0b100_1111, 0b110_0110, 0b110_1101, 0b111_1101, 0b000_0111,
    0b111_1111, 0b110_1111,
];

/// The test pattern (see the module documentation).
#[derive(Debug, Clone)]
pub struct TestPattern {
    width: usize,
    height: usize,
    /// [`NOISY_ROWS`] rows of `2 * width` bytes: the gradient ramp with noise.
    noisy: Vec<u8>,
    frame: Vec<u8>,
}

impl TestPattern {
    /// A pattern of `width` x `height` (both even, at least 64 x 64; smaller sizes are raised)
    /// whose noise is seeded with `seed`.
    pub fn new(width: u32, height: u32, seed: u64) -> Self {
        let width = (width as usize).max(64) & !1;
        let height = (height as usize).max(64) & !1;
        // The ramp: a triangle wave of period `width`, 40 to 200.
        let ramp: Vec<u8> = (0..2 * width)
            .map(|x| {
                let v = (x * 2 * 160 / width) % 320;
                (40 + if v < 160 { v } else { 320 - v }) as u8
            })
            .collect();
        let mut noisy = Vec::with_capacity(NOISY_ROWS * 2 * width);
        let mut state = seed | 1;
        for _ in 0..NOISY_ROWS {
            for chunk in ramp.chunks(8) {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                // Sensor noise, +-7 around the ramp.
                noisy.extend(
                    chunk
                        .iter()
                        .zip(state.to_le_bytes())
                        .map(|(p, b)| p.saturating_add(b & 0x0F).saturating_sub(7)),
                );
            }
        }
        Self {
            width,
            height,
            noisy,
            frame: vec![128; width * height * 3 / 2],
        }
    }

    /// The frame size, pixels.
    pub fn size(&self) -> (u32, u32) {
        (self.width as u32, self.height as u32)
    }

    /// Draws frame `number` and returns it as I420 (Y, then U, then V, no padding).
    pub fn draw(&mut self, number: u64) -> &[u8] {
        let (w, h) = (self.width, self.height);
        let (luma, chroma) = self.frame.split_at_mut(w * h);
        // The scrolling diagonal gradient with its noise, row by row.
        let n = number as usize;
        for (y, row) in luma.chunks_exact_mut(w).enumerate() {
            let source = (31 * y + 17 * n) % NOISY_ROWS;
            let shift = (y + 3 * n) % w;
            let start = source * 2 * w + shift;
            row.copy_from_slice(&self.noisy[start..start + w]);
        }
        // The bouncing square.
        let span = w - SQUARE;
        let travel = (number as usize * 6) % (2 * span);
        let x0 = if travel < span {
            travel
        } else {
            2 * span - travel
        };
        let y0 = h / 2 - SQUARE / 2;
        fill(luma, w, x0, y0, SQUARE, SQUARE, 235);
        // Chroma: neutral, with a coloured band that moves down the picture.
        let (cw, ch) = (w / 2, h / 2);
        let (u, v) = chroma.split_at_mut(cw * ch);
        u.fill(128);
        v.fill(128);
        let band = (number as usize * 2) % ch;
        for row in band..(band + ch / 8).min(ch) {
            u[row * cw..(row + 1) * cw].fill(90);
            v[row * cw..(row + 1) * cw].fill(200);
        }
        // The frame number on a dark box.
        let box_w = DIGITS * (DIGIT_W + SEGMENT) + SEGMENT;
        let box_h = DIGIT_H + 2 * SEGMENT;
        fill(luma, w, 8, 8, box_w, box_h, 16);
        let mut n = number;
        for slot in (0..DIGITS).rev() {
            let x = 8 + SEGMENT + slot * (DIGIT_W + SEGMENT);
            draw_digit(luma, w, x, 8 + SEGMENT, (n % 10) as usize);
            n /= 10;
        }
        &self.frame
    }
}

/// Fills the rectangle at (`x`, `y`) of `rw` x `rh` in the `w`-wide plane with `value`,
/// clipped to the plane.
fn fill(plane: &mut [u8], w: usize, x: usize, y: usize, rw: usize, rh: usize, value: u8) {
    let h = plane.len() / w;
    let x1 = (x + rw).min(w);
    for row in y.min(h)..(y + rh).min(h) {
        if x < x1 {
            plane[row * w + x..row * w + x1].fill(value);
        }
    }
}

fn draw_digit(plane: &mut [u8], w: usize, x: usize, y: usize, digit: usize) {
    let mask = SEGMENTS[digit % 10];
    let (dw, half, s) = (DIGIT_W, DIGIT_H / 2, SEGMENT);
    let bright = 250;
    let segments = [
        (x, y, dw, s),                   // a
        (x + dw - s, y, s, half),        // b
        (x + dw - s, y + half, s, half), // c
        (x, y + DIGIT_H - s, dw, s),     // d
        (x, y + half, s, half),          // e
        (x, y, s, half),                 // f
        (x, y + half - s / 2, dw, s),    // g
    ];
    for (bit, (sx, sy, sw, sh)) in segments.into_iter().enumerate() {
        if mask & (1 << bit) != 0 {
            fill(plane, w, sx, sy, sw, sh, bright);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_differ_and_show_their_number() {
        let mut pattern = TestPattern::new(640, 360, 7);
        let a = pattern.draw(1).to_vec();
        let b = pattern.draw(2).to_vec();
        assert_eq!(a.len(), 640 * 360 * 3 / 2);
        assert_ne!(a, b);
        // Digit "8" lights every segment; "1" only b and c: the top bar of the last digit.
        let mut pattern = TestPattern::new(640, 360, 7);
        let top_of_last = |frame: &[u8]| {
            let x = 8 + SEGMENT + (DIGITS - 1) * (DIGIT_W + SEGMENT) + DIGIT_W / 2;
            frame[(8 + SEGMENT + 1) * 640 + x]
        };
        assert_eq!(top_of_last(pattern.draw(8)), 250);
        assert_eq!(top_of_last(pattern.draw(1)), 16);
        // Same seed, same frames.
        let mut again = TestPattern::new(640, 360, 7);
        assert_eq!(again.draw(1), &a[..]);
    }
}

//! A small safe wrapper over libvpx's VP8 encoder, for real-time video: one spatial layer, CBR
//! rate control whose target can change between any two frames, key frames only on request, and
//! one encoded frame out for every raw frame in (or none when the rate control drops it).
//!
//! Why VP8 through libvpx: every WebRTC browser must decode VP8 (RFC 7742, section 5), libvpx
//! is the reference encoder and the one libwebrtc itself wraps (`modules/video_coding/codecs/
//! vp8/libvpx_vp8_encoder.cc`), and Debian ships it as `libvpx-dev`. The bindings come from
//! `env-libvpx-sys`, which carries pre-generated FFI for libvpx 1.3 to 1.13 and finds the
//! library with pkg-config.
//!
//! The settings follow libwebrtc's VP8 wrapper where it has one (`InitEncode` and `SetRates` in
//! `libvpx_vp8_encoder.cc`): one-pass CBR, no lag, a 1000 ms rate buffer with 500 ms initial and
//! 600 ms optimal levels, quantizers 2 to 56, 100 % undershoot and 15 % overshoot, the intra
//! cap of `MaxIntraTarget` (0.5 x the optimal buffer x fps / 10: 900 % of a frame's budget at
//! 30 fps), no automatic key frames (`kf_mode` disabled; the sender asks for them on PLI and
//! FIR), and the new rate applied with `vpx_codec_enc_config_set`, as `SetRates` does.
//!
//! The encoder reads no clock: presentation time stamps come from the caller, in 90 kHz ticks
//! (the RTP video clock, RFC 7741 section 4.1).
//!
//! [`Vp8Decoder`] wraps libvpx's VP8 decoder the same way, for tests that must see what a
//! receiver's decoder makes of a stream: that a frame encoded with
//! [`FrameReferences::Discardable`] can be left out without changing any later frame.

use std::ffi::CStr;
use std::os::raw::{c_int, c_uint, c_ulong};
use vpx_sys::{
    VP8_EFLAG_NO_REF_ARF, VP8_EFLAG_NO_REF_GF, VP8_EFLAG_NO_UPD_ARF, VP8_EFLAG_NO_UPD_ENTROPY,
    VP8_EFLAG_NO_UPD_GF, VP8_EFLAG_NO_UPD_LAST, VPX_DECODER_ABI_VERSION, VPX_DL_REALTIME,
    VPX_EFLAG_FORCE_KF, VPX_ENCODER_ABI_VERSION, VPX_FRAME_IS_DROPPABLE, VPX_FRAME_IS_KEY,
    vp8e_enc_control_id, vpx_codec_ctx_t, vpx_codec_cx_pkt_kind, vpx_codec_dec_cfg_t,
    vpx_codec_enc_cfg_t, vpx_codec_err_t, vpx_image_t, vpx_img_fmt, vpx_kf_mode, vpx_rc_mode,
};

/// The RTP video clock (RFC 7741 section 4.1): presentation time stamps are in these ticks.
pub const CLOCK_HZ: u32 = 90_000;

/// What the encoder is built with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// Frame width, pixels (even, 16 to 4096).
    pub width: u32,
    /// Frame height, pixels (even, 16 to 4096).
    pub height: u32,
    /// Frames per second the caller feeds (1 to 120): each frame's duration for the rate control.
    pub fps: u32,
    /// The first target, bit/s.
    pub target_bps: u64,
    /// libvpx's speed setting, -16 (fastest) to 16 (`VP8E_SET_CPUUSED`). Default -12: faster than
    /// libwebrtc's desktop choice of -6 (measured at 640x360: 4.4 ms a frame against 6.3 ms),
    /// since the tests run the encoder, two peers and a browser on two cores; the frame sizes
    /// at a target were the same within 1 %.
    pub cpu_used: i32,
    /// The rate control may drop a frame when its buffer falls under this percentage (0: never;
    /// libwebrtc uses 30 when frame dropping is enabled).
    pub drop_frame_threshold: u32,
    /// A fixed quantizer (0 to 63) instead of the rate control's choice, for measurements in
    /// which bits must measure prediction cost alone (`rc_min_quantizer = rc_max_quantizer`);
    /// `None` (the default): CBR with quantizers 2 to 56, as libwebrtc's wrapper.
    pub fixed_quantizer: Option<u32>,
}

/// How a frame uses libvpx's reference buffers (last, golden, altref), through the per-frame
/// flags of `vpx/vp8cx.h`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum FrameReferences {
    /// libvpx's own choice: the frame may reference every buffer and updates the last frame
    /// (and the golden and altref ones when libvpx decides).
    #[default]
    Normal,
    /// A discardable frame, temporal layer 1 with layer sync (RFC 7741 section 4.2): it
    /// references only the last frame buffer, which still holds the last base-layer frame
    /// (`VP8_EFLAG_NO_REF_GF | VP8_EFLAG_NO_REF_ARF`), and updates no buffer and no entropy
    /// context (`VP8_EFLAG_NO_UPD_LAST | VP8_EFLAG_NO_UPD_GF | VP8_EFLAG_NO_UPD_ARF |
    /// VP8_EFLAG_NO_UPD_ENTROPY`), so no later frame depends on it. libwebrtc builds its
    /// temporal-layer patterns from the same choices
    /// (`modules/video_coding/codecs/vp8/default_temporal_layers.cc`).
    Discardable,
}

impl FrameReferences {
    fn flags(self) -> u32 {
        match self {
            Self::Normal => 0,
            Self::Discardable => {
                VP8_EFLAG_NO_REF_GF
                    | VP8_EFLAG_NO_REF_ARF
                    | VP8_EFLAG_NO_UPD_LAST
                    | VP8_EFLAG_NO_UPD_GF
                    | VP8_EFLAG_NO_UPD_ARF
                    | VP8_EFLAG_NO_UPD_ENTROPY
            }
        }
    }
}

impl Default for Config {
    fn default() -> Self {
        Self {
            width: 640,
            height: 360,
            fps: 30,
            target_bps: 300_000,
            cpu_used: -12,
            drop_frame_threshold: 30,
            fixed_quantizer: None,
        }
    }
}

/// Why the encoder failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A setting is out of range.
    #[error("VP8 encoder configuration: {0}")]
    Config(String),
    /// A raw frame has the wrong size.
    #[error("the raw frame has {got} bytes; an I420 frame of {width}x{height} has {want}")]
    FrameSize {
        /// Bytes given.
        got: usize,
        /// Bytes an I420 frame has.
        want: usize,
        /// The width.
        width: u32,
        /// The height.
        height: u32,
    },
    /// An empty buffer was handed to the decoder (libvpx reads that as a flush, not a frame).
    #[error("an empty buffer is not a VP8 frame")]
    EmptyFrame,
    /// The decoder gave a picture in a format other than I420.
    #[error("the decoded picture is {0}, not I420")]
    DecodedFormat(String),
    /// libvpx refused a call.
    #[error("libvpx {call} failed: {message}")]
    Libvpx {
        /// Which call.
        call: &'static str,
        /// libvpx's error text.
        message: String,
    },
}

/// One encoded frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodedFrame {
    /// The VP8 bitstream of the frame (RFC 6386), what goes into RTP payloads.
    pub data: Vec<u8>,
    /// Whether it is a key frame.
    pub key_frame: bool,
    /// Whether libvpx says no later frame depends on it (`VPX_FRAME_IS_DROPPABLE`: it updated
    /// no reference buffer), as a [`FrameReferences::Discardable`] frame.
    pub droppable: bool,
    /// Its presentation time stamp, 90 kHz ticks.
    pub pts: i64,
}

/// One decoded picture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodedFrame {
    /// Width, pixels.
    pub width: u32,
    /// Height, pixels.
    pub height: u32,
    /// The picture as I420 without padding ([`i420_len`] bytes: planes Y, U, V).
    pub i420: Vec<u8>,
}

/// The bytes of an I420 frame of `width` x `height` (a full-size luma plane, two quarter-size
/// chroma planes, rounded up for odd sizes).
pub fn i420_len(width: u32, height: u32) -> usize {
    let (w, h) = (width as usize, height as usize);
    w * h + 2 * w.div_ceil(2) * h.div_ceil(2)
}

/// A VP8 encoder (see the crate documentation).
pub struct Vp8Encoder {
    ffi: ffi::Context,
    config: Config,
    target_bps: u64,
    frames_in: u64,
}

impl std::fmt::Debug for Vp8Encoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Vp8Encoder")
            .field("config", &self.config)
            .field("target_bps", &self.target_bps)
            .field("frames_in", &self.frames_in)
            .finish()
    }
}

impl Vp8Encoder {
    /// An encoder with `config`.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] for a setting out of range, [`Error::Libvpx`] if libvpx refuses it.
    pub fn new(config: Config) -> Result<Self, Error> {
        let even = |v: u32| (16..=4096).contains(&v) && v.is_multiple_of(2);
        if !even(config.width) || !even(config.height) {
            return Err(Error::Config(format!(
                "{}x{} is not an even size of 16 to 4096 pixels",
                config.width, config.height
            )));
        }
        if !(1..=120).contains(&config.fps) {
            return Err(Error::Config(format!("{} fps is not 1 to 120", config.fps)));
        }
        if !(-16..=16).contains(&config.cpu_used) {
            return Err(Error::Config(format!(
                "cpu_used {} is not -16 to 16",
                config.cpu_used
            )));
        }
        let ffi = ffi::Context::new(&config)?;
        Ok(Self {
            ffi,
            config,
            target_bps: config.target_bps,
            frames_in: 0,
        })
    }

    /// The configuration it was built with.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The target in force, bit/s.
    pub fn target_bps(&self) -> u64 {
        self.target_bps
    }

    /// Frames handed to [`Vp8Encoder::encode`].
    pub fn frames_in(&self) -> u64 {
        self.frames_in
    }

    /// Sets the rate control's target from the next frame on (libvpx counts kbit/s: the target
    /// is rounded to the nearest, at least 1). Does nothing when the kbit/s figure is unchanged.
    ///
    /// # Errors
    ///
    /// [`Error::Libvpx`] if libvpx refuses the new configuration.
    pub fn set_target_bps(&mut self, bps: u64) -> Result<(), Error> {
        let kbps = kbps_of(bps);
        if kbps != kbps_of(self.target_bps) {
            self.ffi.set_target_kbps(kbps)?;
        }
        self.target_bps = bps;
        Ok(())
    }

    /// Encodes one I420 frame (`i420`: [`i420_len`] bytes, planes Y, U, V without padding) with
    /// presentation time `pts` (90 kHz ticks, increasing); `key_frame` forces a key frame.
    /// Returns the encoded frame, or `None` when the rate control dropped it.
    ///
    /// # Errors
    ///
    /// [`Error::FrameSize`] for a buffer of the wrong size, [`Error::Libvpx`] if encoding fails.
    pub fn encode(
        &mut self,
        i420: &[u8],
        pts: i64,
        key_frame: bool,
    ) -> Result<Option<EncodedFrame>, Error> {
        self.encode_with(i420, pts, key_frame, FrameReferences::Normal)
    }

    /// As [`Self::encode`], with the frame's use of the reference buffers (`references`; a key
    /// frame references nothing and refreshes every buffer whatever is asked).
    ///
    /// # Errors
    ///
    /// As [`Self::encode`].
    pub fn encode_with(
        &mut self,
        i420: &[u8],
        pts: i64,
        key_frame: bool,
        references: FrameReferences,
    ) -> Result<Option<EncodedFrame>, Error> {
        let want = i420_len(self.config.width, self.config.height);
        if i420.len() != want {
            return Err(Error::FrameSize {
                got: i420.len(),
                want,
                width: self.config.width,
                height: self.config.height,
            });
        }
        self.frames_in += 1;
        let duration = u64::from(CLOCK_HZ / self.config.fps);
        let flags = if key_frame { 0 } else { references.flags() };
        self.ffi
            .encode(&self.config, i420, pts, duration, key_frame, flags)
    }
}

/// A VP8 decoder (libvpx's, one thread, no post-processing): frames in, pictures out.
pub struct Vp8Decoder {
    ffi: ffi::DecoderContext,
    frames_in: u64,
}

impl std::fmt::Debug for Vp8Decoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Vp8Decoder")
            .field("frames_in", &self.frames_in)
            .finish()
    }
}

impl Vp8Decoder {
    /// A decoder that has seen nothing (its first frame must be a key frame).
    ///
    /// # Errors
    ///
    /// [`Error::Libvpx`] if libvpx cannot set one up.
    pub fn new() -> Result<Self, Error> {
        Ok(Self {
            ffi: ffi::DecoderContext::new()?,
            frames_in: 0,
        })
    }

    /// Frames handed to [`Self::decode`].
    pub fn frames_in(&self) -> u64 {
        self.frames_in
    }

    /// Decodes one frame (a VP8 bitstream as [`EncodedFrame::data`] holds it, RFC 6386) and
    /// returns the picture it shows, or `None` when it shows none.
    ///
    /// # Errors
    ///
    /// [`Error::EmptyFrame`] for an empty buffer, [`Error::Libvpx`] when libvpx cannot decode
    /// it (a corrupt frame, or a delta frame before any key frame),
    /// [`Error::DecodedFormat`] for a picture that is not I420.
    pub fn decode(&mut self, data: &[u8]) -> Result<Option<DecodedFrame>, Error> {
        if data.is_empty() {
            return Err(Error::EmptyFrame);
        }
        self.frames_in += 1;
        self.ffi.decode(data)
    }
}

fn kbps_of(bps: u64) -> c_uint {
    c_uint::try_from(bps.saturating_add(500) / 1000)
        .unwrap_or(c_uint::MAX)
        .max(1)
}

/// Every call into libvpx, each `unsafe` block with what makes it sound.
#[allow(unsafe_code)]
mod ffi {
    use super::*;

    /// The codec context and the configuration it points to: libvpx keeps a pointer to the
    /// configuration given at init (`ctx->config.enc`), so both live in boxes that never move
    /// and are dropped together, context first.
    pub(super) struct Context {
        ctx: Box<vpx_codec_ctx_t>,
        cfg: Box<vpx_codec_enc_cfg_t>,
    }

    // SAFETY: a libvpx encoder context has no thread affinity; it must only not be used from two
    // threads at once, which `&mut self` on every method that touches it guarantees.
    unsafe impl Send for Context {}

    fn check(
        ctx: *mut vpx_codec_ctx_t,
        call: &'static str,
        err: vpx_codec_err_t,
    ) -> Result<(), Error> {
        if err == vpx_codec_err_t::VPX_CODEC_OK {
            return Ok(());
        }
        // SAFETY: `vpx_codec_error` accepts any context (it returns a static string for a null
        // or failed one) and returns a NUL-terminated string that outlives this call.
        let message = unsafe {
            let text = vpx_sys::vpx_codec_error(ctx);
            if text.is_null() {
                format!("{err:?}")
            } else {
                CStr::from_ptr(text).to_string_lossy().into_owned()
            }
        };
        Err(Error::Libvpx { call, message })
    }

    impl Context {
        pub(super) fn new(config: &Config) -> Result<Self, Error> {
            let mut cfg = Box::new(std::mem::MaybeUninit::<vpx_codec_enc_cfg_t>::uninit());
            // SAFETY: `vpx_codec_vp8_cx` returns a static interface; `cfg` points to writable
            // memory of the configuration's size, which libvpx fills entirely.
            let err = unsafe {
                vpx_sys::vpx_codec_enc_config_default(
                    vpx_sys::vpx_codec_vp8_cx(),
                    cfg.as_mut_ptr(),
                    0,
                )
            };
            check(std::ptr::null_mut(), "vpx_codec_enc_config_default", err)?;
            // SAFETY: `vpx_codec_enc_config_default` succeeded, so it wrote the whole struct.
            let mut cfg: Box<vpx_codec_enc_cfg_t> = unsafe { cfg.assume_init() };
            // SAFETY: the context is plain C data whose all-zero value is libvpx's documented
            // "not initialised" state (null pointers, `VPX_CODEC_OK`); init fills it.
            let mut ctx: Box<vpx_codec_ctx_t> = Box::new(unsafe { std::mem::zeroed() });
            cfg.g_w = config.width;
            cfg.g_h = config.height;
            cfg.g_timebase.num = 1;
            cfg.g_timebase.den = CLOCK_HZ as c_int;
            cfg.g_threads = 1;
            cfg.g_lag_in_frames = 0;
            cfg.g_error_resilient = 0;
            cfg.rc_end_usage = vpx_rc_mode::VPX_CBR;
            cfg.rc_target_bitrate = kbps_of(config.target_bps);
            cfg.rc_dropframe_thresh = config.drop_frame_threshold;
            cfg.rc_resize_allowed = 0;
            cfg.rc_min_quantizer = 2;
            cfg.rc_max_quantizer = 56;
            if let Some(q) = config.fixed_quantizer {
                let q = q.min(63);
                cfg.rc_end_usage = vpx_rc_mode::VPX_VBR;
                cfg.rc_min_quantizer = q;
                cfg.rc_max_quantizer = q;
                cfg.rc_dropframe_thresh = 0;
            }
            cfg.rc_undershoot_pct = 100;
            cfg.rc_overshoot_pct = 15;
            cfg.rc_buf_initial_sz = 500;
            cfg.rc_buf_optimal_sz = 600;
            cfg.rc_buf_sz = 1000;
            cfg.kf_mode = vpx_kf_mode::VPX_KF_DISABLED;
            cfg.kf_min_dist = 0;
            cfg.kf_max_dist = 0;
            // SAFETY: `ctx` and `cfg` are valid, boxed (they never move) and outlive the context:
            // `Drop` destroys it before the boxes are freed.
            let err = unsafe {
                vpx_sys::vpx_codec_enc_init_ver(
                    &mut *ctx,
                    vpx_sys::vpx_codec_vp8_cx(),
                    &*cfg,
                    0,
                    VPX_ENCODER_ABI_VERSION as c_int,
                )
            };
            check(&mut *ctx, "vpx_codec_enc_init_ver", err)?;
            let mut context = Self { ctx, cfg };
            // MaxIntraTarget at 30 fps: 0.5 x 600 ms x 30 / 10 = 900 % (libvpx_vp8_encoder.cc).
            let max_intra = (config.fps * 600 / 20).max(300);
            for (id, value) in [
                (vp8e_enc_control_id::VP8E_SET_CPUUSED, config.cpu_used),
                (vp8e_enc_control_id::VP8E_SET_NOISE_SENSITIVITY, 0),
                (vp8e_enc_control_id::VP8E_SET_STATIC_THRESHOLD, 1),
                (vp8e_enc_control_id::VP8E_SET_TOKEN_PARTITIONS, 0),
                (
                    vp8e_enc_control_id::VP8E_SET_MAX_INTRA_BITRATE_PCT,
                    c_int::try_from(max_intra).unwrap_or(900),
                ),
            ] {
                context.control(id, value)?;
            }
            Ok(context)
        }

        fn control(&mut self, id: vp8e_enc_control_id, value: c_int) -> Result<(), Error> {
            // SAFETY: the context is initialised; every control used here takes one `int`.
            let err = unsafe { vpx_sys::vpx_codec_control_(&mut *self.ctx, id as c_int, value) };
            check(&mut *self.ctx, "vpx_codec_control", err)
        }

        pub(super) fn set_target_kbps(&mut self, kbps: c_uint) -> Result<(), Error> {
            self.cfg.rc_target_bitrate = kbps;
            // SAFETY: the context is initialised and `cfg` is the box it was initialised with.
            let err = unsafe { vpx_sys::vpx_codec_enc_config_set(&mut *self.ctx, &*self.cfg) };
            check(&mut *self.ctx, "vpx_codec_enc_config_set", err)
        }

        pub(super) fn encode(
            &mut self,
            config: &Config,
            i420: &[u8],
            pts: i64,
            duration: u64,
            key_frame: bool,
            reference_flags: u32,
        ) -> Result<Option<EncodedFrame>, Error> {
            let mut image = std::mem::MaybeUninit::<vpx_image_t>::uninit();
            // SAFETY: `i420` holds exactly one I420 frame of this size (checked by the caller)
            // with stride = width (alignment 1); libvpx only reads the planes of an input image,
            // so handing it a pointer derived from a shared slice is sound, and `image` does not
            // outlive `i420` (it is dropped at the end of this call).
            let wrapped = unsafe {
                vpx_sys::vpx_img_wrap(
                    image.as_mut_ptr(),
                    vpx_img_fmt::VPX_IMG_FMT_I420,
                    config.width,
                    config.height,
                    1,
                    i420.as_ptr().cast_mut(),
                )
            };
            if wrapped.is_null() {
                return Err(Error::Libvpx {
                    call: "vpx_img_wrap",
                    message: "the frame could not be wrapped".into(),
                });
            }
            let flags = if key_frame {
                VPX_EFLAG_FORCE_KF as vpx_sys::vpx_enc_frame_flags_t
            } else {
                reference_flags as vpx_sys::vpx_enc_frame_flags_t
            };
            // SAFETY: the context is initialised and `vpx_img_wrap` filled `image` (it returned
            // it), wrapping a live buffer of the configured size.
            let err = unsafe {
                vpx_sys::vpx_codec_encode(
                    &mut *self.ctx,
                    image.as_ptr(),
                    pts,
                    duration as c_ulong,
                    flags,
                    c_ulong::from(VPX_DL_REALTIME),
                )
            };
            check(&mut *self.ctx, "vpx_codec_encode", err)?;
            let mut out: Option<EncodedFrame> = None;
            let mut iter: vpx_sys::vpx_codec_iter_t = std::ptr::null();
            loop {
                // SAFETY: the context is initialised; `iter` starts null as libvpx requires.
                let packet = unsafe { vpx_sys::vpx_codec_get_cx_data(&mut *self.ctx, &mut iter) };
                if packet.is_null() {
                    break;
                }
                // SAFETY: libvpx returned a non-null packet that stays valid until the next
                // call into the context; its `frame` member is the active one for frame
                // packets, whose `buf` holds `sz` bytes, copied out before the next call.
                unsafe {
                    if (*packet).kind != vpx_codec_cx_pkt_kind::VPX_CODEC_CX_FRAME_PKT {
                        continue;
                    }
                    let frame = (*packet).data.frame;
                    let bytes =
                        std::slice::from_raw_parts(frame.buf.cast::<u8>(), frame.sz as usize);
                    let key = frame.flags & VPX_FRAME_IS_KEY != 0;
                    let droppable = frame.flags & VPX_FRAME_IS_DROPPABLE != 0;
                    // One spatial layer and one partition: one frame packet per frame; should
                    // libvpx ever split one, the parts are concatenated in order.
                    match &mut out {
                        Some(f) => {
                            f.data.extend_from_slice(bytes);
                            f.key_frame |= key;
                            f.droppable &= droppable;
                        }
                        None => {
                            out = Some(EncodedFrame {
                                data: bytes.to_vec(),
                                key_frame: key,
                                droppable,
                                pts: frame.pts,
                            });
                        }
                    }
                }
            }
            Ok(out)
        }
    }

    impl Drop for Context {
        fn drop(&mut self) {
            // SAFETY: the context was initialised in `new` (a failed init returned before a
            // `Context` existed) and is destroyed once, before its configuration box is freed.
            unsafe {
                vpx_sys::vpx_codec_destroy(&mut *self.ctx);
            }
        }
    }

    /// A decoder context and the configuration it was initialised with: libvpx stores the
    /// configuration's pointer at init (`ctx->config.dec`), so both are boxed and dropped
    /// together, context first, as the encoder's.
    pub(super) struct DecoderContext {
        ctx: Box<vpx_codec_ctx_t>,
        _cfg: Box<vpx_codec_dec_cfg_t>,
    }

    // SAFETY: as the encoder's context: no thread affinity, and every method that touches it
    // takes `&mut self`.
    unsafe impl Send for DecoderContext {}

    impl DecoderContext {
        pub(super) fn new() -> Result<Self, Error> {
            let cfg = Box::new(vpx_codec_dec_cfg_t {
                threads: 1,
                w: 0,
                h: 0,
            });
            // SAFETY: the all-zero context is libvpx's "not initialised" state, as for the
            // encoder; init fills it.
            let mut ctx: Box<vpx_codec_ctx_t> = Box::new(unsafe { std::mem::zeroed() });
            // SAFETY: `ctx` and `cfg` are valid and boxed (they never move), and outlive the
            // context: `Drop` destroys it before the boxes are freed. `vpx_codec_vp8_dx`
            // returns a static interface.
            let err = unsafe {
                vpx_sys::vpx_codec_dec_init_ver(
                    &mut *ctx,
                    vpx_sys::vpx_codec_vp8_dx(),
                    &*cfg,
                    0,
                    VPX_DECODER_ABI_VERSION as c_int,
                )
            };
            check(&mut *ctx, "vpx_codec_dec_init_ver", err)?;
            Ok(Self { ctx, _cfg: cfg })
        }

        pub(super) fn decode(&mut self, data: &[u8]) -> Result<Option<DecodedFrame>, Error> {
            let len = c_uint::try_from(data.len()).map_err(|_| Error::Libvpx {
                call: "vpx_codec_decode",
                message: format!("a frame of {} bytes is too large", data.len()),
            })?;
            // SAFETY: the context is initialised; libvpx reads `len` bytes from `data`, a live
            // shared slice, during this call only (no frame threading, no input fragments),
            // and `user_priv` may be null.
            let err = unsafe {
                vpx_sys::vpx_codec_decode(
                    &mut *self.ctx,
                    data.as_ptr(),
                    len,
                    std::ptr::null_mut(),
                    0,
                )
            };
            check(&mut *self.ctx, "vpx_codec_decode", err)?;
            let mut picture = None;
            let mut iter: vpx_sys::vpx_codec_iter_t = std::ptr::null();
            loop {
                // SAFETY: the context is initialised; `iter` starts null as libvpx requires.
                let image = unsafe { vpx_sys::vpx_codec_get_frame(&mut *self.ctx, &mut iter) };
                if image.is_null() {
                    break;
                }
                // SAFETY: libvpx returned a non-null image that stays valid until the next call
                // into the context; it is copied out before then.
                let image = unsafe { &*image };
                picture = Some(copy_i420(image)?);
            }
            Ok(picture)
        }
    }

    /// The visible `d_w` x `d_h` part of a decoded I420 `image`, without padding.
    fn copy_i420(image: &vpx_image_t) -> Result<DecodedFrame, Error> {
        if image.fmt != vpx_img_fmt::VPX_IMG_FMT_I420 {
            return Err(Error::DecodedFormat(format!("{:?}", image.fmt)));
        }
        let (width, height) = (image.d_w, image.d_h);
        let (w, h) = (width as usize, height as usize);
        let mut i420 = Vec::with_capacity(i420_len(width, height));
        for (plane, (pw, ph)) in [
            (w, h),
            (w.div_ceil(2), h.div_ceil(2)),
            (w.div_ceil(2), h.div_ceil(2)),
        ]
        .into_iter()
        .enumerate()
        {
            let stride = image.stride[plane] as isize;
            for row in 0..ph {
                // SAFETY: a decoded I420 image's plane `plane` holds at least `ph` rows of
                // `stride` bytes, each with `pw` visible pixels (libvpx allocates the planes
                // of its frame buffers at the aligned size, at least the visible one), and the
                // image is valid for the duration of this call.
                let line = unsafe {
                    std::slice::from_raw_parts(
                        image.planes[plane].offset(stride * row as isize),
                        pw,
                    )
                };
                i420.extend_from_slice(line);
            }
        }
        Ok(DecodedFrame {
            width,
            height,
            i420,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gray(config: &Config, shade: u8) -> Vec<u8> {
        let mut frame = vec![128; i420_len(config.width, config.height)];
        let luma = (config.width * config.height) as usize;
        frame[..luma].fill(shade);
        frame
    }

    #[test]
    fn frames_encode_key_first_and_on_request() {
        let config = Config::default();
        let mut encoder = Vp8Encoder::new(config).unwrap();
        let mut keys = Vec::new();
        for i in 0..10i64 {
            let frame = gray(&config, (i * 20) as u8);
            let out = encoder.encode(&frame, i * 3000, i == 6).unwrap();
            if let Some(f) = out {
                assert!(!f.data.is_empty());
                // RFC 6386 section 9.1: bit 0 of the first byte is 0 for a key frame.
                assert_eq!(f.data[0] & 1 == 0, f.key_frame);
                keys.push((i, f.key_frame));
            }
        }
        assert_eq!(keys.first(), Some(&(0, true)));
        assert!(keys.contains(&(6, true)), "{keys:?}");
        assert_eq!(keys.iter().filter(|(_, k)| *k).count(), 2, "{keys:?}");
        encoder.set_target_bps(1_000_000).unwrap();
        assert_eq!(encoder.target_bps(), 1_000_000);
    }

    #[test]
    fn the_decoder_gives_back_the_encoded_pictures_and_discardable_frames_are_droppable() {
        let config = Config {
            target_bps: 2_000_000,
            drop_frame_threshold: 0,
            ..Config::default()
        };
        let mut encoder = Vp8Encoder::new(config).unwrap();
        let mut decoder = Vp8Decoder::new().unwrap();
        assert!(matches!(decoder.decode(&[]), Err(Error::EmptyFrame)));
        for i in 0..6i64 {
            let shade = 60 + i as u8 * 20;
            let references = if i == 3 {
                FrameReferences::Discardable
            } else {
                FrameReferences::Normal
            };
            let f = encoder
                .encode_with(&gray(&config, shade), i * 3000, false, references)
                .unwrap()
                .unwrap();
            assert_eq!(f.droppable, i == 3, "frame {i}");
            let picture = decoder.decode(&f.data).unwrap().unwrap();
            assert_eq!((picture.width, picture.height), (640, 360));
            assert_eq!(picture.i420.len(), i420_len(640, 360));
            // A flat picture comes back flat, within the quantizer's error.
            let luma = &picture.i420[..640 * 360];
            let mean = luma.iter().map(|&v| f64::from(v)).sum::<f64>() / luma.len() as f64;
            assert!((mean - f64::from(shade)).abs() < 3.0, "frame {i}: {mean}");
        }
        assert_eq!(decoder.frames_in(), 6);
        // Garbage is refused with libvpx's reason, not a crash.
        let err = decoder.decode(&[0xFF; 40]).unwrap_err();
        assert!(err.to_string().contains("vpx_codec_decode"), "{err}");
    }

    #[test]
    fn bad_settings_and_frames_are_named() {
        let bad = Vp8Encoder::new(Config {
            width: 641,
            ..Config::default()
        });
        assert!(bad.unwrap_err().to_string().contains("641x360"));
        let mut encoder = Vp8Encoder::new(Config::default()).unwrap();
        let err = encoder.encode(&[0; 10], 0, false).unwrap_err();
        assert!(err.to_string().contains("has 10 bytes"), "{err}");
    }
}

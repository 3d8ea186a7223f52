//! The scenario file format: what a `traces/scenarios/*.toml` file may contain, and the checks
//! that refuse a bad one.
//!
//! Every table refuses keys it does not know (serde's `deny_unknown_fields`: the parser's error
//! names the key and its line), and [`ScenarioFile::validate`] refuses values out of range with
//! the dotted name of the field (`forward.capacity.median_mbps`), so a typo never silently falls
//! back to a default.
//!
//! A file describes one call: the two directions of the path ([`DirectionSpec`]: capacity, delay,
//! loss, buffer, what a handover does), where the handovers come from ([`HandoverSpec`]), and the
//! call itself ([`CallSpec`]), and optionally the sender's options ([`SenderSpec`], the
//! `[sender]` table). Paths to data files are either `data:REL` (resolved against the
//! shared data directory, `../shared/data` by default, never copied into the repository) or
//! relative to the workspace root (e.g. `traces/tle/sparse-80.tle`).

use crate::call::choices::{BWE_NAMES, BweChoice, FecChoice, NACK_NAMES, NackChoice};
use crate::call::options::{CWND_NAMES, SenderOverrides, cwnd_from_name};
use crate::link::OutageMode;
use serde::{Deserialize, Serialize};

/// Which side of the call a direction is, for error messages and reports.
pub const DIRECTIONS: [&str; 2] = ["forward", "reverse"];

/// A whole scenario file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    /// Short name (by convention the file stem), e.g. `starlink`. Written into telemetry.
    pub name: String,
    /// One line on what the scenario emulates.
    pub description: String,
    /// Generated processes or replayed traces.
    pub kind: ScenarioKind,
    /// UTC instant of virtual time zero, RFC 3339 (e.g. `2025-05-12T12:00:00Z`). It places
    /// Starlink's slot grid (boundaries at seconds 12, 27, 42, 57 of each UTC minute) and the
    /// orbits. Default: 2025-05-12T12:00:00Z, the epoch day of the shipped TLE catalogues.
    #[serde(default = "default_start")]
    pub start: String,
    /// The call: duration and encoder limits.
    pub call: CallSpec,
    /// Where the ground-truth handover timeline comes from.
    pub handovers: HandoverSpec,
    /// The path carrying the video (sender to receiver). On a satellite scenario the sender is
    /// the satellite side, so this is the terminal's uplink.
    pub forward: DirectionSpec,
    /// The path carrying feedback (receiver to sender): RTCP, NACKs, transport-wide feedback.
    pub reverse: DirectionSpec,
    /// The sending side's options (estimator, NACK pair, congestion window, key-frame flush);
    /// optional, and so is each of its keys. A command-line flag overrides what it sets; what
    /// neither sets is the default (see [`crate::call::options`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sender: Option<SenderSpec>,
    /// Where each call starts in the replayed `lagos` series; optional (without it every call
    /// replays the file from its first row).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<ReplaySpec>,
}

/// The optional `[replay]` table: where each call starts in the `lagos.csv` series it replays.
///
/// ```toml
/// [replay]
/// offset = "seeded"   # or a whole number of ms, the same for every call
/// align_ms = 15000    # a seeded offset is a whole multiple of this
/// ```
///
/// Why: a 10-minute call covers 11 % of the file's 90.7 minutes, so without an offset every
/// seed replays the same 40 boundaries and only the loss draws differ. A seeded offset spreads
/// the calls over the whole file, as the orbit scenarios' seeded start spreads theirs over the
/// constellation's geometry. `align_ms` keeps the offset on the file's slot grid (its 15-s
/// chunks), so the `[handovers]` grid stays on the file's boundaries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReplaySpec {
    /// `"seeded"`, or an offset in ms.
    pub offset: ReplayOffset,
    /// Seeded offsets are whole multiples of this, ms (1 ms to 1 h; a whole number of the
    /// file's 100-ms rows). Default: one row.
    #[serde(default = "default_align_ms")]
    pub align_ms: u64,
}

fn default_align_ms() -> u64 {
    crate::link::readers::LAGOS_ROW_MS
}

/// Where a call starts in the replayed series: written `"seeded"` or as a whole number of ms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplayOffset {
    /// This many ms into the file, for every call.
    Fixed(u64),
    /// Drawn from the call's seed.
    Seeded,
}

impl Serialize for ReplayOffset {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ReplayOffset::Fixed(ms) => serializer.serialize_u64(*ms),
            ReplayOffset::Seeded => serializer.serialize_str("seeded"),
        }
    }
}

impl<'de> Deserialize<'de> for ReplayOffset {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Offset;
        impl serde::de::Visitor<'_> for Offset {
            type Value = ReplayOffset;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("\"seeded\" or a whole number of ms")
            }

            fn visit_u64<E: serde::de::Error>(self, ms: u64) -> Result<ReplayOffset, E> {
                Ok(ReplayOffset::Fixed(ms))
            }

            fn visit_i64<E: serde::de::Error>(self, ms: i64) -> Result<ReplayOffset, E> {
                u64::try_from(ms)
                    .map(ReplayOffset::Fixed)
                    .map_err(|_| E::invalid_value(serde::de::Unexpected::Signed(ms), &self))
            }

            fn visit_str<E: serde::de::Error>(self, word: &str) -> Result<ReplayOffset, E> {
                if word == "seeded" {
                    Ok(ReplayOffset::Seeded)
                } else {
                    Err(E::invalid_value(serde::de::Unexpected::Str(word), &self))
                }
            }
        }
        deserializer.deserialize_any(Offset)
    }
}

impl ReplaySpec {
    fn validate(&self) -> Result<(), Invalid> {
        within_u("replay.align_ms", self.align_ms, 1, 3_600_000)
    }
}

/// The optional `[sender]` table: how the call's sender is configured.
///
/// ```toml
/// [sender]
/// bwe = "googcc"          # or "webrtc-rs"
/// nack = "libwebrtc"      # or "stock", "off"
/// cwnd = "pushback"       # or "pacer", "off"
/// keyframe_flush = false  # or true
/// fec = "libwebrtc"       # or "off", "fixed:<media>/<repair>"
/// ```
///
/// Every key is optional; an unset key takes the command line's flag if one is given, else the
/// default (`googcc`, `libwebrtc`, `pushback`, `false`, `libwebrtc`). The names are kept as written and
/// checked by [`ScenarioFile::validate`], whose error names the key and the allowed values.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SenderSpec {
    /// The bandwidth estimator: `googcc` or `webrtc-rs` (as `--bwe`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bwe: Option<String>,
    /// The NACK pair: `libwebrtc`, `stock` or `off` (as `--nack`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nack: Option<String>,
    /// Where the congestion window acts: `pushback`, `pacer` or `off` (as `--cwnd`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwnd: Option<String>,
    /// Whether a new key frame flushes the pacer's video backlog (as `--keyframe-flush`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keyframe_flush: Option<bool>,
    /// The loss protection: `libwebrtc`, `off` or `fixed:<media>/<repair>` (as `--fec`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fec: Option<String>,
}

impl SenderSpec {
    /// The options this table sets, or the first key whose value is not an allowed name.
    pub fn overrides(&self) -> Result<SenderOverrides, Invalid> {
        fn pick<T>(
            key: &str,
            value: &Option<String>,
            allowed: &[&str],
            parse: impl Fn(&str) -> Option<T>,
        ) -> Result<Option<T>, Invalid> {
            let Some(value) = value else { return Ok(None) };
            parse(value).map(Some).ok_or_else(|| {
                Invalid::new(
                    format!("sender.{key}"),
                    format!(
                        "unknown value {value:?}; allowed: {}",
                        allowed
                            .iter()
                            .map(|a| format!("{a:?}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )
            })
        }
        Ok(SenderOverrides {
            bwe: pick("bwe", &self.bwe, &BWE_NAMES, BweChoice::from_name)?,
            nack: pick("nack", &self.nack, &NACK_NAMES, NackChoice::from_name)?,
            cwnd: pick("cwnd", &self.cwnd, &CWND_NAMES, cwnd_from_name)?,
            keyframe_flush: self.keyframe_flush,
            fec: self
                .fec
                .as_deref()
                .map(FecChoice::parse)
                .transpose()
                .map_err(|e| Invalid::new("sender.fec".to_owned(), e.to_string()))?,
        })
    }
}

/// The default `start`: 2025-05-12T12:00:00Z (the epoch of the shipped catalogues, whole minute
/// so that the first Starlink boundary is 12 s into the call).
pub fn default_start() -> String {
    "2025-05-12T12:00:00Z".to_owned()
}

/// Whether the link is generated from fitted processes or replays recorded files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ScenarioKind {
    /// Stochastic processes with fitted parameters (seeded).
    Generated,
    /// Recorded traces replayed as they are (the seed only drives random loss).
    Trace,
}

impl ScenarioKind {
    /// The name used in files and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Generated => "generated",
            Self::Trace => "trace",
        }
    }
}

/// The call itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallSpec {
    /// Default call length, seconds (the CLI's `--duration` overrides it).
    pub duration_s: u64,
    /// Video frame rate, frames per second.
    pub fps: u32,
    /// Lowest encoder bitrate, kbit/s.
    pub min_bitrate_kbps: u32,
    /// Encoder bitrate at the start of the call, kbit/s.
    pub start_bitrate_kbps: u32,
    /// Highest encoder bitrate, kbit/s.
    pub max_bitrate_kbps: u32,
}

/// Where the ground-truth handover timeline comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "source", rename_all = "kebab-case", deny_unknown_fields)]
pub enum HandoverSpec {
    /// No handovers (terrestrial).
    None,
    /// Starlink's 15-s slot grid (boundaries at seconds 12, 27, 42, 57 of each UTC minute after
    /// `start`); each boundary is a handover with `probability`, drawn from the seed.
    Slots {
        /// Fraction of slot boundaries at which the serving satellite changes: a number in
        /// [0, 1], or a site measured on real logs by name (`brisbane` 0.845, `kanazawa` 0.576,
        /// `louvain` 0.769, `pooled` 0.74; docs/architecture.md, "The calibrated predictor").
        /// A name reads as its number, so a file that names the same rate draws the same calls.
        #[serde(deserialize_with = "switch_rate")]
        probability: f64,
    },
    /// A fixed grid of boundaries, every one a handover: `first_ms`, `first_ms + period_ms`, ...
    /// (for replayed traces whose slot boundaries are known, e.g. LeoCC's spikes every 15 s).
    Grid {
        /// Virtual time of the first boundary, ms.
        first_ms: u64,
        /// Spacing of the boundaries, ms.
        period_ms: u64,
    },
    /// SGP4 over a constellation, a serving policy at each end of the path.
    Orbit(OrbitSpec),
}

/// Serving-satellite policy of an orbit source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OrbitPolicy {
    /// StarryNet's: every second, the visible satellite with the lowest propagation delay
    /// (the paper's emulation, section III-B).
    Delay,
    /// Starlink's 15-s slots and the calibrated score of `handover_predictor::orbit::StarlinkConfig`.
    Starlink,
}

/// An SGP4 handover source: a constellation, two ground endpoints, a serving policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OrbitSpec {
    /// Serving-satellite policy at both endpoints.
    pub policy: OrbitPolicy,
    /// A satellite serves only at or above this elevation, degrees.
    pub min_elevation_deg: f64,
    /// Delay policy only: switch when another satellite is closer by more than this, ms.
    #[serde(default)]
    pub margin_ms: f64,
    /// The call starts `start` plus a seeded offset uniform in `[0, start_spread_s)` seconds, so
    /// that seeds see different parts of the orbits. 0 = always at `start`.
    #[serde(default)]
    pub start_spread_s: u64,
    /// How often the network's topology is recomputed, s: the serving satellite at each end,
    /// the path and its delay are those of the last update and change only at multiples of
    /// this after the call start. 1 (the default) follows the orbits second by second;
    /// StarryNet recomputes its emulated topology every `update_time` seconds, 10 in its
    /// default configuration (docs/architecture.md, "Scenarios").
    #[serde(default = "default_update_s")]
    pub update_s: u32,
    /// The satellites.
    pub constellation: ConstellationSpec,
    /// The two ground endpoints.
    pub endpoints: EndpointsSpec,
}

/// The satellites of an orbit source: a TLE file, or Walker shells generated per call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConstellationSpec {
    /// A TLE file (`data:...` or workspace-relative). Exclusive with `walker`.
    #[serde(default)]
    pub tle: Option<String>,
    /// Walker shells; the seed picks one per call. Exclusive with `tle`.
    #[serde(default)]
    pub walker: Vec<WalkerShellSpec>,
    /// Each call perturbs the shell's altitude by a seeded offset uniform in `[-x, +x]` km
    /// (the paper perturbs "orbital parameters such as altitude and phasing").
    #[serde(default)]
    pub altitude_jitter_km: f64,
    /// Each call draws the Walker phasing factor uniformly from `0..planes`.
    #[serde(default)]
    pub random_phasing: bool,
}

/// One Walker shell (see `handover_predictor::orbit::walker::Shell`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WalkerShellSpec {
    /// Name used in satellite names (1-17 printable characters).
    pub name: String,
    /// Altitude, km.
    pub altitude_km: f64,
    /// Inclination, degrees.
    pub inclination_deg: f64,
    /// Number of orbital planes.
    pub planes: u32,
    /// Satellites per plane.
    pub per_plane: u32,
    /// Walker phasing factor (below `planes`; replaced per call with `random_phasing`).
    #[serde(default)]
    pub phasing: u32,
    /// Span of the planes' ascending nodes, degrees: 360 for a Walker delta, 180 for a star.
    #[serde(default = "default_raan_spread")]
    pub raan_spread_deg: f64,
}

fn default_update_s() -> u32 {
    1
}

fn default_raan_spread() -> f64 {
    360.0
}

/// The ground endpoints of an orbit source.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EndpointsSpec {
    /// The local terminal's city (from the built-in list); sampled by the seed when absent.
    #[serde(default)]
    pub local: Option<String>,
    /// The far peer's city; sampled by the seed when absent.
    #[serde(default)]
    pub peer: Option<String>,
    /// A sampled pair is at least this far apart (great circle), km.
    #[serde(default)]
    pub min_separation_km: f64,
}

/// One direction of the path.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DirectionSpec {
    /// Bottleneck capacity.
    pub capacity: CapacitySpec,
    /// One-way delay.
    pub delay: DelaySpec,
    /// Random (non-congestive) loss.
    pub loss: LossSpec,
    /// Drop-tail buffer, in milliseconds at the capacity's median (exclusive with `buffer_bytes`).
    #[serde(default)]
    pub buffer_ms: Option<u32>,
    /// Drop-tail buffer, bytes (exclusive with `buffer_ms`).
    #[serde(default)]
    pub buffer_bytes: Option<u64>,
    /// What each handover does to this direction.
    #[serde(default)]
    pub handover: HandoverEffectSpec,
}

/// Capacity of one direction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum CapacitySpec {
    /// A fixed rate.
    Constant {
        /// Mbit/s.
        mbps: f64,
    },
    /// A log-normal AR(1) process in log space, one value per step (see
    /// [`crate::scenario::process`]).
    Lognormal(LognormalSpec),
    /// A Mahimahi trace file (one line per 1500-byte delivery opportunity), looped.
    Mahimahi {
        /// The file (`data:...` or workspace-relative).
        file: String,
    },
    /// A column of `lagos.csv` (100-ms rows).
    Lagos {
        /// The file.
        file: String,
        /// `uplink` or `downlink`.
        column: LagosColumn,
    },
}

/// Step of a generated capacity process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Step {
    /// A new value every second.
    Second,
    /// A new value at every Starlink slot boundary (the scheduler reallocates every 15 s), with
    /// optional per-second variation inside the slot.
    Slot,
}

/// A log-normal AR(1) capacity process.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LognormalSpec {
    /// New value every second or every slot.
    pub step: Step,
    /// Median of the step values, Mbit/s (`exp` of the mean log).
    pub median_mbps: f64,
    /// Standard deviation of the log of the step values (stationary).
    pub sigma_log: f64,
    /// Lag-1 autocorrelation of the log step values.
    pub rho: f64,
    /// Between-call spread: each call's median is `median_mbps * exp(call_sigma_log * N(0,1))`.
    #[serde(default)]
    pub call_sigma_log: f64,
    /// Per-second variation inside a slot (log standard deviation; mean-preserving). Slot steps
    /// only.
    #[serde(default)]
    pub within_sigma_log: f64,
    /// Lower clamp, Mbit/s.
    pub min_mbps: f64,
    /// Upper clamp, Mbit/s.
    pub max_mbps: f64,
    /// Optional stalls: seconds at a low rate (two-state Markov chain).
    #[serde(default)]
    pub stall: Option<StallSpec>,
}

/// Stalls of a per-second capacity process: a two-state Markov chain on seconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StallSpec {
    /// Probability that a normal second is followed by a stall.
    pub enter_per_s: f64,
    /// Mean stall length, seconds (geometric).
    pub mean_s: f64,
    /// Rate during a stall, Mbit/s.
    pub mbps: f64,
}

/// One-way delay of one direction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum DelaySpec {
    /// A base delay with optional AR(1) jitter on a 10-ms grid.
    Constant {
        /// Base one-way delay, ms.
        ms: f64,
        /// Standard deviation of the jitter, ms (0 = none).
        #[serde(default)]
        jitter_ms: f64,
        /// Lag-1 (10 ms) autocorrelation of the jitter.
        #[serde(default)]
        jitter_rho: f64,
    },
    /// Starlink's: a base delay that steps at handovers, a spike after each handover, jitter.
    Slotted(SlottedDelaySpec),
    /// Propagation delay of the orbit source's path (needs `handovers.source = "orbit"`).
    Geometry {
        /// Extra one-way delay, ms (terrestrial legs, queues not modelled).
        #[serde(default)]
        extra_ms: f64,
    },
    /// A LeoReplayer delay file (one integer ms per 10-ms slot), looped.
    Leoreplayer {
        /// The file.
        file: String,
    },
    /// A delay column of `lagos.csv`.
    Lagos {
        /// The file.
        file: String,
        /// `uplink` or `downlink`.
        column: LagosColumn,
    },
    /// Half the RTT of a ping trace (`unix_ts  icmp_seq  rtt_ms`, as mmsys24's), per 100-ms row
    /// from the UTC minute of its first echo (`rtc_client::link::readers::PingTrace::replay`).
    Ping {
        /// The file.
        file: String,
    },
}

/// The Starlink delay process (see [`crate::scenario::process`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlottedDelaySpec {
    /// Median of the per-slot base delay, ms.
    pub median_ms: f64,
    /// Standard deviation of the log base delay (stationary).
    pub sigma_log: f64,
    /// Autocorrelation of the log base delay from one handover to the next.
    pub rho: f64,
    /// Correlation of this direction's base-delay innovations with the other direction's
    /// (set on the reverse direction only; both directions must be slotted).
    #[serde(default)]
    pub correlation: f64,
    /// Lower clamp of the base delay, ms.
    pub min_ms: f64,
    /// Upper clamp of the base delay, ms.
    pub max_ms: f64,
    /// Standard deviation of the jitter, ms.
    pub jitter_ms: f64,
    /// Lag-1 (10 ms) autocorrelation of the jitter.
    pub jitter_rho: f64,
    /// Smallest spike after a handover, ms above the base.
    pub spike_min_ms: f64,
    /// Largest spike, ms (uniform between the two).
    pub spike_max_ms: f64,
    /// How long a spike lasts, ms.
    pub spike_duration_ms: u32,
}

/// Random loss of one direction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum LossSpec {
    /// No random loss.
    None,
    /// Independent loss per packet.
    Bernoulli {
        /// Loss probability.
        rate: f64,
    },
    /// Gilbert-Elliott: a good and a bad state, each with its own loss probability.
    GilbertElliott {
        /// Per-packet probability of going from good to bad.
        p_good_to_bad: f64,
        /// Per-packet probability of going from bad to good.
        p_bad_to_good: f64,
        /// Loss probability in the good state.
        loss_good: f64,
        /// Loss probability in the bad state.
        loss_bad: f64,
    },
    /// Independent loss on every link of an orbit path: a packet crosses the up link, each
    /// inter-satellite link and the down link, each losing it with `rate`, so the path loses it
    /// with `1 - (1 - rate)^(hops + 2)`, where `hops` is the path's inter-satellite hop count in
    /// that second (StarryNet sets one loss rate on every satellite and satellite-ground link).
    /// Needs an orbit handover source with a geometry delay.
    PerLink {
        /// Loss probability of one link.
        rate: f64,
    },
    /// A loss column of `lagos.csv` (a loss probability per 100-ms row).
    Lagos {
        /// The file.
        file: String,
        /// `uplink` or `downlink`.
        column: LagosColumn,
    },
    /// The lost echoes of a ping trace, per 100-ms row: the share lost within half a window of
    /// it, shaped by where in the slot the trace loses echoes
    /// (`rtc_client::link::readers::PingTrace::replay`).
    Ping {
        /// The file.
        file: String,
        /// The window, ms (100 ms to 1 h). Default: 60000, long enough that a lost echo reads as
        /// the independent loss the mmsys24 traces show, short enough to follow their drift.
        #[serde(default = "default_ping_loss_window_ms")]
        window_ms: u64,
        /// The period whose loss shape is replayed, ms (0: none; else 500 ms to 1 h). Default:
        /// 15000, Starlink's slot.
        #[serde(default = "default_ping_loss_slot_ms")]
        slot_ms: u64,
    },
}

fn default_ping_loss_window_ms() -> u64 {
    60_000
}

fn default_ping_loss_slot_ms() -> u64 {
    15_000
}

/// Which direction of `lagos.csv`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LagosColumn {
    /// Terminal to ground (columns 1, 3, 5).
    Uplink,
    /// Ground to terminal (columns 2, 4, 6).
    Downlink,
}

/// What each handover, and each slot boundary, does to one direction (besides what the delay
/// process does itself).
///
/// The loss at a boundary is either a flat burst (`loss_burst_rate` for `loss_burst_ms`, at
/// handovers only) or a profile, one probability per 100-ms row from the boundary instant
/// ([`LOSS_PROFILE_ROW_MS`], the row of `lagos.csv`):
///
/// ```toml
/// [forward.handover]
/// boundary_loss_profile = [0.47, 0.20, 0.03]  # at every handover and boundary
/// no_handover_loss_profile = [0.30, 0.10]     # optional: at boundaries without a handover
/// ```
///
/// The profile's probabilities add to the random loss as independent losses.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HandoverEffectSpec {
    /// Length of an outage starting at the handover, ms (0 = none).
    #[serde(default)]
    pub outage_ms: u32,
    /// Drop or hold during the outage.
    #[serde(default)]
    pub outage: OutageMode,
    /// Loss probability of a burst starting at the handover (0 = none).
    #[serde(default)]
    pub loss_burst_rate: f64,
    /// Length of the burst, ms.
    #[serde(default)]
    pub loss_burst_ms: u32,
    /// Loss probability of each 100-ms row from a handover, and from a slot boundary without
    /// one unless `no_handover_loss_profile` is given (empty = none; exclusive with
    /// `loss_burst_rate`; at most [`MAX_LOSS_PROFILE_ROWS`] rows).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub boundary_loss_profile: Vec<f64>,
    /// Loss probability of each 100-ms row from a slot boundary where the serving satellite
    /// stays, when it differs from `boundary_loss_profile` (`[]` = no loss there). Needs slot
    /// boundaries that are not all handovers: `handovers.source = "slots"` or an orbit source
    /// with `policy = "starlink"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_handover_loss_profile: Option<Vec<f64>>,
}

/// The row of a boundary loss profile, ms: `lagos.csv`'s 100-ms row
/// (`crate::link::readers::LAGOS_ROW_MS`).
pub const LOSS_PROFILE_ROW_MS: u64 = crate::link::readers::LAGOS_ROW_MS;

/// Most rows a boundary loss profile may have: 150, one 15-s Starlink slot of 100-ms rows.
pub const MAX_LOSS_PROFILE_ROWS: usize = 150;

impl HandoverEffectSpec {
    /// The profile at slot boundaries without a handover: `no_handover_loss_profile` if given,
    /// else `boundary_loss_profile`.
    pub fn no_handover_profile(&self) -> &[f64] {
        self.no_handover_loss_profile
            .as_deref()
            .unwrap_or(&self.boundary_loss_profile)
    }
}

/// A value out of range, with the dotted name of its field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid {
    /// Dotted field name, e.g. `forward.capacity.median_mbps`.
    pub field: String,
    /// What is wrong.
    pub message: String,
}

impl Invalid {
    fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            message: message.into(),
        }
    }
}

/// Checks that `value` is finite and within `[lo, hi]`.
fn within(field: &str, value: f64, lo: f64, hi: f64) -> Result<(), Invalid> {
    if value.is_finite() && value >= lo && value <= hi {
        Ok(())
    } else {
        Err(Invalid::new(
            field,
            format!("must be within [{lo}, {hi}], got {value}"),
        ))
    }
}

/// Checks that `value` is finite, above `lo` and at most `hi`.
fn above(field: &str, value: f64, lo: f64, hi: f64) -> Result<(), Invalid> {
    if value.is_finite() && value > lo && value <= hi {
        Ok(())
    } else {
        Err(Invalid::new(
            field,
            format!("must be within ({lo}, {hi}], got {value}"),
        ))
    }
}

/// Checks an integer range.
fn within_u(field: &str, value: u64, lo: u64, hi: u64) -> Result<(), Invalid> {
    if (lo..=hi).contains(&value) {
        Ok(())
    } else {
        Err(Invalid::new(
            field,
            format!("must be within [{lo}, {hi}], got {value}"),
        ))
    }
}

/// Highest capacity accepted, Mbit/s (100 Gbit/s: above any access link).
pub const MAX_MBPS: f64 = 100_000.0;
/// Highest one-way delay accepted, ms (10 s: above any bufferbloat ever measured).
pub const MAX_DELAY_MS: f64 = 10_000.0;
/// Longest call accepted, seconds (24 h).
pub const MAX_CALL_S: u64 = 86_400;

impl ScenarioFile {
    /// The sender options the file sets (none without a `[sender]` table), or the first key
    /// whose value is not an allowed name.
    pub fn sender_overrides(&self) -> Result<SenderOverrides, Invalid> {
        self.sender
            .as_ref()
            .map_or(Ok(SenderOverrides::NONE), SenderSpec::overrides)
    }

    /// Whether any capacity, delay or loss series is read from `lagos.csv` or a ping trace,
    /// the series `[replay]` moves.
    pub fn replays_series(&self) -> bool {
        [&self.forward, &self.reverse].iter().any(|d| {
            matches!(d.capacity, CapacitySpec::Lagos { .. })
                || matches!(d.delay, DelaySpec::Lagos { .. } | DelaySpec::Ping { .. })
                || matches!(d.loss, LossSpec::Lagos { .. } | LossSpec::Ping { .. })
        })
    }

    /// Checks every value against its range; the error names the first bad field.
    pub fn validate(&self) -> Result<(), Invalid> {
        if self.name.trim().is_empty() {
            return Err(Invalid::new("name", "must not be empty"));
        }
        if chrono::DateTime::parse_from_rfc3339(&self.start).is_err() {
            return Err(Invalid::new(
                "start",
                format!(
                    "must be an RFC 3339 instant such as 2025-05-12T12:00:00Z, got {:?}",
                    self.start
                ),
            ));
        }
        self.call.validate()?;
        self.sender_overrides()?;
        if let Some(replay) = &self.replay {
            replay.validate()?;
            if !self.replays_series() {
                return Err(Invalid::new(
                    "replay",
                    "moves the start of `lagos` and `ping` series, and no capacity, delay or loss here is one",
                ));
            }
        }
        self.handovers.validate()?;
        for (name, dir) in DIRECTIONS.iter().zip([&self.forward, &self.reverse]) {
            dir.validate(name)?;
        }
        // Geometry delay needs an orbit source.
        let orbit = matches!(self.handovers, HandoverSpec::Orbit(_));
        for (name, dir) in DIRECTIONS.iter().zip([&self.forward, &self.reverse]) {
            if matches!(dir.delay, DelaySpec::Geometry { .. }) && !orbit {
                return Err(Invalid::new(
                    format!("{name}.delay.kind"),
                    "\"geometry\" needs handovers.source = \"orbit\"",
                ));
            }
            if matches!(dir.loss, LossSpec::PerLink { .. }) && !orbit {
                return Err(Invalid::new(
                    format!("{name}.loss.kind"),
                    "\"per-link\" needs handovers.source = \"orbit\" (the path's links come from it)",
                ));
            }
            if matches!(
                dir.capacity,
                CapacitySpec::Lognormal(LognormalSpec {
                    step: Step::Slot,
                    ..
                })
            ) && matches!(self.handovers, HandoverSpec::None)
            {
                return Err(Invalid::new(
                    format!("{name}.capacity.step"),
                    "\"slot\" needs a handover source with slot boundaries (not \"none\")",
                ));
            }
        }
        let boundaries_without_handovers = match &self.handovers {
            HandoverSpec::Slots { .. } => true,
            HandoverSpec::Orbit(o) => o.policy == OrbitPolicy::Starlink,
            HandoverSpec::None | HandoverSpec::Grid { .. } => false,
        };
        for (name, dir) in DIRECTIONS.iter().zip([&self.forward, &self.reverse]) {
            if dir.handover.no_handover_loss_profile.is_some() && !boundaries_without_handovers {
                return Err(Invalid::new(
                    format!("{name}.handover.no_handover_loss_profile"),
                    "applies at slot boundaries without a handover: needs handovers.source = \"slots\" or an orbit source with policy = \"starlink\"",
                ));
            }
        }
        if let DelaySpec::Slotted(s) = &self.forward.delay
            && s.correlation != 0.0
        {
            return Err(Invalid::new(
                "forward.delay.correlation",
                "set the correlation on the reverse direction only",
            ));
        }
        if let DelaySpec::Slotted(s) = &self.reverse.delay
            && s.correlation != 0.0
            && !matches!(self.forward.delay, DelaySpec::Slotted(_))
        {
            return Err(Invalid::new(
                "reverse.delay.correlation",
                "a correlation needs a slotted forward delay too",
            ));
        }
        let files = self.forward.uses_files() || self.reverse.uses_files();
        match self.kind {
            ScenarioKind::Trace if !files => Err(Invalid::new(
                "kind",
                "a trace scenario must replay at least one file (mahimahi, leoreplayer or lagos)",
            )),
            ScenarioKind::Generated if files => Err(Invalid::new(
                "kind",
                "a generated scenario must not replay files; use kind = \"trace\"",
            )),
            _ => Ok(()),
        }
    }
}

impl CallSpec {
    fn validate(&self) -> Result<(), Invalid> {
        within_u("call.duration_s", self.duration_s, 1, MAX_CALL_S)?;
        within_u("call.fps", u64::from(self.fps), 1, 240)?;
        within_u(
            "call.min_bitrate_kbps",
            u64::from(self.min_bitrate_kbps),
            1,
            1_000_000,
        )?;
        within_u(
            "call.max_bitrate_kbps",
            u64::from(self.max_bitrate_kbps),
            u64::from(self.min_bitrate_kbps),
            1_000_000,
        )?;
        within_u(
            "call.start_bitrate_kbps",
            u64::from(self.start_bitrate_kbps),
            u64::from(self.min_bitrate_kbps),
            u64::from(self.max_bitrate_kbps),
        )
    }
}

impl HandoverSpec {
    fn validate(&self) -> Result<(), Invalid> {
        match self {
            HandoverSpec::None => Ok(()),
            HandoverSpec::Slots { probability } => {
                within("handovers.probability", *probability, 0.0, 1.0)
            }
            HandoverSpec::Grid {
                first_ms,
                period_ms,
            } => {
                within_u("handovers.period_ms", *period_ms, 1_000, 3_600_000)?;
                within_u("handovers.first_ms", *first_ms, 0, *period_ms)
            }
            HandoverSpec::Orbit(o) => o.validate(),
        }
    }
}

impl OrbitSpec {
    fn validate(&self) -> Result<(), Invalid> {
        within(
            "handovers.min_elevation_deg",
            self.min_elevation_deg,
            0.0,
            89.0,
        )?;
        within("handovers.margin_ms", self.margin_ms, 0.0, 100.0)?;
        within_u(
            "handovers.start_spread_s",
            self.start_spread_s,
            0,
            366 * 86_400,
        )?;
        within_u("handovers.update_s", u64::from(self.update_s), 1, 3_600)?;
        let c = &self.constellation;
        match (&c.tle, c.walker.is_empty()) {
            (Some(_), false) => {
                return Err(Invalid::new(
                    "handovers.constellation",
                    "give either tle or walker, not both",
                ));
            }
            (None, true) => {
                return Err(Invalid::new(
                    "handovers.constellation",
                    "give a tle file or at least one walker shell",
                ));
            }
            _ => {}
        }
        within(
            "handovers.constellation.altitude_jitter_km",
            c.altitude_jitter_km,
            0.0,
            200.0,
        )?;
        for (i, s) in c.walker.iter().enumerate() {
            let f = |name: &str| format!("handovers.constellation.walker[{i}].{name}");
            if s.name.is_empty()
                || s.name.len() > 17
                || !s.name.bytes().all(|b| b.is_ascii_graphic())
            {
                return Err(Invalid::new(
                    f("name"),
                    "must be 1-17 printable ASCII characters without spaces",
                ));
            }
            within(&f("altitude_km"), s.altitude_km, 300.0, 2_000.0)?;
            within(&f("inclination_deg"), s.inclination_deg, 0.0, 180.0)?;
            within_u(&f("planes"), u64::from(s.planes), 1, 100)?;
            within_u(&f("per_plane"), u64::from(s.per_plane), 1, 100)?;
            if s.phasing >= s.planes {
                return Err(Invalid::new(
                    f("phasing"),
                    format!("must be below planes ({}), got {}", s.planes, s.phasing),
                ));
            }
            above(&f("raan_spread_deg"), s.raan_spread_deg, 0.0, 360.0)?;
            if s.altitude_km - c.altitude_jitter_km < 300.0 {
                return Err(Invalid::new(
                    "handovers.constellation.altitude_jitter_km",
                    "would take a shell below 300 km",
                ));
            }
        }
        within(
            "handovers.endpoints.min_separation_km",
            self.endpoints.min_separation_km,
            0.0,
            19_000.0,
        )?;
        for (name, city) in [
            ("local", &self.endpoints.local),
            ("peer", &self.endpoints.peer),
        ] {
            if let Some(city) = city
                && super::cities::find(city).is_none()
            {
                return Err(Invalid::new(
                    format!("handovers.endpoints.{name}"),
                    format!(
                        "unknown city {city:?}; known: {}",
                        super::cities::CITIES
                            .iter()
                            .map(|c| c.name)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ));
            }
        }
        Ok(())
    }
}

impl DirectionSpec {
    fn validate(&self, dir: &str) -> Result<(), Invalid> {
        let f = |name: &str| format!("{dir}.{name}");
        match &self.capacity {
            CapacitySpec::Constant { mbps } => above(&f("capacity.mbps"), *mbps, 0.0, MAX_MBPS)?,
            CapacitySpec::Lognormal(l) => l.validate(dir)?,
            CapacitySpec::Mahimahi { file } | CapacitySpec::Lagos { file, .. } => {
                check_file(&f("capacity.file"), file)?
            }
        }
        match &self.delay {
            DelaySpec::Constant {
                ms,
                jitter_ms,
                jitter_rho,
            } => {
                within(&f("delay.ms"), *ms, 0.0, MAX_DELAY_MS)?;
                within(&f("delay.jitter_ms"), *jitter_ms, 0.0, 1_000.0)?;
                within(&f("delay.jitter_rho"), *jitter_rho, 0.0, 0.999)?;
            }
            DelaySpec::Slotted(s) => s.validate(dir)?,
            DelaySpec::Geometry { extra_ms } => {
                within(&f("delay.extra_ms"), *extra_ms, 0.0, MAX_DELAY_MS)?
            }
            DelaySpec::Leoreplayer { file }
            | DelaySpec::Lagos { file, .. }
            | DelaySpec::Ping { file } => check_file(&f("delay.file"), file)?,
        }
        match &self.loss {
            LossSpec::None => {}
            LossSpec::Bernoulli { rate } => within(&f("loss.rate"), *rate, 0.0, 1.0)?,
            LossSpec::PerLink { rate } => within(&f("loss.rate"), *rate, 0.0, 1.0)?,
            LossSpec::GilbertElliott {
                p_good_to_bad,
                p_bad_to_good,
                loss_good,
                loss_bad,
            } => {
                within(&f("loss.p_good_to_bad"), *p_good_to_bad, 0.0, 1.0)?;
                above(&f("loss.p_bad_to_good"), *p_bad_to_good, 0.0, 1.0)?;
                within(&f("loss.loss_good"), *loss_good, 0.0, 1.0)?;
                within(&f("loss.loss_bad"), *loss_bad, 0.0, 1.0)?;
            }
            LossSpec::Lagos { file, .. } => check_file(&f("loss.file"), file)?,
            LossSpec::Ping {
                file,
                window_ms,
                slot_ms,
            } => {
                check_file(&f("loss.file"), file)?;
                within_u(&f("loss.window_ms"), *window_ms, 100, 3_600_000)?;
                if *slot_ms != 0 {
                    within_u(&f("loss.slot_ms"), *slot_ms, 500, 3_600_000)?;
                }
            }
        }
        match (self.buffer_ms, self.buffer_bytes) {
            (Some(_), Some(_)) => {
                return Err(Invalid::new(
                    f("buffer_ms"),
                    "give buffer_ms or buffer_bytes, not both",
                ));
            }
            (None, None) => {
                return Err(Invalid::new(
                    f("buffer_ms"),
                    "missing: give buffer_ms or buffer_bytes",
                ));
            }
            (Some(ms), None) => within_u(&f("buffer_ms"), u64::from(ms), 1, 60_000)?,
            (None, Some(b)) => within_u(&f("buffer_bytes"), b, 1_500, 1 << 32)?,
        }
        let h = &self.handover;
        within_u(&f("handover.outage_ms"), u64::from(h.outage_ms), 0, 60_000)?;
        within(&f("handover.loss_burst_rate"), h.loss_burst_rate, 0.0, 1.0)?;
        within_u(
            &f("handover.loss_burst_ms"),
            u64::from(h.loss_burst_ms),
            0,
            60_000,
        )?;
        if h.loss_burst_rate > 0.0 && h.loss_burst_ms == 0 {
            return Err(Invalid::new(
                f("handover.loss_burst_ms"),
                "must be positive when loss_burst_rate is",
            ));
        }
        check_profile(
            &f("handover.boundary_loss_profile"),
            &h.boundary_loss_profile,
        )?;
        if let Some(p) = &h.no_handover_loss_profile {
            check_profile(&f("handover.no_handover_loss_profile"), p)?;
        }
        if h.loss_burst_rate > 0.0 && !h.boundary_loss_profile.is_empty() {
            return Err(Invalid::new(
                f("handover.boundary_loss_profile"),
                "give loss_burst_rate or boundary_loss_profile, not both",
            ));
        }
        Ok(())
    }

    /// Whether any part of this direction replays a file.
    pub fn uses_files(&self) -> bool {
        matches!(
            self.capacity,
            CapacitySpec::Mahimahi { .. } | CapacitySpec::Lagos { .. }
        ) || matches!(
            self.delay,
            DelaySpec::Leoreplayer { .. } | DelaySpec::Lagos { .. } | DelaySpec::Ping { .. }
        ) || matches!(self.loss, LossSpec::Lagos { .. } | LossSpec::Ping { .. })
    }
}

impl LognormalSpec {
    fn validate(&self, dir: &str) -> Result<(), Invalid> {
        let f = |name: &str| format!("{dir}.capacity.{name}");
        above(&f("median_mbps"), self.median_mbps, 0.0, MAX_MBPS)?;
        within(&f("sigma_log"), self.sigma_log, 0.0, 5.0)?;
        within(&f("rho"), self.rho, 0.0, 0.999)?;
        within(&f("call_sigma_log"), self.call_sigma_log, 0.0, 5.0)?;
        within(&f("within_sigma_log"), self.within_sigma_log, 0.0, 5.0)?;
        if self.step == Step::Second && self.within_sigma_log != 0.0 {
            return Err(Invalid::new(
                f("within_sigma_log"),
                "only applies to step = \"slot\"",
            ));
        }
        above(&f("min_mbps"), self.min_mbps, 0.0, MAX_MBPS)?;
        within(&f("max_mbps"), self.max_mbps, self.min_mbps, MAX_MBPS)?;
        if let Some(s) = &self.stall {
            if self.step != Step::Second {
                return Err(Invalid::new(
                    f("stall"),
                    "only applies to step = \"second\"",
                ));
            }
            within(&f("stall.enter_per_s"), s.enter_per_s, 0.0, 1.0)?;
            within(&f("stall.mean_s"), s.mean_s, 1.0, 3_600.0)?;
            above(&f("stall.mbps"), s.mbps, 0.0, MAX_MBPS)?;
        }
        Ok(())
    }
}

impl SlottedDelaySpec {
    fn validate(&self, dir: &str) -> Result<(), Invalid> {
        let f = |name: &str| format!("{dir}.delay.{name}");
        above(&f("median_ms"), self.median_ms, 0.0, MAX_DELAY_MS)?;
        within(&f("sigma_log"), self.sigma_log, 0.0, 3.0)?;
        within(&f("rho"), self.rho, 0.0, 0.999)?;
        within(&f("correlation"), self.correlation, -1.0, 1.0)?;
        within(&f("min_ms"), self.min_ms, 0.0, self.median_ms)?;
        within(&f("max_ms"), self.max_ms, self.median_ms, MAX_DELAY_MS)?;
        within(&f("jitter_ms"), self.jitter_ms, 0.0, 1_000.0)?;
        within(&f("jitter_rho"), self.jitter_rho, 0.0, 0.999)?;
        within(&f("spike_min_ms"), self.spike_min_ms, 0.0, MAX_DELAY_MS)?;
        within(
            &f("spike_max_ms"),
            self.spike_max_ms,
            self.spike_min_ms,
            MAX_DELAY_MS,
        )?;
        within_u(
            &f("spike_duration_ms"),
            u64::from(self.spike_duration_ms),
            0,
            15_000,
        )
    }
}

/// A boundary loss profile: at most [`MAX_LOSS_PROFILE_ROWS`] probabilities in [0, 1]; the
/// error names the row (`forward.handover.boundary_loss_profile[2]`).
fn check_profile(field: &str, profile: &[f64]) -> Result<(), Invalid> {
    if profile.len() > MAX_LOSS_PROFILE_ROWS {
        return Err(Invalid::new(
            field,
            format!(
                "at most {MAX_LOSS_PROFILE_ROWS} rows of {LOSS_PROFILE_ROW_MS} ms (one 15-s slot), got {}",
                profile.len()
            ),
        ));
    }
    for (i, &p) in profile.iter().enumerate() {
        within(&format!("{field}[{i}]"), p, 0.0, 1.0)?;
    }
    Ok(())
}

/// A file reference must not be empty.
fn check_file(field: &str, file: &str) -> Result<(), Invalid> {
    if file.trim().is_empty() || file.trim() == "data:" {
        Err(Invalid::new(field, "must name a file"))
    } else {
        Ok(())
    }
}

/// A switch rate written as a number or as a site preset's name
/// ([`handover_predictor::predict::SWITCH_RATE_PRESETS`]).
fn switch_rate<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
    struct Rate;
    impl serde::de::Visitor<'_> for Rate {
        type Value = f64;

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a switch rate: a number in [0, 1] or a site preset's name")
        }

        fn visit_f64<E: serde::de::Error>(self, rate: f64) -> Result<f64, E> {
            Ok(rate)
        }

        fn visit_i64<E: serde::de::Error>(self, rate: i64) -> Result<f64, E> {
            Ok(rate as f64)
        }

        fn visit_u64<E: serde::de::Error>(self, rate: u64) -> Result<f64, E> {
            Ok(rate as f64)
        }

        fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<f64, E> {
            handover_predictor::predict::parse_switch_rate(name).map_err(E::custom)
        }
    }
    deserializer.deserialize_any(Rate)
}

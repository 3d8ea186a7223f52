//! The sender's options and how their sources combine.
//!
//! Five choices shape the sending side of a call: the bandwidth estimator ([`BweChoice`]), the
//! NACK pair ([`NackChoice`]), where libwebrtc's congestion window acts ([`CwndMode`]), whether a
//! key frame flushes the pacer's video backlog, and the loss protection ([`FecChoice`]).
//! [`SenderOptions`] holds one value of each; its [`Default`] is this project's default sender
//! (GoogCC, libwebrtc's NACK with RTX, congestion-window pushback, no key-frame flush,
//! libwebrtc's adaptive FEC).
//!
//! The options come from three places, in this order of precedence:
//!
//! 1. an explicit command-line flag (`--bwe`, `--nack`, `--cwnd`, `--keyframe-flush`, `--fec`);
//! 2. the scenario file's optional `[sender]` table (see [`crate::scenario::schema::SenderSpec`]);
//! 3. the default.
//!
//! Each of the first two is a [`SenderOverrides`] (every field optional), and
//! [`SenderOptions::overridden_by`] lays one over a set of options:
//! `SenderOptions::default().overridden_by(&file).overridden_by(&cli)`, which
//! [`SenderOptions::resolve`] spells out. A realised scenario carries the first two steps
//! ([`crate::scenario::Realization::sender`]); whoever runs the call (`sim`, `experiment`,
//! `collect`, and a real call) lays its command line over it.

use super::choices::{BweChoice, FecChoice, NackChoice};
use pacer::CwndMode;

/// The names a scenario file and `--cwnd` accept, in [`CWND_MODES`] order.
pub const CWND_NAMES: [&str; 3] = ["pushback", "pacer", "off"];
/// Every congestion-window mode, the default first.
pub const CWND_MODES: [CwndMode; 3] = [CwndMode::Pushback, CwndMode::Pacer, CwndMode::Off];

/// The name of a congestion-window mode, as `--cwnd`, scenario files and telemetry write it.
pub fn cwnd_name(mode: CwndMode) -> &'static str {
    match mode {
        CwndMode::Pushback => "pushback",
        CwndMode::Pacer => "pacer",
        CwndMode::Off => "off",
    }
}

/// The congestion-window mode named `name`, if any.
pub fn cwnd_from_name(name: &str) -> Option<CwndMode> {
    CWND_MODES.into_iter().find(|&m| cwnd_name(m) == name)
}

/// The sending side of a call: one value of each option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SenderOptions {
    /// The bandwidth estimator.
    pub bwe: BweChoice,
    /// The NACK generator and responder.
    pub nack: NackChoice,
    /// Where libwebrtc's congestion window acts.
    pub cwnd: CwndMode,
    /// Whether a new key frame flushes the video stream's queued packets from the pacer.
    pub keyframe_flush: bool,
    /// The loss protection.
    pub fec: FecChoice,
}

impl Default for SenderOptions {
    /// GoogCC, libwebrtc's NACK with RTX, congestion-window pushback (libwebrtc's default since
    /// about M80), no key-frame flush, libwebrtc's adaptive FEC (hybrid NACK/FEC, what a
    /// browser runs once FEC is negotiated).
    fn default() -> Self {
        Self {
            bwe: BweChoice::GoogCc,
            nack: NackChoice::Libwebrtc,
            cwnd: CwndMode::Pushback,
            keyframe_flush: false,
            fec: FecChoice::Libwebrtc,
        }
    }
}

impl SenderOptions {
    /// These options with every value `overrides` sets replaced by it.
    #[must_use]
    pub fn overridden_by(self, overrides: &SenderOverrides) -> Self {
        Self {
            bwe: overrides.bwe.unwrap_or(self.bwe),
            nack: overrides.nack.unwrap_or(self.nack),
            cwnd: overrides.cwnd.unwrap_or(self.cwnd),
            keyframe_flush: overrides.keyframe_flush.unwrap_or(self.keyframe_flush),
            fec: overrides.fec.unwrap_or(self.fec),
        }
    }

    /// The options of a call: the command line's `cli` over the scenario file's `file` over the
    /// defaults.
    pub fn resolve(file: &SenderOverrides, cli: &SenderOverrides) -> Self {
        Self::default().overridden_by(file).overridden_by(cli)
    }

    /// The congestion-window mode's name.
    pub fn cwnd_name(&self) -> &'static str {
        cwnd_name(self.cwnd)
    }

    /// The options by the names scenario files, flags and telemetry use.
    pub fn names(&self) -> SenderNames {
        SenderNames {
            bwe: self.bwe.as_str(),
            nack: self.nack.as_str(),
            cwnd: self.cwnd_name(),
            keyframe_flush: self.keyframe_flush,
            fec: self.fec.name(),
        }
    }
}

/// [`SenderOptions`] by name, as experiment reports and collection manifests record the sender
/// of each scenario's calls (the `[sender]` table's keys and values).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SenderNames {
    /// `bwe`.
    pub bwe: &'static str,
    /// `nack`.
    pub nack: &'static str,
    /// `cwnd`.
    pub cwnd: &'static str,
    /// `keyframe_flush`.
    pub keyframe_flush: bool,
    /// `fec`.
    pub fec: String,
}

impl std::fmt::Display for SenderNames {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "bwe {}, nack {}, cwnd {}, keyframe_flush {}, fec {}",
            self.bwe, self.nack, self.cwnd, self.keyframe_flush, self.fec
        )
    }
}

/// Sender options that one source sets, each optional: a scenario file's `[sender]` table or a
/// command line's flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SenderOverrides {
    /// `bwe`, if set.
    pub bwe: Option<BweChoice>,
    /// `nack`, if set.
    pub nack: Option<NackChoice>,
    /// `cwnd`, if set.
    pub cwnd: Option<CwndMode>,
    /// `keyframe_flush`, if set.
    pub keyframe_flush: Option<bool>,
    /// `fec`, if set.
    pub fec: Option<FecChoice>,
}

impl SenderOverrides {
    /// Sets nothing.
    pub const NONE: Self = Self {
        bwe: None,
        nack: None,
        cwnd: None,
        keyframe_flush: None,
        fec: None,
    };

    /// Whether nothing is set.
    pub fn is_empty(&self) -> bool {
        *self == Self::NONE
    }

    /// Sets every value of `options`.
    pub fn all(options: SenderOptions) -> Self {
        Self {
            bwe: Some(options.bwe),
            nack: Some(options.nack),
            cwnd: Some(options.cwnd),
            keyframe_flush: Some(options.keyframe_flush),
            fec: Some(options.fec),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::call::choices::{BWE_NAMES, NACK_NAMES};

    #[test]
    fn names_are_the_scenario_file_s_keys_and_values() {
        let o = SenderOptions {
            bwe: BweChoice::WebrtcRs,
            nack: NackChoice::Off,
            cwnd: CwndMode::Pacer,
            keyframe_flush: true,
            fec: FecChoice::Fixed {
                media: 10,
                repair: 2,
            },
        };
        assert_eq!(
            o.names().to_string(),
            "bwe webrtc-rs, nack off, cwnd pacer, keyframe_flush true, fec fixed:10/2"
        );
        assert_eq!(
            serde_json::to_string(&SenderOptions::default().names()).unwrap(),
            r#"{"bwe":"googcc","nack":"libwebrtc","cwnd":"pushback","keyframe_flush":false,"fec":"libwebrtc"}"#
        );
    }

    #[test]
    fn the_defaults_are_googcc_libwebrtc_pushback_no_flush_and_libwebrtc_fec() {
        let d = SenderOptions::default();
        assert_eq!(
            (d.bwe, d.nack, d.cwnd, d.keyframe_flush, d.fec),
            (
                BweChoice::GoogCc,
                NackChoice::Libwebrtc,
                CwndMode::Pushback,
                false,
                FecChoice::Libwebrtc
            )
        );
        assert_eq!(d.bwe, BweChoice::default());
        assert_eq!(d.nack, NackChoice::default());
    }

    #[test]
    fn a_flag_beats_the_file_and_the_file_beats_the_default() {
        let file = SenderOverrides {
            cwnd: Some(CwndMode::Pacer),
            keyframe_flush: Some(true),
            ..SenderOverrides::NONE
        };
        let cli = SenderOverrides {
            keyframe_flush: Some(false),
            bwe: Some(BweChoice::WebrtcRs),
            ..SenderOverrides::NONE
        };
        let o = SenderOptions::resolve(&file, &cli);
        assert_eq!(o.bwe, BweChoice::WebrtcRs, "flag only");
        assert_eq!(o.nack, NackChoice::Libwebrtc, "neither: default");
        assert_eq!(o.cwnd, CwndMode::Pacer, "file only");
        assert!(!o.keyframe_flush, "the flag beats the file");
        assert_eq!(
            SenderOptions::resolve(&SenderOverrides::NONE, &SenderOverrides::NONE),
            SenderOptions::default()
        );
        let all = SenderOverrides::all(o);
        assert_eq!(SenderOptions::default().overridden_by(&all), o);
        assert!(SenderOverrides::default().is_empty() && !all.is_empty());
    }

    #[test]
    fn every_name_reads_back_as_its_choice() {
        for (b, name) in BweChoice::ALL.into_iter().zip(BWE_NAMES) {
            assert_eq!((b.as_str(), BweChoice::from_name(name)), (name, Some(b)));
        }
        for (n, name) in NackChoice::ALL.into_iter().zip(NACK_NAMES) {
            assert_eq!((n.as_str(), NackChoice::from_name(name)), (name, Some(n)));
        }
        for (m, name) in CWND_MODES.into_iter().zip(CWND_NAMES) {
            assert_eq!((cwnd_name(m), cwnd_from_name(name)), (name, Some(m)));
        }
        assert_eq!(BweChoice::from_name("GoogCC"), None);
        assert_eq!(NackChoice::from_name(""), None);
        assert_eq!(cwnd_from_name("window"), None);
    }
}

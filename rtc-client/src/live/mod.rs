//! Real calls over the async `webrtc` crate: `rtc-client answer` and
//! `rtc-client call --peer`.
//!
//! A real call runs the same sender and receiver as the simulated one ([`crate::sim`]), built by
//! the shared call layer ([`crate::call`]): the synthetic [`crate::media`] encoder and packetizer
//! (or, with `call --video vp8`, real VP8 from libvpx, [`crate::call::video`]), GoogCC (or
//! webrtc-rs's Gcc) behind an estimator wrapper that publishes its target, the TWCC sender, this
//! project's [`pacer::HandoverAwarePacer`] at `Slot::Pacer` with its congestion window, the
//! libwebrtc-like NACK pair with RTX ([`crate::nack`]), and on the far side the media
//! [`crate::media::receiver`] with libwebrtc's jitter buffer and the [`crate::media::qoe`] meter. Only the transport
//! differs: ICE, DTLS and SRTP over UDP sockets, in real time. The far end may also be a
//! browser's own WebRTC ([`web`], [`chromium`]).
//!
//! - [`signal`]: the HTTP signalling protocol (JSON SDP offer in, answer out, WHIP-like) and the
//!   candidate rewriting that routes a call through the relay.
//! - [`http`]: the small HTTP/1.1 client the caller speaks it with.
//! - [`auth`]: the bearer token a server beyond loopback requires on every request.
//! - [`tls`]: HTTPS for the signalling (rustls).
//! - [`answer`]: the answering side: the signalling server, one receiver and QoE meter per call,
//!   and the QoE side channel the caller reads.
//! - [`call`]: the calling side: peer connection, sender loop, policy, live status, telemetry.
//! - [`chromium`]: headless Chromium as a far peer (found, launched, killed and cleaned up).
//! - [`peer`]: peer-connection set-up shared by both sides (media engine, interceptor chains,
//!   events).
//! - [`relay`]: the in-process UDP relay that applies a scenario's links in real time.
//! - [`shadow`]: this project's receiver on the packets the relay delivers to a browser, so
//!   both judge the same call.
//! - [`status`]: the one-line live status and the summary.
//! - [`web`]: the browser peer: the page (served from the signalling origin) that runs a call
//!   in the browser's WebRTC, and its endpoints.
//!
//! Everything that schedules ([`relay::LinkScheduler`], the pacer, the policy controller) takes
//! `now` and reads no clock; the tasks around them do.

pub mod answer;
pub mod auth;
pub mod call;
pub mod chromium;
pub mod http;
pub mod peer;
pub mod relay;
mod respond;
pub mod shadow;
pub mod signal;
pub mod status;
pub mod tls;
pub mod web;

/// Why a real call (or the answering server) failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LiveError {
    /// A webrtc-rs call failed.
    #[error("webrtc: {0}")]
    Webrtc(String),
    /// Socket or file I/O failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The error.
        source: std::io::Error,
    },
    /// The signalling exchange failed (the peer refused the offer, answered garbage, ...).
    #[error("signalling: {0}")]
    Signalling(String),
    /// The peers did not connect in time: ICE never connected, or it did and the DTLS handshake
    /// did not finish (see [`LiveError::is_dtls_stall`]).
    #[error("the peers did not connect within {waited:?}: {}", connect_stage(*.ice_connected_after))]
    ConnectTimeout {
        /// How long the caller waited.
        waited: std::time::Duration,
        /// When ICE connected, from the call's epoch; `None` if it never did.
        ice_connected_after: Option<std::time::Duration>,
    },
    /// A link configuration or scenario could not be used.
    #[error("link: {0}")]
    Link(String),
    /// An argument is out of range or inconsistent.
    #[error("{0}")]
    Config(String),
}

/// Where a connection that timed out stopped.
fn connect_stage(ice_connected_after: Option<std::time::Duration>) -> String {
    match ice_connected_after {
        None => "ICE did not connect (no candidate pair answered its checks)".into(),
        Some(after) => format!(
            "ICE connected after {} ms, but the DTLS handshake did not finish (webrtc-rs 0.21's \
             DTLS server stops retransmitting its flight once the peer repeats its own, so one \
             lost handshake datagram can stall it; docs/real-calls.md, \"When a call does not \
             connect\")",
            after.as_millis()
        ),
    }
}

impl LiveError {
    /// A connection that timed out after ICE connected: the DTLS handshake stalled
    /// (docs/real-calls.md, "When a call does not connect").
    pub fn is_dtls_stall(&self) -> bool {
        matches!(
            self,
            Self::ConnectTimeout {
                ice_connected_after: Some(_),
                ..
            }
        )
    }

    pub(crate) fn webrtc(error: impl std::fmt::Display) -> Self {
        Self::Webrtc(error.to_string())
    }

    pub(crate) fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> Self {
        let context = context.into();
        move |source| Self::Io { context, source }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_connect_timeout_says_which_stage_stalled() {
        let ice = LiveError::ConnectTimeout {
            waited: Duration::from_secs(15),
            ice_connected_after: None,
        };
        assert!(!ice.is_dtls_stall());
        assert_eq!(
            ice.to_string(),
            "the peers did not connect within 15s: ICE did not connect (no candidate pair \
             answered its checks)"
        );
        let dtls = LiveError::ConnectTimeout {
            waited: Duration::from_secs(15),
            ice_connected_after: Some(Duration::from_millis(412)),
        };
        assert!(dtls.is_dtls_stall());
        let text = dtls.to_string();
        assert!(
            text.starts_with(
                "the peers did not connect within 15s: ICE connected after 412 ms, but the DTLS \
                 handshake did not finish"
            ),
            "{text}"
        );
        assert!(!LiveError::Signalling("x".into()).is_dtls_stall());
    }
}

//! The signalling protocol between `rtc-client call` and `rtc-client answer`, and the SDP
//! candidate rewriting that routes a call through the relay.
//!
//! The shape follows WHIP (RFC 9725): one HTTP request carries the whole offer (non-trickle
//! ICE: every candidate is in it), the response carries the whole answer, and the call is a
//! resource that `DELETE` ends. The bodies are JSON rather than `application/sdp` because the
//! caller also says which loss recovery it runs and when its clock started:
//!
//! | request | body | response |
//! |---|---|---|
//! | `POST /calls` | [`OfferRequest`] | `201` [`AnswerResponse`], `Location: /calls/{id}` |
//! | `POST /calls/{id}/qoe` | [`QoeQuery`] | `200` [`QoeSnapshot`] |
//! | `DELETE /calls/{id}` | none | `204` |
//!
//! Errors are `400` (malformed JSON or SDP), `404` (unknown call), `413` (a body over
//! [`MAX_BODY_BYTES`]), `415` (not JSON), `422` (an offer without video in a codec the answerer
//! receives: VP8, [`check_video_offer`]) or `500`, each with an [`ErrorBody`] naming the reason.
//!
//! The QoE query is a measurement side channel: it runs over TCP on the signalling address, not
//! across the emulated link, so reading the receiver's QoE never disturbs the call it measures
//! (a real deployment would carry it in RTCP XR or a data channel; this keeps the telemetry of a
//! real call identical in content to a simulated one's).

use pacer::telemetry::QoeRecord;
use serde::{Deserialize, Serialize};
use std::net::SocketAddr;

/// The largest request body the server reads: an offer is 2 to 6 kB; 64 KiB leaves room for many
/// candidates and codecs and still bounds what a client can make the server buffer.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// A session description as the W3C `RTCSessionDescriptionInit` dictionary: `{"type", "sdp"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionDescription {
    /// `offer` or `answer`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The SDP text.
    pub sdp: String,
}

/// `POST /calls`: the caller's offer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OfferRequest {
    /// The offer, with all its candidates.
    pub offer: SessionDescription,
    /// The loss recovery the caller runs (`libwebrtc`, `stock` or `off`), so that the answerer
    /// runs the matching NACK generator.
    #[serde(default)]
    pub nack: Option<String>,
    /// The caller's call epoch in UNIX nanoseconds: capture instants in the payload headers count
    /// from it, and the answerer's receiver clock is aligned to it so that capture-to-render
    /// delays are meaningful (exact on one host; across hosts it needs synchronised clocks).
    #[serde(default)]
    pub epoch_unix_ns: Option<u64>,
    /// A label for logs and reports.
    #[serde(default)]
    pub label: Option<String>,
    /// When the emulated link between the peers started, set by the browser bridge's relay and
    /// never on the wire: a receiver that raises its own playout delay reads its forecast of that
    /// link's handovers from this instant ([`super::answer::ReceiverRaiseSetup`]).
    #[serde(skip)]
    pub link_epoch: Option<std::time::Instant>,
}

/// `201` to `POST /calls`: the answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnswerResponse {
    /// The call's id on the answerer (`/calls/{id}`).
    pub call_id: String,
    /// The answer, with all its candidates.
    pub answer: SessionDescription,
}

/// `POST /calls/{id}/qoe`: what the caller wants to know.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QoeQuery {
    /// RTP media packets the caller has sent so far (for the loss figure).
    pub packets_sent: u64,
    /// Close the current interval and return it (at a decision boundary).
    #[serde(default)]
    pub take_interval: bool,
}

/// `200` to `POST /calls/{id}/qoe`: the receiver's QoE.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QoeSnapshot {
    /// The interval just closed (with `take_interval`).
    pub interval: Option<QoeRecord>,
    /// The call so far.
    pub total: QoeRecord,
    /// Frames rendered in the last whole second.
    pub fps_last_second: u32,
    /// Freezes so far.
    pub freezes: u64,
    /// PLIs the receiver sent.
    pub plis_sent: u64,
    /// Whether the peer connection is still up.
    pub connected: bool,
    /// Frames rendered in each second of the call, on the caller's clock (index 0: its first
    /// second from the epoch), as the simulator's `CallResult::rendered_per_second`; empty from
    /// an answerer that does not report it.
    #[serde(default)]
    pub rendered_per_second: Vec<u32>,
    /// FlexFEC repair packets that reached the receiver (0 without FEC, or from an answerer that
    /// does not report it).
    #[serde(default)]
    pub fec_repair_received: u64,
    /// Media packets the receiver rebuilt from them whose original never arrived.
    #[serde(default)]
    pub fec_recovered: u64,
    /// Frames the receiver's own forecast raised above the playout delay the sender asked for
    /// (0 without it, or from an answerer that does not report it).
    #[serde(default)]
    pub frames_raised_by_forecast: u64,
}

/// The body of every error response.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    /// What was wrong.
    pub error: String,
}

/// Why a description could not be rewritten.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CandidateError {
    /// No UDP candidate in the description (trickle ICE, or gathering found nothing).
    #[error("the session description has no UDP ICE candidate")]
    NoCandidate,
}

/// The UDP candidate addresses of `sdp`, in order (`a=candidate:` lines; unparsable ones are
/// skipped).
pub fn candidates(sdp: &str) -> Vec<SocketAddr> {
    sdp.lines().filter_map(udp_candidate).collect()
}

/// `sdp` with its first UDP candidate moved to `to` and every other candidate removed, so that
/// `to` is the only address the remote peer sends to (see [`super::relay`]).
///
/// # Errors
///
/// [`CandidateError::NoCandidate`] when there is no UDP candidate to move.
pub fn rewrite_candidates(sdp: &str, to: SocketAddr) -> Result<String, CandidateError> {
    let mut out = String::with_capacity(sdp.len());
    let mut done = false;
    for line in sdp.split_inclusive('\n') {
        let body = line.trim_end_matches(['\r', '\n']);
        let ending = &line[body.len()..];
        if body.starts_with("a=candidate:") {
            if done || udp_candidate(body).is_none() {
                continue;
            }
            let mut fields: Vec<&str> = body.split(' ').collect();
            let ip = to.ip().to_string();
            let port = to.port().to_string();
            fields[4] = &ip;
            fields[5] = &port;
            out.push_str(&fields.join(" "));
            out.push_str(ending);
            done = true;
        } else {
            out.push_str(line);
        }
    }
    if done {
        Ok(out)
    } else {
        Err(CandidateError::NoCandidate)
    }
}

/// The codecs the `m=video` sections of `sdp` offer, as `NAME/CLOCK` from their `a=rtpmap`
/// lines, in order, without repeats (`rtx`, `red`, `ulpfec` and `flexfec-03` included).
pub fn video_codecs(sdp: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut in_video = false;
    for line in sdp.lines() {
        let line = line.trim_end();
        if let Some(media) = line.strip_prefix("m=") {
            in_video = media.starts_with("video ");
        } else if in_video && let Some(map) = line.strip_prefix("a=rtpmap:") {
            let codec = map.split_whitespace().nth(1).unwrap_or("");
            let name = codec.split('/').take(2).collect::<Vec<_>>().join("/");
            if !name.is_empty() && !out.iter().any(|c| c.eq_ignore_ascii_case(&name)) {
                out.push(name);
            }
        }
    }
    out
}

/// Whether `sdp` offers video this project can receive: VP8 at 90 kHz in an `m=video`
/// section. `Err` names what was offered instead (or that there is no video at all).
///
/// # Errors
///
/// A message for the client when it does not.
pub fn check_video_offer(sdp: &str) -> Result<(), String> {
    let codecs = video_codecs(sdp);
    if codecs.iter().any(|c| c.eq_ignore_ascii_case("VP8/90000")) {
        return Ok(());
    }
    if !sdp.lines().any(|l| l.starts_with("m=video ")) {
        return Err(
            "the offer has no video section (m=video): this answerer receives video".into(),
        );
    }
    Err(format!(
        "the offer's video codecs ({}) include none this answerer supports: VP8/90000",
        if codecs.is_empty() {
            "none named".to_owned()
        } else {
            codecs.join(", ")
        }
    ))
}

/// The id an SDP maps header extension `uri` to in its video section, or at session level
/// (`a=extmap:<id>[/<direction>] <uri>`, RFC 8285 section 5), if it offers it.
pub fn extmap_id(sdp: &str, uri: &str) -> Option<u8> {
    // Before the first media section, session-level attributes apply to every section.
    let mut applies = true;
    for line in sdp.lines().map(str::trim) {
        if line.starts_with("m=") {
            applies = line.starts_with("m=video ");
            continue;
        }
        let Some(rest) = line.strip_prefix("a=extmap:").filter(|_| applies) else {
            continue;
        };
        let mut fields = rest.split_whitespace();
        let id = fields.next().and_then(|f| f.split('/').next());
        if fields.next() == Some(uri)
            && let Some(id) = id
                .and_then(|id| id.parse::<u8>().ok())
                .filter(|&id| id >= 1)
        {
            return Some(id);
        }
    }
    None
}

/// The address of an `a=candidate:<foundation> <component> udp <priority> <ip> <port> typ ...`
/// line.
fn udp_candidate(line: &str) -> Option<SocketAddr> {
    let rest = line.trim().strip_prefix("a=candidate:")?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    if fields.len() < 7 || !fields[2].eq_ignore_ascii_case("udp") || fields[6] != "typ" {
        return None;
    }
    let ip = fields[4].parse().ok()?;
    let port = fields[5].parse().ok()?;
    Some(SocketAddr::new(ip, port))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SDP: &str = "v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\nm=video 9 UDP/TLS/RTP/SAVPF 96\r\n\
        c=IN IP4 0.0.0.0\r\na=candidate:1 1 udp 2130706431 127.0.0.1 40001 typ host\r\n\
        a=candidate:2 1 udp 2130706431 127.0.0.1 40002 typ host\r\n\
        a=candidate:3 1 tcp 1 127.0.0.1 9 typ host tcptype active\r\na=end-of-candidates\r\n";

    #[test]
    fn the_playout_delay_extension_id_is_read_from_the_video_section_only() {
        let uri = "http://www.webrtc.org/experiments/rtp-hdrext/playout-delay";
        let sdp = "v=0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=extmap:4 {uri}\r\n\
                   m=video 9 UDP/TLS/RTP/SAVPF 96\r\na=extmap:3 urn:other\r\n\
                   a=extmap:7/sendrecv {uri}\r\n"
            .replace("{uri}", uri);
        assert_eq!(extmap_id(&sdp, uri), Some(7));
        let audio_only =
            "v=0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=extmap:4 {uri}\r\n".replace("{uri}", uri);
        assert_eq!(extmap_id(&audio_only, uri), None);
        let session =
            "v=0\r\na=extmap:2 {uri}\r\nm=video 9 UDP/TLS/RTP/SAVPF 96\r\n".replace("{uri}", uri);
        assert_eq!(extmap_id(&session, uri), Some(2));
        assert_eq!(extmap_id("a=extmap:zero x\r\na=extmap:0 x", "x"), None);
    }

    #[test]
    fn candidates_are_read_and_the_first_is_moved() {
        assert_eq!(
            candidates(SDP),
            vec![
                "127.0.0.1:40001".parse::<SocketAddr>().unwrap(),
                "127.0.0.1:40002".parse::<SocketAddr>().unwrap()
            ]
        );
        let to: SocketAddr = "127.0.0.1:5555".parse().unwrap();
        let rewritten = rewrite_candidates(SDP, to).unwrap();
        assert_eq!(candidates(&rewritten), vec![to]);
        assert!(rewritten.contains("a=candidate:1 1 udp 2130706431 127.0.0.1 5555 typ host\r\n"));
        assert!(!rewritten.contains("tcp"));
        assert!(rewritten.ends_with("a=end-of-candidates\r\n"));
        assert_eq!(
            rewrite_candidates("v=0\r\n", to),
            Err(CandidateError::NoCandidate)
        );
    }

    #[test]
    fn offers_without_vp8_are_named() {
        let vp8 = "m=video 9 UDP/TLS/RTP/SAVPF 96 97\r\na=rtpmap:96 VP8/90000\r\n\
                   a=rtpmap:97 rtx/90000\r\n";
        assert_eq!(video_codecs(vp8), vec!["VP8/90000", "rtx/90000"]);
        assert!(check_video_offer(vp8).is_ok());
        let h265 = "m=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=rtpmap:111 opus/48000/2\r\n\
            m=video 9 UDP/TLS/RTP/SAVPF 49\r\na=rtpmap:49 H265/90000\r\n";
        let error = check_video_offer(h265).unwrap_err();
        assert!(
            error.contains("(H265/90000)") && error.contains("VP8/90000"),
            "{error}"
        );
        assert!(
            check_video_offer("v=0\r\n")
                .unwrap_err()
                .contains("no video")
        );
    }
}

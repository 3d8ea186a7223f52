//! What one simulated call produced.

use crate::call::NackChoice;
use crate::media::qoe::QoeReport;
use pacer::CwndMode;
use pacer::Decision;
use pacer::telemetry::IntervalRecord;
use std::time::Duration;

/// What one call produced.
#[derive(Debug, Clone)]
pub struct CallResult {
    /// One record per decision interval (the last may be shorter).
    pub telemetry: Vec<IntervalRecord>,
    /// QoE over the whole call.
    pub qoe: QoeReport,
    /// Frames rendered in each whole second of the call.
    pub rendered_per_second: Vec<u32>,
    /// The longest capture-to-render delay of the frames rendered in each whole second of the
    /// call, ms (0 in a second without frames).
    pub max_frame_delay_ms_per_second: Vec<u32>,
    /// The largest minimum playout delay the sender asked the receiver for (the playout raise)
    /// while frames rendered in each whole second, ms.
    pub max_playout_minimum_ms_per_second: Vec<u32>,
    /// The policy decisions, in order.
    pub decisions: Vec<Decision>,
    /// Frames the encoder produced.
    pub frames_encoded: u64,
    /// Key frames among them.
    pub key_frames: u64,
    /// PLIs the receiver sent.
    pub plis_sent: u64,
    /// RTP packets the packetizer produced (retransmissions not included).
    pub media_packets: u64,
    /// RTP packets put on the forward link, retransmissions included.
    pub rtp_packets_sent: u64,
    /// Deadlines that were not in the future when served (each was served 1 ms later).
    pub stale_deadlines: u64,
    /// Loss recovery over the call.
    pub recovery: RecoveryCounts,
    /// What the congestion window and key-frame flushing did over the call.
    pub sender: SenderCounts,
}

/// What the sender's congestion window and key-frame flushing did over a call.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SenderCounts {
    /// The mode that ran.
    pub cwnd: Option<CwndMode>,
    /// Frames the encoder dropped for congestion-window pushback.
    pub frames_dropped_by_pushback: u64,
    /// Time the pacer was congested (pacer mode).
    pub congested: Duration,
    /// Keep-alives the congested pacer sent.
    pub keepalives: u64,
    /// Packets key frames flushed from the pacer queue.
    pub packets_flushed: u64,
    /// The smallest pushback ratio seen at a frame (1 without pushback).
    pub min_pushback_ratio: f64,
    /// The largest outstanding data seen at a frame, bytes.
    pub max_outstanding_bytes: u64,
}

/// What loss recovery did over a call.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RecoveryCounts {
    /// The NACK pair that ran.
    pub nack: NackChoice,
    /// Original media packets the forward link lost.
    pub media_packets_lost: u64,
    /// Retransmissions put on the forward link.
    pub retransmissions_sent: u64,
    /// Retransmissions the forward link lost.
    pub retransmissions_lost: u64,
    /// Sequence numbers requested in the NACKs the receiver sent, repeats included.
    pub nack_requests: u64,
    /// Distinct sequence numbers NACKed at least once.
    pub nacked_packets: u64,
    /// Packets the NACK generator gave up after its last try (libwebrtc pair only).
    pub give_ups: u64,
    /// Key frames the NACK generator asked for (its list overflowed; libwebrtc pair only).
    pub nack_key_frame_requests: u64,
    /// Of those, the ones sent as a PLI (the media receiver was not already asking).
    pub nack_plis: u64,
    /// The generator's RTT at the end of the call, ms (libwebrtc pair only).
    pub rtt_ms: Option<f64>,
    /// Requests the responder ignored: the packet's retransmission was still in the pacer or
    /// left less than one RTT ago (libwebrtc pair only).
    pub resends_suppressed: u64,
    /// Requests the responder dropped: the packet was no longer in its history (libwebrtc pair
    /// only).
    pub not_in_history: u64,
    /// Requests the responder dropped for its byte budget (libwebrtc pair only).
    pub over_budget: u64,
    /// Repair (FEC) packets the sender sent.
    pub fec_packets_sent: u64,
    /// Repair packets that reached the receiver.
    pub fec_packets_received: u64,
    /// Media packets the receiver rebuilt from repair packets.
    pub fec_recovered: u64,
    /// The repair bytes' share of the video bytes sent (media and repair), %.
    pub fec_share_pct: f64,
}

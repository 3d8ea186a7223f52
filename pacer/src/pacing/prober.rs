//! Probe clusters in the pacer (libwebrtc `modules/pacing/bitrate_prober.{h,cc}`), and the
//! channel through which a congestion controller asks for them.
//!
//! A *probe cluster* is a short burst sent at a chosen rate so that the receive rate seen in
//! transport feedback tells the sender whether the path carries that rate. The congestion
//! controller ([`GoogCc`](crate::GoogCc) and its [`ProbeController`](crate::googcc::probe::ProbeController))
//! posts [`ProbeClusterConfig`]s on a [`ProbeChannel`]; the pacer
//! ([`HandoverAwarePacer`](crate::HandoverAwarePacer)) takes them, sends each cluster with its
//! [`BitrateProber`] (queued media first, padding when media is short), and records which RTP
//! packets belonged to which cluster on the same channel, so the controller can match the
//! feedback reports (`PacketReport` carries the SSRC and RTP sequence number).
//!
//! All of it is sans-I/O: the prober is handed `now`, the channel holds no clock.

use rustc_hash::FxHashMap;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Minimum number of probes (send bursts) per cluster. libwebrtc
/// `goog_cc/probe_controller.cc`, `ProbeControllerConfig::min_probe_packets_sent` (5).
pub(crate) const MIN_PROBE_PACKETS_SENT: u32 = 5;

/// Minimum duration of a cluster. libwebrtc `goog_cc/probe_controller.cc`,
/// `ProbeControllerConfig::min_probe_duration` (15 ms).
pub(crate) const MIN_PROBE_DURATION: Duration = Duration::from_millis(15);

/// The size of one probe burst is the probe rate over twice this. libwebrtc
/// `pacing/bitrate_prober.cc`, `BitrateProberConfig::min_probe_delta` (2 ms), used in
/// `RecommendedMinProbeSize` as `2 * send_rate * min_probe_delta`.
pub(crate) const MIN_PROBE_DELTA: Duration = Duration::from_millis(2);

/// A cluster starts only once a packet at least `min(recommended probe size, this)` bytes has
/// been enqueued. libwebrtc `pacing/bitrate_prober.cc`, `BitrateProberConfig::min_packet_size`
/// (200 bytes).
pub(crate) const MIN_PACKET_SIZE: u64 = 200;

/// A cluster not finished this long after it was created is dropped. libwebrtc
/// `pacing/bitrate_prober.cc`, `kProbeClusterTimeout` (5 s).
pub(crate) const PROBE_CLUSTER_TIMEOUT: Duration = Duration::from_secs(5);

/// At most this many clusters wait; older ones are dropped first. libwebrtc
/// `pacing/bitrate_prober.cc`, `kMaxPendingProbeClusters` (5).
pub(crate) const MAX_PENDING_PROBE_CLUSTERS: usize = 5;

/// The channel forgets which packets were probes after this long: longer than webrtc-rs's
/// 2-s send-history prune horizon (`DEFAULT_PRUNE_HORIZON`), after which no report can name
/// them, and than libwebrtc's 1-s `kMaxClusterHistory` (`probe_bitrate_estimator.cc`).
pub(crate) const PROBE_RECORD_HORIZON: Duration = Duration::from_secs(5);

/// One cluster to send (libwebrtc `ProbeClusterConfig`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbeClusterConfig {
    /// Identifies the cluster in the feedback (`probe_cluster_id`); positive.
    pub id: i32,
    /// The rate to probe at, bits per second.
    pub target_bps: u64,
    /// The shortest time the cluster should last.
    pub target_duration: Duration,
    /// The fewest probes (send bursts) it is made of.
    pub target_probe_count: u32,
}

impl ProbeClusterConfig {
    /// A cluster at `target_bps` with libwebrtc's 15 ms / 5 probes minimum.
    pub fn new(id: i32, target_bps: u64) -> Self {
        Self {
            id,
            target_bps,
            target_duration: MIN_PROBE_DURATION,
            target_probe_count: MIN_PROBE_PACKETS_SENT,
        }
    }

    /// The bytes the cluster must send: `target rate x target duration`
    /// (`BitrateProber::CreateProbeCluster`, `probe_cluster_min_bytes`).
    pub fn min_bytes(&self) -> u64 {
        u64::try_from(
            u128::from(self.target_bps) * self.target_duration.as_nanos() / 8 / 1_000_000_000,
        )
        .unwrap_or(u64::MAX)
    }
}

#[derive(Debug, Clone)]
struct Cluster {
    config: ProbeClusterConfig,
    requested_ns: u64,
    sent_probes: u32,
    sent_bytes: u64,
    started_ns: Option<u64>,
}

/// libwebrtc's `BitrateProber`, on the controller's nanosecond clock.
///
/// Inactive until a cluster exists and a packet of at least [`MIN_PACKET_SIZE`] bytes (or the
/// recommended probe size, if smaller) is enqueued; then active until every cluster has been
/// sent. A *probe* is one send burst of at least [`recommended_probe_size`](Self::recommended_probe_size)
/// bytes; the next is due when the bytes sent so far, at the cluster's rate, have taken their
/// time since the cluster started.
#[derive(Debug, Clone, Default)]
pub(crate) struct BitrateProber {
    clusters: VecDeque<Cluster>,
    active: bool,
    next_probe_ns: u64,
}

impl BitrateProber {
    /// Adds a cluster requested at `now_ns` (dropping timed-out and surplus ones, as
    /// `CreateProbeCluster` does).
    pub(crate) fn create_probe_cluster(&mut self, now_ns: u64, config: ProbeClusterConfig) {
        if config.target_bps == 0 {
            return;
        }
        let timeout = PROBE_CLUSTER_TIMEOUT.as_nanos() as u64;
        while self.clusters.front().is_some_and(|c| {
            now_ns.saturating_sub(c.requested_ns) > timeout
                || self.clusters.len() >= MAX_PENDING_PROBE_CLUSTERS
        }) {
            self.clusters.pop_front();
        }
        self.clusters.push_back(Cluster {
            config,
            requested_ns: now_ns,
            sent_probes: 0,
            sent_bytes: 0,
            started_ns: None,
        });
        if self.clusters.len() == 1 && !self.active {
            self.next_probe_ns = 0;
        }
    }

    /// A packet of `size` bytes was enqueued: the prober may become active
    /// (`OnIncomingPacket`).
    pub(crate) fn on_incoming_packet(&mut self, size: u64) {
        if !self.active
            && !self.clusters.is_empty()
            && size >= self.recommended_probe_size().min(MIN_PACKET_SIZE)
        {
            self.active = true;
            self.next_probe_ns = 0;
        }
    }

    /// Whether a cluster is being sent.
    pub(crate) fn is_probing(&self) -> bool {
        self.active && !self.clusters.is_empty()
    }

    /// The cluster being sent, if any.
    pub(crate) fn current_cluster(&self) -> Option<ProbeClusterConfig> {
        self.is_probing()
            .then(|| self.clusters.front().map(|c| c.config))
            .flatten()
    }

    /// When the next probe is due (ns), if probing.
    pub(crate) fn next_probe_ns(&self) -> Option<u64> {
        self.is_probing().then_some(self.next_probe_ns)
    }

    /// The least a probe burst sends: `2 x rate x min_probe_delta` (`RecommendedMinProbeSize`).
    pub(crate) fn recommended_probe_size(&self) -> u64 {
        self.clusters.front().map_or(0, |c| {
            u64::try_from(
                u128::from(c.config.target_bps) * 2 * MIN_PROBE_DELTA.as_nanos()
                    / 8
                    / 1_000_000_000,
            )
            .unwrap_or(u64::MAX)
        })
    }

    /// A probe burst of `bytes` was sent at `now_ns` (`ProbeSent`): the cluster is done once it
    /// has sent its bytes and probes, and the next probe is due when the bytes sent, at the
    /// cluster's rate, have taken their time.
    pub(crate) fn probe_sent(&mut self, now_ns: u64, bytes: u64) {
        let Some(cluster) = self.clusters.front_mut() else {
            return;
        };
        let started = *cluster.started_ns.get_or_insert(now_ns);
        cluster.sent_bytes += bytes;
        cluster.sent_probes += 1;
        let delta = u128::from(cluster.sent_bytes) * 8 * 1_000_000_000
            / u128::from(cluster.config.target_bps.max(1));
        self.next_probe_ns = started.saturating_add(u64::try_from(delta).unwrap_or(u64::MAX));
        if cluster.sent_bytes >= cluster.config.min_bytes()
            && cluster.sent_probes >= cluster.config.target_probe_count
        {
            self.clusters.pop_front();
            self.next_probe_ns = now_ns;
            if self.clusters.is_empty() {
                self.active = false;
            }
        }
    }

    /// Drops clusters that waited past [`PROBE_CLUSTER_TIMEOUT`] without starting.
    pub(crate) fn drop_stale(&mut self, now_ns: u64) {
        let timeout = PROBE_CLUSTER_TIMEOUT.as_nanos() as u64;
        while self.clusters.front().is_some_and(|c| {
            c.started_ns.is_none() && now_ns.saturating_sub(c.requested_ns) > timeout
        }) {
            self.clusters.pop_front();
        }
        if self.clusters.is_empty() {
            self.active = false;
        }
    }
}

#[derive(Debug, Default)]
struct ChannelState {
    requests: VecDeque<ProbeClusterConfig>,
    sent: FxHashMap<(u32, u16), i32>,
    order: VecDeque<(Instant, (u32, u16))>,
}

/// The shared state between a congestion controller and the pacer: cluster requests one way,
/// which packets were probes the other. Cheap to clone; every clone is the same channel.
///
/// A *probe cluster* is a short burst sent at a chosen rate so that the receive rate seen in
/// transport feedback tells the sender whether the path carries that rate. The controller
/// ([`GoogCc::with_probing`](crate::GoogCc::with_probing)) posts [`ProbeClusterConfig`]s; the
/// pacer ([`HandoverAwarePacerBuilder::probe_channel`](crate::pacing::HandoverAwarePacerBuilder::probe_channel))
/// takes them, sends each cluster (queued media first, padding when media is short) and records
/// which RTP packets belonged to which cluster, so the controller can match the feedback reports
/// by SSRC and RTP sequence number. A bare [`PacingController`](crate::PacingController) is
/// handed clusters through its
/// [`create_probe_cluster`](crate::PacingController::create_probe_cluster) instead.
#[derive(Debug, Clone, Default)]
pub struct ProbeChannel {
    state: Arc<Mutex<ChannelState>>,
}

impl ProbeChannel {
    /// A new, empty channel.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ChannelState> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Asks the pacer to send a cluster (called by the controller).
    pub fn request(&self, cluster: ProbeClusterConfig) {
        self.lock().requests.push_back(cluster);
    }

    /// Takes the clusters asked for since the last call (called by the pacer).
    pub fn take_requests(&self) -> Vec<ProbeClusterConfig> {
        let mut state = self.lock();
        if state.requests.is_empty() {
            return Vec::new();
        }
        state.requests.drain(..).collect()
    }

    /// Records that the packet `(ssrc, sequence_number)` left at `at` as part of cluster
    /// `cluster_id` (called by the pacer), forgetting records older than 5 s, which no feedback
    /// report can name any more.
    pub fn record_probe_packet(
        &self,
        at: Instant,
        ssrc: u32,
        sequence_number: u16,
        cluster_id: i32,
    ) {
        let mut state = self.lock();
        while let Some(&(sent_at, key)) = state.order.front() {
            if at.saturating_duration_since(sent_at) <= PROBE_RECORD_HORIZON {
                break;
            }
            state.order.pop_front();
            state.sent.remove(&key);
        }
        state.sent.insert((ssrc, sequence_number), cluster_id);
        state.order.push_back((at, (ssrc, sequence_number)));
    }

    /// The cluster the packet `(ssrc, sequence_number)` was sent in, if it was a probe; the
    /// record is consumed (called by the controller for each report).
    pub fn take_probe_cluster(&self, ssrc: u32, sequence_number: u16) -> Option<i32> {
        self.lock().sent.remove(&(ssrc, sequence_number))
    }

    /// How many probe packets are recorded and not yet matched.
    pub fn pending_records(&self) -> usize {
        self.lock().sent.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_900k_cluster_needs_1687_bytes_in_five_bursts_of_450() {
        let c = ProbeClusterConfig::new(1, 900_000);
        assert_eq!(1687, c.min_bytes());
        let mut p = BitrateProber::default();
        p.create_probe_cluster(0, c);
        assert!(!p.is_probing(), "waits for a packet");
        p.on_incoming_packet(100);
        assert!(!p.is_probing(), "100 bytes is under min(450, 200)");
        p.on_incoming_packet(1200);
        assert_eq!(Some(c), p.current_cluster());
        assert_eq!(450, p.recommended_probe_size());
        assert_eq!(Some(0), p.next_probe_ns());
        // Five 450-byte bursts: each is due 4 ms (450 B at 900 kbit/s) after the last.
        for k in 0..4u64 {
            p.probe_sent(k * 4_000_000, 450);
            assert_eq!(Some((k + 1) * 4_000_000), p.next_probe_ns(), "burst {k}");
        }
        p.probe_sent(16_000_000, 450);
        assert!(!p.is_probing(), "2250 B >= 1687 B and 5 probes: done");
    }

    #[test]
    fn the_channel_matches_probe_packets_once_and_forgets_old_ones() {
        let ch = ProbeChannel::new();
        let t0 = Instant::now();
        ch.request(ProbeClusterConfig::new(1, 900_000));
        assert_eq!(1, ch.take_requests().len());
        assert!(ch.take_requests().is_empty());
        ch.record_probe_packet(t0, 7, 1, 1);
        ch.record_probe_packet(t0 + Duration::from_secs(1), 7, 2, 2);
        assert_eq!(Some(1), ch.take_probe_cluster(7, 1));
        assert_eq!(None, ch.take_probe_cluster(7, 1));
        ch.record_probe_packet(t0 + Duration::from_secs(7), 7, 3, 3);
        assert_eq!(None, ch.take_probe_cluster(7, 2), "older than 5 s");
        assert_eq!(1, ch.pending_records());
    }
}

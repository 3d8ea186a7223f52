//! The sans-I/O pacing controller: libwebrtc's `PacingController` semantics, generic over the
//! payload.
//!
//! The model (reference 1.3 and 1.4):
//!
//! - **Debt.** Every paced packet adds to a *media debt*, the send time it owes at the
//!   *adjusted rate*. A packet may leave while the debt is below one burst window (40 ms, at most
//!   63 kB at the adjusted rate). Debt is capped at 500 ms, and idle time never turns into
//!   credit.
//! - **Rates.** The pacing rate is the target bitrate x the pacing factor (1.1). The adjusted rate
//!   is the pacing rate, raised by the *drain rule* when the queue could not otherwise empty in
//!   time: with `Q` bytes queued, `avg_time_left = max(1 ms, limit - average queue time)`,
//!   `adjusted = max(pacing, Q / avg_time_left)`, recomputed on every enqueue, after every send,
//!   and on every rate or limit change.
//! - **Priorities.** Audio, then retransmissions, then video and FEC, then padding; round-robin
//!   over SSRCs within a level. Audio is unpaced by default: it leaves at its enqueue instant and
//!   is not charged to the debt.
//!
//! Two deliberate differences from libwebrtc. First, its `NextSendTime` sleeps until the debt is
//! fully repaid once it exceeds the burst window, but any call in between (and
//! `TaskQueuePacedSender` makes one on every enqueue) drains the debt to that instant and lets the
//! next packet go at once; its real schedule depends on how often it is poked. Here a packet may
//! leave as soon as the debt falls below the window, so the schedule is a function of the
//! instants handed in alone, whoever polls and however often: one burst window, then the rate.
//!
//! Second, libwebrtc keeps the debt in bytes and repays it at
//! whatever the adjusted rate is *later*, we keep it as the send time each packet owed at the rate
//! it left at. The two agree while the rate is constant. They part when the drain rate collapses
//! right after a burst: at the end of a drain the last burst goes out at hundreds of Mbit/s and
//! the queue, now nearly empty, needs only a few Mbit/s, so byte debt makes the final packet wait
//! out the whole burst at the low rate. Measured on 1 MB at 1 Mbit/s with a 500-ms limit, an
//! early byte-debt version of this controller released the last packet at 558 ms; this one does
//! at 499 ms (the test `one_megabyte_at_one_megabit_leaves_by_the_queue_time_limit...` holds it
//! within 5% of the limit).
//!
//! All arithmetic is integer (nanoseconds, bits per second), so a schedule is exact and identical
//! on every platform.
//!
//! **Holds** (docs/architecture.md, "Handover-timed actions"). Inside a hold window the video,
//! FEC and padding level waits and nothing is sent as a probe; audio, retransmissions and
//! keep-alives are not held. Held packets stay in the queue, so their waiting counts toward the
//! average queue time as any other wait does, and at the window's end they leave through the
//! same rule as everything else: the debt repaid while nothing paced left, one burst window, then
//! the pacing rate or the drain rate the limit needs.

use super::config::{PacingConfig, clamp_queue_time_limit};
use super::packet::{FIRST_HELD_LEVEL, PacketKind};
use super::prober::{BitrateProber, ProbeClusterConfig};
use super::queue::{PrioritizedQueue, QueuedPacket};
use super::stats::PacerStats;
use std::time::{Duration, Instant};

const NANOS_PER_SEC: u128 = 1_000_000_000;

/// Elapsed time credited per update is clamped to this: libwebrtc's `kMaxElapsedTime`
/// (reference 1.2).
const MAX_ELAPSED: Duration = Duration::from_secs(2);

/// The drain rule never plans on less than this much time left: `max(1 ms, ...)` in
/// `MaybeUpdateMediaRateDueToLongQueue` (reference 1.4).
const MIN_TIME_LEFT: Duration = Duration::from_millis(1);

/// A packet the pacer has let go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Released<T> {
    /// What was enqueued.
    pub payload: T,
    /// The stream it belongs to.
    pub ssrc: u32,
    /// Its kind.
    pub kind: PacketKind,
    /// Its size as enqueued.
    pub size_bytes: u64,
    /// When it was enqueued.
    pub enqueued_at: Instant,
    /// When it was released: the `now` of the call that released it.
    pub released_at: Instant,
    /// The probe cluster it was sent in, if any.
    pub probe_cluster: Option<i32>,
}

/// What the packetizer knows about a video packet's frame, for key-frame flushing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FrameInfo {
    /// The packet belongs to a key frame.
    pub key_frame: bool,
    /// The packet is its frame's first.
    pub first_packet_of_frame: bool,
}

/// A keep-alive the pacer asks to be sent while congested: libwebrtc sends 1 byte of padding
/// every `kCongestedPacketInterval` (500 ms) while congested, once a media packet has been sent
/// (`PacingController::ShouldSendKeepalive`, reference 1.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeepAlive {
    /// The padding size asked for, bytes (1).
    pub size_bytes: u64,
    /// When it was released: the `now` of the call that released it.
    pub released_at: Instant,
}

/// A padding packet the pacer asks to be sent (only while a probe cluster is short of media).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Padding {
    /// The size it should have on the wire, bytes.
    pub size_bytes: u64,
    /// The probe cluster it belongs to.
    pub probe_cluster: i32,
    /// When it was released: the `now` of the call that released it.
    pub released_at: Instant,
}

impl<T> Released<T> {
    /// How long the packet waited in the pacer.
    pub fn queue_time(&self) -> Duration {
        self.released_at.duration_since(self.enqueued_at)
    }
}

/// A libwebrtc-style pacer that never reads a clock.
///
/// Drive it with [`enqueue`](Self::enqueue), [`poll_send`](Self::poll_send) and
/// [`next_send_time`](Self::next_send_time): after a call `poll_send(now)` that returns `None`,
/// the next call worth making is at `next_send_time()`. Instants handed in that go backwards are
/// treated as the latest instant seen.
#[derive(Debug)]
pub struct PacingController<T> {
    config: PacingConfig,
    epoch: Instant,
    queue: PrioritizedQueue<T>,
    queue_time_limit: Duration,
    target_bps: u64,
    pacing_bps: u64,
    adjusted_bps: u64,
    /// Media debt: send time owed, in ns.
    debt_ns: u64,
    /// The instant (ns since `epoch`) the debt was last brought up to date.
    last_process_ns: u64,
    /// The latest instant handed in.
    last_now_ns: u64,
    /// `epoch + last_now_ns`.
    last_now_at: Instant,
    packets_sent: u64,
    bytes_sent: u64,
    drain_boost_ns: u64,
    prober: BitrateProber,
    /// Bytes sent so far in the current probe burst.
    probe_burst_bytes: u64,
    /// Whether a media packet has left (padding waits for one, as in libwebrtc).
    media_sent: bool,
    /// `SetCongested`: only unpaced audio, probes and keep-alives leave.
    congested: bool,
    /// Congested time before `congested_since_ns`, ns.
    congested_ns: u64,
    /// When the current congestion began, ns.
    congested_since_ns: Option<u64>,
    /// The last instant anything left (media, padding or keep-alive), ns.
    last_send_ns: Option<u64>,
    keepalives_sent: u64,
    packets_flushed: u64,
    /// Hold windows `[start, end)` in ns, sorted, disjoint and not touching; none ends at or
    /// before `last_now_ns`.
    holds: Vec<(u64, u64)>,
}

impl<T> PacingController<T> {
    /// A pacer starting at `now` with the configuration's initial target bitrate.
    pub fn new(config: PacingConfig, now: Instant) -> Self {
        let mut controller = Self {
            queue_time_limit: clamp_queue_time_limit(config.queue_time_limit),
            epoch: now,
            queue: PrioritizedQueue::new(),
            target_bps: 0,
            pacing_bps: 0,
            adjusted_bps: 0,
            debt_ns: 0,
            last_process_ns: 0,
            last_now_ns: 0,
            last_now_at: now,
            packets_sent: 0,
            bytes_sent: 0,
            drain_boost_ns: 0,
            prober: BitrateProber::default(),
            probe_burst_bytes: 0,
            media_sent: false,
            congested: false,
            congested_ns: 0,
            congested_since_ns: None,
            last_send_ns: None,
            keepalives_sent: 0,
            packets_flushed: 0,
            holds: Vec::new(),
            config,
        };
        controller.set_target_bitrate(now, controller.config.initial_target_bitrate_bps);
        controller
    }

    /// The configuration the pacer was built with (its `queue_time_limit` is the initial one).
    pub fn config(&self) -> &PacingConfig {
        &self.config
    }

    /// Queues a packet of `size_bytes` on stream `ssrc`.
    pub fn enqueue(
        &mut self,
        now: Instant,
        ssrc: u32,
        kind: PacketKind,
        size_bytes: u64,
        payload: T,
    ) {
        self.enqueue_frame_packet(
            now,
            ssrc,
            kind,
            size_bytes,
            payload,
            FrameInfo::default(),
            None,
        );
    }

    /// Queues a video packet whose frame is known; returns the payloads flushed to make way for
    /// it.
    ///
    /// With [`PacingConfig::keyframe_flush`], the first packet of a key frame, when no key-frame
    /// packet of its stream is queued, first removes every queued packet of `ssrc` and of its
    /// `rtx_ssrc` (modern libwebrtc `PacingController::EnqueuePacket` with
    /// `WebRTC-Pacer-KeyframeFlushing`, reference 1.5); they are counted in
    /// [`PacerStats::packets_flushed`].
    #[allow(clippy::too_many_arguments)]
    pub fn enqueue_frame_packet(
        &mut self,
        now: Instant,
        ssrc: u32,
        kind: PacketKind,
        size_bytes: u64,
        payload: T,
        frame: FrameInfo,
        rtx_ssrc: Option<u32>,
    ) -> Vec<T> {
        let now_ns = self.advance(now);
        let mut flushed = Vec::new();
        if self.config.keyframe_flush
            && kind == PacketKind::Video
            && frame.key_frame
            && frame.first_packet_of_frame
            && !self.queue.has_key_frame_packets(ssrc)
        {
            for stream in std::iter::once(ssrc).chain(rtx_ssrc) {
                flushed.extend(
                    self.queue
                        .remove_ssrc(stream)
                        .into_iter()
                        .map(|p| p.payload),
                );
            }
            self.packets_flushed += flushed.len() as u64;
        }
        let active_ns = self.active_ns(now_ns);
        self.queue.push(QueuedPacket {
            ssrc,
            kind,
            size: size_bytes,
            enqueued_ns: now_ns,
            active_ns,
            key_frame: frame.key_frame,
            enqueued_at: self.last_now_at,
            payload,
        });
        self.prober.on_incoming_packet(size_bytes);
        self.update_adjusted_rate(now_ns);
        flushed
    }

    /// `SetCongested`: while congested, nothing but unpaced audio, probes and a keep-alive every
    /// 500 ms leaves, and the time does not count toward the average queue time the drain rule
    /// uses (reference 1.3).
    pub fn set_congested(&mut self, now: Instant, congested: bool) {
        let now_ns = self.advance(now);
        if congested == self.congested {
            return;
        }
        if congested {
            self.congested_since_ns = Some(now_ns);
        } else if let Some(since) = self.congested_since_ns.take() {
            self.congested_ns += now_ns.saturating_sub(since);
        }
        self.congested = congested;
        self.update_adjusted_rate(now_ns);
    }

    /// Whether the pacer is congested.
    pub fn is_congested(&self) -> bool {
        self.congested
    }

    /// Time spent congested up to `now_ns`.
    fn congested_ns_at(&self, now_ns: u64) -> u64 {
        self.congested_ns
            + self
                .congested_since_ns
                .map_or(0, |since| now_ns.saturating_sub(since))
    }

    /// `now_ns` on the active clock (congested time removed).
    fn active_ns(&self, now_ns: u64) -> u64 {
        now_ns.saturating_sub(self.congested_ns_at(now_ns))
    }

    /// When the next keep-alive is due while congested: 500 ms after the last send, once media
    /// has been sent and if padding can be sent at all.
    fn keepalive_due_ns(&self) -> Option<u64> {
        if !self.congested || !self.media_sent || self.config.padding_ssrc.is_none() {
            return None;
        }
        let interval = crate::cwnd::CONGESTED_PACKET_INTERVAL.as_nanos() as u64;
        Some(self.last_send_ns.unwrap_or(0).saturating_add(interval))
    }

    /// A keep-alive if one is due at `now` (see [`KeepAlive`]); call after
    /// [`poll_send`](Self::poll_send) returned `None`.
    pub fn poll_keepalive(&mut self, now: Instant) -> Option<KeepAlive> {
        let now_ns = self.advance(now);
        if now_ns < self.keepalive_due_ns()? {
            return None;
        }
        let size = 1;
        self.charge_debt(size);
        self.last_send_ns = Some(now_ns);
        self.keepalives_sent += 1;
        Some(KeepAlive {
            size_bytes: size,
            released_at: self.last_now_at,
        })
    }

    /// Adds a probe cluster (libwebrtc `PacingController::CreateProbeClusters`). It starts once
    /// a packet of at least 200 bytes is queued; while it runs, queued media leaves at the probe
    /// rate regardless of the media debt, and, when the queue is empty and the configuration
    /// allows padding, [`poll_padding`](Self::poll_padding) fills the probe.
    pub fn create_probe_cluster(&mut self, now: Instant, cluster: ProbeClusterConfig) {
        let now_ns = self.advance(now);
        self.prober.create_probe_cluster(now_ns, cluster);
    }

    /// Whether a probe cluster is being sent.
    pub fn is_probing(&self) -> bool {
        self.prober.is_probing()
    }

    /// Whether padding may fill a probe now: allowed by the configuration, nothing queued, and
    /// at least one media packet already sent.
    fn may_pad(&self) -> bool {
        self.config.padding_ssrc.is_some() && self.queue.is_empty() && self.media_sent
    }

    /// When the current probe burst is due, if a cluster is running and has something to send.
    fn probe_due_ns(&self) -> Option<u64> {
        let next = self.prober.next_probe_ns()?;
        if self.queue.is_empty() && !self.may_pad() {
            return None;
        }
        Some(if self.probe_burst_bytes > 0 {
            self.last_now_ns
        } else {
            next
        })
    }

    /// Accounts `bytes` sent in the current probe burst at `now_ns`; returns the cluster id.
    fn on_probe_bytes(&mut self, now_ns: u64, bytes: u64) -> Option<i32> {
        let id = self.prober.current_cluster()?.id;
        self.probe_burst_bytes += bytes;
        if self.probe_burst_bytes >= self.prober.recommended_probe_size() {
            self.prober.probe_sent(now_ns, self.probe_burst_bytes);
            self.probe_burst_bytes = 0;
        }
        Some(id)
    }

    /// Charges `size` bytes of paced traffic to the media debt at the adjusted rate.
    fn charge_debt(&mut self, size: u64) {
        let owed = match size.checked_mul(8_000_000_000) {
            Some(bits_ns) => u128::from(bits_ns.div_ceil(self.adjusted_bps.max(1))),
            None => (u128::from(size) * 8 * NANOS_PER_SEC)
                .div_ceil(u128::from(self.adjusted_bps.max(1))),
        };
        let max_debt = u64::try_from(self.config.max_debt.as_nanos()).unwrap_or(u64::MAX);
        self.debt_ns = u64::try_from(owed)
            .unwrap_or(u64::MAX)
            .saturating_add(self.debt_ns)
            .min(max_debt);
    }

    /// A padding packet to fill the running probe cluster, if one is due at `now` and the queue
    /// is empty (libwebrtc `PaddingToAdd` with a recommended probe size). Call after
    /// [`poll_send`](Self::poll_send) returned `None`; repeat until this returns `None` too.
    /// Padding is charged to the media debt as libwebrtc does, and is not counted in the stats'
    /// packets and bytes sent (which count media).
    pub fn poll_padding(&mut self, now: Instant) -> Option<Padding> {
        let now_ns = self.advance(now);
        self.prober.drop_stale(now_ns);
        if !self.may_pad() || self.hold_end_ns(now_ns).is_some() || now_ns < self.probe_due_ns()? {
            return None;
        }
        let recommended = self.prober.recommended_probe_size();
        let size = recommended
            .saturating_sub(self.probe_burst_bytes)
            .clamp(1, self.config.max_padding_packet_bytes.max(1));
        self.charge_debt(size);
        self.last_send_ns = Some(now_ns);
        let probe_cluster = self.on_probe_bytes(now_ns, size)?;
        Some(Padding {
            size_bytes: size,
            probe_cluster,
            released_at: self.last_now_at,
        })
    }

    /// Follows a new target bitrate: the pacing rate becomes `bps` x the pacing factor.
    pub fn set_target_bitrate(&mut self, now: Instant, bps: u64) {
        let now_ns = self.advance(now);
        self.target_bps = bps;
        self.pacing_bps = self.config.pacing_rate(bps);
        self.update_adjusted_rate(now_ns);
    }

    /// Sets the queue time limit, clamped to [50 ms, 10 s]; returns the limit now in force.
    ///
    /// The drain rate is recomputed at once, so the remaining schedule of waiting packets changes
    /// immediately.
    pub fn set_queue_time_limit(&mut self, now: Instant, limit: Duration) -> Duration {
        let now_ns = self.advance(now);
        self.queue_time_limit = clamp_queue_time_limit(limit);
        self.update_adjusted_rate(now_ns);
        self.queue_time_limit
    }

    /// The queue time limit in force.
    pub fn queue_time_limit(&self) -> Duration {
        self.queue_time_limit
    }

    /// Replaces the hold windows: inside each `[start, end)` video, FEC and padding wait and no
    /// probe is sent (docs/architecture.md, "Handover-timed actions"); at its end they leave
    /// through the normal drain rule. Empty windows and windows already over are ignored;
    /// overlapping or touching ones merge. Audio, retransmissions and keep-alives are never
    /// held.
    ///
    /// ```
    /// use pacer::{PacingConfig, PacingController, PacketKind};
    /// use std::time::{Duration, Instant};
    ///
    /// let start = Instant::now();
    /// let ms = |n| Duration::from_millis(n);
    /// let mut pacer = PacingController::new(PacingConfig::default(), start);
    /// pacer.set_hold_windows(start, [(start + ms(10), start + ms(110))]);
    /// pacer.enqueue(start + ms(20), 1, PacketKind::Video, 1200, "video");
    /// pacer.enqueue(start + ms(20), 2, PacketKind::Retransmission, 1200, "resent");
    /// assert_eq!(pacer.poll_send(start + ms(20)).unwrap().payload, "resent");
    /// assert!(pacer.poll_send(start + ms(20)).is_none());
    /// assert_eq!(pacer.next_send_time(), Some(start + ms(110)));
    /// assert_eq!(pacer.poll_send(start + ms(110)).unwrap().payload, "video");
    /// ```
    pub fn set_hold_windows(
        &mut self,
        now: Instant,
        windows: impl IntoIterator<Item = (Instant, Instant)>,
    ) {
        let now_ns = self.advance(now);
        let mut holds: Vec<(u64, u64)> = windows
            .into_iter()
            .map(|(start, end)| (self.ns(start), self.ns(end)))
            .filter(|&(start, end)| end > start && end > now_ns)
            .collect();
        holds.sort_unstable();
        let mut merged: Vec<(u64, u64)> = Vec::with_capacity(holds.len());
        for (start, end) in holds {
            match merged.last_mut() {
                Some(last) if start <= last.1 => last.1 = last.1.max(end),
                _ => merged.push((start, end)),
            }
        }
        self.holds = merged;
    }

    /// Whether media is held at `now`.
    pub fn is_holding(&self, now: Instant) -> bool {
        self.hold_end_ns(self.ns(now)).is_some()
    }

    /// The end of the hold window containing `at_ns`, if any.
    fn hold_end_ns(&self, at_ns: u64) -> Option<u64> {
        self.holds
            .iter()
            .find(|&&(start, end)| start <= at_ns && at_ns < end)
            .map(|&(_, end)| end)
    }

    /// Whether a packet of a level no hold keeps is queued (audio or a retransmission).
    fn has_unheld(&self) -> bool {
        self.queue.has_priority_of(PacketKind::Audio)
            || self.queue.has_priority_of(PacketKind::Retransmission)
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// When the next packet may leave, or `None` when nothing can (empty queue, or a zero rate
    /// with draining disabled).
    ///
    /// Never at or before the latest instant handed in: a caller that polls exactly when told
    /// cannot spin (webrtc#862 was a busy loop from a deadline in the past).
    pub fn next_send_time(&self) -> Option<Instant> {
        let earliest = self.last_now_ns.saturating_add(1);
        let mut due_ns = self.unheld_due_ns()?.max(earliest);
        // Inside a hold only audio, retransmissions and keep-alives leave; the rest waits for
        // the window's end, when the schedule above (debt, probes) is due already.
        if let Some(end) = self.hold_end_ns(due_ns)
            && !self.has_unpaced_audio()
        {
            due_ns = if self.congested {
                self.keepalive_due_ns().map_or(end, |due| due.min(end))
            } else if self.has_unheld() {
                self.paced_due_ns()?
            } else {
                end
            }
            .max(earliest);
        }
        Some(self.instant(due_ns))
    }

    /// When the next packet may leave, ignoring holds, in ns (possibly not after the latest
    /// instant).
    fn unheld_due_ns(&self) -> Option<u64> {
        if let Some(probe_ns) = self.probe_due_ns() {
            return Some(if self.has_unpaced_audio() {
                self.last_now_ns
            } else {
                probe_ns
            });
        }
        let due_ns = if self.has_unpaced_audio() {
            self.last_now_ns
        } else if self.congested {
            self.keepalive_due_ns()?
        } else if self.queue.is_empty() {
            return None;
        } else {
            self.paced_due_ns()?
        };
        Some(due_ns)
    }

    /// Releases the next packet if it may leave at `now`.
    ///
    /// Call repeatedly until it returns `None`; each released packet carries `now` as its release
    /// instant.
    pub fn poll_send(&mut self, now: Instant) -> Option<Released<T>> {
        let now_ns = self.advance(now);
        if self.queue.is_empty() {
            return None;
        }
        let unpaced = self.has_unpaced_audio();
        let held = self.hold_end_ns(now_ns).is_some();
        if held && !self.has_unheld() {
            return None;
        }
        self.prober.drop_stale(now_ns);
        // No probe inside a hold: the probe would measure the handover, not the path.
        let probing = !unpaced && !held && self.prober.is_probing();
        if probing {
            // While probing the debt is ignored: media leaves on the probe schedule.
            if self.probe_due_ns().is_none_or(|due| now_ns < due) {
                return None;
            }
        } else if !unpaced && (self.congested || self.paced_due_ns().is_none_or(|due| now_ns < due))
        {
            return None;
        }
        self.update_adjusted_rate(now_ns);
        let packet = if held {
            self.queue.pop_before_level(FIRST_HELD_LEVEL)?
        } else {
            self.queue.pop()?
        };
        let mut probe_cluster = None;
        if !unpaced {
            self.charge_debt(packet.size);
            if probing {
                probe_cluster = self.on_probe_bytes(now_ns, packet.size);
            }
        }
        self.media_sent = true;
        self.last_send_ns = Some(now_ns);
        self.packets_sent += 1;
        self.bytes_sent += packet.size;
        self.update_adjusted_rate(now_ns);
        Some(Released {
            payload: packet.payload,
            ssrc: packet.ssrc,
            kind: packet.kind,
            size_bytes: packet.size,
            enqueued_at: packet.enqueued_at,
            released_at: self.last_now_at,
            probe_cluster,
        })
    }

    /// The pacer's state as of `now` (which is not recorded as handed in).
    pub fn stats(&self, now: Instant) -> PacerStats {
        let now_ns = self.ns(now).max(self.last_now_ns);
        let queued_bytes = self.queue.bytes();
        let adjusted_bps = self.drain_rate_at(now_ns);
        let expected_queue_time = if queued_bytes == 0 {
            Duration::ZERO
        } else if adjusted_bps == 0 {
            Duration::MAX
        } else {
            nanos(u128::from(queued_bytes) * 8 * NANOS_PER_SEC / u128::from(adjusted_bps))
        };
        let age = |enqueued_ns: Option<u64>| {
            enqueued_ns.map_or(Duration::ZERO, |t| {
                Duration::from_nanos(now_ns.saturating_sub(t))
            })
        };
        PacerStats {
            at: Some(self.instant(now_ns)),
            queued_packets: self.queue.packets(),
            queued_bytes,
            oldest_queue_time: age(self.queue.oldest_enqueued_ns()),
            average_queue_time: self
                .queue
                .mean_enqueued_ns()
                .map_or(Duration::ZERO, |mean| {
                    Duration::from_nanos(self.active_ns(now_ns).saturating_sub(mean))
                }),
            expected_queue_time,
            target_bitrate_bps: self.target_bps,
            pacing_rate_bps: self.pacing_bps,
            adjusted_rate_bps: adjusted_bps,
            queue_time_limit: self.queue_time_limit,
            encoder_should_pause: expected_queue_time > self.config.encoder_pause_threshold,
            packets_sent: self.packets_sent,
            bytes_sent: self.bytes_sent,
            drain_boost_time: Duration::from_nanos(self.drain_boost_ns),
            congested: self.congested,
            congested_time: Duration::from_nanos(self.congested_ns_at(now_ns)),
            keepalives_sent: self.keepalives_sent,
            packets_flushed: self.packets_flushed,
        }
    }

    fn has_unpaced_audio(&self) -> bool {
        !self.config.pace_audio && self.queue.has_priority_of(PacketKind::Audio)
    }

    /// Brings the debt up to `now` and records `now` as handed in; returns it in ns.
    fn advance(&mut self, now: Instant) -> u64 {
        if now > self.last_now_at {
            self.last_now_ns = self.ns(now);
            self.last_now_at = now;
        }
        let now_ns = self.last_now_ns;
        if now_ns > self.last_process_ns {
            let elapsed = now_ns - self.last_process_ns;
            if self.adjusted_bps > self.pacing_bps && !self.congested {
                self.drain_boost_ns += elapsed;
            }
            let credited = elapsed.min(MAX_ELAPSED.as_nanos() as u64);
            self.debt_ns = self.debt_ns.saturating_sub(credited);
            self.last_process_ns = now_ns;
        }
        if self.holds.first().is_some_and(|&(_, end)| end <= now_ns) {
            self.holds.retain(|&(_, end)| end > now_ns);
        }
        now_ns
    }

    /// libwebrtc's `MaybeUpdateMediaRateDueToLongQueue`.
    fn update_adjusted_rate(&mut self, now_ns: u64) {
        self.adjusted_bps = self.drain_rate_at(now_ns);
    }

    /// The adjusted rate the drain rule gives at `now_ns`.
    fn drain_rate_at(&self, now_ns: u64) -> u64 {
        let queued = self.queue.bytes();
        if !self.config.drain_large_queues || queued == 0 {
            return self.pacing_bps;
        }
        let average_ns = self
            .queue
            .mean_enqueued_ns()
            .map_or(0, |mean| self.active_ns(now_ns).saturating_sub(mean));
        let limit_ns = self.queue_time_limit.as_nanos() as u64;
        let left_ns = limit_ns
            .saturating_sub(average_ns)
            .max(MIN_TIME_LEFT.as_nanos() as u64);
        let needed = match queued.checked_mul(8_000_000_000) {
            Some(bits_ns) => u128::from(bits_ns.div_ceil(left_ns)),
            None => (u128::from(queued) * 8 * NANOS_PER_SEC).div_ceil(u128::from(left_ns)),
        };
        self.pacing_bps
            .max(u64::try_from(needed).unwrap_or(u64::MAX))
    }

    /// When the next paced packet may leave, in ns: now while the debt is zero or below one
    /// burst window, else the first instant it is (with no window, when it is repaid). `None` at
    /// a zero rate.
    fn paced_due_ns(&self) -> Option<u64> {
        if self.adjusted_bps == 0 {
            return None;
        }
        let window = self.burst_window_ns();
        let wait = match self.debt_ns {
            0 => 0,
            debt if debt < window => 0,
            debt if window == 0 => debt,
            debt => debt - window + 1,
        };
        Some(self.last_process_ns.saturating_add(wait))
    }

    /// The burst window: `min(burst_interval, max_burst_bytes / adjusted rate)`, in ns.
    fn burst_window_ns(&self) -> u64 {
        let interval = self.config.burst_interval.as_nanos();
        let rate = u128::from(self.adjusted_bps.max(1));
        let by_size = match self.config.max_burst_bytes.checked_mul(8_000_000_000) {
            Some(bits_ns) => u128::from(bits_ns / self.adjusted_bps.max(1)),
            None => u128::from(self.config.max_burst_bytes) * 8 * NANOS_PER_SEC / rate,
        };
        u64::try_from(interval.min(by_size)).unwrap_or(u64::MAX)
    }

    fn ns(&self, t: Instant) -> u64 {
        u64::try_from(t.saturating_duration_since(self.epoch).as_nanos()).unwrap_or(u64::MAX)
    }

    fn instant(&self, ns: u64) -> Instant {
        self.epoch + Duration::from_nanos(ns)
    }
}

fn nanos(n: u128) -> Duration {
    Duration::from_nanos(u64::try_from(n).unwrap_or(u64::MAX))
}

//! The in-process UDP relay that puts a scenario's links between the two peers, in real time.
//!
//! # How the ICE path is made to go through it
//!
//! The relay has two UDP sockets on the caller's loopback (or on `--relay-ip`): **A** faces the
//! caller, **B** faces the answerer. Both peers gather host candidates only (mDNS off, no STUN,
//! one socket each), and the caller uses non-trickle ICE: it waits for gathering to complete so
//! that every candidate is in the SDP. Then
//!
//! 1. the caller rewrites the candidates of its offer to B's address before it POSTs it, so the
//!    answerer believes the caller lives at B;
//! 2. it rewrites the candidates of the answer it gets back to A's address before
//!    `set_remote_description`, so it believes the answerer lives at A;
//! 3. the relay forwards what arrives at A (from the caller) out of B to the answerer's real
//!    candidate, through the **forward** link, and what arrives at B (from the answerer) out of
//!    A to the caller's real address, through the **reverse** link.
//!
//! Each peer's only remote candidate is a relay socket, and each sees its peer's traffic come
//! from exactly that socket (no peer-reflexive candidates), so every datagram of the call in both
//! directions crosses the relay: STUN checks and consent refreshes, DTLS, SRTP and SRTCP alike
//! (the handshake and the RTT of the checks see the emulated path, as on a real one). The
//! caller's address comes from its own offer (before rewriting); the answerer's from the answer.
//! [`signal::rewrite_candidates`](super::signal::rewrite_candidates) does the rewriting.
//!
//! # Scheduling
//!
//! [`LinkScheduler`] is sans-I/O: it takes `now`, asks the link model ([`InstantLink`]) when a
//! datagram of that size leaves the link (or whether it is dropped), holds it until then and
//! says when the next one is due. The relay task only reads the sockets, reads the clock and
//! sleeps until the next deadline. A datagram's size for the link is its UDP payload (SRTP and
//! RTP headers included, IP/UDP headers not), as the simulator counts a packet's marshalled size.

use super::LiveError;
use crate::call::streams::{VIDEO_RTX_SSRC, VIDEO_SSRC};
use crate::link::{InstantLink, Link, Verdict};
use std::collections::{BTreeMap, HashSet};
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tokio::net::UdpSocket;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// Largest datagram the relay reads (a UDP datagram's maximum; webrtc-rs sends under 1500 B).
const MAX_DATAGRAM: usize = 65_535;

/// Counters of one direction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DirectionStats {
    /// Datagrams offered to the link.
    pub offered: u64,
    /// Datagrams delivered (sent out of the far socket).
    pub delivered: u64,
    /// Bytes delivered.
    pub delivered_bytes: u64,
    /// Datagrams the link dropped (buffer overflow, loss, outage).
    pub dropped: u64,
    /// Datagrams that could not be sent out of the far socket.
    pub send_errors: u64,
    /// First transmissions of video RTP packets ([`VIDEO_SSRC`], a sequence number not seen
    /// before) offered to the link: the media packets sent. The RTP header of an SRTP packet is
    /// in the clear, so the relay reads its SSRC and sequence number.
    pub video_packets: u64,
    /// Of those, dropped by the link: the media packets lost on the link (as the simulator's
    /// `RecoveryCounts::media_packets_lost` counts them).
    pub video_lost: u64,
    /// Retransmissions offered to the link: packets on the RTX SSRC ([`VIDEO_RTX_SSRC`]), and
    /// video packets whose sequence number was already seen (webrtc-rs's stock responder resends
    /// on the media SSRC).
    pub retransmissions: u64,
    /// Of those, dropped by the link.
    pub retransmissions_lost: u64,
    /// The one-way delay through the link (queueing included) of the latest datagram it
    /// accepted, µs: half of what an RTCP report's round trip would carry.
    pub last_delay_us: u64,
}

/// Both directions' counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RelayStats {
    /// Caller -> answerer.
    pub forward: DirectionStats,
    /// Answerer -> caller.
    pub reverse: DirectionStats,
}

/// One direction's sans-I/O schedule: datagrams in, datagrams out when the link delivers them.
#[derive(Debug)]
pub struct LinkScheduler {
    link: InstantLink,
    /// Held datagrams by (delivery instant, arrival order).
    held: BTreeMap<(Instant, u64), Vec<u8>>,
    next_id: u64,
    stats: DirectionStats,
    /// Video sequence numbers seen, extended past wrap-around.
    video_seen: HashSet<u64>,
    /// The latest extended video sequence number.
    video_last: Option<u64>,
}

/// What an RTP datagram is, for the recovery counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RtpKind {
    /// A video packet's first transmission.
    Media,
    /// A retransmission (RTX, or a video sequence number seen before).
    Retransmission,
}

/// The SSRC and sequence number of an RTP (or SRTP) datagram; `None` for STUN, DTLS and RTCP
/// (RFC 7983 demultiplexing by the first byte, RFC 5761 by the payload type).
pub(crate) fn rtp_header(datagram: &[u8]) -> Option<(u32, u16)> {
    if datagram.len() < 12 || !(128..=191).contains(&datagram[0]) {
        return None;
    }
    if (192..=223).contains(&datagram[1]) {
        return None;
    }
    let sequence = u16::from_be_bytes([datagram[2], datagram[3]]);
    let ssrc = u32::from_be_bytes([datagram[8], datagram[9], datagram[10], datagram[11]]);
    Some((ssrc, sequence))
}

/// `sequence` extended to 64 bits, nearest to `last`.
fn extend_sequence(last: Option<u64>, sequence: u16) -> u64 {
    let Some(last) = last else {
        return u64::from(sequence) + (1 << 16);
    };
    let base = last & !0xFFFF;
    [base.saturating_sub(1 << 16), base, base + (1 << 16)]
        .into_iter()
        .map(|b| b + u64::from(sequence))
        .min_by_key(|c| c.abs_diff(last))
        .unwrap_or(last)
}

impl LinkScheduler {
    /// A scheduler over `link`, whose time zero is `epoch`.
    pub fn new(link: Link, epoch: Instant) -> Self {
        Self {
            link: InstantLink::new(link, epoch),
            held: BTreeMap::new(),
            next_id: 0,
            stats: DirectionStats::default(),
            video_seen: HashSet::new(),
            video_last: None,
        }
    }

    fn classify(&mut self, datagram: &[u8]) -> Option<RtpKind> {
        let (ssrc, sequence) = rtp_header(datagram)?;
        if ssrc == VIDEO_RTX_SSRC {
            return Some(RtpKind::Retransmission);
        }
        if ssrc != VIDEO_SSRC {
            return None;
        }
        let extended = extend_sequence(self.video_last, sequence);
        self.video_last = Some(self.video_last.map_or(extended, |l| l.max(extended)));
        Some(if self.video_seen.insert(extended) {
            RtpKind::Media
        } else {
            RtpKind::Retransmission
        })
    }

    /// Offers `datagram`, received at `now`, to the link. Instants must not go backwards
    /// (the link model's contract); an earlier `now` counts as the latest one seen.
    pub fn push(&mut self, now: Instant, datagram: Vec<u8>) -> Verdict<Instant> {
        self.stats.offered += 1;
        let size = u32::try_from(datagram.len()).unwrap_or(u32::MAX);
        let kind = self.classify(&datagram);
        let verdict = self.link.send(now, size);
        let dropped = matches!(verdict, Verdict::Dropped { .. });
        match kind {
            Some(RtpKind::Media) => {
                self.stats.video_packets += 1;
                self.stats.video_lost += u64::from(dropped);
            }
            Some(RtpKind::Retransmission) => {
                self.stats.retransmissions += 1;
                self.stats.retransmissions_lost += u64::from(dropped);
            }
            None => {}
        }
        match verdict {
            Verdict::Delivered { at } => {
                self.stats.last_delay_us =
                    u64::try_from(at.saturating_duration_since(now).as_micros())
                        .unwrap_or(u64::MAX);
                self.next_id += 1;
                self.held.insert((at, self.next_id), datagram);
            }
            Verdict::Dropped { .. } => self.stats.dropped += 1,
        }
        verdict
    }

    /// When the next held datagram is due, if any.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.held.keys().next().map(|k| k.0)
    }

    /// The next datagram due at or before `now`, in delivery order.
    pub fn pop_due(&mut self, now: Instant) -> Option<Vec<u8>> {
        let entry = self.held.first_entry()?;
        if entry.key().0 > now {
            return None;
        }
        let datagram = entry.remove();
        self.stats.delivered += 1;
        self.stats.delivered_bytes += datagram.len() as u64;
        Some(datagram)
    }

    /// Datagrams held now.
    pub fn held(&self) -> usize {
        self.held.len()
    }

    /// The counters.
    pub fn stats(&self) -> DirectionStats {
        self.stats
    }

    /// The link model (for its statistics).
    pub fn link(&self) -> &Link {
        self.link.link()
    }
}

/// The relay's two sockets, bound but not yet forwarding (the caller needs B's address for its
/// offer before it knows the answerer's).
#[derive(Debug)]
pub struct RelaySockets {
    a: UdpSocket,
    b: UdpSocket,
}

impl RelaySockets {
    /// Binds A and B on `ip` (ephemeral ports).
    ///
    /// # Errors
    ///
    /// [`LiveError::Io`] if a socket cannot be bound.
    pub async fn bind(ip: IpAddr) -> Result<Self, LiveError> {
        let a = UdpSocket::bind(SocketAddr::new(ip, 0))
            .await
            .map_err(LiveError::io(
                "cannot bind the relay's caller-facing socket",
            ))?;
        let b = UdpSocket::bind(SocketAddr::new(ip, 0))
            .await
            .map_err(LiveError::io(
                "cannot bind the relay's answerer-facing socket",
            ))?;
        Ok(Self { a, b })
    }

    /// A: where the caller sends (the answerer's address as the caller sees it).
    ///
    /// # Errors
    ///
    /// [`LiveError::Io`] if the socket has no address.
    pub fn caller_facing(&self) -> Result<SocketAddr, LiveError> {
        self.a
            .local_addr()
            .map_err(LiveError::io("relay socket A has no address"))
    }

    /// B: where the answerer sends (the caller's address as the answerer sees it).
    ///
    /// # Errors
    ///
    /// [`LiveError::Io`] if the socket has no address.
    pub fn answerer_facing(&self) -> Result<SocketAddr, LiveError> {
        self.b
            .local_addr()
            .map_err(LiveError::io("relay socket B has no address"))
    }

    /// Starts forwarding: A -> B through `forward` to `answerer`, B -> A through `reverse` to
    /// `caller`. The links' time zero is `epoch`.
    pub fn start(
        self,
        caller: SocketAddr,
        answerer: SocketAddr,
        forward: Link,
        reverse: Link,
        epoch: Instant,
    ) -> Relay {
        self.start_observed(caller, answerer, forward, reverse, epoch, None)
    }

    /// As [`RelaySockets::start`], with `observer` shown every datagram the forward link
    /// delivers, at the instant it leaves for the answerer.
    pub fn start_observed(
        self,
        caller: SocketAddr,
        answerer: SocketAddr,
        forward: Link,
        reverse: Link,
        epoch: Instant,
        observer: Option<DeliveryObserver>,
    ) -> Relay {
        let stats = Arc::new(Mutex::new(RelayStats::default()));
        let (stop, stopped) = oneshot::channel();
        let task = tokio::spawn(run(
            self,
            Peers { caller, answerer },
            LinkScheduler::new(forward, epoch),
            LinkScheduler::new(reverse, epoch),
            Arc::clone(&stats),
            stopped,
            observer,
        ));
        Relay {
            stats,
            stop: Some(stop),
            task: Some(task),
        }
    }
}

/// What sees each datagram the forward link delivers, with the instant it leaves.
pub type DeliveryObserver = Arc<dyn Fn(Instant, &[u8]) + Send + Sync>;

/// A running relay; dropping it stops it.
#[derive(Debug)]
pub struct Relay {
    stats: Arc<Mutex<RelayStats>>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

impl Relay {
    /// The counters so far.
    pub fn stats(&self) -> RelayStats {
        *self.stats.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The round trip through both links now (the latest datagram's delay each way), as the
    /// simulator hands the NACK pair the RTT an RTCP report would carry; `None` before a
    /// datagram has crossed each way.
    pub fn path_rtt_reader(
        &self,
    ) -> impl Fn() -> Option<std::time::Duration> + Send + Sync + 'static {
        let stats = Arc::clone(&self.stats);
        move || {
            let s = *stats.lock().unwrap_or_else(|e| e.into_inner());
            (s.forward.last_delay_us > 0 && s.reverse.last_delay_us > 0).then(|| {
                std::time::Duration::from_micros(s.forward.last_delay_us + s.reverse.last_delay_us)
            })
        }
    }

    /// Stops forwarding and waits for the task; returns the final counters.
    pub async fn stop(mut self) -> RelayStats {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
        self.stats()
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        if let Some(task) = &self.task {
            task.abort();
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Peers {
    caller: SocketAddr,
    answerer: SocketAddr,
}

async fn run(
    sockets: RelaySockets,
    mut peers: Peers,
    mut forward: LinkScheduler,
    mut reverse: LinkScheduler,
    stats: Arc<Mutex<RelayStats>>,
    mut stopped: oneshot::Receiver<()>,
    observer: Option<DeliveryObserver>,
) {
    let RelaySockets { a, b } = sockets;
    let mut buf_a = vec![0u8; MAX_DATAGRAM];
    let mut buf_b = vec![0u8; MAX_DATAGRAM];
    loop {
        let due = match (forward.poll_timeout(), reverse.poll_timeout()) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        };
        let sleep = async {
            match due {
                Some(at) => tokio::time::sleep_until(at.into()).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = &mut stopped => break,
            received = a.recv_from(&mut buf_a) => {
                if let Ok((n, from)) = received {
                    // The caller's address: whatever sends to A (its host candidate).
                    peers.caller = from;
                    forward.push(Instant::now(), buf_a[..n].to_vec());
                }
            }
            received = b.recv_from(&mut buf_b) => {
                if let Ok((n, from)) = received {
                    peers.answerer = from;
                    reverse.push(Instant::now(), buf_b[..n].to_vec());
                }
            }
            () = sleep => {}
        }
        let now = Instant::now();
        let mut forward_errors = 0;
        let mut reverse_errors = 0;
        while let Some(datagram) = forward.pop_due(now) {
            if let Some(observe) = &observer {
                observe(now, &datagram);
            }
            if b.send_to(&datagram, peers.answerer).await.is_err() {
                forward_errors += 1;
            }
        }
        while let Some(datagram) = reverse.pop_due(now) {
            if a.send_to(&datagram, peers.caller).await.is_err() {
                reverse_errors += 1;
            }
        }
        let mut s = stats.lock().unwrap_or_else(|e| e.into_inner());
        s.forward = DirectionStats {
            send_errors: s.forward.send_errors + forward_errors,
            ..forward.stats()
        };
        s.reverse = DirectionStats {
            send_errors: s.reverse.send_errors + reverse_errors,
            ..reverse.stats()
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::{Buffer, Capacity, Delay, DropReason, LinkConfig};
    use std::time::Duration;

    /// An RTP datagram's first 12 bytes (the header SRTP leaves in the clear) and a payload.
    fn rtp(ssrc: u32, sequence: u16, size: usize) -> Vec<u8> {
        let mut d = vec![0u8; size];
        d[0] = 0x80;
        d[1] = 96;
        d[2..4].copy_from_slice(&sequence.to_be_bytes());
        d[8..12].copy_from_slice(&ssrc.to_be_bytes());
        d
    }

    /// First transmissions, resends on the media SSRC, RTX and the link's drops are counted
    /// apart; RTCP, STUN and other SSRCs are not counted.
    #[test]
    fn the_recovery_counters_read_the_rtp_headers() {
        let config =
            LinkConfig::new(Capacity::constant(1_000_000)).with_buffer(Buffer::Bytes(2_500));
        let epoch = Instant::now();
        let mut s = LinkScheduler::new(Link::new(config, 1).expect("valid"), epoch);
        s.push(epoch, rtp(VIDEO_SSRC, 65_535, 1000));
        s.push(epoch, rtp(VIDEO_SSRC, 0, 1000)); // wraps: a new packet
        s.push(epoch, rtp(VIDEO_SSRC, 1, 1000)); // the buffer is full: dropped
        s.push(epoch, rtp(VIDEO_SSRC, 65_535, 100)); // a resend on the media SSRC
        s.push(epoch, rtp(VIDEO_RTX_SSRC, 7, 1000)); // RTX: dropped
        let mut rtcp = rtp(VIDEO_SSRC, 2, 100);
        rtcp[1] = 200; // a sender report
        s.push(epoch, rtcp);
        s.push(epoch, vec![0, 1, 0, 0, 0x21, 0x12, 0xA4, 0x42, 0, 0, 0, 0]); // STUN
        s.push(epoch, rtp(1234, 9, 100));
        let stats = s.stats();
        assert_eq!(stats.offered, 8);
        assert_eq!((stats.video_packets, stats.video_lost), (3, 1), "{stats:?}");
        assert_eq!(
            (stats.retransmissions, stats.retransmissions_lost),
            (2, 1),
            "{stats:?}"
        );
    }

    /// 1 Mbit/s, 10 ms one-way, a 3000-byte buffer: the exact schedule of back-to-back
    /// 1000-byte datagrams (8 ms each on the wire).
    #[test]
    fn datagrams_leave_when_the_link_model_says() {
        let config = LinkConfig::new(Capacity::constant(1_000_000))
            .with_delay(Delay::constant(Duration::from_millis(10)))
            .with_buffer(Buffer::Bytes(3_000));
        let epoch = Instant::now();
        let mut s = LinkScheduler::new(Link::new(config, 1).expect("valid"), epoch);
        let verdicts: Vec<_> = (0..5).map(|i| s.push(epoch, vec![i; 1000])).collect();
        let delivered: Vec<_> = verdicts.iter().filter_map(|v| v.delivered_at()).collect();
        assert!(delivered.len() >= 3 && delivered.len() < 5, "{verdicts:?}");
        assert!(
            verdicts
                .iter()
                .any(|v| v.drop_reason() == Some(DropReason::BufferFull))
        );
        for pair in delivered.windows(2) {
            assert_eq!(pair[1] - pair[0], Duration::from_millis(8), "{delivered:?}");
        }
        assert_eq!(delivered[0] - epoch, Duration::from_millis(18));
        assert_eq!(s.poll_timeout(), Some(delivered[0]));
        assert_eq!(s.pop_due(epoch + Duration::from_millis(17)), None);
        assert_eq!(s.pop_due(delivered[0]).map(|d| d[0]), Some(0));
        assert_eq!(s.pop_due(delivered[0]), None);
        let mut rest = 0;
        while s.pop_due(epoch + Duration::from_secs(1)).is_some() {
            rest += 1;
        }
        assert_eq!(rest + 1, delivered.len());
        let stats = s.stats();
        assert_eq!(stats.offered, 5);
        assert_eq!(stats.delivered as usize, delivered.len());
        assert_eq!(stats.dropped as usize, 5 - delivered.len());
    }
}

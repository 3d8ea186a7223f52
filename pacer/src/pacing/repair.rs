//! The way FEC repair packets made below the pacer come back to its queue.
//!
//! libwebrtc generates FEC as a media packet leaves, in `RtpSenderEgress::SendPacket`, after
//! `PacketRouter::SendPacket` has set its transport-wide sequence number, so the repair packets
//! are computed over the packet exactly as the receiver gets it. The pacer then fetches them
//! (`PacketRouter::FetchFec`, called by `PacingController::ProcessPackets` after every send) and
//! enqueues them like media, so they are paced, numbered and counted by the estimator in turn
//! (modules/pacing/pacing_controller.cc, modules/rtp_rtcp/source/rtp_sender_egress.cc).
//!
//! A webrtc-rs chain has no call back up the write walk, so the two ends share this queue: a
//! [`LossProtection`](crate::LossProtection) placed below the TWCC sender pushes its repair
//! packets here ([`LossProtectionBuilder::repair_queue`](crate::protection::LossProtectionBuilder::repair_queue)),
//! and the [`HandoverAwarePacer`](crate::HandoverAwarePacer) built with the same queue
//! ([`HandoverAwarePacerBuilder::repair_queue`](crate::pacing::HandoverAwarePacerBuilder::repair_queue))
//! takes them at its next event, at the latest when the chain next polls it for writes, which
//! a webrtc-rs chain does until the whole walk comes back empty.

use rtc_interceptor::TaggedPacket;
use std::collections::VecDeque;
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// A cloneable queue of repair packets from the FEC generator to the pacer. Each packet carries
/// as `now` the instant the media packet that closed its block left the pacer.
///
/// The pacer asks at every event whether anything waits, and almost always nothing does, so the
/// count is kept beside the lock and read without taking it.
#[derive(Clone, Default)]
pub struct RepairQueue {
    shared: Arc<Shared>,
}

#[derive(Default)]
struct Shared {
    packets: Mutex<VecDeque<TaggedPacket>>,
    /// How many packets the queue holds, updated under the lock.
    waiting: AtomicUsize,
}

impl fmt::Debug for RepairQueue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RepairQueue")
            .field("waiting", &self.len())
            .finish()
    }
}

impl RepairQueue {
    /// An empty queue.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, VecDeque<TaggedPacket>> {
        // A panic elsewhere while the lock was held leaves a queue of whole packets: still valid.
        self.shared
            .packets
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Repair packets waiting for the pacer.
    pub fn len(&self) -> usize {
        self.shared.waiting.load(Ordering::Acquire)
    }

    /// Whether none waits.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Hands a repair packet to the pacer.
    pub fn push(&self, packet: TaggedPacket) {
        let mut packets = self.lock();
        packets.push_back(packet);
        self.shared.waiting.store(packets.len(), Ordering::Release);
    }

    /// Every waiting repair packet, in the order they were pushed.
    pub fn take(&self) -> Vec<TaggedPacket> {
        if self.is_empty() {
            return Vec::new();
        }
        let mut packets = self.lock();
        self.shared.waiting.store(0, Ordering::Release);
        packets.drain(..).collect()
    }
}

/// One RTP sequence counter for an RTX stream, shared by everything that sends on it: the NACK
/// responder's retransmissions and the pacer's padding. libwebrtc's `RTPSender` numbers both from
/// the RTX stream's one sequence (`RTPSender::GeneratePadding` puts padding on the RTX SSRC when
/// RTX is negotiated); two counters on one SSRC would repeat numbers, and SRTP's replay check
/// drops the second packet of each.
#[derive(Debug, Clone, Default)]
pub struct SequenceCounter {
    next: Arc<std::sync::atomic::AtomicU16>,
}

impl SequenceCounter {
    /// A counter starting at 0.
    pub fn new() -> Self {
        Self::default()
    }

    /// The next sequence number (wrapping).
    pub fn take(&self) -> u16 {
        self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    }

    /// The number [`take`](Self::take) gives next.
    pub fn peek(&self) -> u16 {
        self.next.load(std::sync::atomic::Ordering::Relaxed)
    }
}

//! The pacer's queue: strict priority between levels, round-robin over SSRCs within a level,
//! FIFO within an SSRC.
//!
//! This is the shape of libwebrtc's `PrioritizedPacketQueue` (reference 1.8): a stream that has
//! just been served goes to the back of its level, so one busy SSRC cannot starve another of the
//! same priority. The queue also keeps the two aggregates the drain rule needs in O(1): the queued
//! bytes and the sum of enqueue instants, from which the average queue time follows.

use super::packet::{PRIORITY_LEVELS, PacketKind};
use std::collections::VecDeque;

/// One queued packet. Times are nanoseconds since the controller's epoch.
#[derive(Debug)]
pub(crate) struct QueuedPacket<T> {
    pub(crate) ssrc: u32,
    pub(crate) kind: PacketKind,
    pub(crate) size: u64,
    pub(crate) enqueued_ns: u64,
    /// The enqueue instant on the pacer's *active* clock, which stops while the pacer is
    /// congested: the average queue time counts only time not spent congested (libwebrtc's
    /// `PrioritizedPacketQueue::SetPauseState`, reference 1.3).
    pub(crate) active_ns: u64,
    /// Whether the packet belongs to a key frame.
    pub(crate) key_frame: bool,
    pub(crate) enqueued_at: std::time::Instant,
    pub(crate) payload: T,
}

#[derive(Debug)]
struct StreamQueue<T> {
    ssrc: u32,
    packets: VecDeque<QueuedPacket<T>>,
}

/// One priority level: its streams, and the round-robin order of those with packets.
#[derive(Debug)]
struct Level<T> {
    streams: Vec<StreamQueue<T>>,
    /// Indices into `streams` of the non-empty ones, next to be served first.
    active: VecDeque<usize>,
    packets: usize,
}

impl<T> Level<T> {
    fn new() -> Self {
        Self {
            streams: Vec::new(),
            active: VecDeque::new(),
            packets: 0,
        }
    }

    /// Drops streams that have gone empty once there are more than a handful, so that a sender
    /// cycling through SSRCs cannot make the per-packet stream lookup grow without bound.
    fn prune_empty_streams(&mut self) {
        const MAX_IDLE_STREAMS: usize = 16;
        if self.streams.len() - self.active.len() <= MAX_IDLE_STREAMS {
            return;
        }
        let mut remap = vec![usize::MAX; self.streams.len()];
        let mut kept = 0;
        for (old, stream) in self.streams.iter().enumerate() {
            if !stream.packets.is_empty() {
                remap[old] = kept;
                kept += 1;
            }
        }
        self.streams.retain(|s| !s.packets.is_empty());
        for index in &mut self.active {
            *index = remap[*index];
        }
    }
}

/// The prioritised packet queue.
#[derive(Debug)]
pub(crate) struct PrioritizedQueue<T> {
    levels: [Level<T>; PRIORITY_LEVELS],
    packets: usize,
    bytes: u64,
    /// Sum of the active-clock enqueue instants (ns) of every queued packet.
    enqueued_ns_sum: u128,
}

impl<T> PrioritizedQueue<T> {
    pub(crate) fn new() -> Self {
        Self {
            levels: std::array::from_fn(|_| Level::new()),
            packets: 0,
            bytes: 0,
            enqueued_ns_sum: 0,
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.packets == 0
    }

    pub(crate) fn packets(&self) -> usize {
        self.packets
    }

    pub(crate) fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Whether any packet of `kind`'s priority level is queued.
    pub(crate) fn has_priority_of(&self, kind: PacketKind) -> bool {
        self.levels[kind.priority()].packets > 0
    }

    pub(crate) fn push(&mut self, packet: QueuedPacket<T>) {
        let level = &mut self.levels[packet.kind.priority()];
        let index = match level.streams.iter().position(|s| s.ssrc == packet.ssrc) {
            Some(index) => index,
            None => {
                level.streams.push(StreamQueue {
                    ssrc: packet.ssrc,
                    packets: VecDeque::new(),
                });
                level.streams.len() - 1
            }
        };
        let stream = &mut level.streams[index];
        if stream.packets.is_empty() {
            level.active.push_back(index);
        }
        self.packets += 1;
        self.bytes += packet.size;
        self.enqueued_ns_sum += u128::from(packet.active_ns);
        level.packets += 1;
        stream.packets.push_back(packet);
    }

    /// Removes the next packet in service order.
    pub(crate) fn pop(&mut self) -> Option<QueuedPacket<T>> {
        let level = self.levels.iter_mut().find(|l| l.packets > 0)?;
        let index = level.active.pop_front()?;
        let stream = &mut level.streams[index];
        let packet = stream.packets.pop_front()?;
        if stream.packets.is_empty() {
            level.prune_empty_streams();
        } else {
            level.active.push_back(index);
        }
        level.packets -= 1;
        self.packets -= 1;
        self.bytes -= packet.size;
        self.enqueued_ns_sum -= u128::from(packet.active_ns);
        Some(packet)
    }

    /// Removes the next packet in service order among the levels before `level` (a hold keeps
    /// the others waiting).
    pub(crate) fn pop_before_level(&mut self, level: usize) -> Option<QueuedPacket<T>> {
        if !self.levels.iter().take(level).any(|l| l.packets > 0) {
            return None;
        }
        self.pop()
    }

    /// Whether any key-frame packet of stream `ssrc` is queued (libwebrtc
    /// `PrioritizedPacketQueue::HasKeyframePackets`).
    pub(crate) fn has_key_frame_packets(&self, ssrc: u32) -> bool {
        self.levels
            .iter()
            .flat_map(|level| level.streams.iter())
            .filter(|stream| stream.ssrc == ssrc)
            .any(|stream| stream.packets.iter().any(|p| p.key_frame))
    }

    /// Removes every queued packet of stream `ssrc`, whatever its level (libwebrtc
    /// `PrioritizedPacketQueue::RemovePacketsForSsrc`); returns them in queue order.
    pub(crate) fn remove_ssrc(&mut self, ssrc: u32) -> Vec<QueuedPacket<T>> {
        let mut removed = Vec::new();
        for level in &mut self.levels {
            let Some(index) = level.streams.iter().position(|s| s.ssrc == ssrc) else {
                continue;
            };
            let packets: Vec<_> = level.streams[index].packets.drain(..).collect();
            if packets.is_empty() {
                continue;
            }
            level.active.retain(|&i| i != index);
            level.packets -= packets.len();
            for packet in &packets {
                self.packets -= 1;
                self.bytes -= packet.size;
                self.enqueued_ns_sum -= u128::from(packet.active_ns);
            }
            removed.extend(packets);
            level.prune_empty_streams();
        }
        removed
    }

    /// Mean active-clock enqueue instant of the queued packets, or `None` when empty.
    pub(crate) fn mean_enqueued_ns(&self) -> Option<u64> {
        let count = self.packets as u128;
        (count > 0).then(|| match u64::try_from(self.enqueued_ns_sum) {
            Ok(sum) => sum / self.packets as u64,
            Err(_) => (self.enqueued_ns_sum / count) as u64,
        })
    }

    /// Enqueue instant of the oldest queued packet.
    pub(crate) fn oldest_enqueued_ns(&self) -> Option<u64> {
        self.levels
            .iter()
            .flat_map(|level| level.streams.iter())
            .filter_map(|stream| stream.packets.front().map(|p| p.enqueued_ns))
            .min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packet(ssrc: u32, kind: PacketKind, id: u32) -> QueuedPacket<u32> {
        QueuedPacket {
            ssrc,
            kind,
            size: 100,
            enqueued_ns: u64::from(id),
            active_ns: u64::from(id),
            key_frame: false,
            enqueued_at: std::time::Instant::now(),
            payload: id,
        }
    }

    fn drain(queue: &mut PrioritizedQueue<u32>) -> Vec<u32> {
        std::iter::from_fn(|| queue.pop().map(|p| p.payload)).collect()
    }

    #[test]
    fn levels_are_served_audio_then_retransmission_then_video_and_fec_then_padding() {
        let mut q = PrioritizedQueue::new();
        q.push(packet(1, PacketKind::Padding, 0));
        q.push(packet(1, PacketKind::Video, 1));
        q.push(packet(2, PacketKind::Fec, 2));
        q.push(packet(1, PacketKind::Retransmission, 3));
        q.push(packet(3, PacketKind::Audio, 4));
        assert_eq!(drain(&mut q), vec![4, 3, 1, 2, 0]);
        assert!(q.is_empty());
        assert_eq!(q.bytes(), 0);
    }

    #[test]
    fn streams_of_one_level_take_turns_and_each_stays_in_order() {
        let mut q = PrioritizedQueue::new();
        for id in 0..3 {
            q.push(packet(10, PacketKind::Video, id));
        }
        for id in 10..12 {
            q.push(packet(20, PacketKind::Video, id));
        }
        q.push(packet(30, PacketKind::Video, 20));
        assert_eq!(drain(&mut q), vec![0, 10, 20, 1, 11, 2]);
    }

    #[test]
    fn the_mean_and_oldest_enqueue_instants_track_what_is_queued() {
        let mut q = PrioritizedQueue::new();
        q.push(packet(1, PacketKind::Video, 10));
        q.push(packet(1, PacketKind::Video, 20));
        q.push(packet(2, PacketKind::Audio, 60));
        assert_eq!(q.mean_enqueued_ns(), Some(30));
        assert_eq!(q.oldest_enqueued_ns(), Some(10));
        q.pop();
        assert_eq!(q.mean_enqueued_ns(), Some(15));
        assert_eq!(q.oldest_enqueued_ns(), Some(10));
        drain(&mut q);
        assert_eq!(q.mean_enqueued_ns(), None);
        assert_eq!(q.oldest_enqueued_ns(), None);
    }

    #[test]
    fn idle_streams_are_pruned_without_disturbing_the_round_robin() {
        let mut q = PrioritizedQueue::new();
        for ssrc in 0..40 {
            q.push(packet(ssrc, PacketKind::Video, ssrc));
        }
        q.push(packet(100, PacketKind::Video, 100));
        q.push(packet(100, PacketKind::Video, 101));
        let order = drain(&mut q);
        let mut expected: Vec<u32> = (0..40).collect();
        expected.extend([100, 101]);
        assert_eq!(order, expected);
        q.push(packet(7, PacketKind::Video, 7));
        assert_eq!(drain(&mut q), vec![7]);
    }

    #[test]
    fn removing_a_stream_takes_its_packets_from_every_level_and_keeps_the_rest_in_order() {
        let mut q = PrioritizedQueue::new();
        q.push(packet(1, PacketKind::Video, 0));
        q.push(packet(2, PacketKind::Video, 1));
        q.push(packet(1, PacketKind::Retransmission, 2));
        q.push(packet(1, PacketKind::Video, 3));
        q.push(packet(2, PacketKind::Video, 4));
        let mut key = packet(2, PacketKind::Video, 5);
        key.key_frame = true;
        assert!(!q.has_key_frame_packets(2));
        q.push(key);
        assert!(q.has_key_frame_packets(2));
        let removed: Vec<u32> = q.remove_ssrc(1).into_iter().map(|p| p.payload).collect();
        assert_eq!(
            removed,
            vec![2, 0, 3],
            "level by level, retransmissions first"
        );
        assert_eq!((q.packets(), q.bytes()), (3, 300));
        assert_eq!(q.mean_enqueued_ns(), Some(10 / 3));
        assert_eq!(drain(&mut q), vec![1, 4, 5]);
    }
}

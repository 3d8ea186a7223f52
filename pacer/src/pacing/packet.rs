//! What kind of packet the pacer holds, and the priority that follows from it.

/// The kind of a paced packet. The order of service is libwebrtc's `GetPriorityForType`
/// (reference 1.8): audio, then retransmissions, then video and FEC together, then padding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PacketKind {
    /// Audio: highest priority, and unpaced unless `pace_audio` is set.
    Audio,
    /// A retransmission (NACK response, RTX).
    Retransmission,
    /// Video media.
    Video,
    /// Forward error correction; shares video's priority, since it protects that video.
    Fec,
    /// Padding (bandwidth probing or keep-alive): lowest priority.
    Padding,
}

/// Number of distinct priority levels.
pub(crate) const PRIORITY_LEVELS: usize = 4;

/// The first priority level a hold keeps waiting (docs/architecture.md, "Handover-timed
/// actions"): video and FEC, and padding after them. The levels before it, audio and
/// retransmissions, are never held: a retransmission repairs a loss the receiver is already
/// waiting on, and audio is small and unpaced.
pub(crate) const FIRST_HELD_LEVEL: usize = 2;

impl PacketKind {
    /// The priority level, 0 being served first.
    pub(crate) fn priority(self) -> usize {
        match self {
            Self::Audio => 0,
            Self::Retransmission => 1,
            Self::Video | Self::Fec => 2,
            Self::Padding => 3,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hold_keeps_video_fec_and_padding_and_lets_audio_and_retransmissions_go() {
        let held = |kind: PacketKind| kind.priority() >= FIRST_HELD_LEVEL;
        assert!(!held(PacketKind::Audio));
        assert!(!held(PacketKind::Retransmission));
        assert!(held(PacketKind::Video));
        assert!(held(PacketKind::Fec));
        assert!(held(PacketKind::Padding));
    }
}

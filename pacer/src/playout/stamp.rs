//! The interceptor that writes the playout-delay extension on raised frames.

use super::follow::CapFollower;
use super::weighed_floor::FloorWeigher;
use super::{
    MAX_PLAYOUT_DELAY, PLAYOUT_DELAY_URI, RAMP_DOWN_SLOPE, RAMP_UP_SLOPE, REPAIR_QUANTILE,
    raise_amount, raise_at, to_units,
};
use crate::actions::ActionsHandle;
use crate::nack::{DEFAULT_RTT, NackResponderHandle};
use rtc_interceptor::{Interceptor, Packet, Slot, StreamInfo, TaggedPacket};
use rtc_rtp::extension::playout_delay_extension::PlayoutDelayExtension;
use rtc_shared::error::Error;
use rtc_shared::marshal::Marshal;
use rustc_hash::FxHashMap;
use sansio::Protocol;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Where [`PlayoutDelayStamper`] sits: above `Slot::NackResponder` (4000), so that it sees each
/// media packet as the application writes it (its instant is the frame's capture, give or take
/// the encoder), and the responder's history keeps the packet as stamped: a retransmission, on
/// RTX or not, then carries the extension the original carried, which FlexFEC recovery at the
/// receiver needs (the repair packets protect the stamped packet), and does not pass the stamper
/// again as if it were a new frame.
pub const STAMPER_SLOT: Slot = Slot::Custom(4500);

/// After the raise has fallen back to zero, frames keep carrying the extension (with a zero
/// minimum) for this long: a receiver keeps the last value it saw (libwebrtc's
/// `VideoReceiveStream2` applies each frame's value and nothing resets it), so the zero must
/// reach it even if a few packets are lost. One second is 30 frames.
const TRAILING: Duration = Duration::from_secs(1);

/// What the stamper did, over all streams.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PlayoutStats {
    /// Frames whose packets carry the extension.
    pub frames_stamped: u64,
    /// Frames that asked for a minimum above zero.
    pub frames_raised: u64,
    /// The largest minimum asked for.
    pub max_raise: Duration,
    /// The sum of the minimums asked for, over the raised frames.
    pub total_raise: Duration,
    /// Frames decided while the followed cap was in force
    /// ([`PlayoutRaiseConfig::follow_cap_ms`](crate::actions::PlayoutRaiseConfig::follow_cap_ms)).
    pub frames_followed: u64,
    /// Frames decided while a weighed floor was in force
    /// ([`PlayoutRaiseConfig::floor_weighed`](crate::actions::PlayoutRaiseConfig::floor_weighed)).
    pub frames_floored: u64,
    /// Frames first seen inside a phase raise's window (where in the slot the path loses away
    /// from the predicted instants,
    /// [`PlayoutRaiseConfig::phase_raise_ms`](crate::actions::PlayoutRaiseConfig::phase_raise_ms)).
    pub frames_phased: u64,
}

/// A handle on a running [`PlayoutDelayStamper`]: its counters.
#[derive(Debug, Clone, Default)]
pub struct PlayoutStamperHandle {
    stats: Arc<Mutex<PlayoutStats>>,
}

impl PlayoutStamperHandle {
    fn lock(&self) -> MutexGuard<'_, PlayoutStats> {
        self.stats.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The counters so far.
    pub fn stats(&self) -> PlayoutStats {
        *self.lock()
    }

    /// The counters so far, then zeroed: one telemetry interval's worth.
    pub fn take_stats(&self) -> PlayoutStats {
        std::mem::take(&mut *self.lock())
    }
}

/// One bound stream that negotiated the extension.
#[derive(Debug, Clone, Copy)]
struct StampedStream {
    extension_id: u8,
    /// The frame being stamped: its RTP timestamp and the extension its packets carry (`None`:
    /// none).
    frame: Option<(u32, Option<PlayoutDelayExtension>)>,
    /// The previous frame's raise, exactly, and when it was decided.
    previous: Option<(Duration, Instant)>,
    /// The last instant a frame asked for more than zero.
    last_raised: Option<Instant>,
}

/// Writes the playout-delay RTP header extension on the media packets of frames captured around
/// a predicted handover: the playout raise of the shared [`ActionsHandle`] (see the module
/// documentation of [`crate::playout`]). Streams that did not negotiate the extension, RTX and
/// repair packets pass unchanged.
pub struct PlayoutDelayStamper {
    actions: ActionsHandle,
    nack: Option<NackResponderHandle>,
    streams: FxHashMap<u32, StampedStream>,
    handle: PlayoutStamperHandle,
    follower: CapFollower,
    weigher: Option<FloorWeigher>,
    read_queue: VecDeque<TaggedPacket>,
    write_queue: VecDeque<TaggedPacket>,
}

impl PlayoutDelayStamper {
    /// A stamper reading the playout windows of `actions` and the repair delays of `nack` (the
    /// libwebrtc responder's handle; without one a repair round is the RTT plus the NACK
    /// allowance, at the responder's default RTT), and its handle.
    pub fn new(
        actions: ActionsHandle,
        nack: Option<NackResponderHandle>,
    ) -> (Self, PlayoutStamperHandle) {
        let handle = PlayoutStamperHandle::default();
        (
            Self {
                actions,
                nack,
                streams: FxHashMap::default(),
                handle: handle.clone(),
                follower: CapFollower::default(),
                weigher: None,
                read_queue: VecDeque::new(),
                write_queue: VecDeque::new(),
            },
            handle,
        )
    }

    /// The raise for a frame first seen at `now`: the playout windows' ramp over the call's
    /// floor ([`floor_ms`](crate::actions::PlayoutRaiseConfig::floor_ms)), moved towards from
    /// the previous frame's raise by at most [`RAMP_UP_SLOPE`] (up) or [`RAMP_DOWN_SLOPE`]
    /// (down) times the time between them, so that a new repair measurement cannot make a step
    /// either. With a followed cap, the windows take the higher cap while the frames that
    /// completed so far show the path's boundaries late for the lower one ([`super::follow`]).
    /// A weighed floor applies while the sender's replay of the receiver's playout says it pays
    /// ([`super::weighed_floor`]). The phase raise's windows (where in the slot the path loses
    /// away from the instants) add theirs, one repair round at most their own cap, and are not
    /// followed.
    fn raise(&mut self, now: Instant, previous: Option<(Duration, Instant)>) -> Duration {
        let playout = self.actions.config().playout;
        let windows = self.actions.playout_windows();
        let repair = self
            .nack
            .as_ref()
            .and_then(|n| n.repair_delay(REPAIR_QUANTILE));
        let rtt = self
            .nack
            .as_ref()
            .and_then(NackResponderHandle::rtt)
            .unwrap_or(DEFAULT_RTT);
        let amounts = |follow: u64| -> Vec<(Instant, Instant, Duration)> {
            windows
                .iter()
                .map(|&(start, end, hold, max)| {
                    let max = max.max(Duration::from_millis(follow));
                    (start, end, raise_amount(repair, rtt, hold, max))
                })
                .collect()
        };
        let mut windows = amounts(0);
        let weighed = playout.enabled && playout.floor_ms > 0 && playout.floor_weighed;
        let frames = match &self.nack {
            Some(nack) if playout.follow_cap_ms > 0 || weighed => nack.take_frame_lateness(),
            _ => Vec::new(),
        };
        if playout.follow_cap_ms > 0 && self.nack.is_some() {
            // A discardable frame that completes late is skipped, and the frames after it do
            // not wait for it (docs/architecture.md, "Discardable frames"): it freezes nothing.
            let kept: Vec<_> = frames
                .iter()
                .filter(|f| !self.actions.frame_discardable(f.captured))
                .copied()
                .collect();
            self.follower.observe(&kept, &windows);
            if self.follower.raised(
                now,
                Duration::from_millis(playout.follow_memory_ms),
                playout.follow_min_windows,
            ) {
                windows = amounts(playout.follow_cap_ms);
                self.handle.lock().frames_followed += 1;
            }
        }
        let (phase, phase_max) = self.actions.phase_windows();
        if phase.iter().any(|&(start, end)| start <= now && now < end) {
            self.handle.lock().frames_phased += 1;
        }
        windows.extend(phase.into_iter().map(|(start, end)| {
            (
                start,
                end,
                raise_amount(repair, rtt, Duration::ZERO, phase_max),
            )
        }));
        let floor = if !playout.enabled {
            Duration::ZERO
        } else if weighed {
            let floor = Duration::from_millis(playout.floor_ms);
            let weigher = match &mut self.weigher {
                Some(weigher) if weigher.floor() == floor => weigher,
                slot => slot.insert(FloorWeigher::new(floor, now)),
            };
            let actions = &self.actions;
            weigher.observe(now, &frames, |at| actions.frame_discardable(at), rtt / 2);
            weigher.asked(now, raise_at(now, &windows));
            if weigher.worth(now, Duration::from_millis(playout.floor_memory_ms)) {
                self.handle.lock().frames_floored += 1;
                floor
            } else {
                Duration::ZERO
            }
        } else {
            Duration::from_millis(playout.floor_ms)
        };
        let target = raise_at(now, &windows).max(floor);
        match previous {
            Some((value, at)) => {
                let elapsed = now.saturating_duration_since(at);
                target.clamp(
                    value.saturating_sub(elapsed.mul_f64(RAMP_DOWN_SLOPE)),
                    value + elapsed.mul_f64(RAMP_UP_SLOPE),
                )
            }
            // The first frame starts from no raise, as the receiver does.
            None => Duration::ZERO,
        }
    }

    /// The extension for a new frame of `stream` first seen at `now`, if its packets carry one;
    /// counts the frame.
    fn frame_extension(
        &mut self,
        stream: &mut StampedStream,
        now: Instant,
    ) -> Option<PlayoutDelayExtension> {
        let raise = self.raise(now, stream.previous);
        stream.previous = Some((raise, now));
        let units = to_units(raise);
        if units > 0 {
            stream.last_raised = Some(now);
        }
        let trailing = stream
            .last_raised
            .is_some_and(|at| now.saturating_duration_since(at) < TRAILING);
        if !trailing {
            return None;
        }
        let mut stats = self.handle.lock();
        stats.frames_stamped += 1;
        if units > 0 {
            let asked = super::UNIT * u32::from(units);
            stats.frames_raised += 1;
            stats.max_raise = stats.max_raise.max(asked);
            stats.total_raise += asked;
        }
        Some(PlayoutDelayExtension::new(
            units,
            to_units(MAX_PLAYOUT_DELAY),
        ))
    }

    fn stamp(&mut self, msg: &mut TaggedPacket) {
        let now = msg.now;
        let Packet::Rtp(rtp) = &mut msg.message.packet else {
            return;
        };
        let Some(mut stream) = self.streams.get(&rtp.header.ssrc).copied() else {
            return;
        };
        let extension = match stream.frame {
            Some((timestamp, extension)) if timestamp == rtp.header.timestamp => extension,
            _ => {
                let extension = self.frame_extension(&mut stream, now);
                stream.frame = Some((rtp.header.timestamp, extension));
                extension
            }
        };
        self.streams.insert(rtp.header.ssrc, stream);
        if let Some(extension) = extension
            && let Ok(payload) = extension.marshal()
        {
            // An id the header cannot carry was refused at bind time; nothing else fails here.
            let _ = rtp
                .header
                .set_extension(stream.extension_id, payload.freeze());
        }
    }
}

impl Protocol<TaggedPacket, TaggedPacket, ()> for PlayoutDelayStamper {
    type Rout = TaggedPacket;
    type Wout = TaggedPacket;
    type Eout = ();
    type Error = Error;
    type Time = Instant;

    fn handle_read(&mut self, msg: TaggedPacket) -> Result<(), Self::Error> {
        self.read_queue.push_back(msg);
        Ok(())
    }

    fn poll_read(&mut self) -> Option<Self::Rout> {
        self.read_queue.pop_front()
    }

    fn handle_write(&mut self, mut msg: TaggedPacket) -> Result<(), Self::Error> {
        self.stamp(&mut msg);
        self.write_queue.push_back(msg);
        Ok(())
    }

    fn poll_write(&mut self) -> Option<Self::Wout> {
        self.write_queue.pop_front()
    }

    fn poll_timeout(&mut self) -> Option<Self::Time> {
        None
    }
}

impl Interceptor for PlayoutDelayStamper {
    fn bind_local_stream(&mut self, info: &StreamInfo) {
        if info.mime_type.to_ascii_lowercase().starts_with("audio/") {
            return;
        }
        let id = info
            .rtp_header_extensions
            .iter()
            .find(|e| e.uri == PLAYOUT_DELAY_URI)
            .and_then(|e| u8::try_from(e.id).ok())
            // One-byte header ids run 1 to 14 (RFC 8285 section 4.2); two-byte ids 1 to 255.
            .filter(|&id| id >= 1);
        if let Some(extension_id) = id {
            self.streams.insert(
                info.ssrc,
                StampedStream {
                    extension_id,
                    frame: None,
                    previous: None,
                    last_raised: None,
                },
            );
        }
    }

    fn unbind_local_stream(&mut self, info: &StreamInfo) {
        self.streams.remove(&info.ssrc);
    }

    fn bind_remote_stream(&mut self, _info: &StreamInfo) {}

    fn unbind_remote_stream(&mut self, _info: &StreamInfo) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ActionConfig;
    use rtc_interceptor::{RTPHeaderExtension, TaggedPacket};
    use rtc_shared::TransportContext;
    use rtc_shared::marshal::Unmarshal;

    const SSRC: u32 = 0x1111;
    const ID: u8 = 6;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    fn stream(ssrc: u32, with_extension: bool) -> StreamInfo {
        StreamInfo {
            ssrc,
            mime_type: "video/VP8".to_owned(),
            rtp_header_extensions: if with_extension {
                vec![RTPHeaderExtension {
                    uri: PLAYOUT_DELAY_URI.to_owned(),
                    id: u16::from(ID),
                }]
            } else {
                Vec::new()
            },
            ..Default::default()
        }
    }

    fn packet(now: Instant, ssrc: u32, timestamp: u32) -> TaggedPacket {
        TaggedPacket {
            now,
            transport: TransportContext::default(),
            message: Packet::Rtp(rtc_rtp::Packet {
                header: rtc_rtp::Header {
                    version: 2,
                    ssrc,
                    timestamp,
                    ..Default::default()
                },
                payload: vec![0u8; 100].into(),
            })
            .into(),
        }
    }

    /// The minimum the packet asks for, ms, if it carries the extension.
    fn minimum_ms(msg: &TaggedPacket) -> Option<u64> {
        let Packet::Rtp(rtp) = &msg.message.packet else {
            return None;
        };
        let mut data = rtp.header.get_extension(ID)?;
        let extension = PlayoutDelayExtension::unmarshal(&mut data).ok()?;
        assert_eq!(extension.max_delay, 1000, "the maximum is libwebrtc's 10 s");
        Some(u64::from(extension.min_delay) * 10)
    }

    /// The default actions without the onset tracker and the hold (`floor_ms` as given), one
    /// handover predicted 3 s after `t0`, and a stamper over them with stream [`SSRC`] bound.
    fn stamper_with_floor(
        t0: Instant,
        floor_ms: u64,
        playout: bool,
    ) -> (PlayoutDelayStamper, PlayoutStamperHandle) {
        let mut config = ActionConfig::default();
        config.onset.enabled = false;
        config.hold.enabled = false;
        config.playout.floor_ms = floor_ms;
        config.playout.enabled = playout;
        let actions = ActionsHandle::new(config).unwrap();
        actions.set_predictions(t0, [(t0 + ms(3000), 0.9)]);
        let (mut stamper, handle) = PlayoutDelayStamper::new(actions, None);
        stamper.bind_local_stream(&stream(SSRC, true));
        (stamper, handle)
    }

    #[test]
    fn frames_around_a_predicted_handover_ask_for_a_ramped_minimum_and_then_zero() {
        let t0 = Instant::now();
        let (mut stamper, handle) = stamper_with_floor(t0, 0, true);
        stamper.bind_local_stream(&stream(0x2222, false));
        // Without a NACK responder a repair round is the default RTT (100 ms) plus the 20-ms
        // allowance, plus the 10-ms render margin: 130 ms, in force from t - 50 ms to t + 150 ms.
        let mut asked = Vec::new();
        for frame in 0..150u64 {
            let at = t0 + ms(frame * 33);
            for _ in 0..2 {
                stamper
                    .handle_write(packet(at, SSRC, frame as u32))
                    .unwrap();
                let other = packet(at, 0x2222, frame as u32);
                stamper.handle_write(other).unwrap();
            }
            let ours: Vec<_> = (0..4).filter_map(|_| stamper.poll_write()).collect();
            assert_eq!(
                minimum_ms(&ours[0]),
                minimum_ms(&ours[2]),
                "one value per frame"
            );
            assert_eq!(minimum_ms(&ours[1]), None, "a stream without the extension");
            asked.push((frame * 33, minimum_ms(&ours[0])));
        }
        let at = |t: u64| {
            asked
                .iter()
                .find(|(c, _)| *c >= t)
                .map(|(_, m)| *m)
                .unwrap()
        };
        assert_eq!(at(0), None, "nothing before the ramp");
        assert_eq!(at(2950), Some(130));
        assert_eq!(at(3130), Some(130));
        assert!(at(2800).is_some_and(|m| m > 0 && m < 130), "{:?}", at(2800));
        assert_eq!(at(3400), Some(0), "zero after the window, for a second");
        assert_eq!(at(4600), None, "then nothing");
        let steps = asked
            .windows(2)
            .filter_map(|w| Some(w[1].1? as i64 - w[0].1? as i64));
        assert!(
            steps.clone().all(|s| s <= 20),
            "rises at most half a frame interval"
        );
        assert!(steps.clone().any(|s| s < -20), "falls faster than it rises");
        let stats = handle.stats();
        assert!(stats.frames_raised > 5 && stats.frames_stamped > stats.frames_raised);
        assert_eq!(stats.max_raise, ms(130));
    }

    /// Frame `n` is captured at `n x 33 ms`; what each asked for, ms (`None`: no extension).
    fn asked_minimums(
        stamper: &mut PlayoutDelayStamper,
        t0: Instant,
        frames: u64,
    ) -> Vec<Option<u64>> {
        (0..frames)
            .map(|frame| {
                stamper
                    .handle_write(packet(t0 + ms(frame * 33), SSRC, frame as u32))
                    .unwrap();
                minimum_ms(&stamper.poll_write().unwrap())
            })
            .collect()
    }

    #[test]
    fn a_floor_is_asked_for_by_every_frame_and_the_raise_stands_on_it() {
        let t0 = Instant::now();
        let (mut stamper, _) = stamper_with_floor(t0, 100, true);
        let asked = asked_minimums(&mut stamper, t0, 200);
        assert_eq!(asked[0], None, "the first frame starts from no raise");
        // Up at half a millisecond per millisecond: 100 ms within 200 ms (seven frames).
        assert!(
            asked[1..7].iter().all(|m| m.is_some_and(|m| m < 100)),
            "{asked:?}"
        );
        assert_eq!(asked[7], Some(100));
        // The window's 130 ms over the floor at the handover, the floor again after it, and
        // never nothing: every frame carries the extension.
        assert_eq!(asked[91], Some(130), "{:?}", &asked[85..100]);
        assert!(asked[7..].iter().all(|m| m.is_some_and(|m| m >= 100)));
        assert_eq!(asked[199], Some(100));

        let (mut stamper, _) = stamper_with_floor(t0, 100, false);
        let asked = asked_minimums(&mut stamper, t0, 50);
        assert!(
            asked.iter().all(Option::is_none),
            "no floor without the raise"
        );
    }
}

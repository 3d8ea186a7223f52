//! Inter-arrival grouping: packets sent within 5 ms of each other form one group, and each new
//! group yields the send and arrival deltas against the previous one.
//!
//! Port of libwebrtc `modules/congestion_controller/goog_cc/inter_arrival_delta.cc`
//! (`InterArrivalDelta::ComputeDeltas`, `NewTimestampGroup`, `BelongsToBurst`). Times are in
//! microseconds (libwebrtc's `Timestamp` resolution).

/// Send-time span of one group: 5 ms.
/// libwebrtc `goog_cc/delay_based_bwe.cc`, `kSendTimeGroupLength`.
pub(super) const SEND_TIME_GROUP_LENGTH_US: i64 = 5_000;

/// A packet arriving within this long of the previous one, while the queue is draining
/// (negative propagation delta), belongs to the same burst.
/// libwebrtc `goog_cc/inter_arrival_delta.cc`, `kBurstDeltaThreshold` (5 ms).
pub(super) const BURST_DELTA_THRESHOLD_US: i64 = 5_000;

/// A burst never spans more than this in arrival time.
/// libwebrtc `goog_cc/inter_arrival_delta.cc`, `kMaxBurstDuration` (100 ms).
pub(super) const MAX_BURST_DURATION_US: i64 = 100_000;

/// An arrival-clock jump this much larger than the feedback-clock delta resets the grouping.
/// libwebrtc `goog_cc/inter_arrival_delta.cc`, `kArrivalTimeOffsetThreshold` (3 s).
pub(super) const ARRIVAL_TIME_OFFSET_THRESHOLD_US: i64 = 3_000_000;

/// Consecutive reordered groups that reset the grouping.
/// libwebrtc `goog_cc/inter_arrival_delta.cc`, `kReorderedResetThreshold`.
pub(super) const REORDERED_RESET_THRESHOLD: u32 = 3;

#[derive(Debug, Clone, Copy, Default)]
struct Group {
    size: i64,
    first_send: Option<i64>,
    send: i64,
    first_arrival: i64,
    complete: Option<i64>,
    last_system: i64,
}

impl Group {
    fn is_first_packet(&self) -> bool {
        self.complete.is_none()
    }
}

/// The deltas between two consecutive groups.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Deltas {
    /// Send-time difference of the groups' last packets, µs.
    pub send_delta_us: i64,
    /// Arrival-time difference of the groups' last packets, µs.
    pub arrival_delta_us: i64,
    /// Size difference, bytes.
    pub size_delta: i64,
}

/// libwebrtc's `InterArrivalDelta`.
#[derive(Debug, Clone, Default)]
pub(super) struct InterArrival {
    current: Group,
    prev: Group,
    reordered: u32,
}

impl InterArrival {
    /// An empty grouper.
    pub(super) fn new() -> Self {
        Self::default()
    }

    /// Feeds one received packet (send time and arrival time in µs, `system_us` the feedback
    /// time). Returns the deltas when this packet closes a group and a previous group exists.
    pub(super) fn compute_deltas(
        &mut self,
        send_us: i64,
        arrival_us: i64,
        system_us: i64,
        size: i64,
    ) -> Option<Deltas> {
        let mut out = None;
        if self.current.is_first_packet() {
            self.current.send = send_us;
            self.current.first_send = Some(send_us);
            self.current.first_arrival = arrival_us;
        } else if self.current.first_send.is_some_and(|first| first > send_us) {
            // Reordered packet.
            return None;
        } else if self.new_group(arrival_us, send_us) {
            if let Some(prev_complete) = self.prev.complete {
                let complete = self.current.complete.unwrap_or(arrival_us);
                let send_delta_us = self.current.send - self.prev.send;
                let arrival_delta_us = complete - prev_complete;
                let system_delta = self.current.last_system - self.prev.last_system;
                if arrival_delta_us - system_delta >= ARRIVAL_TIME_OFFSET_THRESHOLD_US {
                    self.reset();
                    return None;
                }
                if arrival_delta_us < 0 {
                    self.reordered += 1;
                    if self.reordered >= REORDERED_RESET_THRESHOLD {
                        self.reset();
                    }
                    return None;
                }
                self.reordered = 0;
                out = Some(Deltas {
                    send_delta_us,
                    arrival_delta_us,
                    size_delta: self.current.size - self.prev.size,
                });
            }
            self.prev = self.current;
            self.current.first_send = Some(send_us);
            self.current.send = send_us;
            self.current.first_arrival = arrival_us;
            self.current.size = 0;
        } else {
            self.current.send = self.current.send.max(send_us);
        }
        self.current.size += size;
        self.current.complete = Some(arrival_us);
        self.current.last_system = system_us;
        out
    }

    fn reset(&mut self) {
        *self = Self::default();
    }

    fn new_group(&self, arrival_us: i64, send_us: i64) -> bool {
        if self.current.is_first_packet() || self.belongs_to_burst(arrival_us, send_us) {
            return false;
        }
        send_us - self.current.first_send.unwrap_or(send_us) > SEND_TIME_GROUP_LENGTH_US
    }

    fn belongs_to_burst(&self, arrival_us: i64, send_us: i64) -> bool {
        let Some(complete) = self.current.complete else {
            return false;
        };
        let arrival_delta = arrival_us - complete;
        let send_delta = send_us - self.current.send;
        if send_delta == 0 {
            return true;
        }
        let propagation_delta = arrival_delta - send_delta;
        propagation_delta < 0
            && arrival_delta <= BURST_DELTA_THRESHOLD_US
            && arrival_us - self.current.first_arrival < MAX_BURST_DURATION_US
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packets_within_five_ms_of_send_time_form_one_group() {
        let mut ia = InterArrival::new();
        // Group A: sent at 0, 2, 4 ms; arrive 10 ms later each.
        assert_eq!(None, ia.compute_deltas(0, 10_000, 0, 100));
        assert_eq!(None, ia.compute_deltas(2_000, 12_000, 0, 100));
        assert_eq!(None, ia.compute_deltas(4_000, 14_000, 0, 100));
        // Group B opens at 10 ms (A closes, but there is no group before A).
        assert_eq!(None, ia.compute_deltas(10_000, 21_000, 0, 200));
        // Group C opens at 20 ms: B minus A.
        assert_eq!(
            Some(Deltas {
                send_delta_us: 6_000,
                arrival_delta_us: 7_000,
                size_delta: -100
            }),
            ia.compute_deltas(20_000, 30_000, 0, 50)
        );
    }

    #[test]
    fn a_packet_arriving_early_within_five_ms_joins_the_burst() {
        let mut ia = InterArrival::new();
        assert_eq!(None, ia.compute_deltas(0, 10_000, 0, 100));
        // Sent 8 ms later but arrives only 1 ms later: a burst, same group.
        assert_eq!(None, ia.compute_deltas(8_000, 11_000, 0, 100));
        assert_eq!(None, ia.compute_deltas(20_000, 30_000, 0, 100));
        let d = ia.compute_deltas(40_000, 50_000, 0, 100).expect("deltas");
        assert_eq!(
            12_000, d.send_delta_us,
            "20 ms - 8 ms (the burst's latest send)"
        );
        assert_eq!(19_000, d.arrival_delta_us, "30 ms - 11 ms");
        assert_eq!(-100, d.size_delta);
    }

    #[test]
    fn a_packet_sent_before_the_current_group_is_ignored_and_a_late_arrival_joins_the_burst() {
        let mut ia = InterArrival::new();
        assert_eq!(None, ia.compute_deltas(10_000, 20_000, 0, 100));
        // Sent before the current group's first packet: dropped, the group is unchanged.
        assert_eq!(None, ia.compute_deltas(5_000, 21_000, 0, 100));
        assert_eq!(None, ia.compute_deltas(20_000, 30_000, 0, 100));
        assert_eq!(
            Some(Deltas {
                send_delta_us: 10_000,
                arrival_delta_us: 10_000,
                size_delta: 0
            }),
            ia.compute_deltas(30_000, 40_000, 0, 100)
        );
        // Arrives before the group's last packet: a negative propagation delta within 5 ms
        // of arrival, so it is part of the burst, and the group now completes at 35 ms.
        assert_eq!(None, ia.compute_deltas(40_000, 35_000, 0, 100));
        assert_eq!(
            Some(Deltas {
                send_delta_us: 20_000,
                arrival_delta_us: 5_000,
                size_delta: 100
            }),
            ia.compute_deltas(50_000, 60_000, 0, 100)
        );
    }
}

//! The packets on one emulated link, delivered in order of arrival.
//!
//! A link's arrival instants rarely go backwards (only a drop in its delay can let a later
//! packet overtake an earlier one), so the packets are kept in a deque sorted by arrival and a
//! new packet is inserted from the back: almost always an append, never a tree rebalance or a
//! heap sift that would move the (large) packets around. Ties keep the order of sending, so the
//! delivery order is exactly that of a map keyed by (arrival, send sequence).

use crate::link::Time;
use std::collections::VecDeque;

/// Packets in flight on one link, by arrival instant.
#[derive(Debug)]
pub struct InFlight<P> {
    packets: VecDeque<(Time, P)>,
}

impl<P> Default for InFlight<P> {
    fn default() -> Self {
        Self {
            packets: VecDeque::new(),
        }
    }
}

impl<P> InFlight<P> {
    /// When the next packet arrives, if any is in flight.
    pub fn next_arrival(&self) -> Option<Time> {
        self.packets.front().map(|(at, _)| *at)
    }

    /// Puts `packet` on the link, arriving at `at` (after every packet already in flight that
    /// arrives at the same instant).
    pub fn push(&mut self, at: Time, packet: P) {
        let position = self
            .packets
            .iter()
            .rposition(|(t, _)| *t <= at)
            .map_or(0, |i| i + 1);
        if position == self.packets.len() {
            self.packets.push_back((at, packet));
        } else {
            self.packets.insert(position, (at, packet));
        }
    }

    /// The next packet that has arrived by `now`, if any.
    pub fn pop_arrived(&mut self, now: Time) -> Option<P> {
        if self.next_arrival()? > now {
            return None;
        }
        self.packets.pop_front().map(|(_, p)| p)
    }

    /// How many packets are in flight.
    pub fn len(&self) -> usize {
        self.packets.len()
    }

    /// Whether no packet is in flight.
    pub fn is_empty(&self) -> bool {
        self.packets.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;
    use std::time::Duration;

    fn at(ms: u64) -> Time {
        Time::ZERO.saturating_add(Duration::from_millis(ms))
    }

    #[test]
    fn delivers_by_arrival_then_by_sending() {
        let mut link = InFlight::default();
        for (arrival, name) in [(30, "a"), (10, "b"), (30, "c"), (20, "d"), (10, "e")] {
            link.push(at(arrival), name);
        }
        assert_eq!(link.len(), 5);
        assert_eq!(link.pop_arrived(at(9)), None);
        let mut order = Vec::new();
        while let Some(p) = link.pop_arrived(at(100)) {
            order.push(p);
        }
        assert_eq!(order, ["b", "e", "d", "a", "c"]);
        assert!(link.is_empty() && link.next_arrival().is_none());
    }

    proptest! {
        /// The same order as a map keyed by (arrival, send sequence), whatever the arrivals and
        /// however the pops interleave with the pushes.
        #[test]
        fn orders_like_a_map_keyed_by_arrival_and_sequence(
            events in proptest::collection::vec((0u64..50, any::<bool>()), 1..200)
        ) {
            let mut link = InFlight::default();
            let mut map = BTreeMap::new();
            let mut now = 0u64;
            for (sequence, (delay, pop)) in events.into_iter().enumerate() {
                if pop {
                    now += 5;
                    loop {
                        let expected = map
                            .first_key_value()
                            .filter(|((t, _), _)| *t <= at(now))
                            .map(|(k, _)| *k);
                        let got = link.pop_arrived(at(now));
                        prop_assert_eq!(got, expected.and_then(|k| map.remove(&k)));
                        if got.is_none() {
                            break;
                        }
                    }
                } else {
                    link.push(at(now + delay), sequence);
                    map.insert((at(now + delay), sequence), sequence);
                }
                prop_assert_eq!(link.next_arrival(), map.keys().next().map(|k| k.0));
            }
        }
    }
}

//! A map keyed by unwrapped RTP sequence numbers, stored as a deque indexed from the oldest key.
//!
//! The sender's packet history takes packets in sequence order and drops them oldest first, so
//! its keys form one dense run. libwebrtc's `RtpPacketHistory` keeps them in a `std::deque`
//! indexed by the sequence number's distance from the oldest for the same reason: an insert is an
//! append and a lookup an index, where an ordered tree rebalances and moves its (large) values on
//! every insert and removal. A key outside the run leaves empty slots for the keys between
//! (bounded: a sequence number unwraps to within 32 768 of the newest, and the history culls
//! the oldest); the map behaves exactly as a `BTreeMap<i64, T>` would, which the property test
//! below checks.

use std::collections::VecDeque;

/// Values keyed by unwrapped sequence number (see the module documentation).
#[derive(Debug)]
pub(super) struct SequenceMap<T> {
    /// The key of `slots[0]`.
    first: i64,
    /// Empty or starting and ending with an occupied slot.
    slots: VecDeque<Option<T>>,
    len: usize,
}

impl<T> Default for SequenceMap<T> {
    fn default() -> Self {
        Self {
            first: 0,
            slots: VecDeque::new(),
            len: 0,
        }
    }
}

impl<T> SequenceMap<T> {
    /// How many keys hold a value.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// Puts `value` at `key`, replacing what was there.
    pub(super) fn insert(&mut self, key: i64, value: T) {
        if self.slots.is_empty() {
            self.first = key;
        } else if key < self.first {
            let gap = usize::try_from(self.first - key).unwrap_or(usize::MAX);
            self.slots.reserve(gap);
            for _ in 0..gap {
                self.slots.push_front(None);
            }
            self.first = key;
        }
        let index = usize::try_from(key - self.first).unwrap_or(usize::MAX);
        if index >= self.slots.len() {
            self.slots.resize_with(index + 1, || None);
        }
        if self.slots[index].replace(value).is_none() {
            self.len += 1;
        }
    }

    /// The value at `key`, if any.
    pub(super) fn get_mut(&mut self, key: i64) -> Option<&mut T> {
        let index = usize::try_from(key.checked_sub(self.first)?).ok()?;
        self.slots.get_mut(index)?.as_mut()
    }

    /// The value with the smallest key, if any.
    pub(super) fn first(&self) -> Option<&T> {
        self.slots.front()?.as_ref()
    }

    /// The smallest key holding a value, if any.
    pub(super) fn first_key(&self) -> Option<i64> {
        (self.len > 0).then_some(self.first)
    }

    /// Removes the value with the smallest key.
    pub(super) fn pop_first(&mut self) -> Option<T> {
        let value = self.slots.pop_front()??;
        self.len -= 1;
        self.first += 1;
        while self.slots.front().is_some_and(Option::is_none) {
            self.slots.pop_front();
            self.first += 1;
        }
        Some(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    #[test]
    fn gaps_on_both_sides_are_filled_and_skipped() {
        let mut map = SequenceMap::default();
        map.insert(10, 'a');
        map.insert(13, 'b');
        map.insert(8, 'c');
        assert_eq!(map.len(), 3);
        assert_eq!(map.get_mut(11), None);
        assert_eq!(map.get_mut(7), None);
        assert_eq!(map.get_mut(14), None);
        assert_eq!(map.first(), Some(&'c'));
        assert_eq!(map.pop_first(), Some('c'));
        assert_eq!(map.first(), Some(&'a'));
        assert_eq!(map.pop_first(), Some('a'));
        assert_eq!(map.pop_first(), Some('b'));
        assert_eq!(map.pop_first(), None);
        assert_eq!(map.len(), 0);
    }

    #[derive(Debug, Clone)]
    enum Op {
        Insert(i64, u32),
        Get(i64),
        PopFirst,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (-40i64..200, any::<u32>()).prop_map(|(k, v)| Op::Insert(k, v)),
            2 => (-50i64..210).prop_map(Op::Get),
            2 => Just(Op::PopFirst),
        ]
    }

    proptest! {
        #[test]
        fn behaves_as_an_ordered_map(ops in proptest::collection::vec(op(), 1..300)) {
            let mut map = SequenceMap::default();
            let mut model = BTreeMap::new();
            for op in ops {
                match op {
                    Op::Insert(k, v) => {
                        map.insert(k, v);
                        model.insert(k, v);
                    }
                    Op::Get(k) => prop_assert_eq!(map.get_mut(k), model.get_mut(&k)),
                    Op::PopFirst => prop_assert_eq!(map.pop_first(), model.pop_first().map(|e| e.1)),
                }
                prop_assert_eq!(map.len(), model.len());
                prop_assert_eq!(map.first(), model.first_key_value().map(|e| e.1));
            }
        }
    }
}

use super::Ps;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A pending-event set ordered by time; events at the same time come out in the order
/// they were pushed (a sequence number breaks ties), so runs are deterministic.
pub struct EventQueue<E> {
    heap: BinaryHeap<Reverse<(Ps, u64, Slot)>>,
    payloads: Vec<Option<E>>,
    free: Vec<Slot>,
    next_seq: u64,
}

type Slot = u32;

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue { heap: BinaryHeap::new(), payloads: Vec::new(), free: Vec::new(), next_seq: 0 }
    }

    pub fn push(&mut self, at: Ps, event: E) {
        let slot = match self.free.pop() {
            Some(slot) => {
                self.payloads[slot as usize] = Some(event);
                slot
            }
            None => {
                self.payloads.push(Some(event));
                (self.payloads.len() - 1) as Slot
            }
        };
        self.heap.push(Reverse((at, self.next_seq, slot)));
        self.next_seq += 1;
    }

    /// Time of the earliest pending event.
    pub fn peek_time(&self) -> Option<Ps> {
        self.heap.peek().map(|Reverse((t, _, _))| *t)
    }

    pub fn pop(&mut self) -> Option<(Ps, E)> {
        let Reverse((at, _, slot)) = self.heap.pop()?;
        let event = self.payloads[slot as usize].take().expect("a pending slot holds an event");
        self.free.push(slot);
        Some((at, event))
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_break_by_insertion_order() {
        let mut q = EventQueue::new();
        q.push(5, 'a');
        q.push(3, 'b');
        q.push(5, 'c');
        q.push(3, 'd');
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order, vec![(3, 'b'), (3, 'd'), (5, 'a'), (5, 'c')]);
    }
}

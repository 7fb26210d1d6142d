//! The event queue: small plain events ordered by (time, insertion number), so simultaneous
//! events run in the order they were scheduled and every run is repeatable.
//!
//! The queue stays small by design: each link keeps its packets in flight in its own FIFO and
//! only the head sits here; each TCP timer is one deadline per connection (see `Timer`). Every
//! event is one push and one pop, the largest single cost of a run. With a few dozen events
//! pending, most of them due within microseconds, a list sorted latest-first beats a heap: the
//! next event pops off the end, and a new one, usually due soon, is placed by a short walk from
//! that end. Only the earliest `NEAR_MAX` events are kept so; the rest (retransmission timers,
//! the events of many flows) wait in a 4-ary min-heap, so a run with thousands of flows pays a
//! logarithmic price rather than a linear one. (A 10-flow BBR run spent a third of its time in
//! std's binary heap; the 4-ary heap cut that. The sorted list in front of it made runs faster
//! again: 10 Reno, CUBIC or BBR flows by 25–29%, 200 and 1,000 CUBIC flows by 38–40%. It has 64
//! places rather than 32 because ten paced flows keep about 42 events pending, and evicting to
//! the heap costs more than a longer walk.)
//!
//! Events scheduled a fixed time ahead come due in the order they are scheduled: with
//! thousands of flows, the delayed-ACK deadlines (40 ms out, 0.23 per packet at 10,000 flows)
//! were most of what went through the heap, whose sift-down then took 10–15% of the run on
//! cache misses. They can queue in a FIFO of their own instead (`push_in_order`), and each pop
//! takes the earlier of its head and the sorted list's. (The simulation does so only with many
//! flows: with few, checking the FIFO's head on each pop costs more than the heap would.)

use std::collections::VecDeque;

/// Index of a flow (sender/receiver pair).
pub type FlowId = u32;
/// Index of a link.
pub type LinkId = u32;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// The head packet of a link's delay line reaches the link's far end.
    LinkExit(LinkId),
    /// A CoDel link's transmitter finished a packet and dequeues the next (`Link::on_tx_done`).
    LinkTxDone(LinkId),
    FlowStart(FlowId),
    /// The application of this flow stops handing data to TCP.
    FlowStop(FlowId),
    /// The flow's packets take its next route from now on.
    RouteChange(FlowId),
    /// The sender's retransmission timer deadline may have come.
    Rto(FlowId),
    /// The sender's pacing gate may have opened, or its data source produced more.
    SendWake(FlowId),
    /// The receiver's delayed-ACK timer deadline may have come.
    DelayedAck(FlowId),
    /// The receiving application may have read enough to reopen the window.
    WindowUpdate(FlowId),
    /// A background source's next packet is due.
    SourceSend(u32),
    /// Time for the next request of a request-response exchange.
    ExchangeBegin(u32),
    /// Record one row of every time series.
    Sample,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    time_ns: u64,
    seq: u64,
    event: Event,
}

impl Entry {
    fn before(&self, other: &Self) -> bool {
        (self.time_ns, self.seq) < (other.time_ns, other.seq)
    }
}

/// Most events the sorted list holds.
const NEAR_MAX: usize = 64;

#[derive(Debug, Default)]
pub struct EventQueue {
    /// The earliest events, latest first, so the next one is the last.
    near: Vec<Entry>,
    /// The others, every one after all of `near`.
    far: Heap,
    /// Events pushed by `push_in_order`, in (time, insertion) order; apart from the others.
    in_order: VecDeque<Entry>,
    next_seq: u64,
    popped: u64,
}

impl EventQueue {
    fn entry(&mut self, time_ns: u64, event: Event) -> Entry {
        let seq = self.next_seq;
        self.next_seq += 1;
        Entry {
            time_ns,
            seq,
            event,
        }
    }

    /// Schedule an event due no earlier than any other scheduled this way, as a deadline a
    /// fixed time from now is: it waits in a FIFO, pushed and popped at no cost. One due
    /// earlier than that FIFO's last is scheduled as `push` does.
    pub fn push_in_order(&mut self, time_ns: u64, event: Event) {
        if self
            .in_order
            .back()
            .is_some_and(|last| time_ns < last.time_ns)
        {
            return self.push(time_ns, event);
        }
        let entry = self.entry(time_ns, event);
        self.in_order.push_back(entry);
    }

    /// The event `n` places behind the head of the in-order FIFO, if any: known long before it
    /// comes due.
    pub fn in_order_ahead(&self, n: usize) -> Option<Event> {
        self.in_order.get(n).map(|e| e.event)
    }

    pub fn push(&mut self, time_ns: u64, event: Event) {
        let entry = self.entry(time_ns, event);
        // While the list has room it takes anything due before the heap's first; once full,
        // only what is due before its own latest, which then moves to the heap.
        let is_near = match self.near.first() {
            Some(latest_near) if self.near.len() == NEAR_MAX => entry.before(latest_near),
            _ => self.far.first().is_none_or(|first| entry.before(first)),
        };
        if !is_near {
            self.far.push(entry);
            return;
        }
        // The entry is the newest, so it goes after every pending event due at or before it
        // (times alone decide): move those up one place as the walk passes them, insertion-sort
        // fashion, rather than walk first and then call memmove to open the gap.
        let mut at = self.near.len();
        self.near.push(entry);
        while at > 0 && self.near[at - 1].time_ns <= time_ns {
            self.near[at] = self.near[at - 1];
            at -= 1;
        }
        self.near[at] = entry;
        if self.near.len() > NEAR_MAX {
            let latest = self.near.remove(0);
            self.far.push(latest);
        }
    }

    #[cfg(test)]
    fn pop(&mut self) -> Option<(u64, Event)> {
        self.pop_until(u64::MAX)
    }

    /// The next event, if it is due at or before `end_ns`.
    pub fn pop_until(&mut self, end_ns: u64) -> Option<(u64, Event)> {
        if self.near.is_empty() {
            self.refill(); // and if it stays empty, so is the heap
        }
        let from_fifo = match (self.in_order.front(), self.near.last()) {
            (Some(head), Some(last)) => head.before(last),
            (head, None) => head.is_some(),
            (None, Some(_)) => false,
        };
        let next = if from_fifo {
            self.in_order.front()
        } else {
            self.near.last()
        }?;
        if next.time_ns > end_ns {
            return None;
        }
        let entry = if from_fifo {
            self.in_order.pop_front()
        } else {
            self.near.pop()
        }
        .expect("just seen");
        self.popped += 1;
        Some((entry.time_ns, entry.event))
    }

    /// Bring the earliest events back from the heap into the empty list. Otherwise, once events
    /// have spilled into the heap, new ones (mostly due soon, but after the heap's first) would
    /// keep going there too, and the list would stay empty.
    fn refill(&mut self) {
        while self.near.len() < NEAR_MAX / 2 {
            let Some(entry) = self.far.pop() else { break };
            self.near.push(entry);
        }
        self.near.reverse(); // latest first
    }

    /// Events processed so far.
    pub fn events(&self) -> u64 {
        self.popped
    }
}

/// Children of node `i` are `ARITY·i + 1 ..= ARITY·i + ARITY`: four children per node halve the
/// depth of a binary heap, and the four sit side by side in memory.
const ARITY: usize = 4;

#[derive(Debug, Default)]
struct Heap {
    entries: Vec<Entry>,
}

impl Heap {
    fn first(&self) -> Option<&Entry> {
        self.entries.first()
    }

    fn push(&mut self, entry: Entry) {
        // Sift up: move parents down until the entry's place is found.
        let mut at = self.entries.len();
        self.entries.push(entry);
        while at > 0 {
            let parent = (at - 1) / ARITY;
            if !entry.before(&self.entries[parent]) {
                break;
            }
            self.entries[at] = self.entries[parent];
            at = parent;
        }
        self.entries[at] = entry;
    }

    fn pop(&mut self) -> Option<Entry> {
        let last = self.entries.pop()?;
        let Some(&first) = self.entries.first() else {
            return Some(last);
        };
        // Sift the last entry down from the root: move the earliest child up while it is
        // earlier than that entry.
        let len = self.entries.len();
        let mut at = 0;
        loop {
            let first_child = ARITY * at + 1;
            if first_child >= len {
                break;
            }
            let end = (first_child + ARITY).min(len);
            let mut earliest = first_child;
            for child in first_child + 1..end {
                if self.entries[child].before(&self.entries[earliest]) {
                    earliest = child;
                }
            }
            if !self.entries[earliest].before(&last) {
                break;
            }
            self.entries[at] = self.entries[earliest];
            at = earliest;
        }
        self.entries[at] = last;
        Some(first)
    }
}

/// A deadline that is re-armed often but fires rarely (the RTO, re-armed on every ACK).
///
/// Moving the deadline later costs nothing: the pending heap entry stays, and when it fires
/// `fire` says "not yet" and asks for a new wake-up at the real deadline. Only moving the
/// deadline earlier pushes a new entry; the older, later entry becomes stale and is ignored.
#[derive(Debug, Clone, Copy, Default)]
pub struct Timer {
    deadline_ns: Option<u64>,
    /// Time of the heap entry this timer relies on, if any.
    wake_ns: Option<u64>,
}

/// What the owner of a timer should do after a change or a wake-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimerAction {
    Nothing,
    /// Push a wake-up event at this time.
    Schedule(u64),
    /// The deadline has come: act on it.
    Fire,
}

impl Timer {
    pub fn deadline_ns(&self) -> Option<u64> {
        self.deadline_ns
    }

    pub fn set(&mut self, deadline_ns: u64) -> TimerAction {
        self.deadline_ns = Some(deadline_ns);
        match self.wake_ns {
            Some(w) if w <= deadline_ns => TimerAction::Nothing,
            _ => {
                self.wake_ns = Some(deadline_ns);
                TimerAction::Schedule(deadline_ns)
            }
        }
    }

    pub fn clear(&mut self) {
        self.deadline_ns = None;
    }

    /// A wake-up scheduled for this timer popped at `now_ns`.
    pub fn on_wake(&mut self, now_ns: u64) -> TimerAction {
        if self.wake_ns != Some(now_ns) {
            return TimerAction::Nothing; // stale: a later or earlier entry is the live one
        }
        self.wake_ns = None;
        match self.deadline_ns {
            None => TimerAction::Nothing,
            Some(d) if d <= now_ns => {
                self.deadline_ns = None;
                TimerAction::Fire
            }
            Some(d) => {
                self.wake_ns = Some(d);
                TimerAction::Schedule(d)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_pop_in_insertion_order() {
        let mut q = EventQueue::default();
        q.push(5, Event::Sample);
        q.push(3, Event::FlowStart(2));
        q.push(5, Event::FlowStart(1));
        q.push(3, Event::FlowStart(0));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![
                (3, Event::FlowStart(2)),
                (3, Event::FlowStart(0)),
                (5, Event::Sample),
                (5, Event::FlowStart(1))
            ]
        );
        assert_eq!(q.events(), 4);
    }

    /// Runs `steps` pseudo-random steps from `seed`: each asks `schedule` to push event `i` given
    /// the time of the last pop and a random number, and returns the time it chose; two steps
    /// in five then pop. Checks the pops against a sort of everything pushed: (time, insertion
    /// number) ascending.
    fn check_pops_in_order(
        seed: u64,
        steps: u32,
        mut schedule: impl FnMut(&mut EventQueue, u64, u64, Event) -> u64,
    ) {
        let mut q = EventQueue::default();
        let (mut pushed, mut popped) = (Vec::new(), Vec::new());
        let mut x = seed;
        for i in 0..steps {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let now = popped.last().map_or(0, |&(t, _): &(u64, u32)| t);
            pushed.push((schedule(&mut q, now, x, Event::DelayedAck(i)), i));
            if x % 5 < 2 {
                let (t, Event::DelayedAck(id)) = q.pop().unwrap() else {
                    unreachable!()
                };
                popped.push((t, id));
            }
        }
        while let Some((t, Event::DelayedAck(id))) = q.pop() {
            popped.push((t, id));
        }
        // Nothing is pushed before the last pop, as in a simulation, so the pops come out
        // sorted by time and, at equal times, by insertion number: the order of the sort.
        assert!(popped.windows(2).all(|w| w[0] < w[1]), "out of order");
        pushed.sort_unstable();
        popped.sort_unstable();
        assert_eq!(popped, pushed);
    }

    #[test]
    fn pops_come_out_in_time_then_insertion_order_whatever_the_pushes() {
        check_pops_in_order(0x9e37_79b9_7f4a_7c15, 5_000, |q, now, x, event| {
            q.push(now + x % 50, event);
            now + x % 50
        });
    }

    #[test]
    fn in_order_pushes_interleave_with_the_others_by_time_then_insertion() {
        // A third of the pushes are deadlines a fixed time ahead (some of them, a little
        // earlier, fall back to the usual path) and a third are due at once, so that the FIFO's
        // head and the sorted list's last compete at equal times.
        let mut most_in_fifo = 0;
        check_pops_in_order(0x2545_f491_4f6c_dd1d, 20_000, |q, now, x, event| {
            let time_ns = match x % 3 {
                0 => now + 40 - x % 4,
                1 => now,
                _ => now + x % 60,
            };
            if x % 3 == 0 {
                q.push_in_order(time_ns, event);
            } else {
                q.push(time_ns, event);
            }
            most_in_fifo = most_in_fifo.max(q.in_order.len());
            time_ns
        });
        assert!(most_in_fifo > 10, "the FIFO was used");
    }

    #[test]
    fn the_in_order_fifo_shows_what_comes_later() {
        let mut q = EventQueue::default();
        q.push_in_order(40, Event::DelayedAck(7));
        q.push_in_order(45, Event::DelayedAck(8));
        q.push(1, Event::Sample);
        assert_eq!(q.in_order_ahead(1), Some(Event::DelayedAck(8)));
        assert_eq!(q.in_order_ahead(2), None);
        assert_eq!(q.pop_until(0), None, "nothing due yet");
        assert_eq!(q.pop(), Some((1, Event::Sample)));
        assert_eq!(q.pop_until(39), None);
        assert_eq!(q.pop_until(40), Some((40, Event::DelayedAck(7))));
        assert_eq!(q.in_order_ahead(0), Some(Event::DelayedAck(8)));
    }

    #[test]
    fn thousands_pending_spill_into_the_heap_and_still_pop_in_order() {
        // More events than the sorted list holds, pushed in descending then ascending time:
        // the latest go to the heap, and every pop is the earliest of both.
        let mut q = EventQueue::default();
        let times: Vec<u64> = (0..1_000)
            .rev()
            .chain(1_000..2_000)
            .map(|t| t * 7 % 1_999)
            .collect();
        for (i, &t) in times.iter().enumerate() {
            q.push(t, Event::FlowStart(i as u32));
        }
        assert!(q.far.entries.len() > 1_000, "the heap holds the overflow");
        let popped: Vec<u64> = std::iter::from_fn(|| q.pop().map(|(t, _)| t)).collect();
        let mut sorted = times.clone();
        sorted.sort_unstable();
        assert_eq!(popped, sorted);
    }

    #[test]
    fn a_timer_pushed_later_reuses_its_wake_up() {
        let mut t = Timer::default();
        assert_eq!(t.set(100), TimerAction::Schedule(100));
        assert_eq!(t.set(150), TimerAction::Nothing);
        assert_eq!(t.set(200), TimerAction::Nothing);
        // The wake-up at 100 finds the deadline moved to 200 and asks for one there.
        assert_eq!(t.on_wake(100), TimerAction::Schedule(200));
        assert_eq!(t.on_wake(200), TimerAction::Fire);
        assert_eq!(t.deadline_ns(), None);
    }

    #[test]
    fn a_timer_pulled_earlier_ignores_the_stale_wake_up() {
        let mut t = Timer::default();
        assert_eq!(t.set(100), TimerAction::Schedule(100));
        assert_eq!(t.set(50), TimerAction::Schedule(50));
        assert_eq!(t.on_wake(50), TimerAction::Fire);
        assert_eq!(t.on_wake(100), TimerAction::Nothing);
    }

    #[test]
    fn a_cleared_timer_does_not_fire() {
        let mut t = Timer::default();
        t.set(100);
        t.clear();
        assert_eq!(t.on_wake(100), TimerAction::Nothing);
    }
}

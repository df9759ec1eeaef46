//! The hosts: flows starting, their transports' calls and what they ask for (packets to
//! the NIC, timers, pacing), the NICs' wake-ups, and the release of finished flows.

use super::flows::{Flow, SenderEnd};
use super::{Event, Owner, Simulation, TimerRef, Wake, IDLE_TIMER};
use crate::host::WAKE;
use crate::net::{Packet, PacketKind};
use crate::results::FlowRecord;
use crate::sim::{mix64, Ps};
use crate::switch::Drops;
use crate::transport::{self, AnySender, HostAction, HostCx, Receiver, Sender};
use crate::workload::FlowSpec;
use std::sync::Arc;

impl Simulation {
    /// Puts a packet in host `h`'s NIC queue, or drops it when the NIC buffer is full.
    pub(super) fn enqueue_at_nic(&mut self, h: u32, #[allow(unused_mut)] mut pkt: Packet) {
        #[cfg(test)]
        if self.attach_exts && pkt.kind == PacketKind::Data {
            pkt.ext = Some(self.exts.insert(crate::net::Ext::Telemetry(Default::default())));
        }
        self.count_created(&pkt);
        let class = crate::switch::mmu::class_of(pkt.priority);
        if !self.nics[h as usize].push(pkt, &mut Drops { counters: &mut self.counters, exts: &mut self.exts }) {
            if self.lossless_classes & (1 << class) != 0 {
                self.counters.lossless_drops += 1;
            }
            return;
        }
        if pkt.kind == PacketKind::Data {
            self.flows.get_mut(pkt.flow).sender().nic_bytes += pkt.size as u64;
        }
    }

    /// Counts a packet a transport made, whether it is queued at the NIC or pulled
    /// straight onto the wire.
    #[inline]
    pub(super) fn count_created(&mut self, pkt: &Packet) {
        self.counters.created += 1;
        if pkt.kind.carries_payload() {
            self.counters.data_packets_sent += 1;
        }
    }

    /// Releases the finished flows that nothing is left to happen to: no packet of
    /// theirs in the network, no timer pending, no NIC pacing them. Their rows in the
    /// table take their final outcomes, and their state is freed. Called between events
    /// (no transport call is under way), so a flow it keeps waits for the next look.
    #[inline(never)]
    pub(super) fn release_quiet_flows(&mut self) {
        let mut candidates = std::mem::take(&mut self.finished_flows);
        candidates.sort_unstable();
        let in_network = with_packets(&candidates, self.packets());
        for (&fi, in_network) in candidates.iter().zip(in_network) {
            let flow = self.flows.get(fi).expect("a finished flow is released once");
            let paced = |h: u32| self.nics[h as usize].paces(fi);
            if in_network || flow.waits_for_timer() || paced(flow.spec.src) || paced(flow.spec.dst) {
                self.finished_flows.push(fi);
                continue;
            }
            let record = self.record_of(flow);
            self.released_cnps += flow.outcome(&self.stacks).cnps as u64;
            Arc::make_mut(&mut self.table).set(fi as usize, &record);
            self.keep_series_of(fi);
            self.flows.release(fi);
        }
    }

    pub(super) fn host_receive(&mut self, h: u32, pkt: Packet) {
        self.counters.delivered += 1;
        if self.counts_reordering && pkt.kind.is_forward() {
            self.note_order(&pkt);
        }
        #[cfg(test)]
        if let (Some(hops), PacketKind::Data) = (self.exts.telemetry(pkt.ext), pkt.kind) {
            self.delivered_stacks.push((pkt.flow, pkt.seq, hops.to_vec()));
        }
        self.with_host_cx(pkt.flow, h, Wake::Send, |flow, cx| match pkt.kind.is_forward() {
            true => flow.receiver.as_mut().expect("a flow's receiver is where its destination is").on_packet(&pkt, cx),
            false => flow.sender().transport.on_packet(&pkt, cx),
        });
        self.exts.release(pkt.ext);
    }

    /// Counts `pkt`, a packet its destination received, as reordered if a packet its flow
    /// sent after it arrived before it (a retransmission is sent anew: a late one is not
    /// reordered).
    #[inline(never)]
    fn note_order(&mut self, pkt: &Packet) {
        let flow = self.flows.get_mut(pkt.flow);
        let sent = (pkt.timestamp, pkt.seq);
        if sent < flow.newest_arrived {
            self.counters.packets_reordered += 1;
        } else {
            flow.newest_arrived = sent;
        }
    }

    /// Calls flow `fi`'s sender at its host `h`, then carries out what it asked for.
    pub(super) fn call_sender(&mut self, fi: u32, h: u32, wake: Wake, call: impl FnOnce(&mut AnySender, &mut HostCx)) {
        self.with_host_cx(fi, h, wake, |flow, cx| call(&mut flow.sender().transport, cx));
    }

    /// Runs `f` on flow `fi` with a `HostCx` at host `h` (its source or its
    /// destination), then carries out what it asked for, in order: its packets go to `h`'s
    /// NIC (and `wake` says whether to start the NIC's link), its timer request is kept if
    /// it is the earliest.
    #[inline]
    pub(super) fn with_host_cx(&mut self, fi: u32, h: u32, wake: Wake, f: impl FnOnce(&mut Flow, &mut HostCx)) {
        let flow = self.flows.get_mut(fi);
        let mut actions = std::mem::take(&mut self.actions);
        let nic_bytes = flow.sender.as_ref().map_or(0, |s| s.nic_bytes);
        let mut cx = HostCx::new(self.now, &mut self.stacks, &mut actions, &mut self.exts, nic_bytes);
        f(flow, &mut cx);
        let finished = cx.finished;
        self.carry_out(fi, h, wake, actions, finished);
    }

    /// Carries out what an end of flow `fi` asked at host `h` (`actions`, in order, and
    /// whether it finished).
    #[inline(always)]
    pub(super) fn carry_out(&mut self, fi: u32, h: u32, wake: Wake, mut actions: Vec<HostAction>, finished: bool) {
        if finished {
            self.flows_finished += 1;
            self.finished_flows.push(fi);
        }
        for action in actions.drain(..) {
            match action {
                HostAction::Send(pkt) => {
                    self.enqueue_at_nic(h, pkt);
                    if wake == Wake::Send {
                        self.kick(self.nics[h as usize].link);
                    }
                }
                HostAction::Timer(at) => self.request_flow_timer(fi, at, false),
                HostAction::IdleTimer(at) => self.request_flow_timer(fi, at, true),
                HostAction::Delivered => self.on_message_arrived(fi, h),
                HostAction::Pace { at, priority } => {
                    let hash = self.flows.get_mut(fi).sender().hash;
                    self.nics[h as usize].pace(fi, priority, hash, at);
                    if let (Some(at), Wake::Send) = (at, wake) {
                        self.wake_nic(h, at);
                    }
                }
            }
        }
        self.actions = actions;
    }

    /// Makes sure a timer event is pending for flow `fi` at `at` or earlier (one that
    /// keeps the run going, unless `idle`: `HostAction::IdleTimer`). Timer events are not
    /// cancelled: one that no longer matches the flow's pending time is ignored when it
    /// fires.
    pub(super) fn request_flow_timer(&mut self, fi: u32, at: Ps, idle: bool) {
        let sender = self.flows.get_mut(fi).sender();
        let pending = sender.timer_event_at;
        if pending.is_none_or(|t| at < t || (at == t && sender.timer_idle && !idle)) {
            sender.timer_event_at = Some(at);
            sender.timer_idle = idle;
            self.idle_timers += idle as usize;
            let token = if idle { IDLE_TIMER } else { 0 };
            self.events.push_far(at, Event::Timer(TimerRef { owner: Owner::Flow, id: fi, token }));
        }
    }

    #[inline(never)]
    pub(super) fn on_flow_start(&mut self) {
        if self.part.is_none() && self.finished_flows.len() >= self.release_at {
            self.release_quiet_flows();
            // Those still waiting (for a timer, say) are looked at again once as many
            // more have finished: every flow start looking at them again would cost
            // each start the whole network.
            self.release_at = self.release_batch.max(2 * self.finished_flows.len());
        }
        let spec = self.upcoming.next().expect("a flow starts");
        self.start_flow(spec);
        self.schedule_next_start();
    }

    /// Starts flow `spec` now, the next in start order; returns its index.
    pub(super) fn start_flow(&mut self, spec: FlowSpec) -> u32 {
        let fi = match &mut self.part {
            None => {
                let fi = self.flows.started() as u32;
                let table = Arc::make_mut(&mut self.table);
                // Rows of flows still to start that `flow_table` appended go: this one starts.
                table.truncate(fi as usize);
                table.push(&FlowRecord::unstarted(&spec, None));
                fi
            }
            Some(part) => {
                part.started();
                part.next_flow()
            }
        };
        let seed = self.seed;
        let hash = mix64(seed ^ mix64(spec.id.wrapping_mul(0x9e37) ^ ((spec.src as u64) << 32 | spec.dst as u64)));
        let forward = Packet::template(fi, spec.dst, hash as u32, spec.priority);
        let reverse = Packet { dst: spec.src, hash: (hash >> 32) as u32, ..forward };
        let path = spec.kind.needs_path(&self.stacks).then(|| self.path(spec.src, spec.dst));
        let src = spec.src;
        let mut actions = std::mem::take(&mut self.actions);
        let mut cx = HostCx::new(self.now, &mut self.stacks, &mut actions, &mut self.exts, 0);
        let (sender, receiver) = transport::open(&spec, forward, reverse, path.as_ref(), &mut cx);
        let finished = cx.finished;
        let sender = self.maybe_traced(&spec, sender);
        let sender = SenderEnd {
            drain_notices: sender.wants_drain_notices(),
            transport: sender,
            hash: forward.hash,
            timer_event_at: None,
            timer_idle: false,
            nic_bytes: 0,
        };
        let receiver = match &mut self.part {
            Some(part) if !part.owns_host(spec.dst) => {
                part.hand_over(fi, spec.clone(), receiver);
                None
            }
            _ => Some(receiver),
        };
        self.flows.start(fi, Flow { spec, sender: Some(sender), receiver, newest_arrived: (0, 0) });
        self.carry_out(fi, src, Wake::Send, actions, finished);
        fi
    }

    /// Schedules the next flow start (in a partition of a parallel run, the next of a
    /// flow whose source host is here: the others are counted and passed over).
    pub(super) fn schedule_next_start(&mut self) {
        if let Some(part) = &mut self.part {
            while let Some(src) = self.upcoming.peek_src() {
                if part.owns_host(src) {
                    break;
                }
                self.upcoming.next();
                part.next_flow();
            }
        }
        if let Some(start) = self.upcoming.peek_start() {
            self.events.push(start, Event::FlowStart);
        }
    }

    /// The next packet of host `h`'s paced flows, pulled from the first ready one; when
    /// none is ready, the NIC wakes when the earliest becomes ready.
    pub(super) fn pull_paced(&mut self, h: u32) -> Option<Packet> {
        let nic = &mut self.nics[h as usize];
        let Some(fi) = nic.next_paced(self.now) else {
            if let Some(at) = nic.earliest_paced() {
                self.wake_nic(h, at);
            }
            return None;
        };
        let mut pulled = None;
        self.call_sender(fi, h, Wake::Queue, |t, cx| pulled = t.pull(cx));
        debug_assert!(pulled.is_some(), "a flow that paced itself has a packet");
        let pkt = pulled?;
        self.count_created(&pkt);
        Some(pkt)
    }

    /// Makes host `h`'s NIC look for a paced packet at `at`: now, if that time has come,
    /// else through a wake-up event (one is pending for the earliest time asked).
    pub(super) fn wake_nic(&mut self, h: u32, at: Ps) {
        let nic = &mut self.nics[h as usize];
        if at <= self.now {
            let link = nic.link;
            self.kick(link);
        } else if nic.wake_at.is_none_or(|w| at < w) {
            nic.wake_at = Some(at);
            self.events.push(at, Event::Timer(TimerRef { owner: Owner::Nic, id: h, token: WAKE }));
        }
    }

    pub(super) fn on_nic_wake(&mut self, h: u32) {
        let nic = &mut self.nics[h as usize];
        if nic.wake_at == Some(self.now) {
            nic.wake_at = None;
        }
        let link = nic.link;
        self.kick(link);
    }

    /// One of flow `fi`'s packets left host `h`'s NIC. Called while the NIC is being
    /// served: packets sent now join the NIC queue without starting the link.
    pub(super) fn nic_drained(&mut self, h: u32, fi: u32) {
        self.call_sender(fi, h, Wake::Queue, |t, cx| t.on_nic_drained(cx));
    }

    pub(super) fn on_flow_timer(&mut self, fi: u32) {
        let Some(flow) = self.flows.get_mut_if_active(fi) else {
            return; // stale: the flow was released
        };
        let src = flow.spec.src;
        let sender = flow.sender();
        if sender.timer_event_at != Some(self.now) {
            return; // stale
        }
        sender.timer_event_at = None;
        self.call_sender(fi, src, Wake::Send, |t, cx| t.on_timer(cx));
    }
}

/// Which of the flows `candidates` (sorted) have a packet among `packets` (control
/// frames belong to no flow).
pub(super) fn with_packets<'a>(candidates: &[u32], packets: impl Iterator<Item = &'a Packet>) -> Vec<bool> {
    let mut found = vec![false; candidates.len()];
    for pkt in packets.filter(|p| p.kind != PacketKind::Control) {
        if let Ok(i) = candidates.binary_search(&pkt.flow) {
            found[i] = true;
        }
    }
    found
}

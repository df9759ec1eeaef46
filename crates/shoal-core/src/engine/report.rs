//! What a run produced, read off the simulation: flow records, counters and occupancy
//! statistics, and the conservation and accounting checks.

use super::{Flow, Link, Simulation};
use crate::host::Nic;
use crate::net::{NodeId, PacketKind};
use crate::observe::{Deadlock, IngressSample, Observer, Sample};
use crate::results::counters::{CoreLink, LinkCounters, MeanMax, PacketCounts, PoolStats, QueueStats, RunCounters};
use crate::results::{FlowRecord, FlowTable, PfcPortRecord};
use crate::sim::Ps;
use crate::stats::{DropReason, OccupancyDistribution, PauseEvent, PauseKey, SchemeCounters};
use crate::switch::flow_control::{FlowControlReport, HeadroomEpisode};
use crate::switch::marking::MarkRule;
use crate::switch::mmu::CLASSES;
use crate::switch::Switch;
use crate::transport::PathInfo;
use crate::workload::FlowSpec;
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;
use std::sync::Arc;

impl Simulation {
    /// Packets inside the network now: in NIC and switch queues, or on a wire (being
    /// serialized or propagating).
    pub fn packets_in_network(&self) -> u64 {
        let hosts: usize = self.nics.iter().map(Nic::len).sum();
        let switches: usize = self.switches.iter().map(|s| s.queued_packets()).sum();
        let links = self.links.iter().flat_map(|l| &l.wire).filter(|(_, p)| p.kind != PacketKind::Control).count();
        (hosts + switches + links) as u64
    }

    /// Every packet and frame in the network (in a partition of a parallel run, in its
    /// part of it): queued at a NIC or a switch, waiting at a link or on its wire.
    pub(super) fn packets(&self) -> impl Iterator<Item = &crate::net::Packet> {
        let part = self.part.as_ref();
        let nics = self.nics.iter().enumerate().filter(move |&(h, _)| part.is_none_or(|p| p.owns_host(h as u32)));
        let switches = self.switches.iter().enumerate().filter(move |&(s, _)| part.is_none_or(|p| p.owns_switch(s)));
        let (nics, switches) = (nics.flat_map(|(_, n)| n.packets()), switches.flat_map(|(_, s)| s.queued()));
        let links = self
            .links
            .iter()
            .flat_map(|l| l.control.iter().flat_map(|c| c.iter()).chain(l.wire.iter().map(|(_, p)| p)));
        nics.chain(switches).chain(links)
    }

    /// Packets and frames anywhere in the network that own a side-table payload.
    fn packets_with_ext(&self) -> usize {
        self.packets().filter(|p| p.ext.is_some()).count()
    }

    /// Control frames waiting at a link or on its wire.
    fn frames_in_network(&self) -> u64 {
        let waiting: usize = self.links.iter().filter_map(|l| l.control.as_ref()).map(|c| c.len()).sum();
        let wire = self.links.iter().flat_map(|l| &l.wire).filter(|(_, p)| p.kind == PacketKind::Control).count();
        (waiting + wire) as u64
    }

    /// Conservation and buffer-accounting checks; each violation is described.
    pub fn check_invariants(&self) -> Vec<String> {
        let mut errors = Vec::new();
        let c = &self.counters;
        let in_network = self.packets_in_network();
        if c.created != c.delivered + c.total_dropped() + in_network {
            errors.push(format!(
                "conservation: created {} != delivered {} + dropped {} + in network {in_network}",
                c.created,
                c.delivered,
                c.total_dropped()
            ));
        }
        let frames = self.frames_in_network();
        if c.frames_sent != c.frames_received + c.frames_corrupted + c.frames_lost + frames {
            errors.push(format!(
                "conservation: frames sent {} != received {} + corrupted {} + lost {} + in network {frames}",
                c.frames_sent, c.frames_received, c.frames_corrupted, c.frames_lost
            ));
        }
        let owned = self.packets_with_ext();
        if owned != self.exts.len() {
            errors
                .push(format!("side table: {} payloads, but {owned} packets in the network own one", self.exts.len()));
        }
        for (i, s) in self.switches.iter().enumerate() {
            errors.extend(s.check_accounting(i));
        }
        let mut flow_nic_bytes: FxHashMap<u32, u64> = FxHashMap::default();
        for (i, nic) in self.nics.iter().enumerate() {
            errors.extend(nic.check_accounting(i));
            for p in nic.packets().filter(|p| p.kind == PacketKind::Data) {
                *flow_nic_bytes.entry(p.flow).or_default() += p.size as u64;
            }
        }
        for (f, flow) in self.flows.active() {
            let queued = flow_nic_bytes.get(&f).copied().unwrap_or(0);
            let accounted = flow.sender.as_ref().map_or(0, |s| s.nic_bytes);
            if accounted != queued {
                errors.push(format!("flow {f}: {queued} B in its NIC queue but accounts {accounted} B"));
            }
        }
        let released = |p: &&crate::net::Packet| p.kind != PacketKind::Control && self.flows.get(p.flow).is_none();
        if let Some(p) = self.packets().find(released) {
            errors.push(format!("flow {}: released with a packet in the network ({p:?})", p.flow));
        }
        // A deadlock holds its packets for good, and is reported as such.
        if self.events.is_empty() && self.deadlocks().is_empty() {
            if in_network != 0 {
                let in_switches: usize = self.switches.iter().map(Switch::queued_packets).sum();
                let paused_nics = super::observers::held_nics(&self.nics);
                errors.push(format!(
                    "drained network still holds {in_network} packets ({in_switches} in switch queues; {paused_nics} paused NICs hold packets)"
                ));
            }
            for (i, s) in self.switches.iter().enumerate() {
                for (p, pool) in s.pools.iter().enumerate() {
                    if pool.shared_used != 0 || pool.occupancy.value() != 0 {
                        errors.push(format!("switch {i} pool {p}: counters not back to zero after draining"));
                    }
                }
            }
        }
        errors
    }

    /// The base one-way path from host `src` to host `dst`.
    pub(super) fn path(&self, src: u32, dst: u32) -> PathInfo {
        let mut link = &self.links[self.nics[src as usize].link as usize];
        let mut delay = link.delay;
        let mut rates = vec![link.rate.bps];
        while let NodeId::Switch(s) = link.to {
            let port = self.routes.next_hops(s, dst).first() as usize;
            link = &self.links[self.switches[s as usize].ports[port].link as usize];
            delay += link.delay;
            rates.push(link.rate.bps);
        }
        PathInfo { delay, rates }
    }

    /// The flow's FCT alone on an idle network, by its transport's rule (see
    /// `Stacks::ideal_fct`).
    pub fn ideal_fct(&self, spec: &FlowSpec) -> Option<Ps> {
        self.stacks.ideal_fct(spec, || self.path(spec.src, spec.dst))
    }

    /// The record of active flow `flow`, as its transport has it now.
    pub(super) fn record_of(&self, flow: &Flow) -> FlowRecord {
        self.record_with(&flow.spec, flow.outcome(&self.stacks))
    }

    /// The record of the flow of `spec` whose ends know `outcome`.
    pub(super) fn record_with(&self, spec: &FlowSpec, outcome: crate::transport::Outcome) -> FlowRecord {
        FlowRecord {
            finish: outcome.finished_at,
            retransmits: outcome.retransmits,
            timeouts: outcome.timeouts,
            delivered_bytes: outcome.delivered_bytes,
            ..FlowRecord::unstarted(spec, self.ideal_fct(spec))
        }
    }

    /// The flow table now, one row per flow of the run in start order: the rows of
    /// released flows as they ended, the active flows' as they stand, and the flows still
    /// to start with no outcome.
    pub fn flow_table(&mut self) -> Arc<FlowTable> {
        let mut table = std::mem::take(&mut self.table);
        let rows = Arc::make_mut(&mut table);
        for (i, flow) in self.flows.active() {
            rows.set(i as usize, &self.record_of(flow));
        }
        rows.truncate(self.flows.started());
        for spec in self.upcoming.clone() {
            rows.push(&FlowRecord::unstarted(&spec, self.ideal_fct(&spec)));
        }
        self.table = table;
        self.table.clone()
    }

    /// Every flow's record, as `flow_table` has them.
    pub fn flow_records(&self) -> Vec<FlowRecord> {
        self.records().collect()
    }

    /// Every flow's record in flow order, worked out one at a time: the rows of released
    /// flows, the active flows' transports, the flows still to start.
    fn records(&self) -> impl Iterator<Item = FlowRecord> + '_ {
        let started = (0..self.flows.started() as u32).map(|i| match self.flows.get(i) {
            Some(flow) => self.record_of(flow),
            None => self.table.record(i as usize),
        });
        let upcoming = self.upcoming.clone().map(|spec| FlowRecord::unstarted(&spec, self.ideal_fct(&spec)));
        started.chain(upcoming)
    }

    /// Each switch pool's occupancy distribution (`run.occupancy_cdf`), accounted up to
    /// now, as (switch, pool, distribution) in switch and pool order; empty when the run
    /// does not keep them.
    pub fn occupancy_distributions(&mut self) -> Vec<(u32, u32, &OccupancyDistribution)> {
        let now = self.now;
        for pool in self.switches.iter_mut().flat_map(|s| s.pools.iter_mut()) {
            pool.occupancy.close(now);
        }
        let mut out = Vec::new();
        for (s, switch) in self.switches.iter().enumerate() {
            for (p, pool) in switch.pools.iter().enumerate() {
                if let Some(distribution) = pool.occupancy.distribution() {
                    out.push((s as u32, p as u32, distribution));
                }
            }
        }
        out
    }

    /// The queue occupancy samples (`run.sample_interval`).
    pub fn samples(&self) -> &[Sample] {
        self.observed(|o| o.samples())
    }

    /// Each switch's ended headroom episodes (`FlowControl::headroom_episodes`), by
    /// switch index.
    pub fn headroom_episodes(&self) -> impl Iterator<Item = (u32, &[HeadroomEpisode])> {
        self.switches.iter().enumerate().map(|(s, switch)| (s as u32, switch.flow_control().headroom_episodes()))
    }

    /// The ingress occupancy samples of lossless classes (`run.sample_interval`).
    pub fn ingress_samples(&self) -> &[IngressSample] {
        self.observed(|o| o.ingress_samples())
    }

    /// The deadlocks found so far (with lossless flow control), in the order found.
    pub fn deadlocks(&self) -> &[Deadlock] {
        self.observed(|o| o.deadlocks())
    }

    /// What the observer that records it (each kind has one) recorded; empty if none did.
    fn observed<'a, T>(&'a self, record: impl Fn(&'a dyn Observer) -> &'a [T]) -> &'a [T] {
        self.observers.iter().map(|o| record(o.as_ref())).find(|r| !r.is_empty()).unwrap_or(&[])
    }

    /// Counters and occupancy statistics as JSON (`RunCounters`).
    pub fn counters_json(&mut self) -> serde_json::Value {
        serde_json::to_value(self.run_counters()).expect("counters always serialize")
    }

    /// Counters and occupancy statistics.
    pub fn run_counters(&mut self) -> RunCounters {
        let now = self.now.max(1);
        let c = &self.counters;
        // Corruption is listed only where a link can corrupt, so that the counters of
        // other runs stay as they were before links could.
        let corrupting = self.links.iter().any(|l| l.error_threshold > 0);
        let outages = self.outages.is_some();
        let drops = DropReason::ALL
            .iter()
            .filter(|&&r| corrupting || r != DropReason::LinkError)
            .filter(|&&r| outages || r != DropReason::LinkDown)
            .map(|r| (r.name(), c.dropped[*r as usize]))
            .collect();
        let marks_by_rule = MarkRule::ALL.iter().map(|r| (r.name(), c.marks_by_rule[*r as usize])).collect();
        let mut pools = Vec::new();
        let mut queues = Vec::new();
        for (si, s) in self.switches.iter_mut().enumerate() {
            for (pi, pool) in s.pools.iter_mut().enumerate() {
                pools.push(PoolStats {
                    switch: si,
                    pool: pi,
                    size: pool.size,
                    mean: pool.occupancy.mean(now),
                    p50: pool.occupancy.quantile(now, 0.5),
                    p99: pool.occupancy.quantile(now, 0.99),
                    max: pool.occupancy.max(),
                    now: pool.occupancy.value(),
                    drops: pool.drops,
                });
            }
            for pi in 0..s.ports.len() {
                for (qi, q) in s.port_queues(pi).iter().enumerate() {
                    if q.occupancy.max() > 0 {
                        queues.push(QueueStats {
                            switch: si,
                            port: pi,
                            queue: qi,
                            mean: q.occupancy.mean(now),
                            max: q.occupancy.max(),
                            now: q.bytes(),
                        });
                    }
                }
            }
        }
        let utilization = |l: &Link| l.tx_bytes as f64 * 8.0 / (l.rate.bps as f64 * now as f64 / 1e12);
        let down: Vec<f64> = self.links.iter().filter(|l| matches!(l.to, NodeId::Host(_))).map(utilization).collect();
        let core: Vec<f64> = self.links.iter().filter(|l| l.core).map(utilization).collect();
        let node = |n: NodeId| match n {
            NodeId::Switch(s) => s as usize,
            NodeId::Host(h) => h as usize,
        };
        let core_links = self
            .links
            .iter()
            .filter(|l| l.core)
            .map(|l| CoreLink { from_switch: node(l.from), to_switch: node(l.to), utilization: utilization(l) })
            .collect();
        let in_network = self.packets_in_network();
        let flows = self.flow_tally();
        let mut schemes = SchemeCounters::default();
        for switch in &self.switches {
            switch.flow_control().add_counters(&mut schemes);
        }
        let c = &self.counters;
        RunCounters {
            schemes: schemes.0,
            bytes_dropped: c.bytes_dropped,
            cnps: flows.cnps,
            data_packets_sent: c.data_packets_sent,
            drops,
            duration_ps: self.now,
            ecn_marks: c.ecn_marks,
            events: self.events_processed,
            frames_corrupted: corrupting.then_some(c.frames_corrupted),
            frames_lost_to_outages: outages.then_some(c.frames_lost),
            links: LinkCounters { core: MeanMax::of(&core), core_links, host_downlinks: MeanMax::of(&down) },
            marks_by_rule,
            packets: PacketCounts {
                delivered: c.delivered,
                dropped: c.total_dropped(),
                in_network,
                sent: c.created,
                reordered: self.counts_reordering.then_some(c.packets_reordered),
                switch_arrivals: c.switch_arrivals,
                switch_dropped: c.switch_dropped(),
            },
            pools,
            queues,
            switch_data_dropped: c.switch_data_dropped,
            timeouts: flows.timeouts,
        }
    }

    /// The flows' sums the counters report (their timeouts and the CNPs their senders
    /// received), from their records one at a time (without building the table, which
    /// a caller may hold).
    fn flow_tally(&self) -> FlowTally {
        let active_cnps: u64 = self.flows.active().map(|(_, f)| f.outcome(&self.stacks).cnps as u64).sum();
        let timeouts = self.records().map(|r| r.timeouts as u64).sum();
        FlowTally { cnps: self.released_cnps + active_cnps, timeouts }
    }
}

/// What `counters_json` reports of the flows.
struct FlowTally {
    timeouts: u64,
    cnps: u64,
}

impl Simulation {
    /// Whether some switch has a lossless class.
    pub fn has_lossless_classes(&self) -> bool {
        self.switches.iter().any(|s| s.lossless_classes() != 0)
    }

    /// Every pause frame received, in time order.
    pub fn pause_events(&self) -> &[PauseEvent] {
        self.pauses.events()
    }

    /// The pause-frame record of every (node, port, class) that sent or received a frame, in
    /// (node, port, class) order.
    pub fn pause_ports(&self) -> BTreeMap<PauseKey, PfcPortRecord> {
        let mut rows: BTreeMap<PauseKey, PfcPortRecord> = BTreeMap::new();
        for (&key, tally) in self.pauses.tallies() {
            let row = rows.entry(key).or_default();
            row.pauses_received = tally.pauses;
            row.resumes_received = tally.resumes;
            row.pauses_expired = tally.expiries;
            row.paused = tally.paused_until(self.now);
            row.longest_pause = tally.longest_until(self.now);
        }
        for (s, switch) in self.switches.iter().enumerate() {
            let flow_control = switch.flow_control();
            for port in 0..switch.ports.len() {
                for class in 0..=CLASSES {
                    let [pauses, resumes] = if class == CLASSES {
                        flow_control.port_frames_sent(port)
                    } else {
                        flow_control.frames_sent(port, class)
                    };
                    if pauses + resumes > 0 {
                        let key = PauseKey { node: NodeId::Switch(s as u32), port: port as u16, class: class as u8 };
                        let row = rows.entry(key).or_default();
                        (row.pauses_sent, row.resumes_sent) = (pauses, resumes);
                    }
                }
            }
        }
        rows
    }
}

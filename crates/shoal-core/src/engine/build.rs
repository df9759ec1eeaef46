//! Building a simulation from a scenario: the network with its switches, NICs and links,
//! the flows' stacks, the workload's stream, the observers, and the checks that need the
//! built network (each switch's own buffer).

use super::capture::Capture;
use super::collectives::CollectiveRun;
use super::outages::Outages;
use super::series::Series;
use super::{link_errors, Event, Flows, Link, Simulation, ENTITY_LIMIT};
use crate::budget::{self, RELEASE_BATCH};
use crate::config::ScenarioError;
use crate::host::Nic;
use crate::net::{self, Effects, ExtStore, IntFormat, NodeId, Routes};
use crate::observe::{DeadlockDetector, Observer, QueueSampler};
use crate::scenario::Scenario;
use crate::sim::{mix64, stream, EventQueue, LinkRate};
use crate::stats::{Counters, PauseLog};
use crate::switch::config::SwitchConfig;
use crate::switch::flow_control::{FlowControlEnv, IngressLink};
use crate::switch::Switch;
use crate::units::Bytes;
use crate::workload::collective::Collectives;
use crate::workload::FlowStream;
use std::collections::VecDeque;
use std::sync::Arc;

/// Mixed into the run's seed for each switch's flow-control stream (a fixed salt: each
/// switch's ECMP salt has another, so the two never coincide).
const FLOW_CONTROL_SALT: u64 = 0xbfc;

/// A switch's own buffer, set by `switch.buffer_of_node`.
#[derive(Clone, Debug, PartialEq)]
struct OwnBuffer {
    /// The node id that names the switch, as the key gives it.
    node: String,
    bytes: Bytes,
}

/// Each switch's own buffer (`switch.buffer_of_node`), by switch index: every key must
/// be the node id of a switch of `net` (named by `ids`), each switch named at most once.
fn switch_buffers(
    cfg: &SwitchConfig,
    net: &net::NetworkSpec,
    ids: &net::NodeIds,
) -> Result<Vec<Option<OwnBuffer>>, ScenarioError> {
    let mut buffers: Vec<Option<OwnBuffer>> = vec![None; net.switches as usize];
    for (node, &bytes) in &cfg.buffer_of_node {
        let key = format!("switch.buffer_of_node.{node}");
        let accepted = || {
            format!(
                "accepted: the node id of a switch; node ids run from 0 to {}, {}",
                ids.count().saturating_sub(1),
                ids.numbering()
            )
        };
        let id = node
            .parse::<u32>()
            .map_err(|_| ScenarioError::new(&key, format!("{node:?} is not a node id ({})", accepted())))?;
        let switch = match ids.node(id) {
            Some(NodeId::Switch(s)) => s,
            Some(host @ NodeId::Host(_)) => {
                return Err(ScenarioError::new(
                    &key,
                    format!("node {id} is {}, not a switch ({})", ids.describe(host), accepted()),
                ))
            }
            None => return Err(ScenarioError::new(&key, format!("there is no node {id} ({})", accepted()))),
        };
        if let Some(first) = &buffers[switch as usize] {
            return Err(ScenarioError::new(
                &key,
                format!("names the same switch as switch.buffer_of_node.{} (accepted: each switch once)", first.node),
            ));
        }
        buffers[switch as usize] = Some(OwnBuffer { node: node.clone(), bytes });
    }
    Ok(buffers)
}

/// Events name their links and flows in 29 bits (`ENTITY_LIMIT`).
fn check_entities(spec: &net::NetworkSpec, flows: &FlowStream, messages: u64) -> Result<(), ScenarioError> {
    let limit = ENTITY_LIMIT as u64;
    if spec.links.len() as u64 >= limit {
        let links = spec.links.len();
        return Err(ScenarioError::new("topology", format!("has {links} links (accepted: fewer than {limit})")));
    }
    if flows.remaining() + messages >= limit {
        let flows = flows.remaining() + messages;
        return Err(ScenarioError::new("workload", format!("makes {flows} flows (accepted: fewer than {limit})")));
    }
    Ok(())
}

impl Simulation {
    /// Validates `sc`, builds its network (with `sc.resolved()`'s derived defaults) and
    /// generates its workload.
    pub fn new(sc: &Scenario) -> Result<Simulation, ScenarioError> {
        sc.validate()?;
        let sc = &sc.resolved()?;
        let (spec, ids) = net::build_with_ids(&sc.topology)?;
        let buffers = switch_buffers(&sc.switch, &spec, &ids)?;
        if let Some(available) = budget::available_memory() {
            budget::MemoryEstimate::of(sc, &spec)?.check(&available)?;
        }
        let flows = FlowStream::new(&sc.workload, sc.run.seed, &spec)?;
        let collectives = Collectives::of(&sc.workload, spec.hosts)?;
        check_entities(&spec, &flows, collectives.as_ref().map_or(0, Collectives::messages))?;
        let mut sim = Self::with_flows(sc, &spec, &buffers, flows);
        if let Some(config) = &sc.run.series {
            let mut series = Series::new(config);
            if let Some(n) = config.sample {
                // `sample` draws among the flows chosen, counted ahead of the run; a
                // collective's messages get their ids as they start, so only their sizes count.
                let mut candidates = sim.upcoming.clone().filter(|f| series.chooses(f)).count() as u64;
                if let Some(c) = &collectives {
                    candidates += c.count_messages(|bytes| series.chooses_size(bytes));
                }
                series.sample(n, sc.run.seed, candidates);
            }
            sim.series = Some(Box::new(series));
        }
        if let Some(collectives) = collectives {
            sim.completing_flows += collectives.messages() as usize;
            let first = collectives.next_due();
            sim.collectives = Some(Box::new(CollectiveRun::new(collectives)));
            if let Some(at) = first {
                sim.schedule_collective_start(at);
            }
        }
        let outages = net::outages(&spec, &ids, &sc.topology)?;
        if !outages.is_empty() {
            sim.outages = Some(Box::new(Outages::new(&spec, &outages, sc.topology.reconvergence.0)));
            sim.schedule_outages();
        }
        if let Some(config) = &sc.run.pcap {
            let capture = Capture::new(config, &spec, &ids)?;
            for (l, link) in sim.links.iter_mut().enumerate() {
                link.watched |= capture.watches(l as u32);
            }
            sim.capture = Some(Box::new(capture));
        }
        sim.node_ids = Some(ids);
        sim.check_buffers(sc, &buffers)?;
        Ok(sim)
    }

    /// With `switch.buffer` or a switch's `switch.buffer_of_node`, every pool must keep
    /// room for a packet beside its reserves and its ports' headroom, which are known only
    /// once the switches are built. The packet is the largest the workloads send.
    fn check_buffers(&self, sc: &Scenario, buffers: &[Option<OwnBuffer>]) -> Result<(), ScenarioError> {
        let (packet, packet_keys) = sc.largest_packet_sent();
        let reserve = crate::switch::mmu::Reserve { bytes: sc.switch.reserved.0, per: sc.switch.reserve_per };
        let queues = sc.switch.queues as usize;
        for (s, switch) in self.switches.iter().enumerate() {
            let (key, buffer) = match (&buffers[s], sc.switch.buffer) {
                (Some(own), _) => (format!("switch.buffer_of_node.{}", own.node), own.bytes),
                (None, Some(buffer)) => ("switch.buffer".to_string(), buffer),
                (None, None) => continue,
            };
            for (p, pool) in switch.pools.iter().enumerate() {
                if pool.size >= packet {
                    continue;
                }
                let ports = switch.ports.iter().filter(|port| port.pool as usize == p).count();
                let reserved = reserve.total(ports, queues);
                let needed = reserved + pool.headroom + packet;
                let reserves = match sc.switch.reserve_per {
                    crate::switch::config::ReservePer::Queue => {
                        format!("{} per queue x {queues} queues x {ports} ports", sc.switch.reserved)
                    }
                    crate::switch::config::ReservePer::Port => {
                        format!("{} per port x {ports} ports", sc.switch.reserved)
                    }
                };
                return Err(ScenarioError::new(
                    key,
                    format!(
                        "{buffer} is too small: it leaves {} B shared in pool {p} of {}, which needs at least \
                         {needed} B ({:.2} MB): {reserved} B of reserves (switch.reserved = {reserves}), {} B of \
                         headroom (switch.flow_control) and one packet of {packet} B ({packet_keys}); accepted: at \
                         least {needed} B, or smaller reserves (switch.reserved, switch.queues, \
                         switch.reserve_per = \"port\")",
                        pool.size,
                        self.describe(NodeId::Switch(s as u32)),
                        needed as f64 / 1e6,
                        pool.headroom,
                    ),
                ));
            }
        }
        Ok(())
    }

    /// `buffers`: each switch's own buffer (`switch_buffers`), by switch index.
    fn with_flows(
        sc: &Scenario,
        spec: &net::NetworkSpec,
        buffers: &[Option<OwnBuffer>],
        upcoming: FlowStream,
    ) -> Simulation {
        let seed = sc.run.seed;
        let wiring = net::Wiring::of(spec);
        let mut from_port = vec![0u32; spec.links.len()];
        for ports in &wiring.switch_ports {
            for (p, &l) in ports.iter().enumerate() {
                from_port[l as usize] = p as u32;
            }
        }
        let mut links = Vec::with_capacity(spec.links.len());
        for (i, l) in spec.links.iter().enumerate() {
            links.push(Link {
                from: l.from,
                from_port: from_port[i],
                to: l.to,
                to_port: 0,
                rate: LinkRate::new(l.rate_bps),
                delay: l.delay,
                core: l.core,
                crosses: false,
                watched: l.error_rate > 0.0,
                error_threshold: link_errors::threshold(l.error_rate),
                busy_until: 0,
                tx_event: false,
                control: None,
                wire: VecDeque::new(),
                tx_bytes: 0,
            });
        }
        for i in 0..links.len() {
            links[i].to_port = links[net::reverse(i as u32) as usize].from_port;
        }
        let routes = Routes::compute(spec, &wiring);
        let switches: Vec<Switch> = wiring
            .switch_ports
            .iter()
            .enumerate()
            .map(|(i, ports)| {
                let salt = mix64(seed ^ mix64(0xec3f ^ i as u64));
                let rates: Vec<u64> = ports.iter().map(|&l| spec.links[l as usize].rate_bps).collect();
                let ingress_links = ports
                    .iter()
                    .map(|&l| {
                        let arriving = &spec.links[net::reverse(l) as usize];
                        IngressLink { rate_bps: arriving.rate_bps, delay: arriving.delay }
                    })
                    .collect();
                let env = FlowControlEnv {
                    ingress_links,
                    largest_packet: sc.largest_packet(),
                    queues: sc.switch.queues as usize,
                    seed: mix64(seed ^ mix64(FLOW_CONTROL_SALT ^ i as u64)),
                };
                // A switch of its own buffer is built from a copy of the settings with it.
                let own_cfg;
                let cfg = match &buffers[i] {
                    Some(own) => {
                        own_cfg = SwitchConfig { buffer: Some(own.bytes), ..sc.switch.clone() };
                        &own_cfg
                    }
                    None => &sc.switch,
                };
                let mut switch = Switch::with_env(cfg, ports, &rates, &env, salt, stream(seed, "switch", i as u64));
                if sc.rdma.cc.wants_telemetry() {
                    switch.keep_telemetry(
                        &rates,
                        IntFormat { values: sc.rdma.int_values, multi: sc.rdma.int_multi as u64 },
                    );
                }
                switch
            })
            .collect();
        let per_class = sc.switch.flow_control.pauses();
        let filters = sc.switch.flow_control.nic_filters();
        let nics = wiring
            .host_link
            .iter()
            .map(|&link| {
                let nic = Nic::from_config(link, &sc.host, per_class);
                match filters {
                    Some(vfids) => nic.obeying_filters(vfids),
                    None => nic,
                }
            })
            .collect();
        let host_rates = wiring.host_link.iter().map(|&l| spec.links[l as usize].rate_bps).collect();
        let completing_flows = upcoming.remaining_completing() as usize;
        let lossless_classes = switches.iter().fold(0, |mask, s| mask | s.lossless_classes());
        let mut sim = Simulation {
            now: 0,
            events: EventQueue::new(),
            links,
            nics,
            switches,
            routes,
            flows: Flows::default(),
            upcoming,
            table: Arc::default(),
            finished_flows: Vec::new(),
            release_batch: RELEASE_BATCH,
            release_at: RELEASE_BATCH,
            released_cnps: 0,
            stacks: sc.stacks(host_rates),
            counters: Counters::default(),
            stop_time: sc.run.stop_time.map(|t| t.0),
            observers: sc
                .run
                .sample_interval
                .map(|t| Box::new(QueueSampler::new(t.0)) as Box<dyn Observer>)
                .into_iter()
                .collect(),
            events_processed: 0,
            flows_finished: 0,
            completing_flows,
            finished: false,
            reached_time_limit: false,
            seed,
            actions: Vec::new(),
            effects: Effects::new(),
            exts: ExtStore::default(),
            pauses: PauseLog::default(),
            observations_pending: 0,
            idle_timers: 0,
            node_ids: None,
            lossless_classes,
            counts_reordering: sc.switch.load_balancing.splits_flows(),
            part: None,
            outages: None,
            collectives: None,
            capture: None,
            series: None,
            parallel: None,
            last_observation: 0,
            #[cfg(test)]
            attach_exts: false,
            #[cfg(test)]
            delivered_stacks: Vec::new(),
        };
        if sc.run.occupancy_cdf {
            let until = sc.run.occupancy_until.map(|t| t.0);
            for pool in sim.switches.iter_mut().flat_map(|s| s.pools.iter_mut()) {
                pool.occupancy.keep_distribution(until);
            }
        }
        sim.schedule_next_start();
        if let Some(watch) = sc.switch.flow_control.deadlock_watch() {
            let peers = sim.switch_peers();
            sim.observers.push(Box::new(DeadlockDetector::new(watch, peers)));
        }
        for i in 0..sim.observers.len() {
            sim.events.push(0, Event::Observe(i as u16));
        }
        sim.observations_pending = sim.observers.len();
        sim
    }

    /// By switch, by port: the switch at the far end of the port's link and the port the
    /// link arrives on; `None` toward a host.
    fn switch_peers(&self) -> Vec<Vec<Option<(u32, u16)>>> {
        let peer = |link: u32| {
            let link = &self.links[link as usize];
            match link.to {
                NodeId::Switch(d) => Some((d, link.to_port as u16)),
                NodeId::Host(_) => None,
            }
        };
        self.switches.iter().map(|s| s.ports.iter().map(|p| peer(p.link)).collect()).collect()
    }
}

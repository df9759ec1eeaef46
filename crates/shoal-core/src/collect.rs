//! A simulation's results read off it: the run files, the summary and the lossless
//! tables (`results`' types, which know nothing of the engine).

use crate::engine::Simulation;
use crate::net::NodeId;
use crate::observe::Deadlock;
use crate::results::summary::{DeadlockSummary, PfcSummary, RunEnd};
use crate::results::{
    json, CollectiveSummary, CollectiveTable, FlowTable, HeadroomTable, IngressTable, OccupancyTable, PfcEventTable,
    PfcPortRecord, PfcPortTable, PfcTables, RunFiles, RunTables, SampleTable, SeriesTable, Summary,
};
use crate::scenario::Scenario;

impl RunFiles {
    /// The results of `sim`, built from `scenario`. `warnings` are the scenario's; the
    /// summary adds the run's own (invariant violations, unfinished flows).
    /// `wall_time_s`: the wall-clock time the simulation took, if measured.
    pub fn collect(
        sim: &mut Simulation,
        scenario: &Scenario,
        warnings: Vec<String>,
        wall_time_s: Option<f64>,
    ) -> RunFiles {
        let flows = sim.flow_table();
        let summary = Summary::of_simulation(sim, scenario, &flows, warnings, wall_time_s);
        RunFiles {
            tables: RunTables::with_flows(sim, flows),
            summary_json: summary.to_json(),
            scenario_json: json::to_python_json(scenario),
            pcap: sim.capture_file().map(<[u8]>::to_vec),
        }
    }
}

impl RunTables {
    /// The tables of `sim` so far (its pools' occupancy accounted up to now).
    pub fn of_simulation(sim: &mut Simulation) -> RunTables {
        let flows = sim.flow_table();
        RunTables::with_flows(sim, flows)
    }

    /// The tables of `sim`, whose flow table is `flows`.
    fn with_flows(sim: &mut Simulation, flows: std::sync::Arc<FlowTable>) -> RunTables {
        let lossless = sim.has_lossless_classes();
        RunTables {
            flows,
            samples: SampleTable::from_samples(sim.samples()),
            pfc: PfcTables::of_simulation(sim).unwrap_or_default(),
            occupancy: OccupancyTable::of_simulation(sim),
            collectives: sim
                .collectives()
                .map(|c| CollectiveTable::from_iterations(c.iterations()))
                .unwrap_or_default(),
            series: SeriesTable::from_rows(&sim.series_rows()),
            lossless,
        }
    }
}

impl<'a> Summary<'a> {
    /// The summary of `sim`'s run: `table` is its flow table, `warnings` the scenario's
    /// (the run's invariant violations and unfinished flows are added).
    pub fn of_simulation(
        sim: &mut Simulation,
        scenario: &'a Scenario,
        table: &FlowTable,
        mut warnings: Vec<String>,
        wall_time_s: Option<f64>,
    ) -> Summary<'a> {
        warnings.extend(sim.check_invariants().into_iter().map(|v| format!("invariant violated: {v}")));
        if sim.reached_time_limit() {
            warnings.push(format!(
                "the run stopped at Shoal's simulated-time limit ({} s) with traffic that was not making \
                 progress; check rates, buffer sizes and the workload for a unit mistake",
                crate::sim::TIME_LIMIT / crate::sim::PS_PER_S
            ));
        }
        // Go-back-N needs a lossless fabric; selective repeat (IRN) is meant to run lossy.
        let go_back_n = scenario.rdma.loss_recovery.is_go_back_n();
        if let Some(why) = scenario.rdma_not_lossless().filter(|_| go_back_n) {
            let rdma = || (0..table.len()).filter(|&i| table.kind[i] == "rdma");
            let hurt = rdma().filter(|&i| table.retransmits[i] > 0 || !table.finished(i)).count();
            let (drops, sent) = (sim.counters().total_dropped(), sim.counters().created);
            if drops > 0 && hurt > 0 {
                warnings.push(format!(
                    "RDMA flows ran lossy ({why}): {drops} of {sent} packets ({:.3}%) were dropped, and {hurt} of {} \
                     RDMA connections resent after a loss (go-back-N resends everything after it) or stalled; \
                     RoCE needs [switch.flow_control] kind = \"pfc\" (or \"dsh\") covering the RDMA classes",
                    100.0 * drops as f64 / sent.max(1) as f64,
                    rdma().count()
                ));
            }
        }
        if sim.capture_left_out() > 0 {
            let max = scenario.run.pcap.as_ref().map_or(0, |p| p.max_packets);
            warnings.push(format!(
                "run.pcap: {} packets past max_packets = {max} were not written to trace.pcap",
                sim.capture_left_out()
            ));
        }
        let pfc = sim.has_lossless_classes().then(|| PfcSummary::of_simulation(sim));
        warnings.extend(pfc.iter().flat_map(|p| p.deadlocks.iter().map(|d| d.warning.clone())));
        let frames_corrupted = sim.counters().frames_corrupted;
        if let Some(p) = pfc.as_ref().filter(|p| p.lossless_drops > 0 && frames_corrupted > 0) {
            warnings.push(format!(
                "{} lossless packets were dropped, and {frames_corrupted} control frames were corrupted on lossy \
                 links: an upstream whose PAUSE was lost sends on past the headroom",
                p.lossless_drops
            ));
        } else if let Some(p) = pfc.as_ref().filter(|p| p.lossless_drops > 0 && p.frames_queued_behind > 0) {
            warnings.push(format!(
                "{} lossless packets were dropped while {} PFC frames waited behind other frames on their links: \
                 classes toggled PAUSE and RESUME faster than frames leave (as in ns3-datacenter, every frame is \
                 sent), so a PAUSE came later than the headroom (switch.flow_control.headroom) allows for; a \
                 larger headroom, a larger pool or congestion control keeps them",
                p.lossless_drops, p.frames_queued_behind
            ));
        }
        // A frozen fabric without a cycle ends the run with timers still set.
        let frozen = sim.deadlocks().iter().any(|d| d.without_cycle);
        let ended = match (sim.came_to_rest(), sim.deadlocks().is_empty()) {
            _ if frozen => RunEnd::Frozen,
            (false, _) => RunEnd::Stopped,
            (true, true) => RunEnd::AtRest,
            (true, false) => RunEnd::Deadlocked,
        };
        let mut summary =
            Summary::new(table, sim.run_counters(), scenario, crate::VERSION, warnings, wall_time_s, ended);
        summary.pfc = pfc;
        if let Some(c) = sim.collectives() {
            summary.collectives =
                Some(c.jobs().iter().zip(c.iterations()).map(|(job, its)| CollectiveSummary::of(job, its)).collect());
        }
        summary
    }
}

impl DeadlockSummary {
    fn of(d: &Deadlock, sim: &Simulation) -> DeadlockSummary {
        let hops: Vec<String> = d
            .cycle
            .iter()
            .map(|n| {
                let peer = sim.describe(sim.port_peer(n.switch, n.port));
                format!("{} port {} (to {peer}) class {}", sim.describe(NodeId::Switch(n.switch)), n.port, n.class)
            })
            .collect();
        let (onset_ns, detected_ns) = (d.onset as f64 / 1e3, d.detected as f64 / 1e3);
        let found = if d.frozen {
            format!(
                "found at {detected_ns} ns, where the network froze: nothing could move by itself, every queued \
                 packet held by a pause"
            )
        } else {
            format!("found at {detected_ns} ns")
        };
        let warning = if d.without_cycle {
            let mut held = Vec::new();
            if !hops.is_empty() {
                held.push(format!(
                    "{} egress queues paused by a neighbour that holds none of what they sent it ({})",
                    hops.len(),
                    hops.join(", ")
                ));
            }
            if d.held_nics > 0 {
                held.push(format!("{} host NICs held by a pause", d.held_nics));
            }
            format!(
                "frozen fabric from {onset_ns} ns ({found}), with no cycle of pauses to hold it: {}. The frames that \
                 would have ended these pauses were lost (corrupted on a lossy link), and nothing else can end them: \
                 the run ends here",
                held.join("; ")
            )
        } else {
            format!(
                "deadlock from {onset_ns} ns ({found}): {} egress queues, each paused while holding packets that wait \
                 for the next: {}",
                hops.len(),
                hops.join(" -> ")
            )
        };
        DeadlockSummary {
            onset_ns,
            detected_ns,
            cycle: d.cycle.clone(),
            frozen: d.frozen,
            without_cycle: d.without_cycle,
            held_nics: d.without_cycle.then_some(d.held_nics),
            warning,
        }
    }
}

impl PfcSummary {
    fn of_simulation(sim: &Simulation) -> PfcSummary {
        let rows = sim.pause_ports();
        let sum = |f: fn(&PfcPortRecord) -> u64| rows.values().map(f).sum();
        let paused = rows.values().filter(|r| r.pauses_received > 0).map(|r| r.paused);
        PfcSummary {
            pause_frames_sent: sum(|r| r.pauses_sent),
            resume_frames_sent: sum(|r| r.resumes_sent),
            pause_frames_received: sum(|r| r.pauses_received),
            resume_frames_received: sum(|r| r.resumes_received),
            paused_queues: paused.clone().count(),
            paused_ns: paused.clone().sum::<u64>() as f64 / 1e3,
            max_paused_ns: paused.max().unwrap_or(0) as f64 / 1e3,
            longest_pause_ns: rows.values().map(|r| r.longest_pause).max().unwrap_or(0) as f64 / 1e3,
            lossless_drops: sim.counters().lossless_drops,
            frames_queued_behind: sim.counters().frames_queued_behind,
            deadlocks: sim.deadlocks().iter().map(|d| DeadlockSummary::of(d, sim)).collect(),
        }
    }
}

impl PfcTables {
    /// The tables of `sim`, or `None` when no class is lossless.
    pub fn of_simulation(sim: &Simulation) -> Option<PfcTables> {
        sim.has_lossless_classes().then(|| PfcTables {
            events: PfcEventTable::from_events(sim.pause_events()),
            ports: PfcPortTable::from_rows(&sim.pause_ports()),
            ingress: IngressTable::from_samples(sim.ingress_samples()),
            headroom: HeadroomTable::from_episodes(sim.headroom_episodes()),
        })
    }
}

impl OccupancyTable {
    /// The distributions `sim` kept (`run.occupancy_cdf`), accounted up to now.
    pub fn of_simulation(sim: &mut Simulation) -> OccupancyTable {
        OccupancyTable::from_distributions(&sim.occupancy_distributions())
    }
}

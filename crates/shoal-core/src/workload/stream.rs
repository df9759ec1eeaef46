//! A run's flows in start order, drawn as the run reaches them: memory follows the
//! workloads, not the flows. Each workload draws its flows in its own order (starts
//! never decrease within one), and the run's order merges them by start time, a tie going
//! to the earlier workload: exactly a stable sort of all flows by start.

use super::{fixed_flows, fixed_pairs, plan_arrivals, read_trace, ArrivalFlows, FlowKind, FlowSpec, Plan, TraceRow};
use super::{ENDLESS, MAX_FLOWS};
use crate::config::ScenarioError;
use crate::net::NetworkSpec;
use crate::sim::{stream, Ps, Rng, PS_PER_S, TIME_LIMIT};
use crate::workload::config::{Arrival, Pattern, Workload};
use rand::Rng as _;
use rand_distr::{Distribution, Exp, LogNormal};
use std::collections::VecDeque;
use std::sync::Arc;

/// The flows of every workload of a run, merged in start order, ids assigned (a trace
/// keeps its own; the others are numbered from past the largest trace id, in start
/// order). Cloning it gives a stream that draws the same flows from the same point.
#[derive(Clone)]
pub struct FlowStream {
    workloads: Vec<WorkloadFlows>,
    /// The next flow of each workload, not yet taken.
    heads: Vec<Option<FlowSpec>>,
    next_id: u64,
    /// Flows still to come, and those of them whose kind completes.
    remaining: u64,
    remaining_completing: u64,
}

impl FlowStream {
    /// The flows of `workload` and its extra workloads on `net`, drawn from the run's
    /// `seed`, checked: at most `MAX_FLOWS` together.
    /// Counting them (and each workload's incast rounds, which number the queries) draws
    /// every workload once ahead of the run, keeping nothing.
    pub fn new(workload: &Workload, seed: u64, net: &NetworkSpec) -> Result<FlowStream, ScenarioError> {
        let mut workloads = Vec::new();
        let (mut total, mut completing, mut queries, mut next_id) = (0u64, 0u64, 0u64, 0u64);
        for (i, (path, w)) in workload.with_paths().enumerate() {
            let mut flows = WorkloadFlows::new(seed, net, w, i as u64, &path)?;
            let (mut rounds, mut n) = (0u64, 0u64);
            for f in flows.clone() {
                rounds = rounds.max(f.query.map_or(0, |q| q + 1));
                completing += u64::from(f.kind.completes());
                if flows.from_trace {
                    next_id = next_id.max(f.id + 1);
                }
                n += 1;
            }
            // Incast rounds are numbered per workload; they are unique in the run.
            flows.query_offset = queries;
            queries += rounds;
            total += n;
            workloads.push(flows);
        }
        if total > MAX_FLOWS {
            return Err(ScenarioError::new(
                "workload",
                format!("the workloads make {total} flows together (accepted: at most {MAX_FLOWS})"),
            ));
        }
        let heads = workloads.iter_mut().map(Iterator::next).collect();
        Ok(FlowStream { workloads, heads, next_id, remaining: total, remaining_completing: completing })
    }

    /// The start time of the next flow, if one is left.
    pub fn peek_start(&self) -> Option<Ps> {
        self.heads.iter().flatten().map(|f| f.start).min()
    }

    /// The source host of the next flow, if one is left.
    pub fn peek_src(&self) -> Option<u32> {
        self.heads.iter().flatten().min_by_key(|f| f.start).map(|f| f.src)
    }

    /// The next flow id, for a flow that starts beside the stream (a collective's).
    pub fn take_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id - 1
    }

    /// Flows still to come.
    pub fn remaining(&self) -> u64 {
        self.remaining
    }

    /// Flows still to come whose kind has a completion time.
    pub fn remaining_completing(&self) -> u64 {
        self.remaining_completing
    }
}

impl Iterator for FlowStream {
    type Item = FlowSpec;

    fn next(&mut self) -> Option<FlowSpec> {
        let (_, i) = self.heads.iter().enumerate().filter_map(|(i, h)| Some((h.as_ref()?.start, i))).min()?;
        let mut flow = std::mem::replace(&mut self.heads[i], self.workloads[i].next()).expect("a head");
        if !self.workloads[i].from_trace {
            flow.id = self.next_id;
            self.next_id += 1;
        }
        self.remaining -= 1;
        self.remaining_completing -= u64::from(flow.kind.completes());
        Some(flow)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = usize::try_from(self.remaining).unwrap_or(usize::MAX);
        (n, Some(n))
    }
}

/// One workload's flows in the order it draws them, with their priority class drawn
/// (`workload.priorities`) and their query numbered in the run.
#[derive(Clone)]
struct WorkloadFlows {
    draws: Draws,
    /// With `workload.priorities`: the stream that picks each flow's, and the choices.
    classes: Option<(Rng, Vec<u8>)>,
    /// The incast rounds of the workloads before this one.
    query_offset: u64,
    from_trace: bool,
}

impl WorkloadFlows {
    fn new(seed: u64, net: &NetworkSpec, w: &Workload, index: u64, path: &str) -> Result<Self, ScenarioError> {
        let classes =
            (!w.priorities.is_empty()).then(|| (stream(seed, "workload.classes", index), w.priorities.clone()));
        let draws = Draws::new(seed, net, w, index, path)?;
        Ok(WorkloadFlows { draws, classes, query_offset: 0, from_trace: w.pattern == Pattern::Trace })
    }
}

impl Iterator for WorkloadFlows {
    type Item = FlowSpec;

    fn next(&mut self) -> Option<FlowSpec> {
        let mut flow = self.draws.next()?;
        if let Some((rng, priorities)) = &mut self.classes {
            flow.priority = priorities[rng.gen_range(0..priorities.len())];
        }
        flow.query = flow.query.map(|q| q + self.query_offset);
        Some(flow)
    }
}

/// How a workload draws its flows.
#[derive(Clone)]
enum Draws {
    /// A load-driven pattern (all-to-all, many-to-few, fan-in).
    Arrivals(Box<Arrivals>),
    /// Incast rounds, long-lived flows or UDP: one flow per sender and round.
    Fixed(Fixed),
    /// A trace, read whole and sorted by start (a tie keeps the file's order); its flows
    /// are of `template`'s kind and, where a row gives none, priority.
    Listed { rows: Arc<Vec<TraceRow>>, next: usize, template: FlowSpec },
    /// A collective: its flows start as the run goes (`collective::Collectives`).
    ClosedLoop,
}

impl Draws {
    fn new(seed: u64, net: &NetworkSpec, w: &Workload, index: u64, path: &str) -> Result<Draws, ScenarioError> {
        let template = FlowSpec {
            id: 0,
            src: 0,
            dst: 0,
            bytes: 0,
            start: 0,
            priority: w.priority,
            kind: FlowKind::of(w),
            query: None,
        };
        Ok(match w.pattern {
            Pattern::AllToAll | Pattern::ManyToFew | Pattern::FanIn => {
                Draws::Arrivals(Box::new(Arrivals::new(seed, net, w, index, path, template)?))
            }
            Pattern::Incast | Pattern::LongLived | Pattern::Udp => Draws::Fixed(Fixed::new(net, w, path, template)?),
            Pattern::Trace => {
                let file = w.trace.as_deref().expect("validated: a trace pattern names its file");
                let mut rows = read_trace(file, net.hosts as u64, &format!("{path}.trace"))?;
                // A stable sort's scratch is half the trace again: spared when the file is
                // in start order already (as `shoal trace` writes it).
                if !rows.is_sorted_by_key(|r| r.start) {
                    rows.sort_by_key(|r| r.start);
                }
                Draws::Listed { rows: Arc::new(rows), next: 0, template }
            }
            Pattern::Collective => Draws::ClosedLoop,
        })
    }
}

impl Iterator for Draws {
    type Item = FlowSpec;

    fn next(&mut self) -> Option<FlowSpec> {
        match self {
            Draws::Arrivals(arrivals) => arrivals.next(),
            Draws::Fixed(fixed) => fixed.next(),
            Draws::Listed { rows, next, template } => {
                let flow = rows.get(*next)?.spec(template.kind, template.priority);
                *next += 1;
                Some(flow)
            }
            Draws::ClosedLoop => None,
        }
    }
}

/// The gap between two arrivals of a load-driven workload, in seconds.
#[derive(Clone)]
enum Gap {
    Poisson(Exp<f64>),
    Periodic(f64),
    Lognormal(LogNormal<f64>),
}

impl Gap {
    fn sample(&self, rng: &mut Rng) -> f64 {
        match self {
            Gap::Poisson(exp) => exp.sample(rng),
            Gap::Periodic(gap) => *gap,
            Gap::Lognormal(ln) => ln.sample(rng),
        }
    }
}

/// A load-driven workload's arrival process: each arrival brings one flow between a
/// random pair, or a fan-in round of flows to one receiver (all starting together).
#[derive(Clone)]
struct Arrivals {
    plan: Plan,
    gap: Gap,
    /// Independent streams, so that one kind of draw does not shift another.
    arrivals: Rng,
    sizes: Rng,
    pairs: Rng,
    /// Whether a flow goes to another site (`workload.sites`).
    remote_draws: Rng,
    /// The last arrival's time, seconds.
    t_s: f64,
    /// `workload.duration`: no flow starts at or after it. Without it, arrivals stop once
    /// `flows` flows were drawn (a fan-in round is drawn whole).
    duration: Option<Ps>,
    flows: u64,
    drawn: u64,
    fan_in: u32,
    fan_in_max: Option<u32>,
    /// The fan-in rounds so far (the next round's query).
    round: u64,
    /// The flow every draw fills in.
    template: FlowSpec,
    size: u64,
    /// The rest of the current fan-in round.
    pending: VecDeque<FlowSpec>,
    done: bool,
}

impl Arrivals {
    fn new(
        seed: u64,
        net: &NetworkSpec,
        w: &Workload,
        index: u64,
        path: &str,
        template: FlowSpec,
    ) -> Result<Self, ScenarioError> {
        let plan = plan_arrivals(net, w, path)?;
        let mean_gap_s = 1.0 / plan.arrivals_per_s;
        let gap = match w.arrival {
            Arrival::Poisson => Gap::Poisson(Exp::new(1.0 / mean_gap_s).expect("a positive rate")),
            Arrival::Periodic => Gap::Periodic(mean_gap_s),
            Arrival::Lognormal => {
                let sigma = w.lognormal_sigma;
                let mu = mean_gap_s.ln() - sigma * sigma / 2.0;
                Gap::Lognormal(LogNormal::new(mu, sigma).expect("a positive sigma"))
            }
        };
        Ok(Arrivals {
            plan,
            gap,
            arrivals: stream(seed, "workload.arrivals", index),
            sizes: stream(seed, "workload.sizes", index),
            pairs: stream(seed, "workload.pairs", index),
            remote_draws: stream(seed, "workload.sites", index),
            t_s: 0.0,
            duration: w.duration.map(|d| d.0),
            flows: w.flows,
            drawn: 0,
            fan_in: w.fan_in,
            fan_in_max: w.fan_in_max,
            round: 0,
            template,
            size: w.size.0,
            pending: VecDeque::new(),
            done: false,
        })
    }

    fn next(&mut self) -> Option<FlowSpec> {
        loop {
            if let Some(flow) = self.pending.pop_front() {
                return Some(flow);
            }
            if self.done {
                return None;
            }
            self.t_s += self.gap.sample(&mut self.arrivals);
            // Below TIME_LIMIT (checked by the plan, with a long tail's margin): the cast
            // cannot saturate; a flow that would start later ends the workload.
            let start = (self.t_s * PS_PER_S as f64).round().min(TIME_LIMIT as f64) as Ps;
            let over = match self.duration {
                Some(d) => start >= d,
                None => self.drawn >= self.flows,
            };
            if over {
                self.done = true;
                return None;
            }
            let Plan { senders, receivers, arrival, sites, .. } = &self.plan;
            let (pairs, sizes) = (&mut self.pairs, &mut self.sizes);
            let flow = FlowSpec { start, ..self.template.clone() };
            let cdf = match arrival {
                ArrivalFlows::One(cdf) => cdf,
                ArrivalFlows::FanIn { outside, sizes: round_sizes } => {
                    let i = pairs.gen_range(0..receivers.len());
                    let fan_in = match self.fan_in_max {
                        Some(max) => pairs.gen_range(self.fan_in..=max),
                        None => self.fan_in,
                    };
                    // Every sender outside the rack sends fan_in / n flows, and a random
                    // fan_in % n of them one more (the BFC paper's fan-ins up to 800 on
                    // 64 hosts); with fan_in <= n the senders are distinct.
                    let n = outside[i].len();
                    let (each, more) = (fan_in as usize / n, fan_in as usize % n);
                    let every = (0..n).flat_map(|s| std::iter::repeat_n(s, each));
                    for s in every.chain(rand::seq::index::sample(pairs, n, more)) {
                        let bytes = round_sizes.as_ref().map_or(self.size, |cdf| cdf.sample(sizes));
                        let (src, dst, query) = (outside[i][s], receivers[i], Some(self.round));
                        self.pending.push_back(FlowSpec { src, dst, bytes, query, ..flow.clone() });
                    }
                    self.drawn += fan_in as u64;
                    self.round += 1;
                    continue;
                }
            };
            let src = senders[pairs.gen_range(0..senders.len())];
            let dst = match sites {
                Some(sites) => sites.receiver(src, pairs, &mut self.remote_draws),
                None => loop {
                    let d = receivers[pairs.gen_range(0..receivers.len())];
                    if d != src {
                        break d;
                    }
                },
            };
            self.drawn += 1;
            return Some(FlowSpec { src, dst, bytes: cdf.sample(sizes), ..flow });
        }
    }
}

/// Incast rounds (every sender to its receiver, `repeats` rounds `period` apart),
/// long-lived TCP flows or UDP streams (one round).
#[derive(Clone)]
struct Fixed {
    senders: Vec<u32>,
    receivers: Vec<u32>,
    rounds: u64,
    /// The next flow: its round and its sender's index.
    round: u64,
    sender: usize,
    first_start: Ps,
    period: Ps,
    pattern: Pattern,
    template: FlowSpec,
}

impl Fixed {
    fn new(net: &NetworkSpec, w: &Workload, path: &str, template: FlowSpec) -> Result<Fixed, ScenarioError> {
        let (senders, receivers) = fixed_pairs(net, w, path)?;
        fixed_flows(w, senders.len(), path)?;
        let rounds = if w.pattern == Pattern::Incast { w.repeats as u64 } else { 1 };
        if rounds > 0 {
            if let Some((_, &src)) = senders.iter().enumerate().find(|&(i, &s)| receivers[i % receivers.len()] == s) {
                return Err(ScenarioError::new(format!("{path}.senders"), format!("host {src} would send to itself")));
            }
        }
        let template = match w.pattern {
            Pattern::Incast => FlowSpec { bytes: w.size.0, ..template },
            Pattern::LongLived => FlowSpec { bytes: ENDLESS, ..template },
            _ => FlowSpec {
                bytes: ENDLESS,
                kind: FlowKind::Udp { rate_bps: w.rate.0, stop: w.stop.map(|s| s.0), pacing: w.pacing },
                ..template
            },
        };
        Ok(Fixed {
            senders,
            receivers,
            rounds,
            round: 0,
            sender: 0,
            first_start: w.start.0,
            period: w.period.map_or(0, |p| p.0),
            pattern: w.pattern,
            template,
        })
    }

    fn next(&mut self) -> Option<FlowSpec> {
        if self.sender == self.senders.len() {
            self.round += 1;
            self.sender = 0;
        }
        if self.round >= self.rounds || self.senders.is_empty() {
            return None;
        }
        let (i, src) = (self.sender, self.senders[self.sender]);
        self.sender += 1;
        let start = self.first_start + self.round * self.period;
        let dst = self.receivers[i % self.receivers.len()];
        let query = (self.pattern == Pattern::Incast).then_some(self.round);
        Some(FlowSpec { src, dst, start, query, ..self.template.clone() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Scenario;

    /// The run's flows drawn all at once: every workload's flows, their queries numbered
    /// after the earlier workloads' rounds, stably sorted by start (a tie keeps the
    /// workloads' order), ids assigned in that order past the largest trace id.
    fn drawn_first(sc: &Scenario, net: &NetworkSpec) -> Vec<FlowSpec> {
        let mut all: Vec<(bool, FlowSpec)> = Vec::new();
        let mut queries = 0;
        for (i, (path, w)) in sc.workload_paths().enumerate() {
            let flows: Vec<FlowSpec> = WorkloadFlows::new(sc.run.seed, net, w, i as u64, &path).unwrap().collect();
            let rounds = flows.iter().filter_map(|f| f.query).max().map_or(0, |q| q + 1);
            let trace = w.pattern == Pattern::Trace;
            all.extend(flows.into_iter().map(|f| (trace, FlowSpec { query: f.query.map(|q| q + queries), ..f })));
            queries += rounds;
        }
        all.sort_by_key(|(_, f)| f.start);
        let mut next_id = all.iter().filter(|(t, _)| *t).map(|(_, f)| f.id + 1).max().unwrap_or(0);
        all.into_iter()
            .map(|(trace, f)| {
                let id = if trace { f.id } else { (next_id, next_id += 1).0 };
                FlowSpec { id, ..f }
            })
            .collect()
    }

    /// Merging the workloads as the run goes gives exactly the flows of drawing them all
    /// first: a Poisson all-to-all, fan-in rounds of random width, incast rounds (many
    /// flows at one start, tying with each other and with the others), priorities drawn
    /// from a list, and an unsorted trace with ties and ids of its own.
    #[test]
    fn the_stream_is_the_stable_sort_of_every_workloads_flows() {
        let dir = std::env::temp_dir().join(format!("shoal-stream-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let trace = dir.join("trace.csv");
        std::fs::write(
            &trace,
            "id,src,dst,bytes,start_ns\n70,1,2,5000,300000\n3,2,1,800,0\n9,3,4,900,300000\n12,4,5,100,150000\n",
        )
        .unwrap();
        let sc = Scenario::from_toml(&format!(
            r#"
            [topology]
            kind = "leaf_spine"
            leaves = 4
            spines = 2
            hosts_per_leaf = 4
            [workload]
            pattern = "all_to_all"
            cdf = "websearch"
            load = 0.5
            flows = 3000
            priorities = [1, 2, 5]
            [[workload.extra]]
            pattern = "fan_in"
            fan_in = 6
            fan_in_max = 20
            size = "10KB"
            load = 0.1
            duration = "2ms"
            [[workload.extra]]
            pattern = "incast"
            senders = "1-9"
            receiver = 0
            size = "30KB"
            repeats = 5
            period = "150us"
            [[workload.extra]]
            pattern = "trace"
            trace = "{}"
            "#,
            trace.display()
        ))
        .unwrap()
        .resolved()
        .unwrap();
        let net = crate::net::build(&sc.topology).unwrap();
        let streamed: Vec<FlowSpec> = FlowStream::new(&sc.workload, sc.run.seed, &net).unwrap().collect();
        let first = drawn_first(&sc, &net);
        let mut stream = FlowStream::new(&sc.workload, sc.run.seed, &net).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(first.len() > 3000 + 45 + 4, "{}", first.len());
        assert!(
            first.windows(2).any(|w| w[0].start == w[1].start && w[0].query != w[1].query),
            "ties across workloads"
        );
        assert_eq!(streamed, first);
        assert_eq!((stream.remaining() as usize, stream.size_hint().0), (first.len(), first.len()));
        stream.nth(99);
        assert_eq!(stream.peek_start(), Some(first[100].start));
        assert_eq!(stream.clone().collect::<Vec<_>>(), first[100..], "a clone draws what is left");
    }
}

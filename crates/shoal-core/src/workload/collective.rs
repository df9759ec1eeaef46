//! Collective traffic of distributed training, closed loop (`pattern = "collective"`).
//!
//! A job's hosts exchange messages in steps; a host takes its next step when the messages
//! it waits for have arrived whole (their receiver holds every byte), and its next
//! iteration `compute` after its part of the last one arrived. Every trigger is local to
//! one host: what arrives at a host decides when that host sends.
//!
//! * Ring all-reduce over hosts h_0..h_{n-1} (ascending): 2(n - 1) steps; in each, host
//!   h_i sends one chunk (`size` / n bytes, the first `size` mod n chunks a byte more) to
//!   h_{i+1 mod n}: chunk (i - s) mod n at reduce-scatter step s < n - 1, chunk
//!   (i + 1 - s') mod n at all-gather step s' = s - (n - 1). A host's step s + 1 starts
//!   when its step-s chunk has arrived.
//! * All-to-all: each host sends block j (`size` / n bytes, as chunks are) to host h_j,
//!   for every j but its own, to h_{i+1} first; its next iteration waits for the n - 1
//!   blocks sent to it.
//! * Parameter server: each worker sends `size` bytes to the server; once all have
//!   arrived, the server sends `size` bytes to each worker (in ascending order); a
//!   worker's next iteration waits for the server's answer.
//!
//! An iteration's time (`collectives.parquet`) runs from the start of its first message
//! to the arrival of its last.

use super::config::{CollectiveKind, Pattern, Workload};
use super::{FlowKind, FlowSpec, MAX_FLOWS};
use crate::config::ScenarioError;
use crate::sim::Ps;
use rustc_hash::FxHashMap;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// One collective job, checked: what its workload asks, on a network of known hosts.
///
/// Invariants: `hosts` is ascending, distinct and of at least 2 hosts (1 worker and the
/// server for a parameter server, which `hosts` leaves out); `bytes` is at least the
/// number of chunks, so that no message is empty.
#[derive(Clone, Debug, PartialEq)]
pub struct CollectiveJob {
    /// The key path of its workload (`workload`, `workload.extra[0]`, ...).
    pub workload: String,
    pub kind: CollectiveKind,
    /// The ring (or the workers of a parameter server).
    pub hosts: Vec<u32>,
    /// The parameter server.
    pub server: Option<u32>,
    /// `size`: the buffer each host reduces or exchanges (or each worker sends).
    pub bytes: u64,
    pub iterations: u32,
    /// The compute gap between a host's iterations.
    pub compute: Ps,
    pub start: Ps,
    pub flow: FlowKind,
    pub priority: u8,
}

impl CollectiveJob {
    /// The job of workload `w` (at key path `path`) on a network of `hosts` hosts, checked.
    pub fn of(w: &Workload, hosts: u32, path: &str) -> Result<CollectiveJob, ScenarioError> {
        debug_assert_eq!(w.pattern, Pattern::Collective);
        let key = |k: &str| format!("{path}.{k}");
        let kind = w.collective.unwrap_or_default();
        let mut members = match &w.senders {
            Some(set) => set.resolve(hosts as u64, &key("senders"))?,
            None => (0..hosts).collect(),
        };
        let server = match kind {
            CollectiveKind::ParameterServer => {
                if w.receiver < 0 || w.receiver as u64 >= hosts as u64 {
                    return Err(ScenarioError::not_accepted(
                        path,
                        "receiver",
                        w.receiver,
                        &format!("the parameter server, a host index 0..={}", hosts - 1),
                    ));
                }
                let server = w.receiver as u32;
                members.retain(|&h| h != server);
                if members.is_empty() {
                    return Err(ScenarioError::new(
                        key("senders"),
                        format!("holds no worker besides the server, receiver = {server} (accepted: 1 worker or more)"),
                    ));
                }
                Some(server)
            }
            _ if members.len() < 2 => {
                return Err(ScenarioError::new(
                    key("senders"),
                    format!("holds {} host (accepted: 2 hosts or more for a collective)", members.len()),
                ));
            }
            _ => None,
        };
        if w.repeats == 0 {
            return Err(ScenarioError::not_accepted(path, "repeats", 0, "1 iteration or more"));
        }
        let job = CollectiveJob {
            workload: path.to_string(),
            kind,
            hosts: members,
            server,
            bytes: w.size.0,
            iterations: w.repeats,
            compute: w.compute.map_or(0, |t| t.0),
            start: w.start.0,
            flow: FlowKind::of(w),
            priority: w.priority,
        };
        if job.bytes < job.chunks() {
            return Err(ScenarioError::not_accepted(
                path,
                "size",
                format!("{}B", job.bytes),
                &format!("at least {} bytes: a byte for each of the {} chunks", job.chunks(), job.chunks()),
            ));
        }
        if job.messages() > MAX_FLOWS {
            return Err(ScenarioError::new(
                key("repeats"),
                format!(
                    "{} iterations of {} messages make {} flows (accepted: at most {MAX_FLOWS})",
                    job.iterations,
                    job.messages_per_iteration(),
                    job.messages()
                ),
            ));
        }
        Ok(job)
    }

    /// The parts `bytes` is cut into: one per host (ring, all-to-all), or none.
    fn chunks(&self) -> u64 {
        match self.kind {
            CollectiveKind::ParameterServer => 1,
            _ => self.hosts.len() as u64,
        }
    }

    /// The size of chunk (or block) `c`.
    fn chunk_bytes(&self, c: u64) -> u64 {
        let n = self.chunks();
        self.bytes / n + u64::from(c < self.bytes % n)
    }

    /// Steps in an iteration.
    fn steps(&self) -> u32 {
        match self.kind {
            CollectiveKind::RingAllReduce => 2 * (self.hosts.len() as u32 - 1),
            CollectiveKind::AllToAll => 1,
            CollectiveKind::ParameterServer => 2,
        }
    }

    pub fn messages_per_iteration(&self) -> u64 {
        let n = self.hosts.len() as u64;
        match self.kind {
            CollectiveKind::RingAllReduce => n * 2 * (n - 1),
            CollectiveKind::AllToAll => n * (n - 1),
            CollectiveKind::ParameterServer => 2 * n,
        }
    }

    /// Every message of the job: the flows it makes when it runs to the end.
    pub fn messages(&self) -> u64 {
        self.messages_per_iteration() * self.iterations as u64
    }

    /// The link-rate bound of NCCL's bus bandwidth: the bytes the busiest host link
    /// carries per byte of `size` (`2(n - 1)/n` for a ring all-reduce, `(n - 1)/n` for
    /// all-to-all), or `None` (a parameter server, whose server link carries n times).
    pub fn bus_factor(&self) -> Option<f64> {
        let n = self.hosts.len() as f64;
        match self.kind {
            CollectiveKind::RingAllReduce => Some(2.0 * (n - 1.0) / n),
            CollectiveKind::AllToAll => Some((n - 1.0) / n),
            CollectiveKind::ParameterServer => None,
        }
    }

    /// Every (host, step) of an iteration at which a host sends.
    fn stages(&self) -> Vec<(u32, u32)> {
        match (self.kind, self.server) {
            (CollectiveKind::ParameterServer, Some(server)) => {
                self.hosts.iter().map(|&w| (w, 0)).chain([(server, 1)]).collect()
            }
            _ => self.hosts.iter().flat_map(|&h| (0..self.steps()).map(move |s| (h, s))).collect(),
        }
    }

    /// The sizes of the messages of one iteration.
    fn message_sizes(&self) -> Vec<u64> {
        let mut sends = Vec::new();
        for (host, step) in self.stages() {
            self.sends(host, step, &mut sends);
        }
        sends.into_iter().map(|(_, bytes)| bytes).collect()
    }

    /// The position of `host` in the ring.
    fn position(&self, host: u32) -> usize {
        self.hosts.binary_search(&host).expect("a job's messages go between its hosts")
    }

    /// The messages (destination, bytes) `host` sends at `step`, in the order they start.
    fn sends(&self, host: u32, step: u32, out: &mut Vec<(u32, u64)>) {
        let n = self.hosts.len();
        match self.kind {
            CollectiveKind::RingAllReduce => {
                let (i, s, m) = (self.position(host), step as usize, n - 1);
                let chunk = if s < m { (i + n - s) % n } else { (i + 1 + n - (s - m)) % n };
                out.push((self.hosts[(i + 1) % n], self.chunk_bytes(chunk as u64)));
            }
            CollectiveKind::AllToAll => {
                let i = self.position(host);
                out.extend((1..n).map(|k| (i + k) % n).map(|j| (self.hosts[j], self.chunk_bytes(j as u64))));
            }
            CollectiveKind::ParameterServer if step == 0 => out.push((self.server.expect("a server"), self.bytes)),
            CollectiveKind::ParameterServer => out.extend(self.hosts.iter().map(|&w| (w, self.bytes))),
        }
    }

    /// What the arrival at `host` of its messages of (`iteration`, `step`) makes it do
    /// next: how many such messages it waits for, and the (iteration, step) it then
    /// starts with the delay before it (`None` after its last).
    fn after(&self, iteration: u32, step: u32) -> (u32, Option<(u32, u32, Ps)>) {
        let next_iteration = (iteration + 1 < self.iterations).then_some((iteration + 1, 0, self.compute));
        match self.kind {
            CollectiveKind::RingAllReduce if step + 1 < self.steps() => (1, Some((iteration, step + 1, 0))),
            CollectiveKind::RingAllReduce => (1, next_iteration),
            CollectiveKind::AllToAll => (self.hosts.len() as u32 - 1, next_iteration),
            CollectiveKind::ParameterServer if step == 0 => (self.hosts.len() as u32, Some((iteration, 1, 0))),
            CollectiveKind::ParameterServer => (1, next_iteration),
        }
    }
}

/// One message of a collective: the flow of `job`'s (`iteration`, `step`) from `src`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Message {
    pub job: u32,
    pub iteration: u32,
    pub step: u32,
}

/// A message whose start is due: ordered by time, then by the order it became due in.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Due {
    at: Ps,
    order: u64,
    message: Message,
    src: u32,
    dst: u32,
    bytes: u64,
}

/// An iteration of a job, as far as it has run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IterationRecord {
    /// The start of its first message (`None`: not started).
    pub start: Option<Ps>,
    /// The arrival of its last message (`None`: not all arrived).
    pub end: Option<Ps>,
    /// Its messages that arrived.
    pub arrived: u64,
}

/// The collective jobs of a run while it runs: which messages are due to start, which
/// are in flight (by flow index), and what each host has received toward its next step.
///
/// Invariants: `in_flight` holds the started messages not yet arrived; `waiting` holds a
/// count for each (job, host, iteration, step) some but not all of whose messages to the
/// host arrived.
pub struct Collectives {
    jobs: Vec<CollectiveJob>,
    iterations: Vec<Vec<IterationRecord>>,
    due: BinaryHeap<Reverse<Due>>,
    next_order: u64,
    in_flight: FxHashMap<u32, Message>,
    waiting: FxHashMap<(u32, u32, u32, u32), u32>,
    sends: Vec<(u32, u64)>,
}

impl Collectives {
    /// The collective jobs of `workload` and its extra ones on a network of `hosts` hosts,
    /// with their first iterations due; `None` when there are none.
    pub fn of(workload: &Workload, hosts: u32) -> Result<Option<Collectives>, ScenarioError> {
        let jobs: Vec<CollectiveJob> = workload
            .with_paths()
            .filter(|(_, w)| w.pattern == Pattern::Collective)
            .map(|(path, w)| CollectiveJob::of(w, hosts, &path))
            .collect::<Result<_, _>>()?;
        if jobs.is_empty() {
            return Ok(None);
        }
        let iterations = jobs
            .iter()
            .map(|j| vec![IterationRecord { start: None, end: None, arrived: 0 }; j.iterations as usize])
            .collect();
        let mut c = Collectives {
            jobs,
            iterations,
            due: BinaryHeap::new(),
            next_order: 0,
            in_flight: FxHashMap::default(),
            waiting: FxHashMap::default(),
            sends: Vec::new(),
        };
        for job in 0..c.jobs.len() {
            // Every host of the ring (or every worker) takes an iteration's first step.
            for i in 0..c.jobs[job].hosts.len() {
                let (host, start) = (c.jobs[job].hosts[i], c.jobs[job].start);
                c.make_due(job as u32, host, 0, 0, start);
            }
        }
        Ok(Some(c))
    }

    pub fn jobs(&self) -> &[CollectiveJob] {
        &self.jobs
    }

    /// Each job's iterations so far.
    pub fn iterations(&self) -> &[Vec<IterationRecord>] {
        &self.iterations
    }

    /// The messages of every job: the flows they make when they run to the end.
    pub fn messages(&self) -> u64 {
        self.jobs.iter().map(CollectiveJob::messages).sum()
    }

    /// The messages of every job whose size `keep` accepts.
    pub fn count_messages(&self, keep: impl Fn(u64) -> bool) -> u64 {
        let per_job = |job: &CollectiveJob| job.message_sizes().into_iter().filter(|&b| keep(b)).count() as u64;
        self.jobs.iter().map(|job| per_job(job) * job.iterations as u64).sum()
    }

    /// When the earliest due message starts.
    pub fn next_due(&self) -> Option<Ps> {
        self.due.peek().map(|Reverse(d)| d.at)
    }

    /// Makes the messages `host` sends at (`iteration`, `step`) of `job` due at `at`.
    fn make_due(&mut self, job: u32, host: u32, iteration: u32, step: u32, at: Ps) {
        let mut sends = std::mem::take(&mut self.sends);
        self.jobs[job as usize].sends(host, step, &mut sends);
        for (dst, bytes) in sends.drain(..) {
            let message = Message { job, iteration, step };
            self.due.push(Reverse(Due { at, order: self.next_order, message, src: host, dst, bytes }));
            self.next_order += 1;
        }
        self.sends = sends;
    }

    /// Takes the earliest message due by `now` as a flow to start, id 0: the run numbers
    /// it. None when no message is due by then.
    pub fn take_due(&mut self, now: Ps) -> Option<(FlowSpec, Message)> {
        if self.next_due()? > now {
            return None;
        }
        let Reverse(d) = self.due.pop()?;
        let job = &self.jobs[d.message.job as usize];
        let spec = FlowSpec {
            id: 0,
            src: d.src,
            dst: d.dst,
            bytes: d.bytes,
            start: d.at,
            priority: job.priority,
            kind: job.flow,
            query: None,
        };
        Some((spec, d.message))
    }

    /// Message `message` started at `now` as flow `fi`.
    pub fn started(&mut self, fi: u32, message: Message, now: Ps) {
        self.in_flight.insert(fi, message);
        let record = &mut self.iterations[message.job as usize][message.iteration as usize];
        record.start = Some(record.start.map_or(now, |s| s.min(now)));
    }

    /// Flow `fi` arrived whole at its destination `dst` at `now`: if it is a message, the
    /// steps it completes become due. Returns when the earliest of those starts.
    pub fn arrived(&mut self, fi: u32, dst: u32, now: Ps) -> Option<Ps> {
        let m = self.in_flight.remove(&fi)?;
        let job = &self.jobs[m.job as usize];
        let per_iteration = job.messages_per_iteration();
        let (wanted, next) = job.after(m.iteration, m.step);
        let record = &mut self.iterations[m.job as usize][m.iteration as usize];
        record.arrived += 1;
        if record.arrived == per_iteration {
            record.end = Some(now);
        }
        let key = (m.job, dst, m.iteration, m.step);
        let count = self.waiting.entry(key).or_insert(0);
        *count += 1;
        if *count < wanted {
            return None;
        }
        self.waiting.remove(&key);
        let (iteration, step, delay) = next?;
        let at = now.saturating_add(delay);
        self.make_due(m.job, dst, iteration, step, at);
        Some(at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ScenarioError;
    use crate::units::{Bytes, Time};
    use crate::workload::config::HostSet;

    fn workload(kind: CollectiveKind, hosts: &str, size: u64, iterations: u32) -> Workload {
        Workload {
            pattern: Pattern::Collective,
            collective: Some(kind),
            senders: Some(HostSet::Text(hosts.into())),
            size: Bytes(size),
            repeats: iterations,
            compute: Some(Time(5_000_000)),
            ..Workload::default()
        }
    }

    fn job(kind: CollectiveKind, hosts: &str, size: u64) -> CollectiveJob {
        CollectiveJob::of(&workload(kind, hosts, size, 1), 16, "workload").unwrap()
    }

    fn sends(job: &CollectiveJob, host: u32, step: u32) -> Vec<(u32, u64)> {
        let mut out = Vec::new();
        job.sends(host, step, &mut out);
        out
    }

    /// Over the 2(n - 1) steps of a ring all-reduce, each host sends every chunk but one
    /// during reduce-scatter (all but the one it ends up owning, (i + 1) mod n) and every
    /// chunk but one during all-gather (all but the one it receives last, i + 2), always
    /// to the next host: 2(n - 1)/n of `size` in all.
    #[test]
    fn ring_all_reduce_sends_each_chunk_once_per_phase() {
        let job = job(CollectiveKind::RingAllReduce, "3,5,7,9", 4003);
        let n = 4usize;
        assert_eq!(job.steps(), 6);
        for (i, &h) in job.hosts.iter().enumerate() {
            let all: Vec<Vec<(u32, u64)>> = (0..6).map(|s| sends(&job, h, s)).collect();
            assert!(all.iter().all(|s| s.len() == 1 && s[0].0 == job.hosts[(i + 1) % n]));
            let total: u64 = all.iter().map(|s| s[0].1).sum();
            let owned = job.chunk_bytes(((i + 1) % n) as u64);
            let last = job.chunk_bytes(((i + 2) % n) as u64);
            assert_eq!(total, 2 * 4003 - owned - last, "host {h}");
        }
        // 4003 = 4 x 1000 + 3: three chunks of 1001 bytes, one of 1000.
        assert_eq!((0..4).map(|c| job.chunk_bytes(c)).collect::<Vec<_>>(), vec![1001, 1001, 1001, 1000]);
        assert_eq!(job.messages_per_iteration(), 4 * 6);
    }

    /// An iteration's stages send as many messages as the formula counts, and a ring's
    /// (or all-to-all's) carry `size` 2(n - 1)/n (or (n - 1)/n) times over all hosts.
    #[test]
    fn the_stages_of_an_iteration_send_every_message_once() {
        for kind in [CollectiveKind::RingAllReduce, CollectiveKind::AllToAll, CollectiveKind::ParameterServer] {
            let job = job(kind, "1-5", 5000);
            let sizes = job.message_sizes();
            assert_eq!(sizes.len() as u64, job.messages_per_iteration(), "{kind:?}");
            let total: u64 = sizes.iter().sum();
            let expected = match kind {
                CollectiveKind::RingAllReduce => 5 * 2 * 4 * 1000,
                CollectiveKind::AllToAll => 5 * 4 * 1000,
                CollectiveKind::ParameterServer => 2 * 5 * 5000,
            };
            assert_eq!(total, expected, "{kind:?}");
        }
    }

    #[test]
    fn all_to_all_sends_each_block_to_its_host() {
        let job = job(CollectiveKind::AllToAll, "0-3", 4000);
        assert_eq!(sends(&job, 2, 0), vec![(3, 1000), (0, 1000), (1, 1000)]);
        assert_eq!(job.after(0, 0).0, 3, "a host waits for the blocks of the 3 others");
    }

    #[test]
    fn parameter_server_gathers_then_answers() {
        let mut w = workload(CollectiveKind::ParameterServer, "0-3", 500, 1);
        w.receiver = 2;
        let job = CollectiveJob::of(&w, 16, "workload").unwrap();
        assert_eq!((job.hosts.clone(), job.server), (vec![0, 1, 3], Some(2)));
        assert_eq!(sends(&job, 0, 0), vec![(2, 500)]);
        assert_eq!(sends(&job, 2, 1), vec![(0, 500), (1, 500), (3, 500)]);
        assert_eq!(job.after(0, 0), (3, Some((0, 1, 0))), "the server waits for the 3 workers");
    }

    /// A ring all-reduce played by hand: each arrival starts the receiver's next step,
    /// the last of an iteration its next iteration after the compute gap, and the
    /// iteration's time runs from its first start to its last arrival.
    #[test]
    fn a_ring_runs_step_by_step_and_times_its_iterations() {
        let mut c = Collectives::of(&workload(CollectiveKind::RingAllReduce, "0-2", 3000, 2), 4).unwrap().unwrap();
        assert_eq!(c.messages(), 2 * 3 * 4);
        let mut fi = 0;
        let mut now = 0;
        let mut in_flight = Vec::new();
        for _ in 0..8 {
            while let Some((spec, m)) = c.take_due(now) {
                assert_eq!(spec.bytes, 1000);
                c.started(fi, m, now);
                in_flight.push((fi, spec.dst));
                fi += 1;
            }
            assert_eq!(in_flight.len(), 3, "every host has exactly one chunk on its way");
            now += 1_000_000;
            let mut next = Vec::new();
            for (f, dst) in in_flight.drain(..) {
                next.extend(c.arrived(f, dst, now));
            }
            now = next.iter().copied().max().unwrap_or(now);
        }
        assert!(c.next_due().is_none() && c.in_flight.is_empty() && c.waiting.is_empty());
        let its = c.iterations()[0].clone();
        assert_eq!(its[0], IterationRecord { start: Some(0), end: Some(4_000_000), arrived: 12 });
        // The second starts the compute gap (5 us) after the first ends.
        assert_eq!(its[1], IterationRecord { start: Some(9_000_000), end: Some(13_000_000), arrived: 12 });
    }

    #[test]
    fn bad_collectives_are_refused_by_key() {
        let refusal = |w: Workload| -> ScenarioError { CollectiveJob::of(&w, 16, "workload").unwrap_err() };
        let e = refusal(workload(CollectiveKind::RingAllReduce, "4", 100, 1));
        assert!(e.to_string().contains("workload.senders") && e.to_string().contains("2 hosts or more"), "{e}");
        let e = refusal(workload(CollectiveKind::AllToAll, "0-7", 5, 1));
        assert!(e.to_string().contains("workload.size") && e.to_string().contains("at least 8 bytes"), "{e}");
        let e = refusal(workload(CollectiveKind::RingAllReduce, "0-7", 800, 0));
        assert!(e.to_string().contains("workload.repeats"), "{e}");
        let mut w = workload(CollectiveKind::ParameterServer, "3", 100, 1);
        w.receiver = 3;
        let e = refusal(w.clone());
        assert!(e.to_string().contains("no worker besides the server"), "{e}");
        w.receiver = 16;
        let e = refusal(w);
        assert!(e.to_string().contains("workload.receiver") && e.to_string().contains("0..=15"), "{e}");
    }
}

//! The parallel engine: one run cut into partitions (`cut`), each a `Simulation` of its
//! own that holds the nodes it owns, advancing together in windows.
//!
//! A window runs from the earliest pending event of any partition for at most the
//! lookahead (the smallest delay of a link between partitions): what one partition sends
//! to another in a window arrives after it, so within a window the partitions are
//! independent and each may run on its own thread. Between windows the packets on the
//! wires between partitions move to their receivers, and so do the receiving ends of the
//! flows that started (`Part`). Events are ordered by their content (`KeyedEvent`), not by
//! who scheduled them, so every partition runs its events in the order a single
//! simulation would, and the results are the same for any number of threads.
//!
//! The `Simulation` the caller holds is partition 0; the others wait in `Parallel` and are
//! folded into it when the run ends, so that everything read off a finished run is read
//! as from one simulation.

mod barrier;
mod mail;

use super::cut::Cut;
use super::{Event, Owner, Simulation, TimerRef, IDLE_TIMER};
use crate::config::ScenarioError;
use crate::host::Nic;
use crate::net::{self, Ext, NodeId, Packet};
use crate::results::FlowRecord;
use crate::scenario::Scenario;
use crate::sim::{EventQueue, KeyedEvent, Ps, TIME_LIMIT};
use crate::switch::Switch;
use crate::transport::AnyReceiver;
use crate::workload::{FlowSpec, FlowStream};
use barrier::{BreakOnPanic, SpinBarrier};
use mail::{Batch, Mailboxes};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// The window end that tells the threads of a parallel run to stop.
const STOP: Ps = Ps::MAX;

/// A partition's place in a parallel run.
pub(super) struct Part {
    id: u16,
    cut: Arc<Cut>,
    /// The index of the next flow of the stream (every flow of the run counts, wherever it
    /// starts).
    next_flow: u32,
    /// Flows started here.
    started_here: usize,
    /// What this partition sent to each other one in the window under way (by
    /// destination), posted at its end.
    outbox: Vec<Batch>,
    /// The packets in `outbox` (and those posted, until they are delivered) and the
    /// earliest arrival among them.
    sent: (usize, Ps),
    /// The end of the window under way: what this partition sends arrives after it.
    window_end: Ps,
    /// Mail being taken (a list kept for its memory).
    inbox: Batch,
    /// The last event run that was not an idle timer, as (time, key), and the idle
    /// timers run after it in this window: if the run turns out to have ended before
    /// them, a single simulation would not have run them (`finish`).
    last_busy: (Ps, u64),
    idle_after: Vec<(Ps, u64)>,
}

impl Part {
    /// The index of the flow the stream gives next, taken.
    pub fn next_flow(&mut self) -> u32 {
        self.next_flow += 1;
        self.next_flow - 1
    }

    pub fn owns_host(&self, h: u32) -> bool {
        self.cut.host[h as usize] == self.id
    }

    pub fn owns_switch(&self, s: usize) -> bool {
        self.cut.switch[s] == self.id
    }

    /// Flow `fi` started here; its receiving end goes to its destination's partition
    /// after this window (before any packet of the flow can reach it: the flow's packets
    /// cross a link between partitions, which takes the lookahead at least).
    pub fn hand_over(&mut self, fi: u32, spec: FlowSpec, receiver: AnyReceiver) {
        let to = self.cut.host[spec.dst as usize] as usize;
        self.outbox[to].receiver(fi, spec, receiver);
    }

    pub fn started(&mut self) {
        self.started_here += 1;
    }

    /// `packet` went on the wire of `link`, which leads to `to` in another partition.
    ///
    /// It must arrive at the window's end or later, or the partition it reaches would
    /// have run past its arrival: the lookahead was wrong, which is a bug (the check is
    /// cheap, per crossing packet, and always on).
    pub fn send(&mut self, link: u32, to: NodeId, arrival: Ps, packet: Packet, ext: Option<Ext>) {
        let end = self.window_end;
        assert!(arrival >= end, "link {link}: a packet arrives at {arrival} ps, inside the window it was sent in (to {end} ps): the lookahead is too long");
        self.sent = (self.sent.0 + 1, self.sent.1.min(arrival));
        self.outbox[self.cut.of(to) as usize].packet(link, arrival, packet, ext);
    }
}

/// Where a partition stands after a window, as the coordinator needs it.
#[derive(Clone, Copy, Debug, Default)]
struct Report {
    /// Its next event (an idle timer's included), or the earliest arrival of the packets
    /// it sent, if sooner.
    next: Option<Ps>,
    /// Its events pending but idle timers, and the packets it sent.
    busy: usize,
    events: u64,
    finished: usize,
    /// The wall time the window took here.
    work_ns: u64,
}

/// The partitions of a parallel run other than 0, and how they were cut.
pub(super) struct Parallel {
    others: Vec<Mutex<Simulation>>,
    cut: Arc<Cut>,
    /// The threads the run uses: one for each home partition at least.
    threads: usize,
    /// The partitions take turns on one thread, each window's work timed alone, to
    /// project what `threads` cores would do (`docs/parallel.md`).
    serial: bool,
    /// The run's flows in start order, from the first: the table's rows when the run ends.
    stream: FlowStream,
    mail: Mailboxes,
    between: Between,
}

/// What the coordinator keeps between windows.
struct Between {
    /// When each observer (partition 0's) looks next, if it will.
    next_observation: Vec<Option<Ps>>,
    /// What the windows cost so far.
    profile: WindowProfile,
    /// The records of the flows released so far (their rows, once the table is built).
    released: Vec<(u32, FlowRecord)>,
}

/// What a parallel run's windows cost: their number, and the wall time each partition
/// spent running events in them, so that the speedup of more threads can be projected
/// (`docs/parallel.md`).
#[derive(Clone, Debug, Default)]
pub struct WindowProfile {
    pub windows: u64,
    pub threads: usize,
    /// Per partition, the nanoseconds spent in windows.
    pub work_ns: Vec<u64>,
    /// The sum over windows of the time each would take on `threads` threads with free
    /// barriers (`makespan`): the run's critical path.
    pub critical_ns: u64,
    /// Nanoseconds between windows (the exchange, the observations, the barriers).
    pub between_ns: u64,
}

impl Simulation {
    /// `sc` run on up to `threads` threads: its network cut into as many partitions as it
    /// allows (`Cut`). With one, with links of no delay between partitions (no lookahead),
    /// with outages (`topology.outages`), with collective jobs (whose flows are numbered
    /// as they start), with traced flows (`run.series`) or a capture (`run.pcap`), it is
    /// the single simulation `new` builds.
    pub fn with_threads(sc: &Scenario, threads: usize) -> Result<Simulation, ScenarioError> {
        let mut sim = Simulation::new(sc)?;
        let serial_only =
            sim.outages.is_some() || sim.collectives.is_some() || sim.series.is_some() || sim.capture.is_some();
        if threads <= 1 || serial_only {
            return Ok(sim);
        }
        let spec = net::build_with_ids(&sc.resolved()?.topology)?.0;
        // Each host's share of the work: the packets it sends and receives, roughly.
        let mut weight = vec![0u64; spec.hosts as usize];
        for flow in sim.upcoming.clone() {
            let packets = 1 + flow.bytes.min(1 << 30) / 1000;
            weight[flow.src as usize] += packets;
            weight[flow.dst as usize] += packets;
        }
        let cut = Arc::new(Cut::weighted(&spec, threads, &weight));
        if cut.parts < 2 || cut.lookahead == 0 {
            return Ok(sim);
        }
        let stream = sim.upcoming.clone();
        let mut others = Vec::new();
        for id in 1..cut.parts {
            let mut part = Simulation::new(sc)?;
            part.become_part(id as u16, &cut);
            part.observers.clear();
            others.push(Mutex::new(part));
        }
        sim.become_part(0, &cut);
        let next_observation = vec![Some(0); sim.observers.len()];
        let threads = threads.min(cut.parts);
        let profile = WindowProfile { threads, work_ns: vec![0; cut.parts], ..Default::default() };
        let serial = std::env::var("SHOAL_WINDOW_PROFILE").as_deref() == Ok("serial");
        let between = Between { next_observation, profile, released: Vec::new() };
        let mail = Mailboxes::new(cut.parts);
        sim.parallel = Some(Box::new(Parallel { others, cut, threads, serial, stream, mail, between }));
        Ok(sim)
    }

    /// While a parallel run is under way, its partitions other than this one (each
    /// between two windows).
    pub(super) fn others(&self) -> impl Iterator<Item = std::sync::MutexGuard<'_, Simulation>> {
        self.parallel.iter().flat_map(|p| p.others.iter().map(|m| m.lock().expect("a partition")))
    }

    /// What the windows of a parallel run cost so far (`None` for a single simulation,
    /// or once the run is over: it is printed then, see `fold_in`).
    pub fn window_profile(&self) -> Option<&WindowProfile> {
        self.parallel.as_ref().map(|p| &p.between.profile)
    }

    /// The partitions the run is cut into (1: a single simulation).
    pub fn partitions(&self) -> usize {
        self.parallel.as_ref().map_or(1, |p| p.cut.parts)
    }

    /// Makes this simulation partition `id` of `cut`: it starts the flows whose source
    /// hosts it owns, and only the events of its own nodes happen here.
    fn become_part(&mut self, id: u16, cut: &Arc<Cut>) {
        for link in &mut self.links {
            link.crosses = cut.of(link.from) != cut.of(link.to);
        }
        self.part = Some(Part {
            id,
            cut: cut.clone(),
            next_flow: 0,
            started_here: 0,
            outbox: (0..cut.parts).map(|_| Batch::default()).collect(),
            sent: (0, Ps::MAX),
            window_end: 0,
            inbox: Batch::default(),
            last_busy: (0, 0),
            idle_after: Vec::new(),
        });
        self.events = EventQueue::new();
        self.observations_pending = 0;
        self.schedule_next_start();
    }

    /// Runs window number `window` here, to `end`: takes the mail of the window before,
    /// runs the events before `end` and posts what it sent to other partitions.
    fn run_window(&mut self, end: Ps, window: u64, mail: &Mailboxes) -> Report {
        let started = std::time::Instant::now();
        if window > 0 {
            self.take_mail(mail, window - 1);
        }
        let part = self.part.as_mut().expect("a partition");
        part.idle_after.clear();
        (part.window_end, part.sent) = (end, (0, Ps::MAX));
        while let Ok((t, event)) = self.events.pop_until(end - 1) {
            let part = self.part.as_mut().expect("a partition");
            if let Event::Timer(TimerRef { owner: Owner::Flow, token: IDLE_TIMER, .. }) = event {
                self.idle_timers -= 1;
                part.idle_after.push((t, event.key(t)));
            } else {
                part.last_busy = (t, event.key(t));
                part.idle_after.clear();
            }
            self.now = t;
            self.events_processed += 1;
            self.dispatch(event);
        }
        let part = self.part.as_mut().expect("a partition");
        mail.post(window, part.id as usize, &mut part.outbox);
        Report { work_ns: started.elapsed().as_nanos() as u64, ..self.report() }
    }

    fn report(&self) -> Report {
        let (sent, first_arrival) = self.part.as_ref().expect("a partition").sent;
        let next = match self.events.peek_time() {
            Some(t) => Some(t.min(first_arrival)),
            None => (sent > 0).then_some(first_arrival),
        };
        let (events, finished) = (self.events_processed, self.finished_flows.len());
        Report { next, busy: self.pending_events() + sent, events, finished, work_ns: 0 }
    }

    /// `run_bounded` of a parallel run: the threads other than this one each on a thread
    /// of its own while the call lasts, meeting this one at every window's start and end
    /// (`SpinBarrier`). In a window, each thread runs its home partition, then takes the
    /// others in turn, as it comes free.
    pub(super) fn run_parallel(&mut self, until: Ps, max_events: u64) -> bool {
        let mut par = self.parallel.take().expect("a parallel run");
        let Parallel { others, cut, threads, serial, mail, between, .. } = &mut *par;
        let (others, cut, mail, threads) = (&others[..], &**cut, &*mail, *threads);
        let run = Coordinator { others, cut, mail, until, max_events };
        let (over, rest_at_stop) = if *serial {
            run.coordinate(self, between, |first, end, number| {
                let mine = first.run_window(end, number, mail);
                std::iter::once(mine)
                    .chain(others.iter().map(|p| p.lock().expect("a partition").run_window(end, number, mail)))
                    .collect()
            })
        } else {
            // The window under way: its number and its end (`STOP`: the threads return).
            let (window, window_end) = (AtomicU64::new(0), AtomicU64::new(0));
            // The next partition that is no thread's home to take.
            let next_claim = AtomicUsize::new(cut.parts);
            let reports: Vec<Mutex<Report>> = others.iter().map(|_| Mutex::default()).collect();
            // Partition `i`'s window, run on this thread, its report kept.
            let run_other = |i: usize, end: Ps, number: u64| {
                let report = others[i - 1].lock().expect("a partition").run_window(end, number, mail);
                *reports[i - 1].lock().expect("a report") = report;
            };
            let claim_others = |end: Ps, number: u64| loop {
                match next_claim.fetch_add(1, Ordering::AcqRel) {
                    i if i < cut.parts => run_other(i, end, number),
                    _ => break,
                }
            };
            let barrier = SpinBarrier::new(threads);
            std::thread::scope(|scope| {
                for home in 1..threads {
                    let (window, window_end, barrier) = (&window, &window_end, &barrier);
                    let (run_other, claim_others) = (&run_other, &claim_others);
                    scope.spawn(move || {
                        let _guard = BreakOnPanic(barrier);
                        loop {
                            barrier.wait();
                            let end = match window_end.load(Ordering::Acquire) {
                                _ if barrier.is_broken() => return,
                                STOP => return,
                                end => end,
                            };
                            let number = window.load(Ordering::Acquire);
                            if home < cut.homes {
                                run_other(home, end, number);
                            }
                            claim_others(end, number);
                            barrier.wait();
                        }
                    });
                }
                let _guard = BreakOnPanic(&barrier);
                let result = run.coordinate(self, between, |first, end, number| {
                    window.store(number, Ordering::Release);
                    window_end.store(end, Ordering::Release);
                    next_claim.store(cut.homes, Ordering::Release);
                    barrier.wait();
                    let mine = first.run_window(end, number, mail);
                    claim_others(end, number);
                    barrier.wait();
                    assert!(!barrier.is_broken(), "a partition's thread panicked");
                    std::iter::once(mine).chain(reports.iter().map(|r| *r.lock().expect("a report"))).collect()
                });
                window_end.store(STOP, Ordering::Release);
                barrier.wait();
                result
            })
        };
        if over {
            if std::env::var_os("SHOAL_WINDOW_PROFILE").is_some() {
                eprintln!("{:?}", par.between.profile);
            }
            let cut = par.cut.clone();
            let others = par.others.into_iter().map(|m| m.into_inner().expect("a partition")).collect();
            self.fold_in(others, &cut, par.stream, par.between.released);
            if rest_at_stop {
                self.tell_observers_at_rest();
            }
            self.finished = true;
        } else {
            self.parallel = Some(par);
        }
        self.finished
    }

    /// The observations due at `t`, in the order of their events' keys, on the whole
    /// network gathered here (`swap_views`); `busy`: something else is left to happen.
    /// Returns whether an observer ends the run.
    fn observe_at(&mut self, t: Ps, busy: bool, next: &mut [Option<Ps>]) -> bool {
        self.now = t;
        self.last_observation = t;
        let mut due: Vec<u16> = (0..next.len() as u16).filter(|&i| next[i as usize] == Some(t)).collect();
        due.sort_by_key(|&i| Event::Observe(i).key(t));
        for i in due {
            self.events_processed += 1;
            let at_rest = !busy && self.tell_observers_at_rest();
            self.observe(i);
            let observer = &self.observers[i as usize];
            next[i as usize] = busy.then(|| t + observer.interval());
            if at_rest | observer.wants_stop() {
                return true;
            }
        }
        false
    }

    /// Folds the other partitions of a finished run into this one: their nodes, links,
    /// flows and counts, each from the partition that owns it, so that the run reads as
    /// one simulation. Idle timers run after the run's last busy event are taken back
    /// (a single simulation ends without them).
    fn fold_in(
        &mut self,
        mut others: Vec<Simulation>,
        cut: &Cut,
        mut stream: FlowStream,
        released: Vec<(u32, FlowRecord)>,
    ) {
        let last_busy = std::iter::once(&*self)
            .chain(others.iter())
            .map(|p| p.part.as_ref().expect("a partition").last_busy)
            .max()
            .expect("a partition");
        for p in std::iter::once(&mut *self).chain(others.iter_mut()) {
            let part = p.part.as_ref().expect("a partition");
            let beyond = part.idle_after.iter().filter(|&&e| e > last_busy).count() as u64;
            p.events_processed -= beyond;
        }
        // The run ended at its stop time, or at its last event: the last busy one or an
        // observation after it (which set `now`).
        let ended = if self.reached_time_limit || self.stop_time.is_some_and(|s| self.now >= s) {
            self.now
        } else {
            last_busy.0.max(self.last_observation)
        };
        for other in &mut others {
            rehome_exts(other, &mut self.exts);
        }
        let mut refs: Vec<&mut Simulation> = others.iter_mut().collect();
        swap_views(self, &mut refs, cut, true);
        for link in &mut self.links {
            link.crosses = false;
        }
        // Flows: each end from its host's partition.
        let mut started = self.part.as_ref().expect("a partition").started_here;
        for other in &mut others {
            started += other.part.as_ref().expect("a partition").started_here;
            for (fi, flow) in std::mem::take(&mut other.flows).into_active() {
                match self.flows.get_mut_if_active(fi) {
                    Some(here) => {
                        here.sender = here.sender.take().or(flow.sender);
                        here.receiver = here.receiver.take().or(flow.receiver);
                    }
                    None => self.flows.start(fi, flow),
                }
            }
            self.counters.add(&other.counters);
            // A frame is recorded as it arrives, on the other direction of the port's link.
            let mut pauses = std::mem::take(&mut self.pauses);
            pauses.merge(std::mem::take(&mut other.pauses), |e| {
                Event::Arrive(net::reverse(self.port_link(e.key.node, e.key.port as usize))).key(e.time)
            });
            self.pauses = pauses;
            self.events_processed += other.events_processed;
            self.flows_finished += other.flows_finished;
            self.released_cnps += other.released_cnps;
            self.finished_flows.append(&mut other.finished_flows);
        }
        self.flows.pad_to(started);
        let table = Arc::make_mut(&mut self.table);
        for spec in stream.by_ref().take(started) {
            table.push(&FlowRecord::unstarted(&spec, None));
        }
        for (fi, record) in released {
            table.set(fi as usize, &record);
        }
        self.upcoming = stream;
        self.now = ended;
        self.part = None;
    }
}

/// What runs the windows of a parallel run, from partition 0's thread, and what comes
/// between them.
struct Coordinator<'a> {
    others: &'a [Mutex<Simulation>],
    cut: &'a Cut,
    mail: &'a Mailboxes,
    /// `run_bounded`'s bounds.
    until: Ps,
    max_events: u64,
}

impl Coordinator<'_> {
    /// Runs windows (each by `window`, given partition 0 and the window's end and number,
    /// which returns each partition's report on it) and what comes between them (the
    /// observations, the release of finished flows) until the run is over or paused
    /// (`run_bounded`'s `until` and `max_events`), its mail delivered. Returns whether it
    /// is over, and whether it is over at rest at its stop time.
    fn coordinate(
        &self,
        first: &mut Simulation,
        between: &mut Between,
        mut window: impl FnMut(&mut Simulation, Ps, u64) -> Vec<Report>,
    ) -> (bool, bool) {
        let Between { next_observation, profile, released } = between;
        let mut since_window = std::time::Instant::now();
        let limit = first.stop_time.map_or(self.until, |s| s.min(self.until)).min(TIME_LIMIT);
        self.deliver_all(first, profile.windows);
        let mut reports = self.reports(first);
        let mut mail_pending = false;
        let events = |reports: &[Report]| reports.iter().map(|r| r.events).sum::<u64>();
        let start_events = events(&reports);
        loop {
            let busy: usize = reports.iter().map(|r| r.busy).sum();
            // Idle timers keep nothing going: with nothing busy they are not run.
            let next_event = reports.iter().filter_map(|r| r.next).min().filter(|_| busy > 0);
            let next_observation_at = next_observation.iter().flatten().min().copied();
            let next = [next_event, next_observation_at].into_iter().flatten().min();
            let paused = events(&reports) - start_events >= self.max_events;
            let Some(t) = next.filter(|&t| t <= limit && !paused && next_observation_at != Some(t)) else {
                // The run stops here, or looks at the whole network: its mail first.
                if mail_pending {
                    self.deliver_all(first, profile.windows);
                    mail_pending = false;
                }
                let mut guards = lock(self.others);
                let mut parts: Vec<&mut Simulation> = guards.iter_mut().map(|g| &mut **g).collect();
                let latest = parts.iter().map(|p| p.now).max().unwrap_or(0);
                match next {
                    None => return (true, false),
                    Some(t) if t > TIME_LIMIT => {
                        first.reached_time_limit = busy > 0;
                        return (true, false);
                    }
                    Some(t) if t > limit => {
                        first.now = first.now.max(limit).max(latest);
                        let stopped = first.stop_time.is_some_and(|s| limit >= s);
                        return (stopped, stopped && busy == 0);
                    }
                    Some(_) if paused => {
                        first.now = first.now.max(latest);
                        return (false, false);
                    }
                    Some(t) => {
                        swap_views(first, &mut parts, self.cut, true);
                        let stop = first.observe_at(t, busy > 0, next_observation);
                        swap_views(first, &mut parts, self.cut, false);
                        if stop {
                            // An observer ended the run (at a deadlock, as asked).
                            first.stop_time = Some(t);
                            return (true, false);
                        }
                        continue;
                    }
                }
            };
            let end = t.saturating_add(self.cut.lookahead).min(limit + 1).min(next_observation_at.unwrap_or(Ps::MAX));
            profile.between_ns += since_window.elapsed().as_nanos() as u64;
            reports = window(first, end, profile.windows);
            since_window = std::time::Instant::now();
            mail_pending = true;
            profile.windows += 1;
            profile.critical_ns += makespan(reports.iter().map(|r| r.work_ns), self.cut.homes, profile.threads);
            for (total, report) in profile.work_ns.iter_mut().zip(&reports) {
                *total += report.work_ns;
            }
            if reports.iter().map(|r| r.finished).sum::<usize>() >= first.release_at {
                self.deliver_all(first, profile.windows);
                mail_pending = false;
                let mut guards = lock(self.others);
                let mut parts: Vec<&mut Simulation> = guards.iter_mut().map(|g| &mut **g).collect();
                let kept = release_quiet_flows(first, &mut parts, self.cut, released);
                // As in a single simulation (`on_flow_start`).
                first.release_at = first.release_batch.max(2 * kept);
                drop(parts);
                drop(guards);
                reports = self.reports(first);
            }
        }
    }

    /// Delivers the mail of the last of `windows` (the windows run so far) to every
    /// partition, between windows, so that the network is whole.
    fn deliver_all(&self, first: &mut Simulation, windows: u64) {
        let mut guards = lock(self.others);
        let parts = std::iter::once(first).chain(guards.iter_mut().map(|g| &mut **g));
        for p in parts {
            if windows > 0 {
                p.take_mail(self.mail, windows - 1);
            }
            p.part.as_mut().expect("a partition").sent = (0, Ps::MAX);
        }
    }

    /// Each partition's report, between windows.
    fn reports(&self, first: &Simulation) -> Vec<Report> {
        std::iter::once(first.report()).chain(lock(self.others).iter().map(|p| p.report())).collect()
    }
}

/// Between windows, as `Simulation::release_quiet_flows` does in one simulation: the
/// finished flows that nothing is left to happen to (no packet of theirs in any
/// partition, no timer that may act, no NIC pacing them) are released from the
/// partitions of both their ends, their records kept in `released`. Returns how many
/// finished flows were kept.
fn release_quiet_flows(
    first: &mut Simulation,
    others: &mut [&mut Simulation],
    cut: &Cut,
    released: &mut Vec<(u32, FlowRecord)>,
) -> usize {
    let mut candidates = std::mem::take(&mut first.finished_flows);
    for p in others.iter_mut() {
        candidates.append(&mut p.finished_flows);
    }
    candidates.sort_unstable();
    let parts = std::iter::once(&*first).chain(others.iter().map(|p| &**p));
    let in_network = super::hosts::with_packets(&candidates, parts.flat_map(|p| p.packets()));
    let mut kept = Vec::new();
    for (&fi, in_network) in candidates.iter().zip(in_network) {
        let part = |p: u16| if p == 0 { &*first } else { &*others[p as usize - 1] };
        let holder = (0..=others.len() as u16).find(|&p| part(p).flows.get(fi).is_some());
        let spec = &part(holder.expect("a finished flow is released once")).flows.get(fi).expect("held").spec;
        let (src, dst) = (cut.host[spec.src as usize], cut.host[spec.dst as usize]);
        let sender = part(src).flows.get(fi).expect("the sender's end is where its host is");
        let paced = part(src).nics[spec.src as usize].paces(fi) || part(dst).nics[spec.dst as usize].paces(fi);
        if in_network || sender.waits_for_timer() || paced {
            kept.push(fi);
            continue;
        }
        let mut outcome = sender.outcome(&part(src).stacks);
        if dst != src {
            let receiver = part(dst).flows.get(fi).expect("the receiver's end is where its host is");
            outcome = outcome.merge(receiver.outcome(&part(dst).stacks));
        }
        let record = part(src).record_with(&sender.spec, outcome);
        released.push((fi, record));
        first.released_cnps += outcome.cnps as u64;
        for p in [src, dst] {
            let sim = if p == 0 { &mut *first } else { &mut *others[p as usize - 1] };
            if sim.flows.get(fi).is_some() {
                sim.flows.release(fi);
            }
        }
    }
    let count = kept.len();
    first.finished_flows = kept;
    count
}

/// How long a window whose partitions take `work` takes on `threads` threads, with free
/// barriers: each thread runs its home partition (the first `homes` of `work`), then
/// takes the others in turn, the first free thread first.
fn makespan(work: impl Iterator<Item = u64>, homes: usize, threads: usize) -> u64 {
    let mut free_at = vec![0; threads.max(1)];
    for (i, work) in work.enumerate() {
        let thread = match i < homes {
            true => i,
            false => (0..free_at.len()).min_by_key(|&t| free_at[t]).expect("a thread"),
        };
        free_at[thread] += work;
    }
    free_at.into_iter().max().unwrap_or(0)
}

/// The partitions of `others`, locked (between windows, when their threads wait).
fn lock(others: &[Mutex<Simulation>]) -> Vec<std::sync::MutexGuard<'_, Simulation>> {
    others.iter().map(|m| m.lock().expect("a partition")).collect()
}

/// Gathers the live state of every node and link into partition 0 (`forward`), each
/// from its owner: a switch's or a NIC's from its partition, a link's transmitter from
/// its sender's and its wire from its receiver's (the other copies are idle); or puts it
/// all back where it was (`!forward`). Swaps both ways, so the state moves, not copies.
fn swap_views(first: &mut Simulation, others: &mut [&mut Simulation], cut: &Cut, forward: bool) {
    for (s, &k) in cut.switch.iter().enumerate() {
        if k != 0 {
            std::mem::swap(&mut first.switches[s], &mut others[k as usize - 1].switches[s]);
        }
    }
    for (h, &k) in cut.host.iter().enumerate() {
        if k != 0 {
            std::mem::swap(&mut first.nics[h], &mut others[k as usize - 1].nics[h]);
        }
    }
    for l in 0..first.links.len() {
        let (tx, rx) = (cut.of(first.links[l].from) as usize, cut.of(first.links[l].to) as usize);
        let swap_link = |first: &mut Simulation, others: &mut [&mut Simulation]| {
            if tx != 0 {
                std::mem::swap(&mut first.links[l], &mut others[tx - 1].links[l]);
            }
        };
        // The wire is partition 0's own (moved to the sender's by the link's swap) or
        // the receiver's.
        let swap_wire = |first: &mut Simulation, others: &mut [&mut Simulation]| {
            if rx != tx {
                let holder = if rx == 0 { tx } else { rx };
                std::mem::swap(&mut first.links[l].wire, &mut others[holder - 1].links[l].wire);
            }
        };
        if forward {
            swap_link(first, others);
            swap_wire(first, others);
        } else {
            swap_wire(first, others);
            swap_link(first, others);
        }
    }
}

/// Moves the side-table payloads of every packet held by `part` into `into`.
fn rehome_exts(part: &mut Simulation, into: &mut crate::net::ExtStore) {
    let Simulation { switches, nics, links, exts, .. } = part;
    let mut rehome = |pkt: &mut crate::net::Packet| pkt.ext = pkt.ext.map(|id| into.insert(exts.remove(id)));
    switches.iter_mut().flat_map(Switch::queued_mut).for_each(&mut rehome);
    nics.iter_mut().flat_map(Nic::packets_mut).for_each(&mut rehome);
    for link in links {
        link.control.iter_mut().flat_map(|c| c.iter_mut()).for_each(&mut rehome);
        link.wire.iter_mut().map(|(_, pkt)| pkt).for_each(&mut rehome);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fat_tree() -> Scenario {
        Scenario::from_toml(
            "[topology]\nkind = \"fat_tree\"\nk = 4\nlink_delay = \"1us\"\n\
             [workload]\npattern = \"all_to_all\"\ncdf = \"websearch\"\nflows = 100\nload = 0.6\n",
        )
        .unwrap()
    }

    /// Windows twice as long as the cut allows: a packet between partitions arrives
    /// inside the window it left in, and its sender says so (on this thread: the
    /// partitions take turns).
    #[test]
    #[should_panic(expected = "the lookahead is too long")]
    fn a_window_longer_than_the_lookahead_is_caught() {
        let mut sim = Simulation::with_threads(&fat_tree(), 2).unwrap();
        let par = sim.parallel.as_mut().unwrap();
        let cut = Cut { lookahead: 2 * par.cut.lookahead, ..(*par.cut).clone() };
        (par.cut, par.threads) = (Arc::new(cut), 1);
        sim.run();
    }

    /// A parallel run releases finished flows between windows (in batches of 32 here),
    /// with the records and counters of a single simulation that keeps every flow.
    #[test]
    fn a_parallel_run_releases_finished_flows_and_keeps_their_records() {
        let sc = Scenario::from_toml(
            "[topology]\nkind = \"fat_tree\"\nk = 4\nlink_delay = \"1us\"\n[switch]\nbuffer = \"300KB\"\nqueues = 1\nreserved = \"2KB\"\n\
             [workload]\npattern = \"all_to_all\"\ncdf = \"websearch\"\nflows = 600\nload = 0.7\n",
        )
        .unwrap();
        let mut kept = Simulation::new(&sc).unwrap();
        (kept.release_batch, kept.release_at) = (usize::MAX, usize::MAX);
        kept.run();
        let mut sim = Simulation::with_threads(&sc, 2).unwrap();
        (sim.release_batch, sim.release_at) = (32, 32);
        let mut most_active = 0;
        while !sim.run_bounded(Ps::MAX, 20_000) {
            most_active = most_active.max(sim.flows_active());
        }
        assert!(sim.check_invariants().is_empty(), "{:?}", sim.check_invariants());
        assert_eq!(format!("{:?}", sim.flow_records()), format!("{:?}", kept.flow_records()));
        assert_eq!(sim.counters_json(), kept.counters_json());
        assert_eq!(kept.flows_active(), 600);
        assert!(most_active < 300, "{most_active} flows active at once");
    }

    /// Two threads, homes of 5 and 1 and three others of 2: the second thread takes the
    /// first two others while the first runs its home, then the first free one (the
    /// first, at a tie) the last: 7, where an even share would be 6.
    #[test]
    fn a_window_takes_its_busiest_threads_time() {
        assert_eq!(makespan([5, 1, 2, 2, 2].into_iter(), 2, 2), 7);
        assert_eq!(makespan([5, 1].into_iter(), 2, 2), 5);
        assert_eq!(makespan([3, 3, 3].into_iter(), 1, 3), 3, "threads without a home only take others");
    }

    /// The same windows within the lookahead run to the end.
    #[test]
    fn windows_within_the_lookahead_run_to_the_end() {
        let mut sim = Simulation::with_threads(&fat_tree(), 2).unwrap();
        assert_eq!(sim.partitions(), 4, "2 homes of 2 pods, 2 of 2 cores");
        sim.run();
        assert!(sim.check_invariants().is_empty());
    }
}

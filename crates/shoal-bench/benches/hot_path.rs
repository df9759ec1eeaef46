//! Micro-benchmarks of the hot path: the event queue at steady pending-set sizes, one
//! switch port (admission, accounting, marking, scheduling), and a small whole run.
//!   cargo bench -p shoal-bench

use criterion::{black_box, criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use shoal_core::net::Packet;
use shoal_core::net::{Effects, ExtStore};
use shoal_core::scenario::{Scenario, SwitchConfig};
use shoal_core::sim::{stream, EventQueue};
use shoal_core::stats::Counters;
use shoal_core::switch::classify::Classify;
use shoal_core::switch::marking::{CutoffConfig, MarkerConfig};
use shoal_core::switch::scheduler::SchedulerConfig;
use shoal_core::switch::{Drops, Switch};
use shoal_core::units::Bytes;

/// One pop and one push at a steady pending-set size, times spread like link events.
fn event_queue(c: &mut Criterion) {
    let mut group = c.benchmark_group("event_queue");
    group.throughput(Throughput::Elements(1));
    for pending in [1_000u64, 100_000] {
        let mut q = EventQueue::new();
        let mut x = 0x9e3779b97f4a7c15u64;
        for i in 0..pending {
            q.push(i * 997, i as u32);
        }
        group.bench_function(format!("pop_push_{pending}"), |b| {
            b.iter(|| {
                let (now, e) = q.pop().unwrap();
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                q.push(now + 1 + x % 2_000_000, black_box(e));
            })
        });
    }
    group.finish();
}

fn packet(size: u32) -> Packet {
    Packet { size, ect: true, ..Packet::template(0, 0, 0, 0) }
}

/// One enqueue and one dequeue through a port holding about 100 packets, with dynamic
/// threshold admission and cut-off marking at dequeue.
fn switch_port(c: &mut Criterion) {
    let mut cfg = SwitchConfig::default();
    cfg.marking.set(MarkerConfig::Cutoff(CutoffConfig { k: Bytes(50_000) }));
    let links: Vec<u32> = (0..8).collect();
    let mut sw = Switch::new(&cfg, &links, &[100_000_000_000; 8], 0, stream(1, "bench", 0));
    let mut counters = Counters::default();
    for _ in 0..100 {
        sw.receive(
            0,
            0,
            packet(1500),
            0,
            &mut Drops { counters: &mut counters, exts: &mut ExtStore::default() },
            &mut Effects::new(),
        );
    }
    let mut now = 0;
    let mut group = c.benchmark_group("switch_port");
    group.throughput(Throughput::Elements(1));
    group.bench_function("enqueue_dequeue", |b| {
        b.iter(|| {
            now += 120_000;
            sw.receive(
                0,
                0,
                packet(1500),
                now,
                &mut Drops { counters: &mut counters, exts: &mut ExtStore::default() },
                &mut Effects::new(),
            );
            black_box(sw.transmit(0, now, &mut counters, &mut Effects::new()));
        })
    });
    group.finish();
}

/// Every packet to the last queue: the worst case for a scheduler that scans its queues.
struct LastQueue;

impl Classify for LastQueue {
    fn queue(&mut self, _pkt: &Packet, queues: usize) -> usize {
        queues - 1
    }
}

/// One enqueue, one dequeue and one `has_queued` on a port with 8, 64 and 1,000 queues,
/// strict priority and DWRR, every packet in the last queue (about 100 of them).
fn many_queues(c: &mut Criterion) {
    let mut group = c.benchmark_group("many_queues");
    group.throughput(Throughput::Elements(1));
    for scheduler in ["strict_priority", "dwrr"] {
        for queues in [8u32, 64, 1000] {
            let cfg = SwitchConfig {
                queues,
                scheduler: SchedulerConfig::of_kind(scheduler).expect("a registered scheduler"),
                reserved: Bytes(0),
                ..SwitchConfig::default()
            };
            let mut sw = Switch::new(&cfg, &[0, 1], &[100_000_000_000; 2], 0, stream(1, "bench", 0));
            sw.set_classifier(Box::new(LastQueue));
            let mut counters = Counters::default();
            for _ in 0..100 {
                sw.receive(
                    1,
                    0,
                    packet(1500),
                    0,
                    &mut Drops { counters: &mut counters, exts: &mut ExtStore::default() },
                    &mut Effects::new(),
                );
            }
            let mut now = 0;
            group.bench_function(format!("{scheduler}_{queues}"), |b| {
                b.iter(|| {
                    now += 120_000;
                    sw.receive(
                        1,
                        0,
                        packet(1500),
                        now,
                        &mut Drops { counters: &mut counters, exts: &mut ExtStore::default() },
                        &mut Effects::new(),
                    );
                    black_box(sw.transmit(0, now, &mut counters, &mut Effects::new()));
                    black_box(sw.has_queued(0))
                })
            });
        }
    }
    group.finish();
}

/// A whole 200-flow DCTCP web-search run on a 32-host star.
fn small_run(c: &mut Criterion) {
    let sc = Scenario::from_toml(
        r#"
        [topology]
        link_delay = "10us"
        [switch.marking.cutoff]
        k = "720KB"
        [transport]
        mss = 8946
        init_cwnd = 20
        [workload]
        pattern = "many_to_few"
        senders = "0-23"
        receivers = "24-31"
        flows = 200
        "#,
    )
    .unwrap();
    let mut group = c.benchmark_group("run");
    group.sample_size(10);
    group.bench_function("star_200_flows", |b| {
        b.iter_batched(
            || shoal_core::Simulation::new(&sc).unwrap(),
            |mut sim| {
                sim.run();
                sim.events_processed()
            },
            BatchSize::LargeInput,
        )
    });
    group.finish();
}

criterion_group!(benches, event_queue, switch_port, many_queues, small_run);
criterion_main!(benches);

use super::{Admission, AdmitContext, Verdict};
use crate::registry::keyless_scheme;
use crate::stats::DropReason;

/// Longest queue drop: a shared pool without thresholds. A packet is admitted while its
/// queue's reserve or the pool has room; when the pool is full it pushes out the tail of
/// the pool's longest queue, or is dropped if its own queue is the longest.
pub struct LongestQueueDrop;

keyless_scheme!(LongestQueueDrop);

impl Admission for LongestQueueDrop {
    fn admit(&mut self, ctx: &AdmitContext) -> Verdict {
        let q = ctx.account();
        if q.fits_reserve(ctx.size) || q.shared_needed(ctx.size) <= ctx.pool.free() {
            return Verdict::Admit;
        }
        let mut longest = (ctx.port, ctx.queue, q.bytes + ctx.size);
        for port in ctx.pool_ports.clone() {
            for (queue, pq) in ctx.port_queues(port).iter().enumerate() {
                if pq.bytes() > longest.2 && !pq.packets.is_empty() {
                    longest = (port, queue, pq.bytes());
                }
            }
        }
        if (longest.0, longest.1) == (ctx.port, ctx.queue) {
            Verdict::Drop(DropReason::PoolFull)
        } else {
            Verdict::Evict { port: longest.0, queue: longest.1 }
        }
    }
}

use super::{Admission, AdmitContext, Verdict};
use crate::registry::Scheme;
use crate::stats::DropReason;
use serde::{Deserialize, Serialize};

/// Longest queue drop: a shared pool without thresholds. A packet is admitted while its
/// queue's reserve or the pool has room; when the pool is full it pushes out the tail of
/// the pool's longest queue, or is dropped if its own queue is the longest.
pub struct LongestQueueDrop;

/// No keys of its own: the reserve is `switch.reserved`; alpha is not used.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LqdConfig {}

impl Scheme for LongestQueueDrop {
    type Config = LqdConfig;
    type Env = ();

    fn build(_: &LqdConfig, _: &()) -> Self {
        LongestQueueDrop
    }
}

impl Admission for LongestQueueDrop {
    fn admit(&mut self, ctx: &AdmitContext) -> Verdict {
        let q = ctx.account();
        if q.bytes + ctx.size <= q.reserved {
            return Verdict::Admit;
        }
        let needed = (q.bytes + ctx.size - q.reserved) - q.shared();
        if needed <= ctx.pool.free() {
            return Verdict::Admit;
        }
        let mut longest = (ctx.port, ctx.queue, q.bytes + ctx.size);
        for port in ctx.pool_ports.clone() {
            for (queue, pq) in ctx.ports[port].queues.iter().enumerate() {
                if pq.account.bytes > longest.2 && !pq.packets.is_empty() {
                    longest = (port, queue, pq.account.bytes);
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

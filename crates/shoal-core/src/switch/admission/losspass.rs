use super::{Admission, AdmitContext, DynamicThreshold, Verdict};
use crate::registry::keyless_scheme;

/// LossPass (Kim and Lee, IEEE Comm. Letters 2019, Algorithm 1): a packet that does not
/// fit pushes out tail packets of its port's lower-priority queues (higher index under
/// strict priority), one at a time, while the lowest-priority non-empty queue holds more
/// bytes than the packet; otherwise, or for a packet with nothing below it, tail drop.
/// "Fits" is the dynamic-threshold rule, so with one port per pool, no reserve and a
/// large alpha this is the paper's per-port buffer.
pub struct LossPass;

keyless_scheme!(LossPass);

impl Admission for LossPass {
    fn admit(&mut self, ctx: &AdmitContext) -> Verdict {
        let verdict = DynamicThreshold::verdict(ctx);
        if verdict == Verdict::Admit {
            return verdict;
        }
        let queues = ctx.port_queues(ctx.port);
        let victim = (ctx.queue + 1..queues.len()).rev().find(|&q| !queues[q].packets.is_empty());
        match victim {
            Some(q) if ctx.size < queues[q].bytes() => Verdict::Evict { port: ctx.port, queue: q },
            _ => verdict,
        }
    }
}

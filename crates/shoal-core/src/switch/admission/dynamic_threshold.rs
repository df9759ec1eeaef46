use super::{Admission, AdmitContext, Verdict};
use crate::registry::keyless_scheme;
use crate::stats::DropReason;

/// Reserved space first, then the shared pool while the queue's shared bytes are below
/// the dynamic threshold T = alpha * (pool size - pool shared occupancy) (Choudhury and
/// Hahne); otherwise tail drop. Alpha is per queue (`switch.alpha`).
pub struct DynamicThreshold;

keyless_scheme!(DynamicThreshold);

impl DynamicThreshold {
    pub fn verdict(ctx: &AdmitContext) -> Verdict {
        let q = ctx.account();
        if q.fits_reserve(ctx.size) {
            return Verdict::Admit;
        }
        if q.shared_needed(ctx.size) > ctx.pool.free() {
            return Verdict::Drop(DropReason::PoolFull);
        }
        if q.shared as f64 >= q.alpha * ctx.pool.free() as f64 {
            return Verdict::Drop(DropReason::DynamicThreshold);
        }
        Verdict::Admit
    }
}

impl Admission for DynamicThreshold {
    #[inline]
    fn admit(&mut self, ctx: &AdmitContext) -> Verdict {
        Self::verdict(ctx)
    }
}

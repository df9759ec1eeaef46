//! The flow-control decision point: how a switch tells its neighbours to stop and start
//! sending (PFC, DSH, BFC), and how it obeys them (`[switch.flow_control]`). A scheme
//! acts only through `Effects`: frames out of a port, timers, and kicks of ports it
//! un-paused.

use crate::net::{Effects, Packet};
use crate::registry::{keyless_scheme, registry};
use crate::sim::Ps;

/// What a flow-control scheme sees of the moment and may ask of the world.
pub struct FlowCx<'a> {
    pub now: Ps,
    pub effects: &'a mut Effects,
}

pub trait FlowControl: Send {
    /// A control frame from the neighbour on `port` arrived.
    fn on_frame(&mut self, _port: usize, _frame: &Packet, _cx: &mut FlowCx) {}
    /// A timer this scheme asked for (`Effect::Timer`) fired.
    fn on_timer(&mut self, _token: u32, _cx: &mut FlowCx) {}
    /// Whether the scheme reads the switch's ingress accounts (`Switch::ingress`). They
    /// cost a cache miss per packet in and out, so a switch keeps them only when its
    /// scheme says so.
    fn reads_ingress_accounts(&self) -> bool {
        false
    }
}

registry! {
    /// The flow control of switches (`[switch.flow_control]`).
    pub enum FlowControlConfig => AnyFlowControl: FlowControl, env ();
    "lossy" => Lossy(Lossy),
    forward {
        mut fn on_frame(port: usize, frame: &Packet, cx: &mut FlowCx);
        mut fn on_timer(token: u32, cx: &mut FlowCx);
        ref fn reads_ingress_accounts() -> bool;
    }
}

/// No flow control: a lossy switch drops what its buffer cannot hold. Frames it
/// receives are consumed without effect.
pub struct Lossy;

keyless_scheme!(Lossy);

impl FlowControl for Lossy {}

//! The one way a switch or NIC scheme acts on the world outside its node: it asks, and
//! the engine carries the request out after the call returns.

use super::Packet;
use crate::sim::Ps;

/// A request of a node's scheme to the engine.
#[derive(Clone, Copy, Debug)]
pub enum Effect {
    /// Send a control frame (a packet of kind `Control`) out of the node's port `port`.
    /// It goes ahead of any queued data, at the next packet boundary of that port's link,
    /// and is handed to the receiving node's `on_frame`.
    Frame { port: u16, frame: Packet },
    /// Port `port` may be able to send again (a pause ended): start its link if idle.
    Kick { port: u16 },
    /// Call the node's `on_timer(token)` at time `at` (a NIC's tokens are never 0).
    Timer { at: Ps, token: u32 },
    /// The neighbour on `port` sent a PAUSE (`paused`) or RESUME for `class`: a record for
    /// the run's pause log, with no effect on the network.
    PauseReceived { port: u16, class: u8, paused: bool },
    /// The timed pause of `class` on `port` ran out (802.1Qbb quanta): for the pause log,
    /// which ends the paused time there without counting a frame.
    PauseExpired { port: u16, class: u8 },
}

/// The requests of one call, in order; the engine keeps one buffer and empties it after
/// each call that may fill it.
pub type Effects = Vec<Effect>;

//! Carrying out what a node's scheme asks for (`net::Effect`): control frames ahead of
//! data, kicks, timers, and the pause log.

use super::{Event, Owner, Simulation, TimerRef};
use crate::net::{Effect, Effects, NodeId, PacketKind};
use crate::stats::PauseKey;

impl Simulation {
    /// The link that `node`'s port `port` transmits on.
    pub(super) fn port_link(&self, node: NodeId, port: usize) -> u32 {
        match node {
            NodeId::Switch(s) => self.switches[s as usize].ports[port].link,
            NodeId::Host(h) => self.nics[h as usize].link,
        }
    }

    /// Carries out what `node` left in `self.effects`.
    #[cold]
    pub(super) fn carry_out_pending_effects(&mut self, node: NodeId) {
        let effects = std::mem::take(&mut self.effects);
        self.carry_out_effects(node, effects);
    }

    /// Carries out what `node`'s scheme asked for, in order, and hands the buffer back.
    pub(super) fn carry_out_effects(&mut self, node: NodeId, mut effects: Effects) {
        for effect in effects.drain(..) {
            match effect {
                Effect::Frame { port, frame } => {
                    debug_assert_eq!(frame.kind, PacketKind::Control);
                    let link = self.port_link(node, port as usize);
                    self.counters.frames_sent += 1;
                    let control = self.links[link as usize].control.get_or_insert_default();
                    // Headroom assumes a frame waits for one packet at most; one queued
                    // behind another waits longer (a frame storm: see `frames_queued_behind`).
                    self.counters.frames_queued_behind += u64::from(!control.is_empty());
                    control.push_back(frame);
                    self.kick(link);
                }
                Effect::Kick { port } => self.kick(self.port_link(node, port as usize)),
                Effect::PauseReceived { port, class, paused } => {
                    self.pauses.record(self.now, PauseKey { node, port, class }, paused)
                }
                Effect::PauseExpired { port, class } => self.pauses.expire(self.now, PauseKey { node, port, class }),
                Effect::Timer { at, token } => {
                    let (owner, id) = match node {
                        NodeId::Switch(id) => (Owner::Switch, id),
                        NodeId::Host(id) => {
                            debug_assert_ne!(token, 0, "token 0 is the NIC's wake-up");
                            (Owner::Nic, id)
                        }
                    };
                    self.events.push(at, Event::Timer(TimerRef { owner, id, token }));
                }
            }
        }
        self.effects = effects;
    }
}

//! The packets a run writes to its capture file (`run.pcap`, `trace.pcap`): looked at as
//! they arrive over watched links, a cold path only those links take.

use super::Simulation;
use crate::config::run::PcapConfig;
use crate::config::ScenarioError;
use crate::net::pcap::{self, Ends, Framing, PcapFile};
use crate::net::{self, NetworkSpec, NodeId, NodeIds, Packet, PacketKind};
use crate::workload::FlowKind;

/// What a run captures, and the file so far.
///
/// Invariant: `flows` is ascending.
pub(super) struct Capture {
    flows: Vec<u64>,
    /// By link: every frame over it is captured (`links`).
    every_frame: Vec<bool>,
    /// By link: it leads to a host, so the chosen flows' packets are captured over it.
    to_host: Vec<bool>,
    file: PcapFile,
    max_packets: u64,
    /// Packets not written because the file had `max_packets`.
    pub left_out: u64,
    frame: Vec<u8>,
}

impl Capture {
    /// The capture `config` asks for on `net`, its cables named by `ids`.
    pub fn new(config: &PcapConfig, net: &NetworkSpec, ids: &NodeIds) -> Result<Capture, ScenarioError> {
        let mut every_frame = vec![false; net.links.len()];
        let cables =
            net::cables_between(net, ids, &config.links).map_err(|why| ScenarioError::new("run.pcap.links", why))?;
        for c in cables {
            every_frame[2 * c] = true;
            every_frame[2 * c + 1] = true;
        }
        let chooses_flows = !config.flows.is_empty();
        let to_host = net.links.iter().map(|l| chooses_flows && matches!(l.to, NodeId::Host(_))).collect();
        let mut flows = config.flows.clone();
        flows.sort_unstable();
        Ok(Capture {
            flows,
            every_frame,
            to_host,
            file: PcapFile::default(),
            max_packets: config.max_packets,
            left_out: 0,
            frame: Vec::new(),
        })
    }

    /// Whether arrivals over `link` are looked at.
    pub fn watches(&self, link: u32) -> bool {
        self.every_frame[link as usize] || self.to_host[link as usize]
    }

    /// The capture file's bytes.
    pub fn bytes(&self) -> &[u8] {
        self.file.bytes()
    }
}

impl Simulation {
    /// Writes `pkt`, arriving now over watched `link`, to the capture file if the
    /// capture takes it.
    pub(super) fn capture(&mut self, link: u32, pkt: &Packet) {
        let Some(capture) = self.capture.as_mut() else { return };
        let flow = (pkt.kind != PacketKind::Control).then(|| self.flows.get(pkt.flow)).flatten();
        let chosen = flow.is_some_and(|f| capture.flows.binary_search(&f.spec.id).is_ok());
        let taken = capture.every_frame[link as usize] || (chosen && capture.to_host[link as usize]);
        if !taken {
            return;
        }
        if capture.file.packets() >= capture.max_packets {
            capture.left_out += 1;
            return;
        }
        let mut frame = std::mem::take(&mut capture.frame);
        frame.clear();
        let (ends, framing) = match flow {
            Some(f) => {
                let framing = match f.spec.kind {
                    FlowKind::Tcp => Framing::Tcp { mss: self.stacks.tcp.mss },
                    FlowKind::Rdma => Framing::Rdma,
                    FlowKind::Udp { .. } => Framing::Udp,
                };
                (Ends { src_host: f.spec.src, dst_host: f.spec.dst, flow: pkt.flow }, framing)
            }
            None => (Ends { src_host: 0, dst_host: 0, flow: 0 }, Framing::Udp),
        };
        pcap::frame(pkt, ends, framing, &mut frame);
        capture.file.record(self.now, &frame, pkt.size);
        capture.frame = frame;
    }

    /// The capture file so far, if the run captures.
    pub fn capture_file(&self) -> Option<&[u8]> {
        self.capture.as_ref().map(|c| c.bytes())
    }

    /// Packets the capture left out past `run.pcap.max_packets`.
    pub fn capture_left_out(&self) -> u64 {
        self.capture.as_ref().map_or(0, |c| c.left_out)
    }
}

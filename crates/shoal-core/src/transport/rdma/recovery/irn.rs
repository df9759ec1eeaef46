use super::{LossRecovery, LossRecoveryFacts};
use crate::check_env::CheckEnv;
use crate::config::{ScenarioError, Warnings};
use crate::net::Packet;
use crate::registry::Scheme;
use crate::sim::Ps;
use crate::transport::sack::{SackBlock, Scoreboard};
use crate::units::Time;
use serde::{Deserialize, Serialize};

/// IRN's selective repeat (Mittal et al., "Revisiting Network Support for RDMA",
/// SIGCOMM 2018, section 3.1), for RDMA over a fabric that may drop.
///
/// - The receiver keeps a packet that arrives beyond a gap, and answers each such packet
///   with a NACK that carries the cumulative acknowledgement (the next packet expected)
///   and the sequence number of the packet that triggered it: one SACKed packet, no
///   bitmap.
/// - A NACK puts the sender in recovery, until everything sent before it began is
///   acknowledged. In recovery a packet counts as lost once a later one is SACKed, and
///   the sender resends its lost packets, each once, ahead of new ones.
/// - The retransmission timer runs from the last progress of the cumulative
///   acknowledgement: `rto_low` while fewer than `rto_low_below` packets are in flight,
///   else `rto_high`. A timeout counts every unSACKed packet in flight as lost and enters
///   recovery.
///
/// IRN's other half, BDP-FC (at most one bandwidth-delay product of the longest path in
/// flight, counted from the first unacknowledged packet to the last sent), is
/// `rdma.window = "max_bdp"`; congestion control (`rdma.cc`) runs on top, as with go-back-N.
pub struct Irn {
    rto_low: Ps,
    rto_high: Ps,
    rto_low_below: u32,
    resend: IrnResend,
    /// The packets at or above the first unacknowledged one that the receiver reported.
    sacked: Scoreboard,
    /// In recovery: the first new packet not yet sent when it began. Recovery ends once
    /// every packet below it is acknowledged.
    recovery_end: Option<u32>,
    /// Unacknowledged packets below this one that are not SACKed are lost.
    lost_below: u32,
    /// The first packet this recovery has not looked at for resending yet.
    next_resend: u32,
}

/// The keys of `[rdma.loss_recovery]` with `kind = "irn"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct IrnConfig {
    /// The timeout while few packets are in flight (RTO_low: 100 us, the paper's).
    pub rto_low: Time,
    /// The timeout otherwise (RTO_high: 320 us, the setting of ConWeave's IRN runs; the
    /// paper gives none that we could read).
    pub rto_high: Time,
    /// `rto_low` applies while fewer than this many packets are in flight (N = 3, the
    /// paper's).
    pub rto_low_below: u32,
    /// Which packets a recovery sends again.
    #[serde(skip_serializing_if = "IrnResend::is_lost")]
    pub resend: IrnResend,
}

impl Default for IrnConfig {
    fn default() -> Self {
        IrnConfig { rto_low: Time(100_000_000), rto_high: Time(320_000_000), rto_low_below: 3, resend: IrnResend::Lost }
    }
}

/// Which packets IRN's recovery sends again, ahead of new ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IrnResend {
    /// Each packet below a SACKed one, once (the paper's, section 3.1).
    Lost,
    /// Every packet not SACKed that was sent before recovery began, in order from the
    /// first unacknowledged, in flight or not: the NIC of ConWeave's and TLT's simulator
    /// (conweave-ns3 236a801, `RdmaHw::RecoverQueue` rewinds `snd_nxt` to `snd_una` and
    /// skips only what is SACKed as it gets there).
    Unsacked,
}

impl IrnResend {
    fn is_lost(&self) -> bool {
        *self == IrnResend::Lost
    }
}

impl Scheme for Irn {
    type Config = IrnConfig;
    type Env = ();

    fn build(cfg: &IrnConfig, _: &()) -> Self {
        Irn {
            rto_low: cfg.rto_low.0,
            rto_high: cfg.rto_high.0,
            rto_low_below: cfg.rto_low_below,
            resend: cfg.resend,
            sacked: Scoreboard::default(),
            recovery_end: None,
            lost_below: 0,
            next_resend: 0,
        }
    }

    fn validate(cfg: &IrnConfig, path: &str, env: &CheckEnv, _: &mut Warnings) -> Result<(), ScenarioError> {
        env.check_timeout(&format!("{path}.rto_low"), cfg.rto_low)?;
        env.check_timeout(&format!("{path}.rto_high"), cfg.rto_high)?;
        if cfg.rto_high < cfg.rto_low {
            return Err(ScenarioError::new(
                format!("{path}.rto_high"),
                format!("{} is below rto_low = {} (accepted: at least rto_low)", cfg.rto_high, cfg.rto_low),
            ));
        }
        Ok(())
    }
}

impl LossRecoveryFacts for Irn {
    fn keeps_out_of_order(_: &IrnConfig) -> bool {
        true
    }

    fn times_out(_: &IrnConfig) -> bool {
        true
    }
}

impl Irn {
    /// Whether the sender is in recovery with `snd_una` acknowledged: it began, and not
    /// everything sent before it is acknowledged yet.
    fn in_recovery(&self, snd_una: u32) -> bool {
        self.recovery_end.is_some_and(|end| snd_una < end)
    }

    /// The first lost packet at or above `snd_una` this recovery has not resent.
    fn first_lost(&self, snd_una: u32) -> Option<u32> {
        if !self.in_recovery(snd_una) {
            return None;
        }
        self.sacked.first_unsacked(self.next_resend.max(snd_una), self.lost_below)
    }

    /// Enters recovery with everything up to `snd_nxt` sent, unless already in it.
    fn recover(&mut self, snd_una: u32, snd_nxt: u32) {
        if !self.in_recovery(snd_una) {
            self.recovery_end = Some(snd_nxt);
            self.next_resend = snd_una;
            if self.resend == IrnResend::Unsacked {
                self.lost_below = self.lost_below.max(snd_nxt);
            }
        }
    }
}

impl LossRecovery for Irn {
    #[inline(never)]
    fn resend(&mut self, snd_una: u32) -> Option<u32> {
        let lost = self.first_lost(snd_una)?;
        self.next_resend = lost + 1;
        Some(lost)
    }

    #[inline(never)]
    fn resends(&self, snd_una: u32) -> bool {
        self.first_lost(snd_una).is_some()
    }

    #[inline(never)]
    fn on_nack(&mut self, nack: &Packet, snd_una: u32, snd_nxt: &mut u32, packets: u32) -> bool {
        let block = SackBlock { start: nack.sack_start, len: nack.sack_len };
        // A NACK overtaken by the acknowledgement of what it reports says nothing new.
        if block.len == 0 || block.start < snd_una {
            return self.resends(snd_una);
        }
        self.sacked.forget_below(snd_una);
        self.sacked.mark(block, packets);
        self.lost_below = self.lost_below.max(block.start);
        self.recover(snd_una, *snd_nxt);
        true
    }

    #[inline(never)]
    fn on_timeout(&mut self, snd_una: u32, snd_nxt: &mut u32) -> bool {
        self.recovery_end = None;
        self.recover(snd_una, *snd_nxt);
        self.lost_below = *snd_nxt;
        true
    }

    fn timeout(&self, in_flight: u32, _: Option<Ps>) -> Option<Ps> {
        Some(if in_flight < self.rto_low_below { self.rto_low } else { self.rto_high })
    }
}

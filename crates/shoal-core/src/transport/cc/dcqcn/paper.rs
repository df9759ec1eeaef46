use super::{check_gain, check_timers};
use crate::check_env::CheckEnv;
use crate::config::ScenarioError;
use crate::sim::Ps;
use crate::transport::cc::{CongestionControl, Feedback, Probe, SendState};
use crate::units::{Bytes, Rate, Time};
use serde::{Deserialize, Serialize};

/// DCQCN's reaction point as the DCQCN paper describes it (Zhu et al., SIGCOMM 2015), with
/// what the paper leaves open taken from its authors' simulator, ns3-rdma (bobzhuyb/
/// ns3-rdma e8a27d0, `src/point-to-point/model/qbb-net-device.cc`).
///
/// - A congestion notification (a CNP; the receiver sends at most one per
///   `cnp_interval`) cuts the rate at once: the target becomes the rate, the rate
///   max(min_rate, rate (1 - alpha / 2)), then alpha <- (1 - g) alpha + g. It resets both
///   increase counts and the byte counter and restarts the alpha and increase timers
///   (`qbb-net-device.cc:1380-1414`; ns3-rdma updates alpha before the cut, the paper
///   after).
/// - Every `alpha_interval` without a notification, alpha <- (1 - g) alpha (`:1432-1440`).
/// - The rate increases on two kinds of event: the increase timer, every
///   `increase_interval` from the last notification, and the byte counter, every
///   `byte_counter` bytes sent; each halves its period once the increase is hyper
///   (`:1262-1357`, `:304-324`). An event adds one to its own count; then, with the
///   timer's count t and the byte counter's b: max(t, b) < F (`fast_recovery`) is fast
///   recovery (the target stays), min(t, b) < F additive increase (the target grows by
///   `rate_ai`), otherwise hyper increase (by `rate_hai` x (min(t, b) - F + 1)); the
///   target stops at line rate and the rate moves halfway to it.
/// - Before the first notification there are no timers and no byte counting.
///
/// Left out of ns3-rdma: its initial alpha of 0.5 (`:204`; here alpha starts at 1, as
/// the Mellanox model sets it at the first notification), its uncapped target (only the
/// rate stops at line rate there), and its cut of the target to an eighth on the first
/// increase when the target exceeds ten times the rate (`:1363-1364`).
pub struct Paper {
    cfg: PaperConfig,
    alpha: f64,
    target_bps: f64,
    /// Increase events of the timer and of the byte counter since the last notification.
    timer_count: u32,
    byte_count: u32,
    /// Bytes left before the byte counter's next event (below 0: due).
    bytes_left: i64,
    /// The pending alpha tick and increase tick; none before the first notification.
    next_alpha: Option<Ps>,
    next_increase: Option<Ps>,
}

/// The keys of DCQCN's paper model (`model = "paper"`). The defaults are the paper's
/// (as collected in the project's lossless-facts, section 3.2), except `rate_hai` and
/// `min_rate`, which it does not give: ns3-rdma's `mix/config.txt:33` and `MinRate`
/// attribute (`qbb-net-device.cc:117-121`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PaperConfig {
    /// EWMA gain of alpha (1/256).
    pub g: f64,
    /// Alpha decays every this long without a notification (K, 55 us).
    pub alpha_interval: Time,
    /// The increase timer (T, 55 us).
    pub increase_interval: Time,
    /// The byte counter (B, 10 MB).
    pub byte_counter: Bytes,
    /// Events of either kind before additive increase (F, 5).
    pub fast_recovery: u32,
    /// Additive increase of the target (R_AI, 40 Mbps).
    pub rate_ai: Rate,
    /// Hyper increase of the target, times the hyper stage (R_HAI, 200 Mbps).
    pub rate_hai: Rate,
    /// The lowest rate (100 Mbps).
    pub min_rate: Rate,
    /// The receiver sends a connection at most one CNP per this interval, at the first
    /// marked packet after it (N, 50 us; the notification point).
    pub cnp_interval: Time,
}

impl Default for PaperConfig {
    fn default() -> Self {
        PaperConfig {
            g: 1.0 / 256.0,
            alpha_interval: Time(55_000_000),
            increase_interval: Time(55_000_000),
            byte_counter: Bytes(10_000_000),
            fast_recovery: 5,
            rate_ai: Rate(40_000_000),
            rate_hai: Rate(200_000_000),
            min_rate: Rate(100_000_000),
            cnp_interval: Time(50_000_000),
        }
    }
}

impl PaperConfig {
    /// Checks the keys; `path` is their section.
    pub fn validate(&self, path: &str, env: &CheckEnv) -> Result<(), ScenarioError> {
        check_gain(path, self.g)?;
        check_timers(
            path,
            &[
                ("alpha_interval", self.alpha_interval),
                ("increase_interval", self.increase_interval),
                ("cnp_interval", self.cnp_interval),
            ],
            self.min_rate,
            env,
        )?;
        if self.byte_counter.0 == 0 {
            return Err(ScenarioError::new(format!("{path}.byte_counter"), "must be positive"));
        }
        Ok(())
    }
}

/// Which of the two increase events happened.
#[derive(Clone, Copy)]
enum Event {
    Timer,
    Bytes,
}

impl Paper {
    pub fn new(cfg: &PaperConfig) -> Self {
        Paper {
            cfg: cfg.clone(),
            alpha: 1.0,
            target_bps: 0.0,
            timer_count: 0,
            byte_count: 0,
            bytes_left: 0,
            next_alpha: None,
            next_increase: None,
        }
    }

    /// Whether the increase is hyper: both counts have reached F.
    fn hyper(&self) -> bool {
        self.timer_count.min(self.byte_count) >= self.cfg.fast_recovery
    }

    /// One increase event; returns whether the increase was hyper before it, which halves
    /// the period of the event's kind.
    fn increase(&mut self, s: &mut SendState, event: Event) -> bool {
        let was_hyper = self.hyper();
        match event {
            Event::Timer => self.timer_count += 1,
            Event::Bytes => self.byte_count += 1,
        }
        let (most, least, f) =
            (self.timer_count.max(self.byte_count), self.timer_count.min(self.byte_count), self.cfg.fast_recovery);
        let step = if most < f {
            0.0
        } else if least < f {
            self.cfg.rate_ai.0 as f64
        } else {
            self.cfg.rate_hai.0 as f64 * (least - f + 1) as f64
        };
        self.target_bps = (self.target_bps + step).min(s.line_rate_bps);
        s.rate_bps = (s.rate_bps + self.target_bps) / 2.0;
        was_hyper
    }

    /// Runs the alpha and increase ticks due before `now` (and at `now` when
    /// `inclusive`), each in time order (the two kinds do not touch each other's state).
    fn run_ticks(&mut self, s: &mut SendState, now: Ps, inclusive: bool) {
        let due = |t: Option<Ps>| t.filter(|&t| t < now || (inclusive && t == now));
        while let Some(at) = due(self.next_alpha) {
            self.alpha *= 1.0 - self.cfg.g;
            self.next_alpha = Some(at + self.cfg.alpha_interval.0);
        }
        while let Some(at) = due(self.next_increase) {
            let period = self.cfg.increase_interval.0;
            let hyper = self.increase(s, Event::Timer);
            self.next_increase = Some(at + if hyper { period / 2 } else { period });
        }
    }
}

impl CongestionControl for Paper {
    fn probe(&self, p: &mut Probe) {
        p.alpha = self.alpha;
        p.target_rate_bps = self.target_bps;
    }

    /// DCQCN reacts to notifications only.
    fn on_ack(&mut self, _s: &mut SendState, _f: &Feedback) {}

    fn on_cnp(&mut self, s: &mut SendState, now: Ps) {
        self.run_ticks(s, now, false);
        self.target_bps = s.rate_bps;
        s.rate_bps = s.bounded_rate(s.rate_bps * (1.0 - self.alpha / 2.0), self.cfg.min_rate);
        self.alpha = (1.0 - self.cfg.g) * self.alpha + self.cfg.g;
        self.timer_count = 0;
        self.byte_count = 0;
        self.bytes_left = self.cfg.byte_counter.0 as i64;
        self.next_alpha = Some(now + self.cfg.alpha_interval.0);
        self.next_increase = Some(now + self.cfg.increase_interval.0);
    }

    fn on_send(&mut self, s: &mut SendState, bytes: u64, _now: Ps) {
        if self.next_increase.is_none() {
            return;
        }
        self.bytes_left -= bytes as i64;
        if self.bytes_left < 0 {
            let period = self.cfg.byte_counter.0 as i64;
            let hyper = self.increase(s, Event::Bytes);
            self.bytes_left = if hyper { period / 2 } else { period };
        }
    }

    /// Only the increase timer needs events; alpha ticks run late, in order, when the
    /// next event or notification comes.
    fn next_timer(&self) -> Option<Ps> {
        self.next_increase
    }

    fn on_timer(&mut self, s: &mut SendState, now: Ps) {
        self.run_ticks(s, now, true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: Ps = 1_000_000;
    const G: f64 = 1.0 / 256.0;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1.0
    }

    /// The paper's rules by hand, with the defaults (F = 5, R_AI 40 Mbps, R_HAI 200 Mbps,
    /// T = K = 55 us, B = 10 MB), at 100 Gbps. Two notifications, at 0 and 10 us: each
    /// takes the target to the rate and halves the rate (alpha is 1, and stays 1 after
    /// (1 - g) 1 + g): 100 -> 50 -> 25 Gbps, target 50. Four timer events (65, 120, 175,
    /// 230 us) are fast recovery: 37.5, 43.75, 46.875, 48.4375. The fifth (285 us) is
    /// additive: target 50.04, rate 49.23875. Byte events 1 to 4: additive, the target
    /// 50.08 ... 50.20; the fifth makes both counts 5: hyper by 1 x R_HAI (50.40), and
    /// the sixth too (50.60), after which the byte counter runs at B / 2. The timer's
    /// sixth event (at 340 us) is hyper by (min(6, 6) - 5 + 1) = 2 x R_HAI and comes
    /// T / 2 later next time. Alpha decays once per 55 us from the last notification.
    #[test]
    fn the_paper_rules_by_hand() {
        let mut d = Paper::new(&PaperConfig::default());
        let mut s = SendState { cwnd: 0.0, ssthresh: 0.0, rate_bps: 100e9, line_rate_bps: 100e9, mss: 1000.0 };
        d.on_send(&mut s, 20_000_000, 0);
        assert_eq!((s.rate_bps, d.next_timer()), (100e9, None), "nothing before the first notification");
        d.on_cnp(&mut s, 0);
        assert_eq!((s.rate_bps, d.target_bps, d.alpha), (50e9, 100e9, 1.0));
        d.on_cnp(&mut s, 10 * US);
        assert_eq!((s.rate_bps, d.target_bps, d.alpha), (25e9, 50e9, 1.0));
        assert_eq!(d.next_timer(), Some(65 * US));
        let mut rate = 25e9;
        for k in 0..4 {
            d.on_timer(&mut s, (65 + 55 * k) * US);
            rate = (rate + 50e9) / 2.0;
            assert!(close(s.rate_bps, rate), "fast recovery {k}: {} vs {rate}", s.rate_bps);
        }
        assert!(close(s.rate_bps, 48.4375e9));
        d.on_timer(&mut s, 285 * US);
        assert!(close(d.target_bps, 50.04e9) && close(s.rate_bps, 49.23875e9), "additive: {}", s.rate_bps);
        let mut target = 50.04e9;
        let mut rate = s.rate_bps;
        for (k, step) in [40e6, 40e6, 40e6, 40e6, 200e6, 200e6].into_iter().enumerate() {
            d.on_send(&mut s, 10_000_000, 300 * US);
            assert!(close(s.rate_bps, rate), "byte event {k} needs one byte more");
            d.on_send(&mut s, 1, 300 * US);
            target += step;
            rate = (rate + target) / 2.0;
            assert!(close(d.target_bps, target) && close(s.rate_bps, rate), "byte event {k}: {}", d.target_bps);
        }
        assert!(close(d.target_bps, 50.6e9));
        assert_eq!(d.bytes_left, 5_000_000, "hyper: the byte counter runs at B / 2");
        d.on_timer(&mut s, 340 * US);
        assert!(close(d.target_bps, 51.0e9), "hyper by 2 x R_HAI: {}", d.target_bps);
        assert_eq!(d.next_timer(), Some(340 * US + 27_500_000), "hyper: the timer runs at T / 2");
        let ticks = (340 - 10) / 55;
        assert!((d.alpha - (1.0 - G).powi(ticks)).abs() < 1e-12, "alpha after {ticks} ticks");
    }

    /// A cut never goes below min_rate, and the target never above line rate.
    #[test]
    fn the_rate_stays_between_min_rate_and_line_rate() {
        let cfg = PaperConfig { min_rate: Rate(10_000_000_000), ..PaperConfig::default() };
        let mut d = Paper::new(&cfg);
        let mut s = SendState { cwnd: 0.0, ssthresh: 0.0, rate_bps: 100e9, line_rate_bps: 100e9, mss: 1000.0 };
        for k in 0..10 {
            d.on_cnp(&mut s, k * US);
        }
        assert_eq!(s.rate_bps, 10e9);
        // The timer alone only adds R_AI (hyper increase needs byte events too): 90 Gbps
        // take 2,250 events.
        for k in 0..2500 {
            d.on_timer(&mut s, 9 * US + 55 * US * (k + 1));
        }
        assert!(s.rate_bps <= 100e9 && d.target_bps == 100e9, "{} {}", s.rate_bps, d.target_bps);
        assert!(s.rate_bps > 99.9e9);
    }
}

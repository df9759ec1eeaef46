use super::{check_gain, check_timers};
use crate::check_env::CheckEnv;
use crate::config::{Probability, ScenarioError};
use crate::sim::Ps;
use crate::transport::cc::{CongestionControl, Feedback, Probe, SendState};
use crate::units::{Rate, Time};
use serde::{Deserialize, Serialize};

/// DCQCN's reaction point as Mellanox NICs run it, after ns3-datacenter's `RdmaHw`
/// (cc_mode 1, `rdma-hw.cc` "Mellanox's version of DCQCN"). A congestion notification
/// (an ACK echoing a CE mark) sets two flags. The first one also sets alpha to 1, starts
/// the alpha timer (every `alpha_interval`: alpha <- (1 - g) alpha + g if a notification
/// came since the last tick, else (1 - g) alpha) and the decrease timer (every
/// `decrease_interval`, 1 ns after the alpha tick: if a notification came, the target
/// becomes the rate (unless `clamp_target` is off and no increase happened since the
/// last cut), the rate becomes max(min_rate, rate (1 - alpha / 2)), and the increase
/// timer restarts). Every `increase_interval` after a cut the rate moves halfway to the
/// target; from the `fast_recovery`-th increase on, the target first grows by `rate_ai`,
/// and after that by `rate_hai` (at most to line rate). There is no byte counter.
pub struct Mellanox {
    cfg: MellanoxConfig,
    alpha: f64,
    target_bps: f64,
    /// A notification came since the last alpha tick / decrease check.
    alpha_notified: bool,
    decrease_notified: bool,
    /// Increases since the last cut.
    stage: u32,
    /// The pending ticks of the three timers (none before the first notification; the
    /// increase timer starts at the first cut).
    next_alpha: Option<Ps>,
    next_decrease: Option<Ps>,
    next_increase: Option<Ps>,
}

/// The keys of DCQCN's Mellanox model (`model = "ns3_datacenter"`); the defaults are
/// ns3-datacenter's example configuration (`config-burst.txt`, `config-workload.txt`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MellanoxConfig {
    /// EWMA gain of alpha (`EWMA_GAIN` 1/256).
    pub g: f64,
    /// Alpha tick (`ALPHA_RESUME_INTERVAL` 1 us).
    pub alpha_interval: Time,
    /// Decrease check (`RATE_DECREASE_INTERVAL` 4 us).
    pub decrease_interval: Time,
    /// Increase tick (`RP_TIMER` 900 us).
    pub increase_interval: Time,
    /// Increases of fast recovery before active increase (`FAST_RECOVERY_TIMES` 1).
    pub fast_recovery: u32,
    /// Additive increase of the target (`RATE_AI` 50 Mbps).
    pub rate_ai: Rate,
    /// Hyper increase of the target (`RATE_HAI` 100 Mbps).
    pub rate_hai: Rate,
    /// The lowest rate (`MIN_RATE` 100 Mbps).
    pub min_rate: Rate,
    /// Set the target to the rate at every cut (`CLAMP_TARGET_RATE` 0: only after an
    /// increase).
    pub clamp_target: bool,
    /// The rate becomes this fraction of itself at the first notification (1.0), but
    /// not less than `min_rate`.
    pub rate_on_first_cnp: Probability,
}

impl Default for MellanoxConfig {
    fn default() -> Self {
        MellanoxConfig {
            g: 1.0 / 256.0,
            alpha_interval: Time(1_000_000),
            decrease_interval: Time(4_000_000),
            increase_interval: Time(900_000_000),
            fast_recovery: 1,
            rate_ai: Rate(50_000_000),
            rate_hai: Rate(100_000_000),
            min_rate: Rate(100_000_000),
            clamp_target: false,
            rate_on_first_cnp: Probability::new(1.0),
        }
    }
}

impl MellanoxConfig {
    /// Checks the keys; `path` is their section.
    pub fn validate(&self, path: &str, env: &CheckEnv) -> Result<(), ScenarioError> {
        check_gain(path, self.g)?;
        check_timers(
            path,
            &[
                ("alpha_interval", self.alpha_interval),
                ("decrease_interval", self.decrease_interval),
                ("increase_interval", self.increase_interval),
            ],
            self.min_rate,
            env,
        )
    }
}

impl Mellanox {
    pub fn new(cfg: &MellanoxConfig) -> Self {
        Mellanox {
            cfg: cfg.clone(),
            alpha: 1.0,
            target_bps: 0.0,
            alpha_notified: false,
            decrease_notified: false,
            stage: 0,
            next_alpha: None,
            next_decrease: None,
            next_increase: None,
        }
    }
}

/// The decrease check runs this long after the alpha tick it follows (ns-3's `+1 ns`).
const DECREASE_AFTER_ALPHA: Ps = 1_000;

impl Mellanox {
    fn alpha_tick(&mut self, now: Ps) {
        let g = self.cfg.g;
        self.alpha = (1.0 - g) * self.alpha + if self.alpha_notified { g } else { 0.0 };
        self.alpha_notified = false;
        self.next_alpha = Some(now + self.cfg.alpha_interval.0);
    }

    fn decrease_check(&mut self, s: &mut SendState, now: Ps) {
        self.next_decrease = Some(now + self.cfg.decrease_interval.0);
        if !self.decrease_notified {
            return;
        }
        if self.cfg.clamp_target || self.stage != 0 {
            self.target_bps = s.rate_bps;
        }
        s.rate_bps = s.bounded_rate(s.rate_bps * (1.0 - self.alpha / 2.0), self.cfg.min_rate);
        self.stage = 0;
        self.decrease_notified = false;
        self.next_increase = Some(now + self.cfg.increase_interval.0);
    }

    fn increase_tick(&mut self, s: &mut SendState, now: Ps) {
        self.next_increase = Some(now + self.cfg.increase_interval.0);
        let step = match self.stage.cmp(&self.cfg.fast_recovery) {
            std::cmp::Ordering::Less => 0.0,
            std::cmp::Ordering::Equal => self.cfg.rate_ai.0 as f64,
            std::cmp::Ordering::Greater => self.cfg.rate_hai.0 as f64,
        };
        self.target_bps = (self.target_bps + step).min(s.line_rate_bps);
        s.rate_bps = s.rate_bps / 2.0 + self.target_bps / 2.0;
        self.stage += 1;
    }
}

impl CongestionControl for Mellanox {
    fn probe(&self, p: &mut Probe) {
        p.alpha = self.alpha;
        p.target_rate_bps = self.target_bps;
    }

    /// DCQCN reacts to notifications only.
    fn on_ack(&mut self, _s: &mut SendState, _f: &Feedback) {}

    fn on_cnp(&mut self, s: &mut SendState, now: Ps) {
        self.run_ticks(s, now, false);
        self.alpha_notified = true;
        self.decrease_notified = true;
        if self.next_alpha.is_none() {
            self.alpha = 1.0;
            self.alpha_notified = false;
            self.next_alpha = Some(now + self.cfg.alpha_interval.0);
            self.next_decrease = Some(now + self.cfg.decrease_interval.0 + DECREASE_AFTER_ALPHA);
            // Floored at min_rate as every cut is: a fraction of 0 would stop the
            // connection for good (its increases move halfway to a target of 0).
            s.rate_bps = s.bounded_rate(s.rate_bps * self.cfg.rate_on_first_cnp.get(), self.cfg.min_rate);
            self.target_bps = s.rate_bps;
        }
    }

    /// Only the ticks that change the rate need an event: the next increase, and the next
    /// decrease check once a notification waits for it. Alpha ticks and idle checks run
    /// late, in order, when the next event or notification comes (`run_ticks`).
    fn next_timer(&self) -> Option<Ps> {
        let decrease = self.next_decrease.filter(|_| self.decrease_notified);
        [decrease, self.next_increase].into_iter().flatten().min()
    }

    fn on_timer(&mut self, s: &mut SendState, now: Ps) {
        self.run_ticks(s, now, true);
    }
}

impl Mellanox {
    /// Runs the ticks due before `now` (and at `now` when `inclusive`), in time order:
    /// alpha before a decrease check at the same time, as the reference schedules them.
    /// A notification at a tick's time comes before the tick.
    fn run_ticks(&mut self, s: &mut SendState, now: Ps, inclusive: bool) {
        let due = |t: Option<Ps>| t.filter(|&t| t < now || (inclusive && t == now));
        loop {
            match (due(self.next_alpha), due(self.next_decrease), due(self.next_increase)) {
                (Some(a), d, i) if d.is_none_or(|d| a <= d) && i.is_none_or(|i| a <= i) => self.alpha_tick(a),
                (_, Some(d), i) if i.is_none_or(|i| d <= i) => self.decrease_check(s, d),
                (_, _, Some(i)) => self.increase_tick(s, i),
                _ => return,
            }
        }
    }

    /// The next tick of any of the three timers (as a simulator that schedules every tick
    /// would run them; the oracle of the tests).
    #[cfg(test)]
    fn next_tick(&self) -> Option<Ps> {
        [self.next_alpha, self.next_decrease, self.next_increase].into_iter().flatten().min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: Ps = 1_000_000;

    fn line_rate() -> SendState {
        SendState { cwnd: 0.0, ssthresh: 0.0, rate_bps: 100e9, line_rate_bps: 100e9, mss: 1000.0 }
    }

    /// The reference's sequence after one notification at t = 0, computed by hand: alpha
    /// starts at 1 and decays at each 1 us tick (the notification that started it does not
    /// count); the check at 4 us + 1 ns cuts the rate by alpha / 2 without moving the
    /// target; then every 900 us the rate moves halfway to the target, which grows by
    /// R_AI at the first-after-fast-recovery tick and by R_HAI after that.
    #[test]
    fn one_notification_cuts_then_recovers_by_the_reference_rules() {
        let mut d = Mellanox::new(&MellanoxConfig::default());
        let mut s = SendState { rate_bps: 80e9, ..line_rate() };
        assert_eq!(d.next_timer(), None);
        d.on_cnp(&mut s, 0);
        assert_eq!(d.next_tick(), Some(US), "alpha ticks every microsecond");
        assert_eq!(d.next_timer(), Some(4 * US + 1_000), "but only the check that cuts needs an event");
        d.on_timer(&mut s, 4 * US + 1_000);
        let g: f64 = 1.0 / 256.0;
        let alpha = (1.0 - g).powi(4);
        let cut = 80e9 * (1.0 - alpha / 2.0);
        assert!((d.alpha - alpha).abs() < 1e-12, "{} vs {alpha}", d.alpha);
        assert!((s.rate_bps - cut).abs() < 1.0, "{} vs {cut}", s.rate_bps);
        assert_eq!(d.target_bps, 80e9, "no increase since the last cut: the target stays");
        // Nothing more notifies: alpha keeps decaying, the increases begin 900 us later.
        d.on_timer(&mut s, 904 * US + 1_000);
        let fast = (cut + 80e9) / 2.0;
        assert!((s.rate_bps - fast).abs() < 1.0, "fast recovery: {} vs {fast}", s.rate_bps);
        d.on_timer(&mut s, 1804 * US + 1_000);
        let active = (fast + 80.05e9) / 2.0;
        assert!((s.rate_bps - active).abs() < 1.0, "active increase: {} vs {active}", s.rate_bps);
        d.on_timer(&mut s, 2704 * US + 1_000);
        let hyper = (active + 80.15e9) / 2.0;
        assert!((s.rate_bps - hyper).abs() < 1.0, "hyper increase: {} vs {hyper}", s.rate_bps);
        let ticks = 2704; // one per microsecond from 1 us
        assert!((d.alpha - (1.0 - g).powi(ticks)).abs() < 1e-9, "alpha after {ticks} ticks");
    }

    /// A second notification before the check makes the next cut after an increase
    /// clamp the target to the rate; without any notification no cut happens; the rate
    /// never falls below min_rate.
    #[test]
    fn cuts_need_a_notification_and_stop_at_the_minimum() {
        let cfg = MellanoxConfig { min_rate: Rate(10_000_000_000), ..MellanoxConfig::default() };
        let mut d = Mellanox::new(&cfg);
        let mut s = line_rate();
        d.on_cnp(&mut s, 0);
        d.on_timer(&mut s, 4 * US + 1_000);
        let first_cut = s.rate_bps;
        assert!(first_cut < 100e9);
        d.on_timer(&mut s, 8 * US + 1_000);
        assert_eq!(s.rate_bps, first_cut, "no notification, no cut");
        for k in 0..200u64 {
            let t = 8 * US + 1_000 + k * 4 * US;
            d.on_cnp(&mut s, t);
            d.on_timer(&mut s, t + 4 * US);
        }
        assert_eq!(s.rate_bps, 10e9, "held at min_rate");
    }

    /// Running only the ticks that change the rate as events, the others late, gives
    /// exactly what running every tick as it comes gives: random notifications (none
    /// at a tick's time) over 20 ms, the rate and alpha compared at every notification
    /// and at the end.
    #[test]
    fn late_ticks_equal_ticks_on_time() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(3);
        for round in 0..20 {
            let gap = [300_000u64, 3_000_000, 40_000_000][round % 3];
            let mut t = 0;
            let cnps: Vec<Ps> = std::iter::from_fn(|| {
                t += rng.gen_range(1..gap) * 10 + 7; // never on a tick (ticks are whole ns + 1 ns)
                (t < 20_000 * US).then_some(t)
            })
            .collect();
            let cfg = MellanoxConfig { increase_interval: Time(55 * US), ..MellanoxConfig::default() };
            let (mut eager, mut lazy) = (Mellanox::new(&cfg), Mellanox::new(&cfg));
            let (mut se, mut sl) = (line_rate(), line_rate());
            let run = |d: &mut Mellanox, s: &mut SendState, next: fn(&Mellanox) -> Option<Ps>, until: Ps| {
                while let Some(t) = next(d).filter(|&t| t < until) {
                    d.on_timer(s, t);
                }
            };
            for &c in &cnps {
                run(&mut eager, &mut se, Mellanox::next_tick, c);
                run(&mut lazy, &mut sl, |d| d.next_timer(), c);
                eager.on_cnp(&mut se, c);
                lazy.on_cnp(&mut sl, c);
                assert_eq!((se.rate_bps, eager.alpha), (sl.rate_bps, lazy.alpha), "round {round}, at {c}");
            }
            let end = 20_000 * US;
            run(&mut eager, &mut se, Mellanox::next_tick, end);
            run(&mut lazy, &mut sl, |d| d.next_timer(), end);
            lazy.on_timer(&mut sl, end - 1);
            assert_eq!(se.rate_bps, sl.rate_bps, "round {round}, at the end");
            assert!(cnps.len() > 3, "round {round}: {} notifications", cnps.len());
        }
    }
}

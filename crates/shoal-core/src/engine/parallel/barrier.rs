//! The barrier at which the threads of a parallel run meet, twice a window.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// A barrier for the threads of a parallel run, which meet twice a window, often every
/// few microseconds of work: it spins a while before it yields, where `std`'s sleeps at
/// once and wakes in tens of microseconds. Yielding keeps it fair with more threads than
/// cores.
pub(super) struct SpinBarrier {
    threads: usize,
    arrived: AtomicUsize,
    generation: AtomicUsize,
    /// A thread panicked: nobody waits any more (the scope's join passes the panic on).
    broken: AtomicBool,
    /// Spins before yielding: none with more threads than cores, where a spinning thread
    /// holds the core that the one it waits for needs.
    spins: u32,
}

impl SpinBarrier {
    pub fn new(threads: usize) -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let spins = if threads <= cores { 4_000 } else { 0 };
        let broken = AtomicBool::new(false);
        SpinBarrier { threads, arrived: AtomicUsize::new(0), generation: AtomicUsize::new(0), broken, spins }
    }

    /// Whether a thread panicked.
    pub fn is_broken(&self) -> bool {
        self.broken.load(Ordering::Acquire)
    }

    /// Waits until every thread has called `wait` (as many times).
    pub fn wait(&self) {
        let generation = self.generation.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.threads {
            self.arrived.store(0, Ordering::Relaxed);
            self.generation.fetch_add(1, Ordering::Release);
            return;
        }
        let mut spins = 0u32;
        while self.generation.load(Ordering::Acquire) == generation && !self.is_broken() {
            if spins < self.spins {
                std::hint::spin_loop();
                spins += 1;
            } else {
                std::thread::yield_now();
            }
        }
    }
}

/// Breaks its barrier if dropped while its thread panics, so that the other threads stop
/// waiting and the panic reaches the caller.
pub(super) struct BreakOnPanic<'a>(pub &'a SpinBarrier);

impl Drop for BreakOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.broken.store(true, Ordering::Release);
        }
    }
}

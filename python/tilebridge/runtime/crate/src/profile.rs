//! Where a launch's host time goes, for `TILEBRIDGE_PROFILE=1` runs.
//!
//! Off by default (one relaxed atomic load per phase). When on, each launch adds the
//! nanoseconds of each phase to process-wide counters, which every generated
//! extension returns from `_profile()`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Instant;

/// The phases of one launch, in order: the arguments read and checked, the stream found, the
/// specialization found and the parameters laid out, the driver's `cuLaunchKernel` alone, what
/// follows it (a completion recorded, the arrays kept alive), the wait of a blocking launch.
pub const PHASES: [&str; 6] = ["arguments", "stream", "key", "driver", "after", "sync"];

static NANOS: [AtomicU64; 6] = [const { AtomicU64::new(0) }; 6];
static LAUNCHES: AtomicU64 = AtomicU64::new(0);

pub fn enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("TILEBRIDGE_PROFILE").is_some_and(|v| v != "0"))
}

/// A stopwatch that charges elapsed time to phases, when profiling is on.
pub struct Stopwatch(Option<Instant>);

impl Stopwatch {
    pub fn start() -> Self {
        Stopwatch(enabled().then(Instant::now))
    }

    /// Charges the time since the last lap to `phase`.
    pub fn lap(&mut self, phase: usize) {
        if let Some(t) = self.0 {
            let now = Instant::now();
            NANOS[phase].fetch_add((now - t).as_nanos() as u64, Ordering::Relaxed);
            self.0 = Some(now);
        }
    }

    pub fn finish(self) {
        if self.0.is_some() {
            LAUNCHES.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// (launches, [(phase, total nanoseconds)]) since the process started.
pub fn totals() -> (u64, Vec<(&'static str, u64)>) {
    let phases = PHASES
        .iter()
        .zip(&NANOS)
        .map(|(p, n)| (*p, n.load(Ordering::Relaxed)))
        .collect();
    (LAUNCHES.load(Ordering::Relaxed), phases)
}

//! Simulated time: integer picoseconds, as in htsim.
//!
//! Picoseconds keep serialisation exact at 100–800 Gbit/s (one byte at
//! 100 Gbit/s is 80 ps) while a `u64` still spans about 213 days.

/// A point in (or a span of) simulated time, in picoseconds.
pub type SimTime = u64;

/// Picoseconds per nanosecond.
pub const PS_PER_NS: SimTime = 1_000;
/// Picoseconds per microsecond.
pub const PS_PER_US: SimTime = 1_000_000;
/// Picoseconds per millisecond.
pub const PS_PER_MS: SimTime = 1_000_000_000;
/// Picoseconds per second.
pub const PS_PER_S: SimTime = 1_000_000_000_000;

/// Converts nanoseconds to simulated time.
pub const fn from_ns(ns: u64) -> SimTime {
    ns.saturating_mul(PS_PER_NS)
}

/// Converts microseconds to simulated time.
pub const fn from_us(us: u64) -> SimTime {
    us.saturating_mul(PS_PER_US)
}

/// Converts milliseconds to simulated time.
pub const fn from_ms(ms: u64) -> SimTime {
    ms.saturating_mul(PS_PER_MS)
}

/// Converts simulated time to whole nanoseconds (rounding down), the unit of
/// the sans-IO transport engine.
pub const fn to_ns(time: SimTime) -> u64 {
    time / PS_PER_NS
}

/// Converts simulated time to seconds as a float (for reports only).
pub fn to_secs(time: SimTime) -> f64 {
    time as f64 / PS_PER_S as f64
}

//! A point-to-point link: serialisation at a fixed rate, then a fixed
//! propagation delay. A link can be blackholed (it keeps serialising but
//! delivers nothing), which models a silent link failure.

use crate::error::FabricError;
use crate::event::{ComponentId, EventKind};
use crate::packet::PacketId;
use crate::sim::SimContext;
use crate::time::{PS_PER_S, SimTime};

/// Time to serialise `bytes` at `rate_bps`, rounded up to a whole picosecond.
pub fn serialization_time(bytes: u32, rate_bps: u64) -> SimTime {
    let bits = u128::from(bytes) * 8 * u128::from(PS_PER_S);
    let rate = u128::from(rate_bps.max(1));
    bits.div_ceil(rate) as SimTime
}

/// Picoseconds per byte at `rate_bps` when that is a whole number (every
/// rate dividing 8 Tbit/s: 100, 200, 400, 800 Gbit/s, 25 Gbit/s, ...), so a
/// link can serialise with one multiplication instead of a 128-bit division.
fn whole_ps_per_byte(rate_bps: u64) -> Option<SimTime> {
    let ps_bits_per_byte = 8 * PS_PER_S;
    (rate_bps > 0 && ps_bits_per_byte % rate_bps == 0).then(|| ps_bits_per_byte / rate_bps)
}

/// One direction of a cable.
#[derive(Clone, Debug)]
pub struct Link {
    rate_bps: u64,
    delay: SimTime,
    next: ComponentId,
    up: bool,
    /// `Some` when the rate gives a whole number of picoseconds per byte.
    ps_per_byte: Option<SimTime>,
}

impl Link {
    /// A link of `rate_bps` and propagation `delay` that delivers to `next`.
    pub fn new(rate_bps: u64, delay: SimTime, next: ComponentId) -> Result<Self, FabricError> {
        if rate_bps == 0 {
            return Err(FabricError::InvalidTopology(
                "link rate must be positive".into(),
            ));
        }
        Ok(Self {
            rate_bps,
            delay,
            next,
            up: true,
            ps_per_byte: whole_ps_per_byte(rate_bps),
        })
    }

    /// Line rate in bit/s.
    pub fn rate_bps(&self) -> u64 {
        self.rate_bps
    }

    /// Propagation delay.
    pub fn delay(&self) -> SimTime {
        self.delay
    }

    /// Component the link delivers to.
    pub fn next(&self) -> ComponentId {
        self.next
    }

    /// Whether the link delivers packets (false = blackholed).
    pub fn is_up(&self) -> bool {
        self.up
    }

    /// Brings the link up or blackholes it.
    pub fn set_up(&mut self, up: bool) {
        self.up = up;
    }

    /// Serialisation time of `bytes` on this link.
    pub fn serialization_time(&self, bytes: u32) -> SimTime {
        match self.ps_per_byte {
            Some(ps) => SimTime::from(bytes) * ps,
            None => serialization_time(bytes, self.rate_bps),
        }
    }

    /// Starts sending `packet` now: schedules its arrival at the far end
    /// after serialisation plus propagation (or drops it if blackholed) and
    /// returns when the transmitter becomes free again.
    pub fn transmit(&self, ctx: &mut SimContext, packet: PacketId) -> SimTime {
        let wire_bytes = ctx.pool.get(packet).wire_bytes;
        let done = ctx.now + self.serialization_time(wire_bytes);
        if self.up {
            ctx.events
                .schedule(done + self.delay, self.next, EventKind::Arrive(packet));
        } else {
            ctx.counters.blackholed += 1;
            ctx.pool.release(packet);
        }
        done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialisation_is_exact_at_100g() {
        // 80 ps per byte at 100 Gbit/s.
        assert_eq!(serialization_time(1, 100_000_000_000), 80);
        assert_eq!(serialization_time(4194, 100_000_000_000), 335_520);
        // 25 Gbit/s: 320 ps per byte.
        assert_eq!(serialization_time(64, 25_000_000_000), 20_480);
        // Non-integral results round up.
        assert_eq!(serialization_time(1, 3), 2_666_666_666_667);
    }

    #[test]
    fn whole_picosecond_rates_match_the_exact_formula() {
        for rate in [
            1_000_000_000,
            3,
            25_000_000_000,
            100_000_000_000,
            12_500_000_000,
            400_000_000_000,
            30_000_000_000,
        ] {
            let link = Link::new(rate, 0, ComponentId(0)).unwrap();
            for bytes in [0, 1, 84, 1538, 4194, 9038, u32::MAX] {
                assert_eq!(
                    link.serialization_time(bytes),
                    serialization_time(bytes, rate),
                    "{bytes} B at {rate} bit/s"
                );
            }
        }
    }

    #[test]
    fn zero_rate_is_rejected() {
        assert!(Link::new(0, 0, ComponentId(0)).is_err());
    }
}

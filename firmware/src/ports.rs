//! Which of a NIC's ports (planes) can take a packet now.

/// The ports a multi-plane NIC can send on now. A path's entropy value picks
/// its port (`entropy mod ports`; the low bits, spec §2.3), so a packet for a
/// busy port would wait behind that port's queue while the others idle. The
/// NIC's scheduler tells the engine which ports are free
/// ([`crate::Nic::poll_transmit_on`]) and the path choice skips paths on busy
/// ones (spec §5.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortsReady {
    ports: u8,
    ready: u64,
}

impl PortsReady {
    /// Every port ready (a NIC with one port, or one that queues per port).
    pub const ALL: PortsReady = PortsReady { ports: 1, ready: 1 };

    /// `ports` ports (1..=64), port `i` ready when bit `i` of `ready` is set.
    /// `None` for a port count out of range.
    pub fn new(ports: u8, ready: u64) -> Option<Self> {
        (1..=64)
            .contains(&ports)
            .then_some(PortsReady { ports, ready })
    }

    /// The NIC's port count.
    pub fn count(&self) -> u8 {
        self.ports
    }

    /// True when a packet with source port (entropy value) `entropy` can go now.
    pub fn takes(&self, entropy: u16) -> bool {
        self.ready >> (entropy % u16::from(self.ports)) & 1 == 1
    }

    /// True when no port is ready.
    pub fn none(&self) -> bool {
        let all = if self.ports == 64 {
            u64::MAX
        } else {
            (1 << self.ports) - 1
        };
        self.ready & all == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_takes_its_entropy_values_port() {
        let r = PortsReady::new(4, 0b0101).unwrap();
        assert!(r.takes(0) && r.takes(2) && r.takes(6));
        assert!(!r.takes(1) && !r.takes(3) && !r.takes(7));
        assert!(!r.none());
        assert!(PortsReady::new(4, 0b1_0000).unwrap().none());
        assert!(PortsReady::new(0, 1).is_none() && PortsReady::new(65, 1).is_none());
        assert!(PortsReady::ALL.takes(12345));
    }
}

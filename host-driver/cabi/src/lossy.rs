//! The lossy relay the program tests of both libraries put between a server and a
//! client process (feature `relay`, for tests only: the libraries never depend on it).

use std::net::SocketAddr;

use metaroce_relay::{Relay, RelayConfig, RelayHandle};

use crate::check::{SideEnv, fixed_udp_ports, relay_env};

/// A running relay between the NICs of a server and a client process, dropping each
/// datagram with a given probability on each of 8 paths, with the environment that
/// points each side's NIC at it.
pub struct LossyRelay {
    relay: RelayHandle,
    /// Environment of the server process.
    pub server: SideEnv,
    /// Environment of the client process.
    pub client: SideEnv,
}

impl LossyRelay {
    /// Starts the relay (seed 7). Each side's NICs are on fixed ports (see
    /// [`fixed_udp_ports`]) from `METAROCE_IBV_PORT`; the relayed NIC is the process's
    /// `nic_index`-th context (0 for most programs; 1 for perftest's connection manager,
    /// whose context perftest opens after one of its own), on port `METAROCE_IBV_PORT +
    /// nic_index`.
    pub fn start(loss: f64, nic_index: u16) -> LossyRelay {
        let (s, c) = fixed_udp_ports(nic_index + 1);
        let nic = |p: u16| SocketAddr::from(([127, 0, 0, 1], p + nic_index));
        // Link 0 towards the server, link 1 towards the client.
        let mut cfg = RelayConfig::between(nic(s), nic(c), 8, loss);
        cfg.seed = 7;
        let relay = Relay::start(cfg).expect("start relay");
        let (to_server, to_client) = (relay.listen_addrs()[0], relay.listen_addrs()[1]);
        let (server, client) = relay_env((s, c), to_server, to_client);
        LossyRelay {
            relay,
            server,
            client,
        }
    }

    /// Fails unless the relay dropped something: otherwise the traffic did not cross it
    /// and a test through it proved nothing.
    pub fn assert_crossed(&self) {
        let dropped: u64 = self
            .relay
            .all_counters()
            .iter()
            .map(|p| p.dropped_loss)
            .sum();
        assert!(
            dropped > 0,
            "the relay dropped nothing: the traffic did not cross it"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_each_side_at_the_link_towards_the_other() {
        let f = LossyRelay::start(0.5, 1);
        let port = |e: &SideEnv| e[0].1.parse::<u16>().unwrap();
        let (s, c) = (port(&f.server), port(&f.client));
        assert_ne!(s, c);
        // The server sends through the link towards the client and vice versa.
        assert_eq!(f.server[1].1, f.relay.listen_addrs()[1].to_string());
        assert_eq!(f.client[1].1, f.relay.listen_addrs()[0].to_string());
    }
}

//! A MAC↔UDP bridge: the Ethernet frames of a simulated NIC
//! ([`crate::hw_nic::HwNic`]) leave and enter through real UDP sockets, so
//! the RTL's own frames meet another NIC (a soft NIC, the relay) over the
//! host's network stack.
//!
//! **Out** ([`UdpBridge::send_frame`]): the frame is parsed (Ethernet II,
//! IPv4 or IPv6, UDP) and its UDP payload is sent to the frame's destination
//! IP and port from a socket bound to the bridge's IP and **the frame's UDP
//! source port** — the path entropy, which the MetaRoCE ICRC covers. One
//! socket per distinct source port is bound on first use and kept. Nothing
//! in the payload is changed (the ICRC is never re-sealed: the receiver
//! checks the RTL's own ICRC). What a receiving host's kernel would refuse
//! is dropped and counted instead of sent: a wrong IPv4 header checksum, a
//! wrong UDP checksum (zero is allowed over IPv4 only), a source address
//! that is not the bridge's. A source port that cannot be bound (in use by
//! another socket of this host, privileged, or 0) drops the frame and counts
//! a bind failure.
//!
//! **In** ([`UdpBridge::poll_frames`]): every datagram waiting on the receive
//! socket (bound to the NIC's address and UDP port) becomes an Ethernet II +
//! IP + UDP frame to the NIC's MAC, IP and port, from the peer MAC and the
//! datagram's source address and port, with a valid UDP checksum and the
//! ECN codepoint the datagram arrived with (so a CE mark set on the way
//! reaches the RTL).
//!
//! **ECN** both ways: a frame's ECN codepoint is the datagram's (sent as a
//! per-datagram `IP_TOS`), and a received datagram's becomes the frame's.
//! The sockets are the soft NIC's batched non-blocking UDP sockets
//! (`metaroce_udp::BatchSocket`, which read the received ECN
//! bits with `IP_RECVTOS`); nothing here waits.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::net::SocketAddr;
use std::os::fd::{AsFd, AsRawFd};

use etherparse::{NetSlice, SlicedPacket, TransportSlice};
use metaroce_udp::{BatchSocket, Ecn, RxBatch, SocketOptions, TxPacket};

use crate::frame::{self, udp_frame};

/// Receive buffer: the largest UDP payload (65,535 bytes less the UDP header).
const MAX_DATAGRAM: usize = 65_527;
/// Datagrams read at once.
const RX_BATCH: usize = 16;

/// How a bridge is set up.
#[derive(Clone, Debug)]
pub struct BridgeConfig {
    /// The NIC's Ethernet address: the destination of the frames it receives.
    pub mac: [u8; 6],
    /// The Ethernet address the NIC's received frames come from (its next hop).
    pub peer_mac: [u8; 6],
    /// The NIC's IP address and UDP port: the receive socket binds it (port
    /// 0: the kernel picks one, see [`UdpBridge::local_addr`]); send sockets
    /// bind its IP.
    pub local: SocketAddr,
}

/// What a bridge did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct BridgeCounters {
    /// Frames whose UDP payload was sent.
    pub frames_sent: u64,
    /// Datagrams received and handed out as frames.
    pub datagrams_received: u64,
    /// Frames dropped because no socket could be bound to their source port.
    pub bind_failures: u64,
    /// Frames that were no Ethernet II + IP + UDP frame (dropped).
    pub non_udp_frames: u64,
    /// Frames with a wrong IPv4 header checksum or UDP checksum (dropped).
    pub bad_checksums: u64,
    /// Frames whose source IP is not the bridge's (dropped).
    pub wrong_source: u64,
    /// Sends the socket refused (full buffer, unreachable port; dropped).
    pub send_errors: u64,
    /// Receive errors other than "nothing waiting".
    pub receive_errors: u64,
    /// Datagrams the kernel dropped before the receive socket saw them (its
    /// buffer was full; Linux `/proc/net/udp` `drops`, 0 where unknown).
    pub kernel_drops: u64,
}

/// A MAC↔UDP bridge for one NIC (see the module docs).
pub struct UdpBridge {
    cfg: BridgeConfig,
    /// The receive socket and its bound address (it also sends the frames
    /// from the NIC's own port).
    rx: BatchSocket,
    local: SocketAddr,
    /// Send sockets by source port.
    tx: HashMap<u16, BatchSocket>,
    batch: RxBatch,
    counters: BridgeCounters,
}

/// Options of every bridge socket: no offloads (one datagram per frame),
/// Not-ECT unless a datagram says otherwise, the kernel's buffer sizes.
fn socket_options() -> SocketOptions {
    SocketOptions {
        ecn: Ecn::NotEct,
        gso: false,
        gro: false,
        recv_buffer: None,
        send_buffer: None,
    }
}

impl UdpBridge {
    /// Binds the receive socket at `cfg.local`.
    pub fn bind(cfg: BridgeConfig) -> std::io::Result<Self> {
        let rx = BatchSocket::bind(cfg.local, &socket_options()).map_err(std::io::Error::other)?;
        let local = rx.local_addr();
        Ok(Self {
            cfg,
            rx,
            local,
            tx: HashMap::new(),
            batch: RxBatch::new(RX_BATCH, MAX_DATAGRAM),
            counters: BridgeCounters::default(),
        })
    }

    /// The address the NIC receives on (the receive socket's).
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// The counters so far (reads `/proc/net/udp` for `kernel_drops`).
    pub fn counters(&self) -> BridgeCounters {
        BridgeCounters {
            kernel_drops: kernel_drops(&self.rx).unwrap_or(0),
            ..self.counters
        }
    }

    /// Sends a frame the NIC transmitted: its UDP payload, from its source
    /// port to its destination (see the module docs for what is dropped).
    pub fn send_frame(&mut self, frame: &[u8]) {
        let Some(d) = frame::parse(frame) else {
            self.counters.non_udp_frames += 1;
            return;
        };
        if !checksums_ok(frame) {
            self.counters.bad_checksums += 1;
            return;
        }
        if d.src_ip != self.local.ip() {
            self.counters.wrong_source += 1;
            return;
        }
        let sock = if d.src_port == self.local.port() {
            // A frame from the NIC's own port goes out of the receive socket.
            &self.rx
        } else {
            match self.tx.entry(d.src_port) {
                Entry::Occupied(e) => e.into_mut(),
                Entry::Vacant(v) => {
                    match bind_sender(SocketAddr::new(self.local.ip(), d.src_port)) {
                        Some(s) => v.insert(s),
                        None => {
                            self.counters.bind_failures += 1;
                            return;
                        }
                    }
                }
            }
        };
        let packet = TxPacket {
            path: 0,
            dst: SocketAddr::new(d.dst_ip, d.dst_port),
            ecn: Some(Ecn::from_tos(d.ecn)),
            data: d.payload,
        };
        match sock.send_batch(&[packet]) {
            Ok(1) => self.counters.frames_sent += 1,
            _ => self.counters.send_errors += 1,
        }
    }

    /// Receives every waiting datagram and pushes it to `out` as a frame to
    /// the NIC (see the module docs).
    pub fn poll_frames(&mut self, out: &mut Vec<Vec<u8>>) {
        loop {
            match self.rx.recv_batch(&mut self.batch) {
                Ok(0) => return,
                Ok(_) => {
                    for d in self.batch.datagrams() {
                        let frame = udp_frame(
                            self.cfg.peer_mac,
                            self.cfg.mac,
                            d.src,
                            self.local,
                            d.data,
                            d.ecn.bits(),
                        );
                        match frame {
                            Some(f) => {
                                self.counters.datagrams_received += 1;
                                out.push(f);
                            }
                            None => self.counters.receive_errors += 1,
                        }
                    }
                }
                // An error report (e.g. an ICMP error queued on the socket)
                // is consumed by the read: try again next poll.
                Err(_) => {
                    self.counters.receive_errors += 1;
                    return;
                }
            }
        }
    }
}

/// The `drops` count Linux keeps for `sock` (the last field of its line in
/// `/proc/net/udp` or `/proc/net/udp6`, found by the socket's inode).
fn kernel_drops(sock: &impl AsFd) -> Option<u64> {
    let fd = sock.as_fd().as_raw_fd();
    let link = std::fs::read_link(format!("/proc/self/fd/{fd}")).ok()?;
    let link = link.to_str()?;
    let inode = link.strip_prefix("socket:[")?.strip_suffix(']')?;
    ["/proc/net/udp", "/proc/net/udp6"]
        .iter()
        .find_map(|table| {
            let text = std::fs::read_to_string(table).ok()?;
            text.lines().skip(1).find_map(|line| {
                let f: Vec<&str> = line.split_whitespace().collect();
                if f.get(9) != Some(&inode) {
                    return None;
                }
                f.last()?.parse().ok()
            })
        })
}

/// A non-blocking socket bound to `addr`; `None` for port 0 (the kernel
/// would pick another) or when the bind fails.
fn bind_sender(addr: SocketAddr) -> Option<BatchSocket> {
    if addr.port() == 0 {
        return None;
    }
    BatchSocket::bind(addr, &socket_options()).ok()
}

/// The frame's IPv4 header checksum and UDP checksum are right, as a
/// receiving kernel checks them (a zero UDP checksum means "none" over IPv4
/// and is invalid over IPv6).
fn checksums_ok(frame: &[u8]) -> bool {
    let Ok(p) = SlicedPacket::from_ethernet(frame) else {
        return false;
    };
    let Some(TransportSlice::Udp(udp)) = &p.transport else {
        return false;
    };
    let header = udp.to_header();
    match &p.net {
        Some(NetSlice::Ipv4(v4)) => {
            let ip = v4.header().to_header();
            if ip.calc_header_checksum() != ip.header_checksum {
                return false;
            }
            udp.checksum() == 0
                || header
                    .calc_checksum_ipv4(&ip, udp.payload())
                    .is_ok_and(|c| c == udp.checksum())
        }
        // A computed sum is never 0 (it is sent as 0xffff): a zero field fails.
        Some(NetSlice::Ipv6(v6)) => header
            .calc_checksum_ipv6(&v6.header().to_header(), udp.payload())
            .is_ok_and(|c| c == udp.checksum()),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use std::net::{IpAddr, Ipv4Addr, UdpSocket};
    use std::time::{Duration, Instant};

    use super::*;

    const LOCALHOST: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);
    const NIC_MAC: [u8; 6] = [2, 0, 0, 0, 0, 1];
    const PEER_MAC: [u8; 6] = [2, 0, 0, 0, 0, 2];

    fn bridge(mac: [u8; 6], peer_mac: [u8; 6]) -> UdpBridge {
        UdpBridge::bind(BridgeConfig {
            mac,
            peer_mac,
            local: SocketAddr::new(LOCALHOST, 0),
        })
        .expect("bind a bridge on 127.0.0.1")
    }

    /// A port free a moment ago on 127.0.0.1.
    fn free_port() -> u16 {
        let s = UdpSocket::bind((LOCALHOST, 0)).expect("bind");
        s.local_addr().expect("address").port()
    }

    /// Polls until a frame arrives or a second passed.
    fn poll_one(b: &mut UdpBridge) -> Option<Vec<u8>> {
        let start = Instant::now();
        let mut out = Vec::new();
        while out.is_empty() && start.elapsed() < Duration::from_secs(1) {
            b.poll_frames(&mut out);
            std::thread::sleep(Duration::from_millis(1));
        }
        out.into_iter().next()
    }

    fn frame(src: SocketAddr, dst: SocketAddr, payload: &[u8]) -> Vec<u8> {
        udp_frame(NIC_MAC, PEER_MAC, src, dst, payload, 0).expect("a small frame")
    }

    #[test]
    fn ecn_codepoints_cross_the_bridge_both_ways() {
        let mut b = bridge(NIC_MAC, PEER_MAC);
        let peer = BatchSocket::bind(SocketAddr::new(LOCALHOST, 0), &socket_options())
            .expect("bind the peer");
        // In: a CE-marked datagram becomes a CE-marked frame.
        let ce = TxPacket {
            path: 0,
            dst: b.local_addr(),
            ecn: Some(Ecn::Ce),
            data: b"marked",
        };
        assert_eq!(peer.send_batch(&[ce]).expect("send"), 1);
        let f = poll_one(&mut b).expect("a frame");
        assert_eq!(frame::parse(&f).expect("UDP").ecn, 3, "CE reaches the NIC");
        // Out: an ECT(0) frame leaves as an ECT(0) datagram.
        let sport = free_port();
        let mut out = udp_frame(
            NIC_MAC,
            PEER_MAC,
            SocketAddr::new(LOCALHOST, sport),
            peer.local_addr(),
            b"capable",
            2,
        )
        .expect("a small frame");
        b.send_frame(&out);
        let mut rx = RxBatch::new(1, MAX_DATAGRAM);
        let start = Instant::now();
        while peer.recv_batch(&mut rx).expect("receive") == 0 {
            assert!(start.elapsed() < Duration::from_secs(1), "nothing arrived");
            std::thread::sleep(Duration::from_millis(1));
        }
        let d = rx.datagrams().next().expect("a datagram");
        assert_eq!((d.data, d.ecn), (&b"capable"[..], Ecn::Ect0));
        out.clear();
    }

    #[test]
    fn frames_out_and_datagrams_in_through_a_plain_socket() {
        let mut b = bridge(NIC_MAC, PEER_MAC);
        let peer = UdpSocket::bind((LOCALHOST, 0)).expect("bind");
        peer.set_read_timeout(Some(Duration::from_secs(1)))
            .expect("timeout");
        let peer_addr = peer.local_addr().expect("address");

        // Out: the payload arrives from the frame's source port.
        let sport = free_port();
        let src = SocketAddr::new(LOCALHOST, sport);
        b.send_frame(&frame(src, peer_addr, b"hello from the RTL"));
        let mut buf = [0u8; 64];
        let (n, from) = peer.recv_from(&mut buf).expect("the datagram");
        assert_eq!(&buf[..n], b"hello from the RTL");
        assert_eq!(from, src);
        // The same port again reuses the socket.
        b.send_frame(&frame(src, peer_addr, b"again"));
        let (n, from) = peer.recv_from(&mut buf).expect("the datagram");
        assert_eq!((&buf[..n], from), (&b"again"[..], src));

        // In: a frame to the NIC from the datagram's source.
        peer.send_to(b"hello from the peer", b.local_addr())
            .expect("send");
        let f = poll_one(&mut b).expect("a frame");
        let d = frame::parse(&f).expect("a UDP frame");
        assert_eq!(d.payload, b"hello from the peer");
        assert_eq!(SocketAddr::new(d.src_ip, d.src_port), peer_addr);
        assert_eq!(SocketAddr::new(d.dst_ip, d.dst_port), b.local_addr());
        assert!(!d.meta().ecn_ce);
        assert_eq!(&f[..6], &NIC_MAC, "addressed to the NIC's MAC");
        assert_eq!(&f[6..12], &PEER_MAC, "from the peer MAC");
        assert!(checksums_ok(&f));

        assert_eq!(
            b.counters(),
            BridgeCounters {
                frames_sent: 2,
                datagrams_received: 1,
                ..BridgeCounters::default()
            }
        );
        assert_eq!(kernel_drops(&b.rx), Some(0), "found in /proc/net/udp");
    }

    #[test]
    fn what_a_kernel_would_refuse_is_dropped_and_counted() {
        let mut b = bridge(NIC_MAC, PEER_MAC);
        let peer = UdpSocket::bind((LOCALHOST, 0)).expect("bind");
        let peer_addr = peer.local_addr().expect("address");
        let src = SocketAddr::new(LOCALHOST, free_port());

        b.send_frame(&[0xff; 10]);
        let mut arp = frame(src, peer_addr, b"x");
        arp[12..14].copy_from_slice(&0x0806u16.to_be_bytes());
        b.send_frame(&arp);
        assert_eq!(b.counters().non_udp_frames, 2);

        let mut bad_ip = frame(src, peer_addr, b"x");
        bad_ip[14 + 10] ^= 1; // IPv4 header checksum
        b.send_frame(&bad_ip);
        let mut bad_udp = frame(src, peer_addr, b"xyz");
        let last = bad_udp.len() - 1;
        bad_udp[last] ^= 1; // payload changed, checksum kept
        b.send_frame(&bad_udp);
        assert_eq!(b.counters().bad_checksums, 2);
        let mut no_udp_sum = frame(src, peer_addr, b"xyz");
        no_udp_sum[14 + 20 + 6..14 + 20 + 8].fill(0);
        b.send_frame(&no_udp_sum);
        assert_eq!(b.counters().frames_sent, 1, "no UDP checksum is fine");

        let other = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)), src.port());
        b.send_frame(&frame(other, peer_addr, b"x"));
        assert_eq!(b.counters().wrong_source, 1);

        // The peer's own port is taken: no socket can send from it.
        b.send_frame(&frame(peer_addr, b.local_addr(), b"x"));
        b.send_frame(&frame(SocketAddr::new(LOCALHOST, 0), peer_addr, b"x"));
        assert_eq!(b.counters().bind_failures, 2);
        assert_eq!(b.counters().frames_sent, 1);
        // Nothing dropped reached the peer.
        peer.set_nonblocking(true).expect("non-blocking");
        let mut buf = [0u8; 16];
        assert_eq!(peer.recv_from(&mut buf).expect("one datagram").0, 3);
        assert!(peer.recv_from(&mut buf).is_err());
    }

    #[test]
    fn datagrams_the_kernel_drops_are_counted() {
        let mut b = bridge(NIC_MAC, PEER_MAC);
        let peer = UdpSocket::bind((LOCALHOST, 0)).expect("bind");
        // Far more than the default receive buffer holds, before any poll.
        let n = 400;
        for _ in 0..n {
            peer.send_to(&[7u8; 4096], b.local_addr()).expect("send");
        }
        let mut out = Vec::new();
        b.poll_frames(&mut out);
        let c = b.counters();
        assert_eq!(c.datagrams_received, out.len() as u64);
        assert!(c.kernel_drops > 0, "{c:?}");
        assert_eq!(c.datagrams_received + c.kernel_drops, n);
    }

    #[test]
    fn two_bridges_exchange_frames() {
        let mut a = bridge(NIC_MAC, PEER_MAC);
        let mut b = bridge(PEER_MAC, NIC_MAC);
        let (la, lb) = (a.local_addr(), b.local_addr());
        // A's NIC sends from its own port; B's from another.
        a.send_frame(&frame(la, lb, b"a to b"));
        let f = poll_one(&mut b).expect("a frame at B");
        let d = frame::parse(&f).expect("UDP");
        assert_eq!(
            (d.payload, SocketAddr::new(d.src_ip, d.src_port)),
            (&b"a to b"[..], la)
        );
        let sport = free_port();
        b.send_frame(&frame(SocketAddr::new(LOCALHOST, sport), la, b"b to a"));
        let f = poll_one(&mut a).expect("a frame at A");
        let d = frame::parse(&f).expect("UDP");
        assert_eq!(d.payload, b"b to a");
        assert_eq!(d.src_port, sport);
        assert_eq!(a.counters().frames_sent + b.counters().frames_sent, 2);
        assert_eq!(
            a.counters().datagrams_received + b.counters().datagrams_received,
            2
        );
    }
}

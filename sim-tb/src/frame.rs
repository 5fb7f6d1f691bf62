//! The benches' one Ethernet frame builder and parser: Ethernet II (with
//! an optional 802.1Q tag) + IPv4 or IPv6 + UDP around a datagram, built
//! with `etherparse`'s `PacketBuilder` (lengths, the IPv4 header checksum
//! and the UDP checksum filled in by it) and parsed with its
//! `SlicedPacket`; and the IPv4-mapped form of addresses the RTL's tables
//! and ports carry.
//!
//! The frames are what the RTL is compared against, byte for byte: the
//! builder takes every header field a bench sets (TTL, DSCP, ECN, IPv4
//! options and fragment fields, an IPv6 hop-by-hop header) and leaves the
//! rest at `etherparse`'s defaults (IPv4: identification 0, DF set; IPv6:
//! flow label 0). The MetaRoCE datagram inside (and its ICRC) is the
//! caller's.

use std::net::{IpAddr, Ipv6Addr, SocketAddr};

use etherparse::{
    IpDscp, IpEcn, IpFragOffset, IpHeaders, IpNumber, Ipv4Header, Ipv4Options, Ipv6Extensions,
    Ipv6Header, Ipv6RawExtHeader, NetSlice, PacketBuilder, SlicedPacket, TransportSlice, VlanId,
};
use metaroce_firmware::RxMeta;

pub use metaroce_driver::hw::tables::mapped;

/// Smallest Ethernet frame without FCS; a MAC pads shorter ones.
pub const MIN_FRAME: usize = 60;

/// `ip` IPv4-mapped (an IPv6 address as is), as the one 128-bit number the
/// RTL's address fields hold.
pub fn mapped_bits(ip: IpAddr) -> u128 {
    u128::from_be_bytes(mapped(ip))
}

/// The address in the IPv4-mapped form `b`: IPv4 when it is mapped, else
/// IPv6.
pub fn ip_of(b: &[u8; 16]) -> IpAddr {
    let v6 = Ipv6Addr::from(*b);
    v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4)
}

/// The headers of a frame to build (see the module docs).
#[derive(Clone, Debug)]
pub struct Headers {
    /// Source Ethernet address.
    pub src_mac: [u8; 6],
    /// Destination Ethernet address.
    pub dst_mac: [u8; 6],
    /// 802.1Q VLAN id, if tagged.
    pub vlan: Option<u16>,
    /// Source IP address: IPv4 when both addresses are, else IPv6 (an IPv4
    /// address mapped).
    pub src_ip: IpAddr,
    /// Destination IP address.
    pub dst_ip: IpAddr,
    /// UDP source and destination ports.
    pub ports: (u16, u16),
    /// IPv4 TTL or IPv6 hop limit.
    pub ttl: u8,
    /// DSCP (6 bits).
    pub dscp: u8,
    /// ECN field (2 bits).
    pub ecn: u8,
    /// IPv4 option bytes (a multiple of 4, at most 40).
    pub options: Vec<u8>,
    /// IPv4 fragment fields: more fragments, offset (8-byte units).
    pub fragment: (bool, u16),
    /// An IPv6 hop-by-hop options header before UDP.
    pub hop_by_hop: bool,
    /// The UDP checksum computed (else 0, as the RTL's data frames send
    /// it over IPv4 and IPv6 alike).
    pub udp_checksum: bool,
}

impl Headers {
    /// Untagged headers from `src_mac`/`src_ip` to `dst_mac`/`dst_ip`
    /// between `ports`: TTL 64, DSCP and ECN 0, no options, UDP checksum
    /// computed.
    pub fn new(
        src_mac: [u8; 6],
        dst_mac: [u8; 6],
        src_ip: IpAddr,
        dst_ip: IpAddr,
        ports: (u16, u16),
    ) -> Self {
        Self {
            src_mac,
            dst_mac,
            vlan: None,
            src_ip,
            dst_ip,
            ports,
            ttl: 64,
            dscp: 0,
            ecn: 0,
            options: Vec::new(),
            fragment: (false, 0),
            hop_by_hop: false,
            udp_checksum: true,
        }
    }

    /// The frame is IPv6.
    pub fn is_ipv6(&self) -> bool {
        !(self.src_ip.is_ipv4() && self.dst_ip.is_ipv4())
    }

    /// The IP layer's headers (lengths, protocol and checksum are filled in
    /// when the frame is written); `None` for a field out of its range.
    fn ip(&self) -> Option<IpHeaders> {
        let ecn = IpEcn::try_new(self.ecn).ok()?;
        Some(match (self.src_ip, self.dst_ip) {
            (IpAddr::V4(src), IpAddr::V4(dst)) => {
                let mut h =
                    Ipv4Header::new(0, self.ttl, IpNumber::UDP, src.octets(), dst.octets()).ok()?;
                h.dscp = IpDscp::try_new(self.dscp).ok()?;
                h.ecn = ecn;
                h.more_fragments = self.fragment.0;
                h.fragment_offset = IpFragOffset::try_new(self.fragment.1).ok()?;
                h.options = Ipv4Options::try_from(&self.options[..]).ok()?;
                IpHeaders::Ipv4(h, Default::default())
            }
            (src, dst) => {
                let header = Ipv6Header {
                    traffic_class: IpDscp::try_new(self.dscp).ok()?.value() << 2 | ecn.value(),
                    hop_limit: self.ttl,
                    source: mapped(src),
                    destination: mapped(dst),
                    ..Default::default()
                };
                let mut exts = Ipv6Extensions::default();
                if self.hop_by_hop {
                    exts.hop_by_hop_options =
                        Some(Ipv6RawExtHeader::new_raw(IpNumber::UDP, &[1, 4, 0, 0, 0, 0]).ok()?);
                }
                IpHeaders::Ipv6(header, exts)
            }
        })
    }

    /// The frame around `payload`, without padding; `None` for a field out
    /// of its range or a payload too long for the IP length field.
    pub fn frame(&self, payload: &[u8]) -> Option<Vec<u8>> {
        let eth = PacketBuilder::ethernet2(self.src_mac, self.dst_mac);
        let ip = self.ip()?;
        let step = match self.vlan {
            Some(id) => eth.single_vlan(VlanId::try_new(id).ok()?).ip(ip),
            None => eth.ip(ip),
        };
        let builder = step.udp(self.ports.0, self.ports.1);
        let mut out = Vec::with_capacity(builder.size(payload.len()));
        builder.write(&mut out, payload).ok()?;
        if !self.udp_checksum {
            let at = out.len() - payload.len() - 2;
            out[at..at + 2].fill(0);
        }
        Some(out)
    }

    /// The headers alone: [`Headers::frame`] around `payload` without it
    /// (the UDP checksum, if computed, covers it).
    pub fn bytes(&self, payload: &[u8]) -> Option<Vec<u8>> {
        let mut out = self.frame(payload)?;
        out.truncate(out.len() - payload.len());
        Some(out)
    }

    /// Bytes of the headers.
    pub fn header_len(&self) -> usize {
        self.bytes(&[]).map_or(0, |h| h.len())
    }
}

/// An untagged frame from `src_mac`/`src` to `dst_mac`/`dst` around
/// `datagram` ([`Headers::new`] with the ECN field `ecn`), as a host's
/// network stack hands it to a NIC; `None` for an ECN value over 3 or a
/// datagram too long for the IP length field.
pub fn udp_frame(
    src_mac: [u8; 6],
    dst_mac: [u8; 6],
    src: SocketAddr,
    dst: SocketAddr,
    datagram: &[u8],
    ecn: u8,
) -> Option<Vec<u8>> {
    let mut h = Headers::new(
        src_mac,
        dst_mac,
        src.ip(),
        dst.ip(),
        (src.port(), dst.port()),
    );
    h.ecn = ecn;
    h.frame(datagram)
}

/// The Ethernet address the benches' peer frames come from.
pub const PEER_MAC: [u8; 6] = [2, 0, 0, 0, 0, 1];
/// The Ethernet address the benches' peer frames go to.
pub const NIC_MAC: [u8; 6] = [2, 0, 0, 0, 0, 2];

/// `datagram` (a MetaRoCE datagram and its pseudo-header) in an untagged
/// frame from [`PEER_MAC`] to [`NIC_MAC`], as a peer sends it: IPv4 when
/// both pseudo-header addresses are IPv4-mapped, else IPv6 (no extension
/// header), TTL 64, the IP ECN field `ecn` (`0b11`: CE), the UDP checksum
/// computed, padded with zeros to the minimum frame size.
///
/// # Panics
/// If `ecn` is over 3 or the datagram too long for the IP length field.
pub fn peer_frame(datagram: &crate::rx_parser::Frame, ecn: u8) -> Vec<u8> {
    let ph = &datagram.pseudo;
    let mut h = Headers::new(
        PEER_MAC,
        NIC_MAC,
        ip_of(&ph.src_ip),
        ip_of(&ph.dst_ip),
        (ph.src_port, ph.dst_port),
    );
    h.ecn = ecn;
    let mut frame = h.frame(&datagram.bytes).expect("a datagram that fits");
    frame.resize(frame.len().max(MIN_FRAME), 0);
    frame
}

/// A UDP datagram found in an Ethernet frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Datagram<'a> {
    /// Source IP address (IPv4 for an IPv4 header).
    pub src_ip: IpAddr,
    /// Destination IP address.
    pub dst_ip: IpAddr,
    /// UDP source port.
    pub src_port: u16,
    /// UDP destination port.
    pub dst_port: u16,
    /// The IP header's ECN field.
    pub ecn: u8,
    /// The UDP payload.
    pub payload: &'a [u8],
}

impl Datagram<'_> {
    /// The receive metadata the engine takes with it.
    pub fn meta(&self) -> RxMeta {
        RxMeta {
            src_ip: self.src_ip,
            src_port: self.src_port,
            dst_ip: self.dst_ip,
            dst_port: self.dst_port,
            ecn_ce: self.ecn == 3,
        }
    }
}

/// The UDP datagram of an Ethernet (optionally tagged) IPv4 or IPv6
/// frame, if it is one (no checksum is checked).
pub fn parse(frame: &[u8]) -> Option<Datagram<'_>> {
    let p = SlicedPacket::from_ethernet(frame).ok()?;
    let (src_ip, dst_ip, ecn) = match p.net? {
        NetSlice::Ipv4(v4) => {
            let h = v4.header();
            let (s, d) = (h.source_addr(), h.destination_addr());
            (IpAddr::V4(s), IpAddr::V4(d), h.ecn().value())
        }
        NetSlice::Ipv6(v6) => {
            let h = v6.header();
            let (s, d) = (h.source_addr(), h.destination_addr());
            (IpAddr::V6(s), IpAddr::V6(d), h.ecn().value())
        }
        _ => return None,
    };
    let TransportSlice::Udp(udp) = p.transport? else {
        return None;
    };
    Some(Datagram {
        src_ip,
        dst_ip,
        src_port: udp.source_port(),
        dst_port: udp.destination_port(),
        ecn,
        payload: udp.payload(),
    })
}

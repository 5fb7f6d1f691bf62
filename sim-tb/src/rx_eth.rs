//! The receive front end (`metaroce_hdl::RxEth`) against `etherparse`:
//! frames are built with the benches' frame builder ([`crate::frame`],
//! `etherparse`'s `PacketBuilder`: valid ones of every shape, and hostile
//! variants), the expected verdict, payload and pseudo
//! fields come from `etherparse`'s header slices plus the rules
//! `metaroce_hdl::rx_eth` documents, and the bench compares every output
//! byte, every field and every counter of the Verilated RTL.
//!
//! `etherparse` is the independent reference: it knows the Ethernet, 802.1Q,
//! IPv4 (options, checksum, fragments), IPv6 (extension headers) and UDP
//! layouts, so no header layout is restated here; what this module adds is
//! only MetaRoCE's policy (one tag, no fragments or extension headers, the
//! UDP port, padding only in short frames, lengths that agree).

use std::net::{IpAddr, Ipv4Addr};

use etherparse::checksum::Sum16BitWords;
use etherparse::{
    EtherType, Ethernet2Slice, IpNumber, Ipv4HeaderSlice, Ipv6Header, Ipv6HeaderSlice,
    SingleVlanSlice, UdpHeaderSlice,
};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::axis::{Axis, Fed, FrameFeed};
use crate::frame::{self, Headers, MIN_FRAME, peer_frame};
use crate::rx_parser::Frame;
use crate::{Model, Port, Sim, SimError};

/// `m_ev_reason` codes and limits, generated from `metaroce_hdl::rx_eth`.
pub mod reason {
    include!(concat!(env!("OUT_DIR"), "/eth_reasons.rs"));
}

/// What the front end hands to the RX parser for one accepted frame.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Datagram {
    /// The UDP payload.
    pub payload: Vec<u8>,
    /// Source IP, IPv4 mapped into IPv6, network order.
    pub src_ip: [u8; 16],
    /// Destination IP, same format.
    pub dst_ip: [u8; 16],
    /// UDP source port.
    pub src_port: u16,
    /// UDP destination port.
    pub dst_port: u16,
    /// UDP length.
    pub udp_len: u16,
    /// IP ECN field.
    pub ecn: u8,
}

/// The expected verdict for `frame` with `port` configured, and for an
/// accepted frame what must come out (see `metaroce_hdl::rx_eth` for the
/// rules and their order).
pub fn expected(frame: &[u8], port: u16) -> (u8, Option<Datagram>) {
    match classify(frame, port) {
        Ok(d) => (reason::ACCEPTED, Some(d)),
        Err(r) => (r, None),
    }
}

fn classify(frame: &[u8], port: u16) -> Result<Datagram, u8> {
    if frame.len() > reason::MAX_FRAME {
        return Err(reason::TOO_LONG);
    }
    let eth = Ethernet2Slice::from_slice_without_fcs(frame).map_err(|_| reason::TRUNCATED)?;
    let (ether_type, l3) = if eth.ether_type() == EtherType::VLAN_TAGGED_FRAME {
        let vlan =
            SingleVlanSlice::from_slice(eth.payload_slice()).map_err(|_| reason::TRUNCATED)?;
        (vlan.ether_type(), vlan.payload_slice())
    } else {
        (eth.ether_type(), eth.payload_slice())
    };
    let mut d = Datagram::default();
    let (ip_len, hdr_len, next) = match ether_type {
        EtherType::IPV4 => {
            use etherparse::err::ipv4::HeaderSliceError as E;
            let h = Ipv4HeaderSlice::from_slice(l3).map_err(|e| match e {
                E::Len(_) => reason::TRUNCATED,
                E::Content(_) => reason::BAD_IP_HEADER,
            })?;
            let total = usize::from(h.total_len());
            if total < h.slice().len() {
                return Err(reason::BAD_IP_HEADER);
            }
            if l3.len() < total {
                return Err(reason::TRUNCATED);
            }
            if h.header_checksum() != ipv4_checksum(h.slice()) {
                return Err(reason::BAD_CHECKSUM);
            }
            if h.is_fragmenting_payload() {
                return Err(reason::FRAGMENT);
            }
            d.src_ip = h.source_addr().to_ipv6_mapped().octets();
            d.dst_ip = h.destination_addr().to_ipv6_mapped().octets();
            d.ecn = h.ecn().value();
            (total, h.slice().len(), h.protocol())
        }
        EtherType::IPV6 => {
            use etherparse::err::ipv6::HeaderSliceError as E;
            let h = Ipv6HeaderSlice::from_slice(l3).map_err(|e| match e {
                E::Len(_) => reason::TRUNCATED,
                E::Content(_) => reason::BAD_IP_HEADER,
            })?;
            let total = Ipv6Header::LEN + usize::from(h.payload_length());
            if l3.len() < total {
                return Err(reason::TRUNCATED);
            }
            if h.next_header().is_ipv6_ext_header_value() {
                return Err(reason::EXT_HEADER);
            }
            d.src_ip = h.source();
            d.dst_ip = h.destination();
            d.ecn = h.ecn().value();
            (total, Ipv6Header::LEN, h.next_header())
        }
        _ => return Err(reason::ETHER_TYPE),
    };
    if next != IpNumber::UDP {
        return Err(reason::PROTOCOL);
    }
    if l3.len() > ip_len && frame.len() > reason::PAD_MAX {
        return Err(reason::TRAILING_BYTES);
    }
    let ip_payload = &l3[hdr_len..ip_len];
    let udp = UdpHeaderSlice::from_slice(ip_payload).map_err(|_| reason::UDP_LENGTH)?;
    if usize::from(udp.length()) != ip_payload.len() {
        return Err(reason::UDP_LENGTH);
    }
    if udp.destination_port() != port {
        return Err(reason::PORT);
    }
    d.payload = ip_payload[udp.slice().len()..].to_vec();
    if d.payload.is_empty() {
        return Err(reason::NO_PAYLOAD);
    }
    d.src_port = udp.source_port();
    d.dst_port = udp.destination_port();
    d.udp_len = udp.length();
    Ok(d)
}

/// The shape of a frame to build.
#[derive(Clone, Debug)]
pub struct Shape {
    /// 802.1Q VLAN id, if tagged.
    pub vlan: Option<u16>,
    /// IPv6 (else IPv4).
    pub ipv6: bool,
    /// IPv4 option bytes (a multiple of 4, at most 40).
    pub options: Vec<u8>,
    /// IPv6 extension header (hop-by-hop options) before UDP.
    pub ext_header: bool,
    /// IPv4 fragment fields: more fragments, offset (8-byte units).
    pub fragment: (bool, u16),
    /// ECN field.
    pub ecn: u8,
    /// Source and destination addresses: 4 bytes used for IPv4.
    pub addrs: ([u8; 16], [u8; 16]),
    /// UDP ports.
    pub ports: (u16, u16),
    /// UDP payload.
    pub payload: Vec<u8>,
}

/// The frame `shape` describes, built by the benches' frame builder
/// ([`crate::frame`], lengths and checksums filled in by `etherparse`),
/// from [`frame::PEER_MAC`] to [`frame::NIC_MAC`], without padding.
pub fn build(shape: &Shape) -> Vec<u8> {
    let (src, dst) = shape.addrs;
    let ip = |b: [u8; 16]| {
        if shape.ipv6 {
            IpAddr::from(b)
        } else {
            IpAddr::from(<[u8; 4]>::try_from(&b[..4]).expect("4 bytes"))
        }
    };
    let mut h = Headers::new(
        frame::PEER_MAC,
        frame::NIC_MAC,
        ip(src),
        ip(dst),
        shape.ports,
    );
    h.vlan = shape.vlan;
    h.ecn = shape.ecn;
    h.options.clone_from(&shape.options);
    h.fragment = shape.fragment;
    h.hop_by_hop = shape.ext_header;
    h.frame(&shape.payload).expect("build frame")
}

/// The IPv4 header checksum of `header` (its checksum field taken as 0),
/// with `etherparse`'s ones' complement sum over the raw bytes (its
/// `calc_header_checksum` rebuilds the header from the parsed fields, which
/// drops the reserved flag bit).
fn ipv4_checksum(header: &[u8]) -> u16 {
    Sum16BitWords::new()
        .add_slice(&header[..10])
        .add_slice(&header[12..])
        .ones_complement()
        .to_be()
}

/// Rewrites the checksum of the `len`-byte IPv4 header at `l3` in `frame`.
fn fix_ipv4_checksum(frame: &mut [u8], l3: usize, len: usize) {
    let sum = ipv4_checksum(&frame[l3..l3 + len]);
    frame[l3 + 10..l3 + 12].copy_from_slice(&sum.to_be_bytes());
}

fn random_addr(rng: &mut SmallRng, ipv6: bool) -> [u8; 16] {
    let mut a: [u8; 16] = rng.r#gen();
    if !ipv6 {
        a[4..].fill(0);
    }
    a
}

/// A random valid shape for `port`: IPv4 (with options 30 % of the time)
/// or IPv6, tagged or not, 0 to 4160 payload bytes, any ECN value.
pub fn random_shape(rng: &mut SmallRng, port: u16) -> Shape {
    let ipv6 = rng.gen_bool(0.35);
    let len = match rng.gen_range(0..10) {
        0..=2 => rng.gen_range(0..=24),
        3..=4 => rng.gen_range(25..=200),
        _ => rng.gen_range(0..=4160),
    };
    let options = if !ipv6 && rng.gen_bool(0.3) {
        let n = 4 * rng.gen_range(1..=10);
        (0..n).map(|_| rng.r#gen()).collect()
    } else {
        Vec::new()
    };
    let payload = (0..len).map(|_| rng.r#gen()).collect();
    Shape {
        vlan: rng.gen_bool(0.3).then(|| rng.gen_range(0..4096)),
        ipv6,
        options,
        ext_header: false,
        fragment: (false, 0),
        ecn: rng.gen_range(0..4),
        addrs: (random_addr(rng, ipv6), random_addr(rng, ipv6)),
        ports: (rng.gen_range(metaroce_proto::ENTROPY_PORTS), port),
        payload,
    }
}

/// A random frame: 60 % valid (short ones padded to 60 bytes, with random
/// padding), 40 % hostile: a bad IPv4 checksum, another protocol, another
/// UDP port, a fragment, an IPv6 extension header, truncation anywhere,
/// IP or UDP lengths that disagree with the frame, trailing bytes, a
/// non-IP or double-tagged EtherType, a bad version or IHL, an over-long
/// frame (rarely: they are expensive at 64 bits).
pub fn random_frame(rng: &mut SmallRng, port: u16) -> Vec<u8> {
    let mut shape = random_shape(rng, port);
    let kind = if rng.gen_bool(0.6) {
        None
    } else {
        Some(rng.gen_range(0..14))
    };
    // Hostile variants that the builder makes.
    match kind {
        Some(2) => shape.ports.1 = port ^ rng.gen_range(1..=u16::MAX),
        Some(3) if !shape.ipv6 => {
            shape.fragment = if rng.gen_bool(0.5) {
                (true, rng.gen_range(0..8192))
            } else {
                (false, rng.gen_range(1..8192))
            }
        }
        Some(4) => {
            shape.ipv6 = true;
            shape.options.clear();
            shape.ext_header = true;
        }
        Some(13) if rng.gen_bool(0.02) => {
            let len = reason::MAX_FRAME - 40 + rng.gen_range(0..100);
            shape.payload = (0..len).map(|_| rng.r#gen()).collect();
        }
        _ => {}
    }
    let mut f = build(&shape);
    let l3 = if shape.vlan.is_some() { 18 } else { 14 };
    let ip_hdr = if shape.ipv6 {
        40
    } else {
        20 + shape.options.len()
    };
    let udp = l3 + ip_hdr + if shape.ext_header { 8 } else { 0 };
    // Hostile variants made by editing the bytes.
    match kind {
        Some(0) if !shape.ipv6 => f[l3 + 10 + rng.gen_range(0..2)] ^= 1 << rng.gen_range(0..8),
        Some(1) => {
            let other = [1u8, 6, 47, 58, 132, 255][rng.gen_range(0..6)];
            if shape.ipv6 {
                f[l3 + 6] = other;
            } else {
                f[l3 + 9] = other;
                fix_ipv4_checksum(&mut f, l3, ip_hdr);
            }
        }
        Some(5) => {
            // Truncated: mostly inside the headers.
            let end = if rng.gen_bool(0.6) {
                rng.gen_range(1..=(udp + 8).min(f.len()))
            } else {
                rng.gen_range(1..=f.len())
            };
            f.truncate(end);
            return f;
        }
        Some(6 | 7) => {
            // IP length longer (6) or shorter (7) than the packet.
            let delta = rng.gen_range(1..=64u16);
            let at = if shape.ipv6 { l3 + 4 } else { l3 + 2 };
            let len = u16::from_be_bytes([f[at], f[at + 1]]);
            let len = if kind == Some(6) {
                len.saturating_add(delta)
            } else {
                len.saturating_sub(delta)
            };
            f[at..at + 2].copy_from_slice(&len.to_be_bytes());
            if !shape.ipv6 {
                fix_ipv4_checksum(&mut f, l3, ip_hdr);
            }
        }
        Some(8) => {
            let at = udp + 4;
            let len = u16::from_be_bytes([f[at], f[at + 1]]) ^ rng.gen_range(1..=u16::MAX);
            f[at..at + 2].copy_from_slice(&len.to_be_bytes());
        }
        Some(9) => {
            let et: u16 = [0x0806, 0x88A8, 0x8100, 0x88CC, rng.r#gen()][rng.gen_range(0..5)];
            f[l3 - 2..l3].copy_from_slice(&et.to_be_bytes());
        }
        Some(10) => {
            // Wrong version, or (IPv4) an IHL below 5.
            if shape.ipv6 || rng.gen_bool(0.5) {
                f[l3] = (f[l3] & 0x0f) | (rng.gen_range(0..16u8) << 4);
            } else {
                f[l3] = (f[l3] & 0xf0) | rng.gen_range(0..5u8);
            }
            if !shape.ipv6 {
                fix_ipv4_checksum(&mut f, l3, ip_hdr);
            }
        }
        Some(11) if !shape.ipv6 => {
            // Total length below the header length.
            let len = rng.gen_range(0..ip_hdr as u16);
            f[l3 + 2..l3 + 4].copy_from_slice(&len.to_be_bytes());
            fix_ipv4_checksum(&mut f, l3, ip_hdr);
        }
        Some(12) => {
            let n = rng.gen_range(1..=32);
            f.extend((0..n).map(|_| rng.r#gen::<u8>()));
        }
        _ => {}
    }
    if f.len() < MIN_FRAME {
        let pad = MIN_FRAME - f.len();
        f.extend((0..pad).map(|_| rng.r#gen::<u8>()));
    }
    f
}

/// What one [`RxEthTb::run`] produced.
#[derive(Clone, Debug, Default)]
pub struct EthOutput {
    /// `m_ev_reason` per input frame, in order.
    pub reasons: Vec<u8>,
    /// Output datagrams, in order.
    pub datagrams: Vec<Datagram>,
    /// AXI-Stream rule violations on `m_axis` (holes in `tkeep`, a partial
    /// beat that is not last).
    pub protocol_errors: Vec<String>,
    /// Clock cycles.
    pub cycles: u64,
    /// Input beats accepted.
    pub beats: u64,
    /// Cycles with an input beat offered and refused.
    pub bubbles: u64,
}

/// Per-cycle stimulus choice: `(offer a beat, m_axis_tready)`.
pub type Knobs<'a> = &'a mut dyn FnMut() -> (bool, bool);

struct Ports {
    s: Axis,
    m: Axis,
    src_ip: Port,
    dst_ip: Port,
    src_port: Port,
    dst_port: Port,
    udp_len: Port,
    ecn: Port,
    ev_valid: Port,
    ev_reason: Port,
    cfg_port_we: Port,
    cfg_port: Port,
    cnt_sel: Port,
    cnt_val: Port,
}

/// The front end at one width, behind a [`Sim`].
pub struct RxEthTb {
    sim: Sim,
    lanes: usize,
    p: Ports,
}

impl RxEthTb {
    /// A reset front end with `width`-bit beats (64 or 512).
    ///
    /// # Panics
    /// For other widths.
    pub fn new(width: usize) -> Result<Self, SimError> {
        let model = match width {
            64 => Model::RxEth64,
            512 => Model::RxEth512,
            w => panic!("no Verilated RX front end of width {w}"),
        };
        let mut sim = Sim::new(model)?;
        let p = Ports {
            s: Axis::new(&sim, "s_axis")?,
            m: Axis::new(&sim, "m_axis")?,
            src_ip: sim.port("m_pseudo_src_ip")?,
            dst_ip: sim.port("m_pseudo_dst_ip")?,
            src_port: sim.port("m_pseudo_src_port")?,
            dst_port: sim.port("m_pseudo_dst_port")?,
            udp_len: sim.port("m_pseudo_udp_len")?,
            ecn: sim.port("m_ecn")?,
            ev_valid: sim.port("m_ev_valid")?,
            ev_reason: sim.port("m_ev_reason")?,
            cfg_port_we: sim.port("cfg_port_we")?,
            cfg_port: sim.port("cfg_port")?,
            cnt_sel: sim.port("cnt_sel")?,
            cnt_val: sim.port("cnt_val")?,
        };
        assert_eq!(8 * p.s.lanes(), width);
        sim.reset()?;
        Ok(Self {
            sim,
            lanes: width / 8,
            p,
        })
    }

    /// The underlying simulation (VCD tracing, cycle counts).
    pub fn sim(&mut self) -> &mut Sim {
        &mut self.sim
    }

    /// Sets the accepted UDP destination port (one cycle).
    pub fn set_port(&mut self, port: u16) {
        self.sim.set(self.p.cfg_port_we, 1);
        self.sim.set(self.p.cfg_port, port.into());
        self.sim.tick();
        self.sim.set(self.p.cfg_port_we, 0);
        self.sim.eval();
    }

    /// The RTL's counter for reason `code`.
    pub fn counter(&mut self, code: u8) -> u64 {
        self.sim.set(self.p.cnt_sel, code.into());
        self.sim.tick();
        self.sim.eval();
        self.sim.get(self.p.cnt_val)
    }

    fn read_ip(&mut self, port: Port) -> [u8; 16] {
        let mut ip = [0u8; 16];
        self.sim.get_bytes(port, &mut ip);
        ip.reverse();
        ip
    }

    /// Sends `frames` (each non-empty) one after another, then runs until
    /// every frame's verdict came out and the output has been idle for 16
    /// cycles. `knobs` is asked each cycle whether to offer a beat and
    /// whether the consumer is ready; bytes outside `tkeep` carry junk.
    ///
    /// # Panics
    /// On an empty frame, or if the block stops producing verdicts.
    pub fn run(&mut self, frames: &[Vec<u8>], knobs: Knobs<'_>) -> EthOutput {
        assert!(frames.iter().all(|f| !f.is_empty()), "empty frame");
        let lanes = self.lanes;
        let start = self.sim.cycles();
        let mut out = EthOutput::default();
        let mut feed = FrameFeed::new(lanes, 0xC3);
        let mut open: Option<Datagram> = None;
        let (mut idle, mut stuck) = (0u32, 0u32);
        while out.reasons.len() < frames.len() || idle < 16 {
            let (offer, ready) = knobs();
            let next = frames.get(feed.frame()).filter(|_| offer);
            feed.drive(&mut self.sim, &self.p.s, next.map(Vec::as_slice));
            self.p.m.set_ready(&mut self.sim, ready);
            self.sim.eval();

            let m_valid = self.p.m.valid(&mut self.sim);
            idle = if m_valid { 0 } else { idle + 1 };
            if m_valid && ready {
                let d = open.get_or_insert_with(|| Datagram {
                    payload: Vec::new(),
                    src_ip: [0; 16],
                    dst_ip: [0; 16],
                    src_port: 0,
                    dst_port: 0,
                    udp_len: 0,
                    ecn: 0,
                });
                if d.payload.is_empty() {
                    // First beat: the pseudo fields are valid now.
                    d.src_ip = self.read_ip(self.p.src_ip);
                    d.dst_ip = self.read_ip(self.p.dst_ip);
                    d.src_port = self.sim.get(self.p.src_port) as u16;
                    d.dst_port = self.sim.get(self.p.dst_port) as u16;
                    d.udp_len = self.sim.get(self.p.udp_len) as u16;
                    d.ecn = self.sim.get(self.p.ecn) as u8;
                }
                let d = open.as_mut().expect("open datagram");
                let b = self
                    .p
                    .m
                    .watch(&mut self.sim, &mut d.payload)
                    .expect("a valid beat");
                out.protocol_errors.extend(b.violation(true));
                if b.last {
                    out.datagrams.push(open.take().expect("open datagram"));
                }
            }
            if self.sim.get(self.p.ev_valid) == 1 {
                out.reasons.push(self.sim.get(self.p.ev_reason) as u8);
                stuck = 0;
                // Its datagram, if any, is still to come.
                idle = 0;
            }
            match feed.settle(&mut self.sim, &self.p.s) {
                Fed::Refused => out.bubbles += 1,
                Fed::Taken { .. } => out.beats += 1,
                Fed::Nothing => {}
            }
            self.sim.tick();
            stuck += 1;
            assert!(stuck < 100_000, "RX front end stopped producing verdicts");
        }
        if open.is_some() {
            out.protocol_errors
                .push("output frame never ended".to_string());
        }
        self.p.s.idle(&mut self.sim);
        self.sim.eval();
        out.cycles = self.sim.cycles() - start;
        out
    }
}

/// Result of [`run_against_etherparse`].
#[derive(Clone, Debug, Default)]
pub struct EthRun {
    /// Frames sent.
    pub frames: u64,
    /// Frames per expected reason code.
    pub by_reason: [u64; 16],
    /// Mismatches: the frame and the first differing field.
    pub mismatches: Vec<String>,
    /// Clock cycles.
    pub cycles: u64,
    /// Input beats.
    pub beats: u64,
    /// Refused input beats.
    pub bubbles: u64,
    /// Seconds of the simulation ([`crate::SimTimer`]: CPU time).
    pub sim_secs: f64,
}

fn describe(frame: &[u8]) -> String {
    format!(
        "{} B frame starting {:02x?}",
        frame.len(),
        &frame[..frame.len().min(48)]
    )
}

/// Compares `datagram` with the expected one: the first differing field.
fn first_diff(got: &Datagram, want: &Datagram) -> Option<String> {
    if got.payload != want.payload {
        let at = got
            .payload
            .iter()
            .zip(&want.payload)
            .position(|(a, b)| a != b);
        return Some(format!(
            "payload: rtl {} B, etherparse {} B, first difference at {at:?}",
            got.payload.len(),
            want.payload.len()
        ));
    }
    let fields: [(&str, u128, u128); 6] = [
        (
            "src_ip",
            u128::from_be_bytes(got.src_ip),
            u128::from_be_bytes(want.src_ip),
        ),
        (
            "dst_ip",
            u128::from_be_bytes(got.dst_ip),
            u128::from_be_bytes(want.dst_ip),
        ),
        ("src_port", got.src_port.into(), want.src_port.into()),
        ("dst_port", got.dst_port.into(), want.dst_port.into()),
        ("udp_len", got.udp_len.into(), want.udp_len.into()),
        ("ecn", got.ecn.into(), want.ecn.into()),
    ];
    fields
        .iter()
        .find(|(_, g, w)| g != w)
        .map(|(name, g, w)| format!("{name}: rtl {g:#x}, etherparse {w:#x}"))
}

/// Sends `frames` through `tb` (with `port` configured) and compares every
/// verdict, output byte, pseudo field and counter (what it counted during
/// the run) with [`expected`]. With
/// `backpressure` the source idles 20 % and the consumer stalls 30 % of
/// cycles.
pub fn run_against_etherparse(
    tb: &mut RxEthTb,
    frames: &[Vec<u8>],
    port: u16,
    seed: u64,
    backpressure: bool,
) -> EthRun {
    let mut knob_rng = SmallRng::seed_from_u64(seed ^ 0xE7E);
    tb.set_port(port);
    let before: Vec<u64> = (0..reason::COUNT as u8).map(|c| tb.counter(c)).collect();
    let started = crate::SimTimer::start();
    let out = tb.run(frames, &mut || {
        if backpressure {
            (knob_rng.gen_bool(0.8), knob_rng.gen_bool(0.7))
        } else {
            (true, true)
        }
    });
    let mut run = EthRun {
        frames: frames.len() as u64,
        cycles: out.cycles,
        beats: out.beats,
        bubbles: out.bubbles,
        sim_secs: started.secs(),
        ..EthRun::default()
    };
    run.mismatches.extend(out.protocol_errors.iter().cloned());
    let mut datagrams = out.datagrams.iter();
    for (i, f) in frames.iter().enumerate() {
        let (want, want_d) = expected(f, port);
        run.by_reason[usize::from(want)] += 1;
        let got = out.reasons.get(i).copied();
        let mut diff = None;
        if got != Some(want) {
            diff = Some(format!("reason: rtl {got:?}, etherparse + rules {want}"));
        }
        if let Some(w) = want_d {
            match datagrams.next() {
                Some(g) => {
                    if let Some(d) = first_diff(g, &w) {
                        diff.get_or_insert(d);
                    }
                }
                None => {
                    diff.get_or_insert("datagram missing in the RTL output".into());
                }
            }
        }
        if let Some(d) = diff {
            run.mismatches
                .push(format!("frame {i} ({}): {d}", describe(f)));
        }
    }
    for extra in datagrams {
        run.mismatches.push(format!(
            "RTL output a {} B datagram that etherparse did not",
            extra.payload.len()
        ));
    }
    for code in 0..reason::COUNT as u8 {
        let got = tb.counter(code) - before[usize::from(code)];
        let want = run.by_reason[usize::from(code)];
        if got != want {
            run.mismatches
                .push(format!("counter {code}: rtl {got}, expected {want}"));
        }
    }
    run
}

/// `n` random frames ([`random_frame`]) from `seed` for `port`.
pub fn random_frames(n: usize, seed: u64, port: u16) -> Vec<Vec<u8>> {
    let mut rng = SmallRng::seed_from_u64(seed);
    (0..n).map(|_| random_frame(&mut rng, port)).collect()
}

/// `n` back-to-back IPv4 frames of a 1,500-byte IP MTU (1,514 bytes) to
/// `port`, for the line-rate measurement.
pub fn mtu_frames(n: usize, seed: u64, port: u16) -> Vec<Vec<u8>> {
    let mut rng = SmallRng::seed_from_u64(seed);
    (0..n)
        .map(|_| {
            let datagram = Frame {
                bytes: (0..1472).map(|_| rng.r#gen()).collect(),
                pseudo: metaroce_proto::PseudoHeader::new(
                    IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
                    rng.gen_range(metaroce_proto::ENTROPY_PORTS),
                    IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)),
                    port,
                ),
            };
            peer_frame(&datagram, 0)
        })
        .collect()
}

use super::*;
use etherparse::{
    EtherType, Ethernet2Header, IpDscp, IpEcn, IpNumber, Ipv4Header, Ipv6FlowLabel, Ipv6Header,
    UdpHeader,
};
use metaroce_proto::{Ext, Flags, MsgRepr, Opcode, Packet, PseudoHeader, Repr};
use std::collections::VecDeque;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::{Arc, Mutex};

#[test]
fn verilog_emits_at_every_width() {
    for w in crate::SUPPORTED_WIDTHS {
        let v = crate::tx_build_verilog(w);
        assert!(v.contains("module top("), "width {w}");
    }
}

const LOCAL_MAC: [u8; 6] = [2, 0, 0, 0, 0, 1];
const PEER_MAC: [u8; 6] = [2, 0, 0, 0, 0, 2];
const DPORT: u16 = 4791;
const TTL: u8 = 64;
const DSCP: u8 = 26;

/// One descriptor of the test: headers, payload, path entropy, ECN.
struct Item {
    repr: Repr,
    payload: Vec<u8>,
    addr: u64,
    entropy: u16,
    ecn: bool,
}

/// The frame `item` must give: headers from `etherparse`, the datagram
/// from `metaroce_proto` with its ICRC.
fn reference(local: IpAddr, peer: IpAddr, item: &Item) -> Vec<u8> {
    let n = item.payload.len();
    let mut dgram = vec![0u8; item.repr.buffer_len(n)];
    item.repr.emit(&mut dgram, n).unwrap();
    let h = item.repr.header_len();
    dgram[h..h + n].copy_from_slice(&item.payload);
    let pseudo = PseudoHeader::new(local, item.entropy, peer, DPORT);
    Packet::new_unchecked(&mut dgram[..]).fill_icrc(&pseudo);
    let udp_len = (dgram.len() + 8) as u16;
    let ecn = if item.ecn { IpEcn::TWO } else { IpEcn::ZERO };
    let mut out = Vec::new();
    match (local, peer) {
        (IpAddr::V4(l), IpAddr::V4(p)) => {
            let eth = Ethernet2Header {
                source: LOCAL_MAC,
                destination: PEER_MAC,
                ether_type: EtherType::IPV4,
            };
            let mut ip =
                Ipv4Header::new(udp_len, TTL, IpNumber::UDP, l.octets(), p.octets()).unwrap();
            ip.dscp = IpDscp::try_new(DSCP).unwrap();
            ip.ecn = ecn;
            ip.header_checksum = ip.calc_header_checksum();
            out.extend_from_slice(&eth.to_bytes());
            out.extend_from_slice(&ip.to_bytes());
        }
        (IpAddr::V6(l), IpAddr::V6(p)) => {
            let eth = Ethernet2Header {
                source: LOCAL_MAC,
                destination: PEER_MAC,
                ether_type: EtherType::IPV6,
            };
            let ip = Ipv6Header {
                traffic_class: DSCP << 2 | ecn.value(),
                flow_label: Ipv6FlowLabel::ZERO,
                payload_length: udp_len,
                next_header: IpNumber::UDP,
                hop_limit: TTL,
                source: l.octets(),
                destination: p.octets(),
            };
            out.extend_from_slice(&eth.to_bytes());
            out.extend_from_slice(&ip.to_bytes());
        }
        _ => unreachable!(),
    }
    let udp = UdpHeader {
        source_port: item.entropy,
        destination_port: DPORT,
        length: udp_len,
        checksum: 0,
    };
    out.extend_from_slice(&udp.to_bytes());
    out.extend_from_slice(&dgram);
    out
}

/// The configuration writes for `local` → `peer`.
fn config(local: IpAddr, peer: IpAddr) -> Vec<(u8, u64)> {
    let mac = |m: [u8; 6]| m.iter().fold(0u64, |a, &b| a << 8 | u64::from(b));
    let mut w = vec![
        (
            cfg::addr(cfg::REGS, cfg::LOCAL),
            mac(LOCAL_MAC) | u64::from(DPORT) << 48,
        ),
        (
            cfg::addr(cfg::REGS, cfg::PEER),
            mac(PEER_MAC)
                | u64::from(TTL) << 48
                | u64::from(DSCP) << 56
                | u64::from(local.is_ipv6()) << cfg::PEER_IPV6_BIT,
        ),
    ];
    match (local, peer) {
        (IpAddr::V4(l), IpAddr::V4(p)) => w.push((
            cfg::addr(cfg::REGS, cfg::IPV4),
            u64::from(l.to_bits()) | u64::from(p.to_bits()) << 32,
        )),
        (IpAddr::V6(l), IpAddr::V6(p)) => {
            for (reg, ip) in [(cfg::LOCAL_IPV6, l), (cfg::PEER_IPV6, p)] {
                let bits = ip.to_bits();
                w.push((cfg::addr(cfg::REGS, reg), (bits >> 64) as u64));
                w.push((cfg::addr(cfg::REGS, reg + 1), bits as u64));
            }
        }
        _ => unreachable!(),
    }
    w
}

/// Bench state shared with rust-hdl's testbench closure.
#[derive(Default)]
struct Bench {
    frames: Vec<Vec<u8>>,
    err: bool,
    /// Cycles from the first descriptor accepted to the first beat.
    latency: Option<u64>,
}

/// Runs `items` through rust-hdl's simulator of the 64-bit block with
/// the output refusing a beat every third cycle and the payload stream
/// pausing every fifth; returns the frames, `m_err` and the first
/// frame's latency.
fn simulate(local: IpAddr, peer: IpAddr, items: Vec<Item>) -> Bench {
    let bench = Arc::new(Mutex::new(Bench::default()));
    let result = bench.clone();
    let mut sim = Simulation::new();
    sim.add_clock(5, |x: &mut Box<TxBuild64>| x.clock.next = !x.clock.val());
    sim.add_testbench(move |mut sim: Sim<TxBuild64>| {
        let mut x = sim.init()?;
        x.rst.next = true;
        wait_clock_cycles!(sim, clock, x, 2);
        wait_clock_false!(sim, clock, x);
        x.rst.next = false;
        // Configuration, then one entropy write per path used.
        let mut writes = config(local, peer);
        for it in &items {
            let path = (it.repr.path % 64) as u8;
            writes.push((cfg::addr(cfg::ENTROPY, path), u64::from(it.entropy)));
        }
        for (addr, data) in writes {
            x.cfg.we.next = true;
            x.cfg.addr.next = addr.to_bits();
            x.cfg.data.next = data.to_bits();
            wait_clock_true!(sim, clock, x);
            wait_clock_false!(sim, clock, x);
        }
        x.cfg.we.next = false;
        let (mut next, mut cycle, mut accepted) = (0usize, 0u64, 0u64);
        let mut fetches: VecDeque<usize> = VecDeque::new();
        let mut pay: VecDeque<(usize, usize)> = VecDeque::new();
        let mut open: Vec<u8> = Vec::new();
        while bench.lock().unwrap().frames.len() < items.len() && cycle < 5000 {
            cycle += 1;
            let ready = cycle % 3 != 0;
            // The registered output beat is taken at the next edge.
            if x.m_axis.tvalid.val() {
                let mut b = bench.lock().unwrap();
                b.latency.get_or_insert(cycle - accepted);
            }
            if x.m_axis.tvalid.val() && ready {
                let n = x.m_axis.tkeep.val().to_u64().count_ones() as usize;
                open.extend_from_slice(&x.m_axis.tdata.val().to_u64().to_le_bytes()[..n]);
                if x.m_axis.tlast.val() {
                    bench.lock().unwrap().frames.push(std::mem::take(&mut open));
                }
            }
            x.m_axis.tready.next = ready;
            x.s_desc.valid.next = next < items.len();
            if let Some(it) = items.get(next) {
                let r = &it.repr;
                let m = match r.ext {
                    Ext::Msg(m) => m,
                    _ => MsgRepr::default(),
                };
                x.s_desc.opcode.next = (r.opcode as u64).to_bits();
                x.s_desc.flags.next = u64::from(r.flags.bits()).to_bits();
                x.s_desc.dst_qpn.next = u64::from(r.dst_qpn).to_bits();
                x.s_desc.src_qpn.next = u64::from(r.src_qpn).to_bits();
                x.s_desc.stream.next = u64::from(r.stream).to_bits();
                x.s_desc.path.next = u64::from(r.path).to_bits();
                x.s_desc.conn_psn.next = u64::from(r.conn_psn).to_bits();
                x.s_desc.path_psn.next = u64::from(r.path_psn).to_bits();
                x.s_desc.timestamp.next = r.timestamp.to_bits();
                x.s_desc.msn.next = u64::from(m.msn).to_bits();
                x.s_desc.recv_idx.next = u64::from(m.recv_idx).to_bits();
                x.s_desc.msg_len.next = u64::from(m.msg_len).to_bits();
                x.s_desc.offset.next = u64::from(m.offset).to_bits();
                x.s_desc.remote_va.next = m.remote_va.to_bits();
                x.s_desc.rkey.next = u64::from(m.rkey).to_bits();
                x.s_desc.imm.next = u64::from(m.imm).to_bits();
                x.s_desc.len.next = (it.payload.len() as u64).to_bits();
                x.s_desc.addr.next = it.addr.to_bits();
                x.s_desc.ecn.next = it.ecn;
            }
            x.m_rd.ready.next = true;
            // The payload of the oldest request, 8 bytes a beat.
            x.s_pay.tvalid.next = false;
            if let Some(&(i, off)) = pay.front().filter(|_| cycle % 5 != 0) {
                let p = &items[i].payload;
                let n = (p.len() - off).min(8);
                let mut beat = [0xA5u8; 8];
                beat[..n].copy_from_slice(&p[off..off + n]);
                x.s_pay.tdata.next = u64::from_le_bytes(beat).to_bits();
                x.s_pay.tkeep.next = ((1u64 << n) - 1).to_bits();
                x.s_pay.tlast.next = off + n == p.len();
                x.s_pay.tvalid.next = true;
            }
            x = sim.wait(1, x)?;
            // What the block takes at the next edge.
            if x.s_desc.valid.val() && x.s_desc.ready.val() {
                if next == 0 {
                    accepted = cycle;
                }
                if !items[next].payload.is_empty() {
                    fetches.push_back(next);
                }
                next += 1;
            }
            if x.m_rd.valid.val() {
                let i = fetches.pop_front().expect("a fetch for a descriptor");
                assert_eq!(x.m_rd.addr.val().to_u64(), items[i].addr);
                assert_eq!(x.m_rd.len.val().to_u64(), items[i].payload.len() as u64);
                pay.push_back((i, 0));
            }
            if x.s_pay.tvalid.val() && x.s_pay.tready.val() {
                let (i, off) = pay.pop_front().unwrap();
                if off + 8 < items[i].payload.len() {
                    pay.push_front((i, off + 8));
                }
            }
            wait_clock_true!(sim, clock, x);
            wait_clock_false!(sim, clock, x);
        }
        bench.lock().unwrap().err = x.m_err.val();
        sim.done(x)
    });
    let mut uut = TxBuild64::default();
    uut.connect_all();
    sim.run(Box::new(uut), 200_000).unwrap();
    Arc::try_unwrap(result).ok().unwrap().into_inner().unwrap()
}

/// Descriptors of every header size, payloads of 0 to 100 bytes, a path
/// above 63 (the table takes its low 6 bits), ECN on and off.
fn items() -> Vec<Item> {
    let msg = |len: u32| {
        Ext::Msg(MsgRepr {
            msn: 0x0102_0304,
            recv_idx: 5,
            msg_len: len,
            offset: 0x10,
            remote_va: 0x1122_3344_5566_7788,
            rkey: 0xCAFE_F00D,
            imm: 0xA5A5_0001,
        })
    };
    let base = |opcode: Opcode, path: u16, ext: Ext| Repr {
        opcode,
        flags: Flags::from_bits_retain(0x8001),
        dst_qpn: 0x0A0B_0C0D,
        src_qpn: 7,
        stream: 3,
        path,
        conn_psn: 0xFFFF_FF00 + u32::from(path),
        path_psn: 99,
        timestamp: 0x0123_4567_89AB_CDEF,
        ext,
    };
    let bytes = |n: usize, s: u8| (0..n).map(|i| (i as u8).wrapping_mul(7) ^ s).collect();
    vec![
        Item {
            repr: base(Opcode::Write, 1, msg(100)),
            payload: bytes(100, 1),
            addr: 0x1000,
            entropy: 0xC001,
            ecn: true,
        },
        Item {
            repr: base(Opcode::Probe, 2, Ext::None),
            payload: Vec::new(),
            addr: 0,
            entropy: 0xC002,
            ecn: false,
        },
        Item {
            repr: base(Opcode::Send, 67, msg(1)),
            payload: bytes(1, 2),
            addr: 0x2000,
            entropy: 0xC003,
            ecn: false,
        },
        Item {
            repr: base(Opcode::ReadReq, 4, msg(4096)),
            payload: Vec::new(),
            addr: 0,
            entropy: 0xC004,
            ecn: true,
        },
        Item {
            repr: base(Opcode::WriteImm, 5, msg(61)),
            payload: bytes(61, 3),
            addr: 0x3000,
            entropy: 0xC005,
            ecn: true,
        },
    ]
}

#[test]
fn rust_hdl_model_builds_frames_ipv4() {
    let (local, peer) = (
        IpAddr::V4(Ipv4Addr::new(192, 0, 2, 1)),
        IpAddr::V4(Ipv4Addr::new(104, 0, 0, 35)),
    );
    let items = items();
    let want: Vec<_> = items.iter().map(|it| reference(local, peer, it)).collect();
    let got = simulate(local, peer, items);
    assert!(!got.err);
    assert_eq!(got.latency, Some(FIRST_BEAT_LATENCY as u64));
    assert_eq!(got.frames, want);
}

#[test]
fn rust_hdl_model_builds_frames_ipv6() {
    let (local, peer) = (
        IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 1)),
        IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0x4d52, 0, 0, 0, 0x77, 7)),
    );
    let items = items();
    let want: Vec<_> = items.iter().map(|it| reference(local, peer, it)).collect();
    let got = simulate(local, peer, items);
    assert!(!got.err);
    assert_eq!(got.latency, Some(FIRST_BEAT_LATENCY as u64));
    assert_eq!(got.frames, want);
}

use super::*;

#[test]
fn reason_codes_round_trip_and_name() {
    for r in EthDrop::ALL {
        assert_eq!(EthDrop::from_code(r as u8), Some(r));
    }
    assert_eq!(EthDrop::from_code(13), None);
    assert_eq!(EthDrop::BadIpHeader.const_name(), "BAD_IP_HEADER");
}

#[test]
fn verilog_emits_at_both_widths() {
    for w in [64, 512] {
        let v = crate::rx_eth_verilog(w);
        assert!(v.contains("module top("), "width {w}");
        // The frame buffer holds two 9216-byte frames at either width.
        let depth = fifo_depth(w / 8);
        assert!(depth * w / 8 >= 2 * MAX_FRAME, "width {w}");
        assert!(v.contains(&format!("mem [0:{}]", depth - 1)), "width {w}");
    }
}

use etherparse::PacketBuilder;
use std::sync::{Arc, Mutex};

/// One datagram as `m_axis` / `m_pseudo_*` / `m_ecn` gave it.
#[derive(Debug, Default, PartialEq)]
struct Out {
    payload: Vec<u8>,
    src_ip: u128,
    dst_ip: u128,
    ports: (u16, u16),
    udp_len: u16,
    ecn: u8,
}

/// What the model produced: reasons in frame order, datagrams, and the
/// counters of every code afterwards.
#[derive(Debug, Default)]
struct Run {
    reasons: Vec<u8>,
    out: Vec<Out>,
    counters: Vec<u32>,
}

/// Runs `frames` back to back through rust-hdl's simulator of the
/// 64-bit block, the consumer always ready.
fn simulate(frames: Vec<Vec<u8>>) -> Run {
    let run = Arc::new(Mutex::new(Run::default()));
    let result = run.clone();
    let mut sim = Simulation::new();
    sim.add_clock(5, |x: &mut Box<RxEth64>| x.clock.next = !x.clock.val());
    sim.add_testbench(move |mut sim: Sim<RxEth64>| {
        let mut x = sim.init()?;
        x.rst.next = true;
        wait_clock_cycles!(sim, clock, x, 2);
        wait_clock_false!(sim, clock, x);
        x.rst.next = false;
        x.m_axis_tready.next = true;
        let (mut frame, mut off) = (0usize, 0usize);
        let mut open = Out::default();
        let (mut idle, mut cycles) = (0, 0);
        // Mid-cycle: outputs are settled registers; a beat offered now
        // is taken at the next edge when `s_axis_tready` is high.
        while idle < 40 && cycles < 2000 {
            cycles += 1;
            let mut r = run.lock().unwrap();
            if x.m_axis_tvalid.val() {
                if open.payload.is_empty() {
                    open.src_ip = x.m_pseudo_src_ip.val().to_u128();
                    open.dst_ip = x.m_pseudo_dst_ip.val().to_u128();
                    open.ports = (
                        x.m_pseudo_src_port.val().index() as u16,
                        x.m_pseudo_dst_port.val().index() as u16,
                    );
                    open.udp_len = x.m_pseudo_udp_len.val().index() as u16;
                    open.ecn = x.m_ecn.val().index() as u8;
                }
                let n = x.m_axis_tkeep.val().to_u64().count_ones() as usize;
                let data = x.m_axis_tdata.val().to_u64().to_le_bytes();
                open.payload.extend_from_slice(&data[..n]);
                if x.m_axis_tlast.val() {
                    r.out.push(std::mem::take(&mut open));
                }
            }
            if x.m_ev_valid.val() {
                r.reasons.push(x.m_ev_reason.val().index() as u8);
            }
            idle = if r.reasons.len() == frames.len() && !x.m_axis_tvalid.val() {
                idle + 1
            } else {
                0
            };
            drop(r);
            x.s_axis_tvalid.next = false;
            if x.s_axis_tready.val() && frame < frames.len() {
                let f = &frames[frame];
                let n = (f.len() - off).min(8);
                let mut beat = [0xA5u8; 8];
                beat[..n].copy_from_slice(&f[off..off + n]);
                x.s_axis_tdata.next = u64::from_le_bytes(beat).to_bits();
                x.s_axis_tkeep.next = ((1u64 << n) - 1).to_bits();
                x.s_axis_tvalid.next = true;
                off += n;
                x.s_axis_tlast.next = off == f.len();
                if off == f.len() {
                    frame += 1;
                    off = 0;
                }
            }
            wait_clock_true!(sim, clock, x);
            wait_clock_false!(sim, clock, x);
        }
        x.s_axis_tvalid.next = false;
        for code in 0..CODES {
            x.cnt_sel.next = code.to_bits();
            wait_clock_true!(sim, clock, x);
            wait_clock_false!(sim, clock, x);
            let count = x.cnt_val.val().to_u64() as u32;
            run.lock().unwrap().counters.push(count);
        }
        sim.done(x)
    });
    let mut uut = RxEth64::default();
    uut.connect_all();
    sim.run(Box::new(uut), 200_000).unwrap();
    Arc::try_unwrap(result).unwrap().into_inner().unwrap()
}

const SRC4: [u8; 4] = [10, 0, 0, 1];
const DST4: [u8; 4] = [10, 0, 0, 2];

/// An IPv4/UDP frame to `port` (tagged with `vlan`, with IPv4
/// `options`), built by `etherparse`.
fn ipv4(vlan: Option<u16>, options: &[u8], port: u16, payload: &[u8]) -> Vec<u8> {
    let eth = PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2]);
    let mut header =
        etherparse::Ipv4Header::new(0, 64, etherparse::IpNumber::UDP, SRC4, DST4).unwrap();
    header.options = options.try_into().unwrap();
    header.ecn = etherparse::IpEcn::CongestionExperienced;
    let ip = etherparse::IpHeaders::Ipv4(header, Default::default());
    let builder = match vlan {
        Some(id) => eth.single_vlan(id.try_into().unwrap()).ip(ip),
        None => eth.ip(ip),
    }
    .udp(0xC001, port);
    let mut out = Vec::new();
    builder.write(&mut out, payload).unwrap();
    out.resize(out.len().max(60), 0);
    out
}

fn mapped(a: [u8; 4]) -> u128 {
    u128::from(u32::from_be_bytes(a)) | 0xFFFF << 32
}

#[test]
fn rust_hdl_model_parses_frames() {
    let port = metaroce_proto::DEFAULT_UDP_PORT;
    let short: Vec<u8> = (0..20).collect();
    let long: Vec<u8> = (0..100).map(|i| (i * 7) as u8).collect();
    let mut bad_checksum = ipv4(None, &[], port, &short);
    bad_checksum[14 + 10] ^= 0x40;
    let v6_payload: Vec<u8> = (0..33).map(|i| 200 - i).collect();
    let mut v6 = Vec::new();
    PacketBuilder::ethernet2([2; 6], [4; 6])
        .single_vlan(7.try_into().unwrap())
        .ipv6([0x20; 16], [0x30; 16], 64)
        .udp(0xC002, port)
        .write(&mut v6, &v6_payload)
        .unwrap();
    let frames = vec![
        ipv4(None, &[], port, &short),
        ipv4(Some(5), &[1, 1, 1, 0, 1, 1, 1, 0], port, &long),
        bad_checksum,
        v6,
        ipv4(None, &[], port + 1, &short),
        vec![0x55; 10],
    ];
    let run = simulate(frames);
    let accepted = EthDrop::Accepted as u8;
    assert_eq!(
        run.reasons,
        [
            accepted,
            accepted,
            EthDrop::BadChecksum as u8,
            accepted,
            EthDrop::Port as u8,
            EthDrop::Truncated as u8
        ]
    );
    let v4 = |payload: &[u8]| Out {
        payload: payload.to_vec(),
        src_ip: mapped(SRC4),
        dst_ip: mapped(DST4),
        ports: (0xC001, port),
        udp_len: 8 + payload.len() as u16,
        ecn: 3,
    };
    let want = [
        v4(&short),
        v4(&long),
        Out {
            payload: v6_payload.clone(),
            src_ip: u128::from_be_bytes([0x20; 16]),
            dst_ip: u128::from_be_bytes([0x30; 16]),
            ports: (0xC002, port),
            udp_len: 8 + 33,
            ecn: 0,
        },
    ];
    assert_eq!(run.out, want);
    let mut counters = vec![0u32; CODES];
    for r in [0, 0, 0, 4, 10, 1] {
        counters[r] += 1;
    }
    assert_eq!(run.counters, counters);
}

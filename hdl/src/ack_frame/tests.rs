//! rust-hdl simulation of [`AckFrame`]: frames of both ports, IPv4 and IPv6, checked by `etherparse`.

use super::*;
use etherparse::{LinkSlice, NetSlice, SlicedPacket, TransportSlice};
use std::sync::{Arc, Mutex};

const LOCAL_MAC: u64 = 0x02_00_00_00_00_01;
const PEER_MAC: u64 = 0x02_00_00_00_00_02;
const LOCAL_IP: u64 = 0x0a00_0001;
const LOCAL_IP6: u128 = 0xfd00_0000_0000_0000_0000_0000_0000_0001;

/// One datagram offered: from the firmware port, its bytes, its
/// destination (IPv6 or IPv4-mapped), ports, ECE.
#[derive(Clone)]
struct Gram {
    fw: bool,
    bytes: Vec<u8>,
    dst: u128,
    ports: (u16, u16),
    ece: bool,
}

/// The frames the block sent and its counters (frames, ECE, IPv6, firmware).
#[derive(Debug, Default)]
struct Run {
    frames: Vec<Vec<u8>>,
    counters: [u64; 4],
}

/// Offers `grams` through rust-hdl's simulator of the 64-bit block,
/// the ACK generator's and the firmware's each in order on its own
/// port at once; the MAC takes two beats of three.
fn simulate(grams: Vec<Gram>) -> Run {
    let run = Arc::new(Mutex::new(Run::default()));
    let result = run.clone();
    let mut sim = Simulation::new();
    sim.add_clock(5, |x: &mut Box<AckFrame<64, 8>>| {
        x.clock.next = !x.clock.val()
    });
    sim.add_testbench(move |mut sim: Sim<AckFrame<64, 8>>| {
        let mut x = sim.init()?;
        x.rst.next = true;
        x.reg_local_mac.next = LOCAL_MAC.to_bits();
        x.reg_peer_mac.next = PEER_MAC.to_bits();
        x.reg_local_ip.next = LOCAL_IP.to_bits();
        x.reg_local_ip6.next = LOCAL_IP6.to_bits();
        x.reg_ttl.next = 64u64.to_bits();
        x.reg_dscp.next = 46u64.to_bits();
        wait_clock_cycles!(sim, clock, x, 2);
        wait_clock_false!(sim, clock, x);
        x.rst.next = false;
        let queues: [Vec<&Gram>; 2] = [
            grams.iter().filter(|g| !g.fw).collect(),
            grams.iter().filter(|g| g.fw).collect(),
        ];
        let mut at = [(0usize, 0usize); 2];
        let mut open = Vec::new();
        let mut cycle = 0;
        while cycle < 3000 && run.lock().unwrap().frames.len() < grams.len() {
            cycle += 1;
            // Mid-cycle: the outputs show this cycle's handshake.
            let ready = cycle % 3 != 0;
            if x.m_axis.tvalid.val() && ready {
                let n = x.m_axis.tkeep.val().to_u64().count_ones() as usize;
                open.extend_from_slice(&x.m_axis.tdata.val().to_u64().to_le_bytes()[..n]);
                if x.m_axis.tlast.val() {
                    run.lock().unwrap().frames.push(std::mem::take(&mut open));
                }
            }
            x.m_axis.tready.next = ready;
            // A beat taken in the previous cycle moves its port on.
            for (p, taken) in [x.s_ack.tready.val(), x.s_fw.tready.val()]
                .into_iter()
                .enumerate()
            {
                let offered = [x.s_ack.tvalid.val(), x.s_fw.tvalid.val()][p];
                let (g, off) = &mut at[p];
                if offered && taken {
                    *off += 8;
                    if *off >= queues[p][*g].bytes.len() {
                        *g += 1;
                        *off = 0;
                    }
                }
            }
            for (p, q) in queues.iter().enumerate() {
                let (g, off) = at[p];
                let Some(d) = q.get(g) else {
                    if p == 0 {
                        x.s_ack.tvalid.next = false;
                    } else {
                        x.s_fw.tvalid.next = false;
                    }
                    continue;
                };
                let n = (d.bytes.len() - off).min(8);
                let mut beat = [0u8; 8];
                beat[..n].copy_from_slice(&d.bytes[off..off + n]);
                let (data, keep) = (
                    u64::from_le_bytes(beat).to_bits(),
                    ((1u64 << n) - 1).to_bits(),
                );
                let last = off + n == d.bytes.len();
                if p == 0 {
                    x.s_ack.tdata.next = data;
                    x.s_ack.tkeep.next = keep;
                    x.s_ack.tvalid.next = true;
                    x.s_ack.tlast.next = last;
                    x.s_ack.dst_ip.next = d.dst.to_bits();
                    x.s_ack.src_port.next = (d.ports.0 as u64).to_bits();
                    x.s_ack.dst_port.next = (d.ports.1 as u64).to_bits();
                    x.s_ack.ece.next = d.ece;
                } else {
                    x.s_fw.tdata.next = data;
                    x.s_fw.tkeep.next = keep;
                    x.s_fw.tvalid.next = true;
                    x.s_fw.tlast.next = last;
                    x.s_fw.dst_ip.next = d.dst.to_bits();
                    x.s_fw.src_port.next = (d.ports.0 as u64).to_bits();
                    x.s_fw.dst_port.next = (d.ports.1 as u64).to_bits();
                }
            }
            wait_clock_true!(sim, clock, x);
            wait_clock_false!(sim, clock, x);
        }
        run.lock().unwrap().counters = [
            x.cnt_frames.val().to_u64(),
            x.cnt_ece.val().to_u64(),
            x.cnt_v6.val().to_u64(),
            x.cnt_fw.val().to_u64(),
        ];
        sim.done(x)
    });
    let mut uut = AckFrame::<64, 8>::default();
    uut.connect_all();
    sim.run(Box::new(uut), 200_000).unwrap();
    Arc::try_unwrap(result).unwrap().into_inner().unwrap()
}

/// Checks `frame` as `etherparse` reads it against `g`: addresses,
/// ECT(0) and DSCP, TTL, ports, payload, and the IPv4 header checksum
/// or the IPv6 UDP checksum recomputed.
fn check(frame: &[u8], g: &Gram) {
    let p = SlicedPacket::from_ethernet(frame).expect("frame parses");
    let Some(LinkSlice::Ethernet2(eth)) = &p.link else {
        panic!("not Ethernet II")
    };
    assert_eq!(eth.destination()[..], PEER_MAC.to_be_bytes()[2..]);
    assert_eq!(eth.source()[..], LOCAL_MAC.to_be_bytes()[2..]);
    let Some(TransportSlice::Udp(udp)) = p.transport else {
        panic!("not UDP")
    };
    assert_eq!((udp.source_port(), udp.destination_port()), g.ports);
    assert_eq!(udp.payload(), &g.bytes[..]);
    match p.net.expect("IP") {
        NetSlice::Ipv4(v4) => {
            let h = v4.header().to_header();
            assert_eq!(g.dst >> 32, 0xFFFF, "IPv4 frame for an IPv6 peer");
            assert_eq!(h.source, (LOCAL_IP as u32).to_be_bytes());
            assert_eq!(h.destination, (g.dst as u32).to_be_bytes());
            assert_eq!((h.dscp.value(), h.ecn.value(), h.time_to_live), (46, 2, 64));
            assert_eq!(h.header_checksum, h.calc_header_checksum());
            assert_eq!(udp.checksum(), 0);
        }
        NetSlice::Ipv6(v6) => {
            let h = v6.header().to_header();
            assert_eq!(h.source, LOCAL_IP6.to_be_bytes());
            assert_eq!(h.destination, g.dst.to_be_bytes());
            assert_eq!((h.traffic_class, h.hop_limit), (46 << 2 | 2, 64));
            let want = udp
                .to_header()
                .calc_checksum_ipv6(&h, udp.payload())
                .unwrap();
            assert_eq!(udp.checksum(), want);
        }
        _ => panic!("not IP"),
    }
}

#[test]
fn rust_hdl_model_frames_ipv4_and_ipv6_datagrams_from_both_ports() {
    let v4 = 0xFFFF_0A00_0002_u128;
    let v6 = 0xfd00_0000_0000_0000_0000_0000_0000_0002u128;
    let bytes = |n: usize, s: usize| -> Vec<u8> { (0..n).map(|j| (j * 13 + s) as u8).collect() };
    let grams = vec![
        Gram {
            fw: false,
            bytes: bytes(100, 1),
            dst: v4,
            ports: (49152, 4791),
            ece: true,
        },
        Gram {
            fw: true,
            bytes: bytes(37, 2),
            dst: v6,
            ports: (49153, 4792),
            ece: false,
        },
        Gram {
            fw: false,
            bytes: bytes(100, 3),
            dst: v6,
            ports: (49154, 4791),
            ece: false,
        },
        Gram {
            fw: false,
            bytes: bytes(128, 4),
            dst: v6,
            ports: (65535, 65535),
            ece: true,
        },
        Gram {
            fw: true,
            bytes: bytes(20, 5),
            dst: v4,
            ports: (49155, 4793),
            ece: false,
        },
    ];
    let run = simulate(grams.clone());
    assert_eq!(run.frames.len(), grams.len());
    // The ACK generator's first datagram goes first (both ports offer
    // one at the start); every datagram comes out once.
    check(&run.frames[0], &grams[0]);
    let mut seen = vec![false; grams.len()];
    for f in &run.frames {
        let i = grams
            .iter()
            .position(|g| {
                f.ends_with(&g.bytes)
                    && f.len() == g.bytes.len() + if g.dst >> 32 == 0xFFFF { 42 } else { 62 }
            })
            .expect("a frame of an offered datagram");
        check(f, &grams[i]);
        seen[i] = true;
    }
    assert!(seen.iter().all(|&s| s));
    assert_eq!(run.counters, [5, 2, 3, 2]);
}

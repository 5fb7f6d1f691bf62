//! The per-path receive tracker (`metaroce_hdl::rx_path_verilog(8)`)
//! against the engine.
//!
//! The golden model is `metaroce_firmware::Nic` itself, not a port of its
//! rules: every arrival event `(path, path_psn, ce)` is also sealed as a
//! PROBE to a QP in RTR and given to `Nic::handle_datagram` (a PROBE only
//! touches the path tracker), with the IP CE mark in `RxMeta`. The engine
//! answers with one ACK for that path, read back from `Nic::poll_transmit`
//! and parsed with `metaroce-proto`: its `path_cum`, `sack`, `rx_count` and
//! `ce_count` must equal the RTL's read port after the same event. The
//! engine's verdict is observed, not recomputed: out of window when its
//! `path_window` drop counter moves (and no ACK), new when the ACK's
//! `(path_cum, sack)` differ from that path's previous ACK, duplicate when
//! they do not (a new arrival always changes them, a duplicate never does).

use std::net::{IpAddr, Ipv4Addr};

use metaroce_firmware::{Nic, QpConfig};
use metaroce_firmware::{NicConfig, QpTransition, RemoteEnd, RxMeta, Transmit, VecMemory};
use metaroce_proto::{AckRepr, Ext, Flags, Opcode, Packet, PseudoHeader, Repr, Sack};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::{Model, Port, Sim, SimError};

/// `res_code` values (generated from `metaroce_hdl::PathVerdict`).
pub mod code {
    include!(concat!(env!("OUT_DIR"), "/path_codes.rs"));
}

/// Paths of the Verilated model.
pub const PATHS: usize = 8;

const PEER_QPN: u32 = 0x55;
const PORT: u16 = metaroce_proto::DEFAULT_UDP_PORT;

/// One arrival event.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Arrival {
    /// Path index (below [`PATHS`]).
    pub path: u16,
    /// Path PSN.
    pub psn: u32,
    /// The IP header was CE-marked.
    pub ce: bool,
}

/// A path's receive state, as an ACK carries it.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct PathState {
    /// First path PSN not yet received.
    pub cum: u32,
    /// Received PSNs above `cum`.
    pub sack: Sack,
    /// Packets counted on the path.
    pub rx_count: u32,
    /// CE-marked packets counted on the path.
    pub ce_count: u32,
}

impl From<&AckRepr> for PathState {
    fn from(a: &AckRepr) -> Self {
        PathState {
            cum: a.path_cum,
            sack: a.sack,
            rx_count: a.rx_count,
            ce_count: a.ce_count,
        }
    }
}

/// Driver for the Verilated tracker.
pub struct RxPathTb {
    sim: Sim,
    ev_valid: Port,
    ev_path: Port,
    ev_psn: Port,
    ev_ce: Port,
    res_valid: Port,
    res_path: Port,
    res_code: Port,
    rd_path: Port,
    rd_cum: Port,
    rd_sack: Port,
    rd_rx: Port,
    rd_ce: Port,
}

impl RxPathTb {
    /// The 8-path model, reset.
    pub fn new() -> Result<Self, SimError> {
        let mut sim = Sim::new(Model::RxPath8)?;
        let p = |s: &Sim, n: &str| s.port(n);
        let tb = RxPathTb {
            ev_valid: p(&sim, "ev_valid")?,
            ev_path: p(&sim, "ev_path")?,
            ev_psn: p(&sim, "ev_psn")?,
            ev_ce: p(&sim, "ev_ce")?,
            res_valid: p(&sim, "res_valid")?,
            res_path: p(&sim, "res_path")?,
            res_code: p(&sim, "res_code")?,
            rd_path: p(&sim, "rd_path")?,
            rd_cum: p(&sim, "rd_cum")?,
            rd_sack: p(&sim, "rd_sack")?,
            rd_rx: p(&sim, "rd_rx_count")?,
            rd_ce: p(&sim, "rd_ce_count")?,
            sim: {
                sim.reset()?;
                sim
            },
        };
        Ok(tb)
    }

    /// The underlying model.
    pub fn sim(&mut self) -> &mut Sim {
        &mut self.sim
    }

    /// Presents `ev` for one cycle; returns the verdict the RTL registered
    /// for it (`res_valid` must rise with the event's path).
    pub fn event(&mut self, ev: Arrival) -> Result<u8, String> {
        self.sim.set(self.ev_valid, 1);
        self.sim.set(self.ev_path, ev.path.into());
        self.sim.set(self.ev_psn, ev.psn.into());
        self.sim.set(self.ev_ce, ev.ce.into());
        self.sim.tick();
        self.sim.set(self.ev_valid, 0);
        self.sim.eval();
        if self.sim.get(self.res_valid) != 1 {
            return Err("res_valid low after an event".into());
        }
        if self.sim.get(self.res_path) != u64::from(ev.path) {
            return Err("res_path is not the event's path".into());
        }
        Ok(self.sim.get(self.res_code) as u8)
    }

    /// One idle cycle: `res_valid` must fall.
    pub fn idle(&mut self) -> bool {
        self.sim.set(self.ev_valid, 0);
        self.sim.tick();
        self.sim.eval();
        self.sim.get(self.res_valid) == 0
    }

    /// Path `path`'s state on the read port.
    pub fn read(&mut self, path: u16) -> PathState {
        self.sim.set(self.rd_path, path.into());
        self.sim.eval();
        let mut b = [0u8; 32];
        self.sim.get_bytes(self.rd_sack, &mut b);
        PathState {
            cum: self.sim.get(self.rd_cum) as u32,
            sack: Sack::from_bytes(&b),
            rx_count: self.sim.get(self.rd_rx) as u32,
            ce_count: self.sim.get(self.rd_ce) as u32,
        }
    }
}

/// The engine side: one QP in RTR receiving PROBEs from its peer.
pub struct Engine {
    nic: Nic,
    mem: VecMemory,
    local: IpAddr,
    peer: IpAddr,
    qpn: u32,
    peer_qpn: u32,
    buf: Vec<u8>,
}

impl Default for Engine {
    fn default() -> Self {
        Self::new()
    }
}

/// A datagram the engine sent, with its addressing.
pub struct Sent {
    /// The datagram (UDP payload).
    pub bytes: Vec<u8>,
    /// Its destination and ports.
    pub transmit: Transmit,
}

impl Engine {
    /// A NIC with one connected QP (RTR).
    pub fn new() -> Self {
        Self::with_peer_qpn(PEER_QPN)
    }

    /// The same, connected to the peer QP `peer_qpn`.
    pub fn with_peer_qpn(peer_qpn: u32) -> Self {
        let local = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2));
        let peer = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1));
        let mut nic = Nic::new(NicConfig {
            local_ip: local,
            qp: QpConfig::default(),
            ..NicConfig::default()
        });
        let pd = nic.alloc_pd();
        let qpn = nic.create_qp(pd, None).expect("create QP");
        nic.modify_qp(qpn, QpTransition::Init).expect("INIT");
        nic.modify_qp(
            qpn,
            QpTransition::Rtr(RemoteEnd {
                qpn: peer_qpn,
                ip: peer,
                udp_port: PORT,
                initial_psn: 0,
            }),
        )
        .expect("RTR");
        Engine {
            nic,
            mem: VecMemory::new(0x1000, 4096),
            local,
            peer,
            qpn,
            peer_qpn,
            buf: vec![0; 4096],
        }
    }

    /// The engine's QPN.
    pub fn qpn(&self) -> u32 {
        self.qpn
    }

    /// The engine's IP address (the ACKs' source).
    pub fn local_ip(&self) -> IpAddr {
        self.local
    }

    /// Gives `ev` to the engine as a PROBE; returns the ACK fields it sends
    /// for the path (`None`: no ACK), whether `path_window` moved, and how
    /// many other datagrams it sent.
    pub fn arrive(&mut self, ev: Arrival, src_port: u16) -> (Option<PathState>, bool, usize) {
        let (sent, oow) = self.probe(ev, src_port, 0);
        let mut ack = None;
        let mut other = 0;
        for s in sent {
            let parsed = Packet::new_checked(&s.bytes[..])
                .ok()
                .and_then(|p| Repr::parse(&p).ok());
            match parsed {
                Some(Repr {
                    opcode: Opcode::Ack,
                    path,
                    ext: Ext::Ack(a),
                    ..
                }) if path == ev.path && ack.is_none() => ack = Some(PathState::from(&a)),
                _ => other += 1,
            }
        }
        (ack, oow, other)
    }

    /// Gives `ev` to the engine as a PROBE sent at `timestamp` (ns, echoed
    /// in the ACK); returns every datagram the engine sends after it, and
    /// whether `path_window` moved.
    pub fn probe(&mut self, ev: Arrival, src_port: u16, timestamp: u64) -> (Vec<Sent>, bool) {
        let repr = Repr {
            opcode: Opcode::Probe,
            flags: Flags::ACK_REQ,
            dst_qpn: self.qpn,
            src_qpn: self.peer_qpn,
            stream: 0,
            path: ev.path,
            // The connection's current PSN: nothing else arrives (§3.7).
            conn_psn: 0,
            path_psn: ev.psn,
            timestamp,
            ext: Ext::None,
        };
        let pseudo = PseudoHeader::new(self.peer, src_port, self.local, PORT);
        let mut bytes = vec![0u8; repr.buffer_len(0)];
        repr.emit(&mut bytes, 0).expect("emit PROBE");
        Packet::new_unchecked(&mut bytes[..]).fill_icrc(&pseudo);
        let meta = RxMeta {
            src_ip: self.peer,
            src_port,
            dst_ip: self.local,
            dst_port: PORT,
            ecn_ce: ev.ce,
        };
        let before = self.nic.drops().path_window;
        self.nic.handle_datagram(0, &bytes, meta, &mut self.mem);
        let oow = self.nic.drops().path_window != before;
        let mut sent = Vec::new();
        while let Some(t) = self.nic.poll_transmit(0, &mut self.buf, &mut self.mem) {
            sent.push(Sent {
                bytes: self.buf[..t.len].to_vec(),
                transmit: t,
            });
        }
        (sent, oow)
    }
}

/// Random arrival streams over [`PATHS`] paths: in order, lost, reordered
/// within ±64, repeated, jumps of 257..2000 and of up to 2^30 (so PSNs wrap
/// through 2^32), stale PSNs far behind, and absurd jumps ≥ 2^30.
pub struct ArrivalStreams {
    rng: SmallRng,
    head: [u32; PATHS],
    recent: [[u32; 16]; PATHS],
    /// Events by kind: in order, reordered, repeated, jump, huge jump,
    /// stale, absurd.
    pub kinds: [u64; 7],
}

impl ArrivalStreams {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        ArrivalStreams {
            rng: SmallRng::seed_from_u64(seed),
            head: [0; PATHS],
            recent: [[0; 16]; PATHS],
            kinds: [0; 7],
        }
    }

    /// The next arrival.
    pub fn next_arrival(&mut self) -> Arrival {
        let r = &mut self.rng;
        // Bursts on one path half the time, so back-to-back events share state.
        let path = if r.gen_bool(0.5) {
            r.gen_range(0..2u16)
        } else {
            r.gen_range(0..PATHS as u16)
        };
        let p = usize::from(path);
        let h = self.head[p];
        let (kind, psn) = match r.gen_range(0..1000) {
            0..=399 => {
                let skip = if r.gen_bool(0.05) {
                    r.gen_range(1..4)
                } else {
                    0
                };
                self.head[p] = h.wrapping_add(skip + 1);
                (0, h.wrapping_add(skip))
            }
            400..=749 => (1, h.wrapping_add(r.gen_range(0..128)).wrapping_sub(64)),
            750..=879 => (2, self.recent[p][r.gen_range(0..16)]),
            880..=929 => {
                self.head[p] = h.wrapping_add(r.gen_range(257..2000));
                (3, self.head[p])
            }
            930..=944 => {
                self.head[p] = h.wrapping_add(r.gen_range(1 << 20..(1 << 30) - 4096));
                (4, self.head[p])
            }
            945..=979 => (5, h.wrapping_sub(r.gen_range(300..1 << 31))),
            _ => (6, h.wrapping_add(r.gen_range(1 << 30..1 << 31))),
        };
        self.kinds[kind] += 1;
        self.recent[p][r.gen_range(0..16)] = psn;
        Arrival {
            path,
            psn,
            ce: r.gen_bool(0.2),
        }
    }
}

/// Result of [`run_against_engine`].
#[derive(Clone, Debug, Default)]
pub struct PathRun {
    /// Events compared.
    pub events: u64,
    /// Verdict counts (RTL): new, duplicate, out of window.
    pub by_verdict: [u64; 3],
    /// Event kinds generated (see [`ArrivalStreams::kinds`]).
    pub kinds: [u64; 7],
    /// State read-backs compared (event path and one other path per event,
    /// plus every path at the end).
    pub reads: u64,
    /// Mismatches: the event and the first differing field.
    pub mismatches: Vec<String>,
    /// Clock cycles.
    pub cycles: u64,
}

/// Runs `events` random arrivals (seed `seed`) through the RTL and the
/// engine, one event per cycle, comparing every verdict and state.
pub fn run_against_engine(tb: &mut RxPathTb, events: usize, seed: u64) -> PathRun {
    let mut engine = Engine::new();
    let mut traffic = ArrivalStreams::new(seed);
    let mut known = [PathState::default(); PATHS];
    let mut run = PathRun::default();
    let start = tb.sim().cycles();
    for i in 0..events {
        let ev = traffic.next_arrival();
        let src_port = 0xC000 | (i as u16 & 0x3FFF);
        let rtl = match tb.event(ev) {
            Ok(c) => c,
            Err(e) => {
                run.mismatches.push(format!("event {i} {ev:?}: {e}"));
                continue;
            }
        };
        let (ack, oow, other) = engine.arrive(ev, src_port);
        let p = usize::from(ev.path);
        let want = match (ack, oow) {
            (None, true) => code::OUTOFWINDOW,
            (Some(a), false) => {
                let changed = (a.cum, a.sack) != (known[p].cum, known[p].sack);
                known[p] = a;
                if changed { code::NEW } else { code::DUPLICATE }
            }
            (a, o) => {
                run.mismatches.push(format!(
                    "event {i} {ev:?}: engine ack {a:?}, path_window {o}"
                ));
                continue;
            }
        };
        if other != 0 {
            run.mismatches.push(format!(
                "event {i} {ev:?}: engine sent {other} other datagrams"
            ));
        }
        run.events += 1;
        if let Some(n) = run.by_verdict.get_mut(usize::from(rtl)) {
            *n += 1;
        }
        if rtl != want {
            run.mismatches.push(format!(
                "event {i} {ev:?}: verdict RTL {rtl}, engine {want}"
            ));
        }
        let other_path = (i * 5 + 3) % PATHS;
        for q in [p, other_path] {
            let got = tb.read(q as u16);
            run.reads += 1;
            if let Some(d) = diff(&got, &known[q]) {
                run.mismatches
                    .push(format!("event {i} {ev:?}: path {q} {d}"));
            }
        }
    }
    if !tb.idle() {
        run.mismatches
            .push("res_valid high without an event".into());
    }
    for (q, want) in known.iter().enumerate() {
        let got = tb.read(q as u16);
        run.reads += 1;
        if let Some(d) = diff(&got, want) {
            run.mismatches.push(format!("end: path {q} {d}"));
        }
    }
    run.kinds = traffic.kinds;
    run.cycles = tb.sim().cycles() - start;
    run
}

fn diff(got: &PathState, want: &PathState) -> Option<String> {
    if got.cum != want.cum {
        Some(format!("cum RTL {:#x}, engine {:#x}", got.cum, want.cum))
    } else if got.sack != want.sack {
        Some(format!("sack RTL {:?}, engine {:?}", got.sack, want.sack))
    } else if got.rx_count != want.rx_count {
        Some(format!(
            "rx_count RTL {}, engine {}",
            got.rx_count, want.rx_count
        ))
    } else if got.ce_count != want.ce_count {
        Some(format!(
            "ce_count RTL {}, engine {}",
            got.ce_count, want.ce_count
        ))
    } else {
        None
    }
}

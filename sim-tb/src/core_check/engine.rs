//! The engine side of the receive bench: one `metaroce_firmware::Nic` per
//! connected QP, the datagrams' verdicts and DMA writes, and the ACKs it
//! sends.

use std::net::IpAddr;

use metaroce_firmware::{
    Access, Drops, Memory, MemoryRegion, Nic, NicConfig, QpConfig, QpState, QpTransition, RecvWr,
    RemoteEnd, RxMeta, SendOp, SendWr, Sge, Stats, Transmit, VecMemory,
};
use metaroce_proto::{Opcode, Packet, Repr};

use super::metaroce_hdl_codes::*;
use super::{Family, INITIAL_PSN, LINE_RATE_MBPS, MEM_BASE, MEM_LEN, MTU, PEERS};
use crate::frame::ip_of;
use crate::rx_core::DmaWrite;
use crate::rx_parser::Frame;

/// The READs connection `c` has outstanding (see [`Read`]): 8 KiB into
/// the writable region on stream 0 (connection 0: an 8-byte fetch-and-add
/// instead, its value into the writable region), 6,000 bytes into the late
/// region `mrs[3]` on stream 3 (deregistered near the end of a run, so that
/// a response after that fails its lkey check).
fn reads(mrs: &[MemoryRegion; 4], c: usize) -> [Read; READS] {
    let read = |stream, mr: &MemoryRegion, at: u64, len, atomic| Read {
        stream,
        msn: 0,
        sge: Sge {
            addr: mr.addr + at,
            len,
            lkey: mr.lkey,
        },
        atomic,
    };
    let first = if c == 0 {
        read(0, &mrs[0], 40 << 10, ATOMIC_LEN, true)
    } else {
        read(0, &mrs[0], 40 << 10, 8192, false)
    };
    [first, read(3, &mrs[3], 0, 6000, false)]
}

/// Bytes of an atomic's value (spec §3.4).
pub(super) const ATOMIC_LEN: u32 = 8;

/// Memory that records every write the engine makes.
pub(super) struct Recorder {
    pub(super) mem: VecMemory,
    pub(super) writes: Vec<DmaWrite>,
}

impl Memory for Recorder {
    fn write(&mut self, addr: u64, data: &[u8]) {
        self.mem.write(addr, data);
        self.writes.push(DmaWrite {
            addr,
            data: data.to_vec(),
        });
    }

    fn read(&mut self, addr: u64, out: &mut [u8]) {
        self.mem.read(addr, out);
    }
}

/// A connected QP and its peer.
#[derive(Clone, Copy)]
pub(super) struct Conn {
    pub(super) qpn: u32,
    pub(super) peer_qpn: u32,
    pub(super) peer: IpAddr,
    pub(super) peer_port: u16,
}

/// An outstanding READ (or atomic) of each connection: the engine numbers
/// it MSN 0 of its stream (the first message posted on that stream).
#[derive(Clone, Copy)]
pub(super) struct Read {
    pub(super) stream: u16,
    pub(super) msn: u32,
    pub(super) sge: Sge,
    /// A fetch-and-add, answered by an ATOMIC_RESP of 8 bytes.
    pub(super) atomic: bool,
}

/// Something the firmware does between two datagrams, in the engine (and,
/// through the table port, in the RTL).
#[derive(Clone, Copy, Debug)]
pub(super) enum Action {
    /// Posts connection `c`'s next receive on stream `s`.
    Post(usize, usize),
    /// Deregisters the late receive region (`mrs[3]`) in every NIC.
    Deregister,
}

/// The engine side: one NIC per connected QP (same regions, same keys),
/// the last one also holding an idle QP. The connected QPs are RTS with two
/// READs outstanding (never acknowledged, so they stay outstanding) and
/// [`RQ_SLOTS`] receives posted on each stream with a ring in the RTL.
pub(super) struct Engine {
    pub(super) nics: Vec<Nic>,
    pub(super) mem: Recorder,
    pub(super) local: IpAddr,
    pub(super) conns: Vec<Conn>,
    pub(super) idle_qpn: u32,
    /// The writable region, one without REMOTE_WRITE, one of another PD,
    /// and a receive region (LOCAL_WRITE) a mixed run deregisters late.
    pub(super) mrs: [MemoryRegion; 4],
    /// Each connection's outstanding READs (and atomic).
    pub(super) reads: Vec<[Read; READS]>,
    /// Receives posted per connection and stream (the next one's `recv_idx`).
    pub(super) posted: Vec<[u32; RQ_STREAMS]>,
    /// `mrs[3]` is still registered.
    pub(super) late_region: bool,
}

/// Timers never fire: the bench never calls `handle_timeout`, and the
/// READ requests the engines send are never acknowledged.
const NEVER: u64 = 1 << 40;

/// The engines' configuration: the RTL's MTU and receive window, the
/// ACKs' line rate, no fair-share window, timers that never fire, and no
/// PARITY (the RTL's ACKs never carry PARITY_OK, spec §3.12).
fn nic_config(local: IpAddr) -> NicConfig {
    NicConfig {
        local_ip: local,
        mtu: MTU,
        line_rate_mbps: LINE_RATE_MBPS,
        fair_share_window_ns: 0,
        qp: QpConfig {
            recv_window: CONN_WINDOW,
            rto_min_ns: NEVER,
            rto_initial_ns: NEVER,
            parity_group: 0,
            ..QpConfig::default()
        },
        ..NicConfig::default()
    }
}

/// Takes the QP `c.qpn` of `nic` through INIT and RTR (to `c`'s peer) to RTS.
fn connect(nic: &mut Nic, c: &Conn) {
    nic.modify_qp(c.qpn, QpTransition::Init).expect("INIT");
    nic.modify_qp(
        c.qpn,
        QpTransition::Rtr(RemoteEnd {
            qpn: c.peer_qpn,
            ip: c.peer,
            udp_port: c.peer_port,
            initial_psn: INITIAL_PSN,
        }),
    )
    .expect("RTR");
    nic.modify_qp(
        c.qpn,
        QpTransition::Rts {
            initial_psn: 0,
            retry_cnt: 7,
            rnr_retry: 7,
            timeout_ns: NEVER,
        },
    )
    .expect("RTS");
}

/// Posts connection `c`'s READs and atomic ([`reads`]) on its QP `qpn`.
fn post_reads(nic: &mut Nic, qpn: u32, regions: &[MemoryRegion; 4], c: usize) {
    for r in reads(regions, c) {
        let op = if r.atomic {
            SendOp::FetchAdd {
                remote_va: 0x1000,
                rkey: 1,
                add: 1,
            }
        } else {
            SendOp::Read {
                remote_va: 0x1000,
                rkey: 1,
            }
        };
        let wr = SendWr {
            wr_id: 0,
            op,
            sgl: r.sge.into(),
            signaled: true,
            solicited: false,
            stream: r.stream,
        };
        nic.post_send(qpn, wr).expect("post READ or atomic");
    }
}

impl Engine {
    /// One NIC per peer, addressed as `family` says, set up as the struct
    /// docs say, with [`RQ_SLOTS`] receives posted on each ring stream.
    pub(super) fn new(family: Family) -> Self {
        let local = family.local();
        let cfg = nic_config(local);
        let rw = Access::LOCAL_WRITE | Access::REMOTE_WRITE;
        // The writable region takes atomics too.
        let rwa = rw | Access::REMOTE_ATOMIC;
        let (mut nics, mut conns, mut mrs, mut idle_qpn) = (Vec::new(), Vec::new(), None, 0);
        for (i, &(peer_qpn, peer_port)) in PEERS.iter().enumerate() {
            let mut nic = Nic::new(cfg.clone());
            let pd = nic.alloc_pd();
            let other_pd = nic.alloc_pd();
            let regions = [
                nic.register_mr(pd, MEM_BASE, 64 << 10, rwa),
                nic.register_mr(pd, MEM_BASE + (64 << 10), 32 << 10, Access::LOCAL_WRITE),
                nic.register_mr(other_pd, MEM_BASE + (96 << 10), 32 << 10, rw),
                nic.register_mr(pd, MEM_BASE + (80 << 10), 16 << 10, Access::LOCAL_WRITE),
            ]
            .map(|r| r.expect("register MR"));
            assert!(mrs.is_none_or(|m| m == regions), "same keys in every NIC");
            mrs = Some(regions);
            // QPNs count up per NIC: skip those of the other NICs' QPs.
            for _ in 0..i {
                nic.create_qp(pd, None).expect("create QP");
            }
            let conn = Conn {
                qpn: nic.create_qp(pd, None).expect("create QP"),
                peer_qpn,
                peer: family.peer(i),
                peer_port,
            };
            connect(&mut nic, &conn);
            post_reads(&mut nic, conn.qpn, &regions, i);
            if i == PEERS.len() - 1 {
                idle_qpn = nic.create_qp(pd, None).expect("create QP");
                nic.modify_qp(idle_qpn, QpTransition::Init).expect("INIT");
            }
            nics.push(nic);
            conns.push(conn);
        }
        let mrs = mrs.expect("a NIC");
        let mut e = Engine {
            nics,
            mem: Recorder {
                mem: VecMemory::new(MEM_BASE, MEM_LEN),
                writes: Vec::new(),
            },
            local,
            conns,
            idle_qpn,
            mrs,
            reads: (0..PEERS.len()).map(|c| reads(&mrs, c)).collect(),
            posted: vec![[0; RQ_STREAMS]; PEERS.len()],
            late_region: true,
        };
        for c in 0..PEERS.len() {
            for s in 0..RQ_STREAMS {
                for _ in 0..RQ_SLOTS {
                    e.apply(Action::Post(c, s));
                }
            }
        }
        e
    }

    /// The receive `recv_idx` of `stream` of every connection: 1,024 to
    /// 4,096 bytes, every fourth in the late region `mrs[3]` while it is
    /// registered, the others in `mrs[1]` (where depends on the stream too).
    pub(super) fn recv_sge(&self, stream: usize, idx: u32) -> Sge {
        let (mr, at) = if idx % 4 == 3 && self.late_region {
            (&self.mrs[3], (idx / 4 + stream as u32) % 4)
        } else {
            (&self.mrs[1], (idx + stream as u32) % 4)
        };
        Sge {
            addr: mr.addr + u64::from(at) * 4096,
            len: 1024 + (idx ^ (stream as u32) << 7).wrapping_mul(0x9E37_79B9) % 3073,
            lkey: mr.lkey,
        }
    }

    /// Does `a` in every engine.
    pub(super) fn apply(&mut self, a: Action) {
        match a {
            Action::Post(c, s) => {
                let idx = self.posted[c][s];
                let wr = RecvWr {
                    wr_id: idx.into(),
                    sgl: self.recv_sge(s, idx).into(),
                    stream: s as u16,
                };
                self.nics[c]
                    .post_recv(self.conns[c].qpn, wr)
                    .expect("post a receive");
                self.posted[c][s] += 1;
            }
            Action::Deregister => {
                for nic in &mut self.nics {
                    nic.deregister_mr(self.mrs[3].lkey);
                }
                self.late_region = false;
            }
        }
    }

    /// The NIC holding the QP `qpn` (unknown QPNs: the first).
    fn nic_of(&self, qpn: u32) -> usize {
        if qpn == self.idle_qpn {
            return self.nics.len() - 1;
        }
        self.conns.iter().position(|c| c.qpn == qpn).unwrap_or(0)
    }

    /// Hands `frame` (CE-marked if `ce`) to the engine at time `now`;
    /// returns its verdict code and the write it made, if any.
    pub(super) fn handle(
        &mut self,
        frame: &Frame,
        ce: bool,
        now: u64,
    ) -> (Option<u8>, Option<DmaWrite>) {
        let dst_qpn = frame
            .bytes
            .get(4..8)
            .map_or(0, |b| u32::from_be_bytes(b.try_into().expect("4 bytes")));
        let n = self.nic_of(dst_qpn);
        let nic = &mut self.nics[n];
        let before_drops = *nic.drops();
        let before = *nic.stats();
        let meta = RxMeta {
            src_ip: ip_of(&frame.pseudo.src_ip),
            src_port: frame.pseudo.src_port,
            dst_ip: ip_of(&frame.pseudo.dst_ip),
            dst_port: frame.pseudo.dst_port,
            ecn_ce: ce,
        };
        let writes = self.mem.writes.len();
        let live = nic.qp_state(dst_qpn) != Some(QpState::Error);
        nic.handle_datagram(now, &frame.bytes, meta, &mut self.mem);
        let after = nic.stats();
        let failed = live && nic.qp_state(dst_qpn) == Some(QpState::Error);
        let op = opcode_of(&frame.bytes);
        let code = if let Some(name) = changed(&before_drops, nic.drops()) {
            // The engine counts a SEND's lkey failure as `remote_access`
            // too, and a READ response that fails its READ (and the QP)
            // as `unexpected_response`; the RTL's verdicts tell them apart.
            match verdict_of_drop(name) {
                Some(V_REMOTE_ACCESS) if matches!(op, Some(Opcode::Send | Opcode::SendImm)) => {
                    Some(V_REMOTE_OPERATIONAL)
                }
                Some(V_UNEXPECTED_RESPONSE) if failed => Some(V_BAD_RESPONSE),
                v => v,
            }
        } else if after.duplicates > before.duplicates {
            Some(V_DUPLICATE)
        } else if after.data_accepted > before.data_accepted {
            // The RTL accepts READ requests and atomics and hands them up:
            // the firmware executes a request and places an atomic's value.
            match op {
                Some(o) if o.is_request() || o == Opcode::AtomicResp => Some(V_FIRMWARE),
                _ => Some(V_PLACED),
            }
        } else if op == Some(Opcode::Probe) {
            // A PROBE changes no counter; its ACK is compared below.
            Some(V_PROBE)
        } else {
            None
        };
        // The RTL's write is the placement of a payload; other writes the
        // engine made (an atomic that executed as its stream's head moved
        // on, an atomic's value) are the firmware's. The placement comes
        // first.
        let write = (code == Some(V_PLACED) && frame.bytes.len() > EMPTY_MSG_LEN)
            .then(|| self.mem.writes.get(writes).cloned())
            .flatten();
        (code, write)
    }

    /// The next ACK of connection `conn`'s NIC at time `now` (NACKs, the
    /// firmware's, are skipped): where it goes and its bytes.
    pub(super) fn next_ack(&mut self, conn: usize, now: u64) -> Option<(Transmit, Vec<u8>)> {
        let mut buf = vec![0u8; MTU as usize + 128];
        loop {
            let t = self.nics[conn].poll_transmit(now, &mut buf, &mut self.mem)?;
            let bytes = buf[..t.len].to_vec();
            if opcode_of(&bytes) == Some(Opcode::Ack) {
                return Some((t, bytes));
            }
        }
    }

    /// Every NIC's drop counters and transport counters, summed.
    pub(super) fn totals(&self) -> (Vec<(&'static str, u64)>, Stats) {
        let mut drops: Vec<_> = Drops::default().iter().collect();
        let mut stats = Stats::default();
        for nic in &self.nics {
            for (slot, (_, n)) in drops.iter_mut().zip(nic.drops().iter()) {
                slot.1 += n;
            }
            stats.duplicates += nic.stats().duplicates;
            stats.data_accepted += nic.stats().data_accepted;
        }
        (drops, stats)
    }
}

/// Bytes of a message datagram without payload (base, MSG extension, ICRC).
const EMPTY_MSG_LEN: usize = 68;

pub(super) fn opcode_of(datagram: &[u8]) -> Option<Opcode> {
    let p = Packet::new_checked(datagram).ok()?;
    Repr::parse(&p).ok().map(|r| r.opcode)
}

pub(super) fn stream_of(datagram: &[u8]) -> Option<u16> {
    let p = Packet::new_checked(datagram).ok()?;
    Repr::parse(&p).ok().map(|r| r.stream)
}

/// The drop counter that moved.
fn changed(before: &Drops, after: &Drops) -> Option<&'static str> {
    before
        .iter()
        .zip(after.iter())
        .find(|((_, a), (_, b))| a != b)
        .map(|((name, _), _)| name)
}

/// The RTL verdict for an engine drop counter; `None` for counters the RTL
/// has no verdict for.
pub(super) fn verdict_of_drop(name: &str) -> Option<u8> {
    Some(match name {
        "truncated" => V_TRUNCATED,
        "bad_version" => V_BAD_VERSION,
        "bad_opcode" => V_BAD_OPCODE,
        "bad_format" => V_UNEXPECTED_PAYLOAD,
        "bad_icrc" => V_BAD_ICRC,
        "unknown_qp" => V_UNKNOWN_QP,
        "qp_state" => V_QP_STATE,
        "wrong_peer" => V_WRONG_PEER,
        "bad_path" => V_BAD_PATH,
        "path_window" => V_PATH_WINDOW,
        "bad_stream" => V_BAD_STREAM,
        "conn_window" => V_CONN_WINDOW,
        "bad_length" => V_BAD_LENGTH,
        "remote_access" => V_REMOTE_ACCESS,
        "receiver_not_ready" => V_RNR,
        "invalid_request" => V_INVALID_REQUEST,
        "unexpected_response" => V_UNEXPECTED_RESPONSE,
        "msn_window" => V_MSN_WINDOW,
        _ => return None,
    })
}

//! The valid traffic of the receive bench: WRITEs, PROBEs, SENDs,
//! WRITE_IMMs, READ responses and atomics from the connections' peers, with
//! their sequence numbers, reordered, re-sent and mixed with the hostile
//! variants of [`super::mutate`].

use std::net::IpAddr;

use metaroce_firmware::{MAX_PATHS, MemoryRegion};
use metaroce_proto::{Ext, Flags, MsgRepr, Opcode, Packet, PseudoHeader, Repr};
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

use super::engine::{ATOMIC_LEN, Conn, Engine, Read};
use super::metaroce_hdl_codes::*;
use super::mutate::hostile;
use super::{INITIAL_PSN, MTU, PORT, STREAMS};
use crate::rx_parser::Frame;

/// One step of a sender: a valid WRITE or PROBE.
#[derive(Clone, Copy)]
pub(super) struct Write {
    pub(super) repr: Repr,
    pub(super) len: usize,
    pub(super) seed: u64,
    pub(super) src: IpAddr,
    pub(super) src_port: u16,
}

/// A sender's sequence numbers.
pub(super) struct ConnTraffic {
    pub(super) next_psn: u32,
    pub(super) msn: [u32; STREAMS],
    pub(super) path_psn: [u32; MAX_PATHS as usize],
    /// `recv_idx` of the next SEND or WRITE_IMM message, per stream.
    pub(super) next_recv: [u32; RQ_STREAMS],
}

/// The random datagrams of a core check: one sender state per connection.
pub(super) struct DatagramSource {
    pub(super) rng: SmallRng,
    pub(super) conns: Vec<ConnTraffic>,
}

impl DatagramSource {
    /// A path (half of the time one of 0–3, so arrivals on one path come
    /// close together) and its next path PSN; now and then the sender's
    /// path PSN moves far ahead (257–2000, or 2^20–2^30).
    fn path(&mut self, c: usize) -> (u16, u32) {
        let path = if self.rng.gen_bool(0.5) {
            self.rng.gen_range(0..4)
        } else {
            self.rng.gen_range(0..MAX_PATHS)
        };
        let psn = &mut self.conns[c].path_psn[usize::from(path)];
        match self.rng.gen_range(0..1000) {
            0..=9 => *psn = psn.wrapping_add(self.rng.gen_range(257..2000)),
            10..=11 => *psn = psn.wrapping_add(self.rng.gen_range(1 << 20..1 << 30)),
            _ => {}
        }
        let out = *psn;
        *psn = psn.wrapping_add(1);
        (path, out)
    }

    fn base(&mut self, conn: &Conn, opcode: Opcode, path: u16, path_psn: u32) -> Write {
        Write {
            repr: Repr {
                opcode,
                flags: Flags::ACK_REQ,
                dst_qpn: conn.qpn,
                src_qpn: conn.peer_qpn,
                stream: 0,
                path,
                conn_psn: 0,
                path_psn,
                timestamp: self.rng.r#gen(),
                ext: Ext::None,
            },
            len: 0,
            seed: self.rng.r#gen(),
            src: conn.peer,
            src_port: self.rng.gen_range(metaroce_proto::ENTROPY_PORTS),
        }
    }

    /// A PROBE with the next path PSN and, as its evidence (spec §3.7), the
    /// connection's next conn PSN.
    fn probe(&mut self, c: usize, conn: &Conn) -> Write {
        let (path, psn) = self.path(c);
        let mut w = self.base(conn, Opcode::Probe, path, psn);
        w.repr.conn_psn = self.conns[c].next_psn;
        w
    }

    /// A message packet of `len` bytes on `stream` with the next connection PSN.
    pub(super) fn msg(
        &mut self,
        c: usize,
        conn: &Conn,
        opcode: Opcode,
        stream: u16,
        m: MsgRepr,
        len: usize,
    ) -> Write {
        let (path, psn) = self.path(c);
        let mut w = self.base(conn, opcode, path, psn);
        let t = &mut self.conns[c];
        w.repr.flags.set(Flags::FIRST, m.offset == 0);
        w.repr
            .flags
            .set(Flags::LAST, m.offset as usize + len == m.msg_len as usize);
        w.repr.stream = stream;
        w.repr.conn_psn = t.next_psn;
        t.next_psn = t.next_psn.wrapping_add(1);
        w.repr.ext = Ext::Msg(m);
        w.len = len;
        w
    }

    /// A SEND, SEND_IMM or WRITE_IMM message for the next receive of a
    /// stream with a ring (0..`RQ_STREAMS`), in one or two packets: a SEND
    /// no longer than the receive (sometimes exactly as long, sometimes
    /// empty), a WRITE_IMM of up to 4,096 bytes into the writable region.
    fn send(&mut self, c: usize, conn: &Conn, e: &Engine) -> Vec<Write> {
        let stream = self.rng.gen_range(0..RQ_STREAMS);
        let opcode = *[Opcode::Send, Opcode::SendImm, Opcode::WriteImm]
            .choose(&mut self.rng)
            .expect("opcodes");
        let t = &mut self.conns[c];
        let recv_idx = t.next_recv[stream];
        t.next_recv[stream] += 1;
        let msn = t.msn[stream];
        t.msn[stream] += 1;
        let cap = match opcode {
            Opcode::WriteImm => MTU,
            _ => e.recv_sge(stream, recv_idx).len,
        };
        let msg_len = match self.rng.gen_range(0..10) {
            0 => 0,
            1 => cap,
            _ => self.rng.gen_range(1..=cap),
        };
        let split = if msg_len >= 2 && self.rng.gen_bool(0.3) {
            self.rng.gen_range(1..msg_len)
        } else {
            msg_len
        };
        let (remote_va, rkey) = match opcode {
            Opcode::WriteImm => {
                let mr = &e.mrs[0];
                (
                    mr.addr + self.rng.gen_range(0..=mr.len - u64::from(msg_len)),
                    mr.rkey,
                )
            }
            _ => (0, 0),
        };
        let m = MsgRepr {
            msn,
            recv_idx,
            msg_len,
            offset: 0,
            remote_va,
            rkey,
            imm: self.rng.r#gen(),
        };
        let s = stream as u16;
        let mut out = vec![self.msg(c, conn, opcode, s, m, split as usize)];
        if split < msg_len {
            // A WRITE's packet carries its own address (`remote_va` + offset).
            let va = match opcode {
                Opcode::WriteImm => remote_va + u64::from(split),
                _ => 0,
            };
            let m = MsgRepr {
                offset: split,
                remote_va: va,
                ..m
            };
            out.push(self.msg(c, conn, opcode, s, m, (msg_len - split) as usize));
        }
        out
    }

    /// A READ response for the READ `r`: a random piece of it (up to an
    /// MTU; at least a byte if `bytes`), or, with `msg_len`, a response of
    /// another length. For an atomic `r`, its ATOMIC_RESP (8 bytes).
    fn read_resp(
        &mut self,
        c: usize,
        conn: &Conn,
        r: &Read,
        msg_len: Option<u32>,
        bytes: bool,
    ) -> Write {
        if r.atomic {
            let m = MsgRepr {
                msn: r.msn,
                recv_idx: 0,
                msg_len: ATOMIC_LEN,
                offset: 0,
                remote_va: 0,
                rkey: 0,
                imm: 0,
            };
            return self.msg(
                c,
                conn,
                Opcode::AtomicResp,
                r.stream,
                m,
                ATOMIC_LEN as usize,
            );
        }
        let off = self.rng.gen_range(0..r.sge.len);
        let len = self
            .rng
            .gen_range(u32::from(bytes)..=(r.sge.len - off).min(MTU));
        let m = MsgRepr {
            msn: r.msn,
            recv_idx: 0,
            msg_len: msg_len.unwrap_or(r.sge.len),
            offset: off,
            remote_va: 0,
            rkey: 0,
            imm: 0,
        };
        self.msg(c, conn, Opcode::ReadResp, r.stream, m, len as usize)
    }

    /// A FETCH_ADD or COMPARE_SWAP on an 8-byte word of `mr` (its
    /// operands random), on a random stream with its next MSN.
    fn atomic(&mut self, c: usize, conn: &Conn, mr: &MemoryRegion) -> Write {
        let op = *[Opcode::FetchAdd, Opcode::CompareSwap]
            .choose(&mut self.rng)
            .expect("opcodes");
        let stream = self.rng.gen_range(0..STREAMS);
        let word = self.rng.gen_range(0..mr.len / u64::from(ATOMIC_LEN));
        let t = &mut self.conns[c];
        let m = MsgRepr {
            msn: t.msn[stream],
            recv_idx: 0,
            msg_len: ATOMIC_LEN,
            offset: 0,
            remote_va: mr.addr + word * u64::from(ATOMIC_LEN),
            rkey: mr.rkey,
            imm: 0,
        };
        t.msn[stream] += 1;
        self.msg(c, conn, op, stream as u16, m, op.operand_len())
    }

    fn write(&mut self, c: usize, conn: &Conn, mr: &MemoryRegion) -> Write {
        let len = match self.rng.gen_range(0..100) {
            0..=4 => 0,
            5..=14 => self.rng.gen_range(257..=MTU as usize),
            _ => self.rng.gen_range(1..=256),
        };
        let stream = self.rng.gen_range(0..STREAMS);
        let off = self.rng.gen_range(0..=mr.len - len as u64);
        let (path, psn) = self.path(c);
        let mut w = self.base(conn, Opcode::Write, path, psn);
        let t = &mut self.conns[c];
        w.repr.flags = Flags::FIRST | Flags::LAST;
        w.repr.stream = stream as u16;
        w.repr.conn_psn = t.next_psn;
        w.repr.ext = Ext::Msg(MsgRepr {
            msn: t.msn[stream],
            recv_idx: 0,
            msg_len: len as u32,
            offset: 0,
            remote_va: mr.addr + off,
            rkey: mr.rkey,
            imm: 0,
        });
        w.len = len;
        t.next_psn = t.next_psn.wrapping_add(1);
        t.msn[stream] += 1;
        w
    }
}

pub(super) fn seal(w: &Write, src: IpAddr, dst: IpAddr) -> Frame {
    let pseudo = PseudoHeader::new(src, w.src_port, dst, PORT);
    let mut bytes = vec![0u8; w.repr.buffer_len(w.len)];
    w.repr.emit(&mut bytes, w.len).expect("emit");
    let hdr = w.repr.header_len();
    SmallRng::seed_from_u64(w.seed).fill(&mut bytes[hdr..hdr + w.len]);
    Packet::new_unchecked(&mut bytes[..]).fill_icrc(&pseudo);
    Frame { bytes, pseudo }
}

/// Where the mixed traffic's destructive events go: (the READ response
/// that fails connection 1's READ and QP, the deregistration of the late
/// receive region), both near the end (900 and 500 datagrams before it, at
/// most a third of the run) because each ends a connection's useful
/// traffic: a failed QP drops everything, and a SEND refused for the lkey
/// leaves a hole in its connection's PSNs (the bench's sender does not
/// retransmit), so 256 PSNs later the rest is `conn_window`.
pub(super) fn tail(packets: usize) -> (usize, usize) {
    let t = (packets / 3).min(900);
    (packets - t, packets - t * 5 / 9)
}

/// The datagram sequence and each datagram's CE mark: every valid WRITE or
/// PROBE (10 %) at least once, to a random connection, reordered within
/// windows of 16, 5 % re-sent later, `hostile_share` hostile variants of
/// messages, 20 % CE-marked. With `mixed`, 25 % of the steps are SEND,
/// SEND_IMM or WRITE_IMM messages (streams with a ring) and 20 % READ
/// responses instead of WRITEs, and
/// near the end (see [`tail`]) one READ response of the wrong length (for
/// no READ: dropped untracked), and after the late region's deregistration
/// one response to connection 1's READ into it, whose lkey check fails its
/// READ and QP (no other response to that READ goes near or after that
/// point).
pub(super) fn traffic(
    e: &Engine,
    packets: usize,
    seed: u64,
    hostile_share: f64,
    mixed: bool,
) -> (Vec<Frame>, Vec<bool>) {
    let mut t = DatagramSource {
        rng: SmallRng::seed_from_u64(seed),
        conns: (0..e.conns.len())
            .map(|_| ConnTraffic {
                next_psn: INITIAL_PSN,
                msn: [0; STREAMS],
                path_psn: [0; MAX_PATHS as usize],
                next_recv: [0; RQ_STREAMS],
            })
            .collect(),
    };
    let (misfit_at, dereg_at) = tail(packets);
    let mut misfit = !mixed;
    let mut fatal = !mixed;
    let mut out = Vec::with_capacity(packets);
    let mut sent: Vec<Write> = Vec::new();
    while out.len() < packets {
        let mut window: Vec<Frame> = Vec::new();
        for _ in 0..16 {
            let c = t.rng.gen_range(0..e.conns.len());
            let conn = &e.conns[c];
            let ws = match t.rng.gen_range(0..100) {
                0..10 => vec![t.probe(c, conn)],
                55..80 if mixed => t.send(c, conn, e),
                80.. if mixed => {
                    // Responses into the late region stop well before it goes.
                    let late = out.len() + 64 >= dereg_at;
                    let r = e.reads[c][if late { 0 } else { t.rng.gen_range(0..READS) }];
                    vec![t.read_resp(c, conn, &r, None, false)]
                }
                45..55 if mixed => vec![t.atomic(c, conn, &e.mrs[0])],
                _ => vec![t.write(c, conn, &e.mrs[0])],
            };
            for w in ws {
                window.push(seal(&w, w.src, e.local));
                if w.repr.opcode != Opcode::Probe && t.rng.gen_bool(hostile_share) {
                    let h = hostile(&mut t.rng, &w, e);
                    window.push(h);
                }
                if t.rng.gen_bool(0.05) && !sent.is_empty() {
                    let old = sent[t.rng.gen_range(sent.len().saturating_sub(64)..sent.len())];
                    window.push(seal(&old, old.src, e.local));
                }
                sent.push(w);
            }
        }
        if !misfit && out.len() >= misfit_at {
            misfit = true;
            let r = e.reads[1][0];
            let w = t.read_resp(1, &e.conns[1], &r, Some(r.sge.len + 512), false);
            window.push(seal(&w, w.src, e.local));
        }
        if !fatal && out.len() >= dereg_at + 16 {
            fatal = true;
            let r = e.reads[1][1];
            let w = t.read_resp(1, &e.conns[1], &r, None, true);
            window.push(seal(&w, w.src, e.local));
        }
        window.shuffle(&mut t.rng);
        out.extend(window);
    }
    out.truncate(packets);
    let ce = (0..out.len()).map(|_| t.rng.gen_bool(0.2)).collect();
    (out, ce)
}

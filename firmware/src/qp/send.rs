//! A QP's transmissions: NACKs, ACKs, probes, DISCONNECT and data
//! packets, sealed as datagrams or described for the RTL.

use metaroce_proto::{
    BASE_LEN, Ext, Flags, ICRC_LEN, MsgRepr, MultiAckRepr, Opcode, Packet, PseudoHeader, Repr,
};

use crate::Transmit;
use crate::ctx::Ctx;
use crate::datapath::{Datapath, HwTransmit, TxDescriptor};
use crate::memory::Memory;
use crate::mr::Access;
use crate::ports::PortsReady;
use crate::tx::DataPlan;
use crate::verbs::{QpState, RemoteEnd, SgList, WcStatus};

use super::Qp;

impl Qp {
    /// Next packet this QP wants to send: written into `buf`, or on the
    /// hardware data path a descriptor for data and PROBEs (and no ACKs:
    /// the RTL generates them). Data goes only on paths whose port `ports`
    /// says is ready.
    pub fn poll_transmit<M: Memory>(
        &mut self,
        ctx: &mut Ctx<'_, M>,
        local: &PseudoLocal<'_>,
        rate_hint: u32,
        buf: &mut [u8],
        datapath: Datapath,
        ports: PortsReady,
    ) -> Option<HwTransmit> {
        let remote = self.remote?;
        let now = ctx.now;
        let qpn = self.qpn;
        let base = |opcode, path, src_port: u16| {
            let repr = Repr {
                opcode,
                flags: Flags::empty(),
                dst_qpn: remote.qpn,
                src_qpn: qpn,
                stream: 0,
                path,
                conn_psn: 0,
                path_psn: 0,
                timestamp: now,
                ext: Ext::None,
            };
            (repr, src_port)
        };
        if self.disconnect_pending {
            self.disconnect_pending = false;
            let (mut r, port) = base(Opcode::Disconnect, 0, self.tx.paths[0].entropy());
            // The connection's current PSNs (spec §9.4): our next send PSN
            // and the peer's PSNs we have accepted up to.
            r.conn_psn = self.tx.next_psn();
            r.ext = Ext::Cm(metaroce_proto::CmRepr {
                initial_psn: self.rx.conn.cum(),
                ..Default::default()
            });
            return seal(&r, 0, port, local, &remote, buf, |_| true).map(HwTransmit::Datagram);
        }
        if self.state == QpState::Error || self.state == QpState::Reset {
            return None;
        }
        if let Some((nack, stream, port)) = self.nacks.pop_front() {
            let (mut r, port) = base(Opcode::Nack, 0, port);
            r.stream = stream;
            r.ext = Ext::Nack(nack);
            ctx.stats.nacks_sent += 1;
            return seal(&r, 0, port, local, &remote, buf, |_| true).map(HwTransmit::Datagram);
        }
        if datapath == Datapath::Hardware {
            // The RTL tracks the paths and sends the ACKs itself.
            while self
                .rx
                .poll_ack(rate_hint, self.cfg().recv_window)
                .is_some()
            {}
        } else if self.cfg().multi_ack && self.rx.peer_multi_ack {
            // As long as the longest data packet, and room for one entry.
            let max_len = (local.cfg.mtu as usize + DATA_OVERHEAD).max(MULTI_ACK_ROOM);
            let len = max_len.min(buf.len());
            if let Some(t) = self.multi_ack(now, local, &remote, rate_hint, &mut buf[..len], ports)
            {
                ctx.stats.acks_sent += 1;
                return Some(HwTransmit::Datagram(t));
            }
        } else if let Some((path, port, ece, ack)) =
            self.rx.poll_ack(rate_hint, self.cfg().recv_window)
        {
            let (mut r, port) = base(Opcode::Ack, path, port);
            r.flags = self.ack_flags();
            if ece {
                r.flags |= Flags::ECE;
            }
            r.ext = Ext::Ack(ack);
            ctx.stats.acks_sent += 1;
            return seal(&r, 0, port, local, &remote, buf, |_| true).map(HwTransmit::Datagram);
        }
        if self.closed || !self.sends() {
            return None;
        }
        if let Some(probe) = self.tx.poll_probe(now) {
            let (mut r, port) = base(Opcode::Probe, probe.path, probe.entropy);
            r.path_psn = probe.path_psn;
            // The connection's current PSN, the receiver's evidence (§3.7).
            r.conn_psn = self.tx.next_psn();
            r.flags = Flags::ACK_REQ | self.advertised(datapath);
            ctx.stats.probes_sent += 1;
            return Some(match datapath {
                Datapath::Hardware => HwTransmit::Descriptor(describe(&r, 0, 0, port, &remote)),
                Datapath::Software => {
                    HwTransmit::Datagram(seal(&r, 0, port, local, &remote, buf, |_| true)?)
                }
            });
        }
        let line_rate_mbps = local.cfg.line_rate_mbps;
        let plan = self.tx.poll_data(now, ctx.stats, ports, line_rate_mbps)?;
        let out = if plan.parity > 0 {
            self.parity_packet(ctx, &plan, &remote, local, buf)
        } else {
            self.data_packet(ctx, &plan, &remote, local, buf, datapath)
        };
        if out.is_none() {
            self.tx.fatal = Some(WcStatus::LocProtErr);
            self.after_tx_event(ctx);
        }
        out
    }

    /// The capability flags this QP's ACKs and MULTI_ACKs carry: PARITY_OK
    /// when it rebuilds from PARITY packets (only on the software data
    /// path: on the hardware data path the RTL sends the ACKs).
    fn ack_flags(&self) -> Flags {
        if self.cfg().parity_group > 0 {
            Flags::PARITY_OK
        } else {
            Flags::empty()
        }
    }

    /// The capability flags this QP's data packets and PROBEs carry:
    /// MULTI_ACK_OK when it accepts MULTI_ACKs, never on the hardware data
    /// path (its RTL parses only single-path ACKs).
    fn advertised(&self, datapath: Datapath) -> Flags {
        if self.cfg().multi_ack && datapath == Datapath::Software {
            Flags::MULTI_ACK_OK
        } else {
            Flags::empty()
        }
    }

    /// One MULTI_ACK (spec §3.11) acknowledging the pending paths whose
    /// reply ports leave from one NIC port, in the order they were
    /// scheduled, as many as fit in `buf` (the largest datagram); `None`
    /// when no path has an ACK pending. The NIC port is that of the first
    /// pending path whose port `ports` says is ready, else of the first
    /// pending path: each ACK keeps the port (and so the plane) a
    /// single-path ACK would have taken, and is not queued behind a busy
    /// port while another idles.
    fn multi_ack(
        &mut self,
        now: u64,
        local: &PseudoLocal<'_>,
        remote: &RemoteEnd,
        rate_hint: u32,
        buf: &mut [u8],
        ports: PortsReady,
    ) -> Option<Transmit> {
        let start = BASE_LEN + Opcode::MultiAck.ext_len();
        let end = buf.len().checked_sub(ICRC_LEN)?;
        let port = self.rx.ack_port(|p| ports.takes(p))?;
        let same_port = |p: u16| p % u16::from(ports.count()) == port % u16::from(ports.count());
        let mut at = start;
        let mut count = 0u8;
        while let Some((entry, _)) = self.rx.poll_ack_entry(end.saturating_sub(at), same_port) {
            at += entry.emit(&mut buf[at..end]).ok()?;
            count += 1;
        }
        let repr = Repr {
            opcode: Opcode::MultiAck,
            flags: self.ack_flags(),
            dst_qpn: remote.qpn,
            src_qpn: self.qpn,
            stream: 0,
            path: 0,
            conn_psn: 0,
            path_psn: 0,
            timestamp: now,
            ext: Ext::MultiAck(MultiAckRepr {
                conn_cum: self.rx.conn.cum(),
                credit: self.cfg().recv_window,
                rate_hint,
                count,
            }),
        };
        seal(&repr, at - start, port, local, remote, buf, |_| true)
    }

    fn data_packet<M: Memory>(
        &self,
        ctx: &mut Ctx<'_, M>,
        plan: &DataPlan,
        remote: &RemoteEnd,
        local: &PseudoLocal<'_>,
        buf: &mut [u8],
        datapath: Datapath,
    ) -> Option<HwTransmit> {
        let m = self.tx.messages().msg(plan.msg);
        let mut flags = self.advertised(datapath);
        flags.set(Flags::FIRST, plan.first);
        flags.set(Flags::LAST, plan.last);
        flags.set(Flags::RETX, plan.retransmission);
        flags.set(Flags::ACK_REQ, plan.last);
        flags.set(Flags::SOLICITED, m.solicited && plan.last);
        let remote_va = if m.opcode.has_remote_address() && !m.opcode.is_request() {
            m.remote_va + u64::from(plan.offset)
        } else {
            m.remote_va
        };
        let repr = Repr {
            opcode: m.opcode,
            flags,
            ext: Ext::Msg(MsgRepr {
                msn: m.msn,
                recv_idx: m.recv_idx,
                msg_len: m.msg_len(),
                offset: plan.offset,
                remote_va,
                rkey: m.rkey,
                // A READ_REQ carries `resp_psn` here: the PSN its responses start
                // from if the responder has not sent yet (spec §3.4, §9.1).
                imm: if m.opcode.is_request() {
                    self.rx.conn.cum()
                } else {
                    m.imm
                },
            }),
            ..self.plan_header(remote, plan, m.stream, ctx.now)
        };
        // An atomic's packets carry values the message holds (its operands, or
        // the value found), big-endian: nothing is read from memory. The RTL's
        // TX builder fetches payloads from host memory only, so on the
        // hardware data path they go as datagrams built here, which the RTL
        // frames (spec §11.4).
        let words = match m.opcode {
            Opcode::FetchAdd | Opcode::AtomicResp => Some(1),
            Opcode::CompareSwap => Some(2),
            _ => None,
        };
        // Payload is re-read from registered memory on every (re)transmission;
        // the region is checked again in case it was deregistered meanwhile.
        let (src, ok) = if words.is_some() {
            (0, true)
        } else if m.opcode == Opcode::ReadResp {
            let a = m.source_addr + u64::from(plan.offset);
            (
                a,
                plan.len == 0
                    || ctx
                        .mrs
                        .check_remote(self.pd, m.rkey, a, u64::from(plan.len), Access::REMOTE_READ)
                        .is_ok(),
            )
        } else {
            // Gathered from the list's buffers, each under its own key; on the
            // hardware data path the list has one element.
            let first = m.sgl.pieces(plan.offset, plan.len).next();
            (
                first.map_or(0, |p| p.addr),
                ctx.mrs
                    .check_local_all(self.pd, m.sgl.pieces(plan.offset, plan.len), false)
                    .is_ok(),
            )
        };
        if !ok {
            return None;
        }
        if datapath == Datapath::Hardware && words.is_none() {
            let d = describe(&repr, src, plan.len, plan.entropy, remote);
            return Some(HwTransmit::Descriptor(d));
        }
        let mem = &mut *ctx.mem;
        let len = plan.len as usize;
        seal(&repr, len, plan.entropy, local, remote, buf, |payload| {
            if let Some(n) = words {
                for (chunk, v) in payload.chunks_exact_mut(8).zip(&m.operands[..n]) {
                    chunk.copy_from_slice(&v.to_be_bytes());
                }
            } else if m.opcode == Opcode::ReadResp {
                mem.read(src, payload);
            } else {
                gather(mem, &m.sgl, plan.offset, payload);
            }
            true
        })
        .map(HwTransmit::Datagram)
    }
}

impl Qp {
    /// The base header of a packet of `plan` on `stream` built at `now`
    /// (opcode, flags and extension for the caller to set).
    fn plan_header(&self, remote: &RemoteEnd, plan: &DataPlan, stream: u16, now: u64) -> Repr {
        Repr {
            opcode: Opcode::Write,
            flags: Flags::empty(),
            dst_qpn: remote.qpn,
            src_qpn: self.qpn,
            stream,
            path: plan.path,
            conn_psn: plan.conn_psn,
            path_psn: plan.path_psn,
            timestamp: now,
            ext: Ext::None,
        }
    }

    /// A PARITY packet (spec §3.12) over `plan.parity` packets of a WRITE or
    /// WRITE_IMM message from `plan.offset` on: their payloads, each read
    /// again from registered memory, XORed (a shorter last one padded with
    /// zeros). `None` when the memory no longer covers them.
    fn parity_packet<M: Memory>(
        &self,
        ctx: &mut Ctx<'_, M>,
        plan: &DataPlan,
        remote: &RemoteEnd,
        local: &PseudoLocal<'_>,
        buf: &mut [u8],
    ) -> Option<HwTransmit> {
        let m = self.tx.messages().msg(plan.msg);
        let end = plan
            .offset
            .saturating_add(plan.len.saturating_mul(u32::from(plan.parity)))
            .min(m.msg_len());
        let covered = end.saturating_sub(plan.offset);
        if ctx
            .mrs
            .check_local_all(self.pd, m.sgl.pieces(plan.offset, covered), false)
            .is_err()
        {
            return None;
        }
        let mut flags = self.advertised(Datapath::Software);
        flags.set(Flags::SOLICITED, m.solicited);
        let repr = Repr {
            opcode: Opcode::Parity,
            flags,
            ext: Ext::Msg(MsgRepr {
                msn: m.msn,
                recv_idx: u32::from(plan.parity),
                msg_len: m.msg_len(),
                offset: plan.offset,
                remote_va: m.remote_va + u64::from(plan.offset),
                rkey: m.rkey,
                imm: 0,
            }),
            ..self.plan_header(remote, plan, m.stream, ctx.now)
        };
        let mem = &mut *ctx.mem;
        seal(
            &repr,
            plan.len as usize,
            plan.entropy,
            local,
            remote,
            buf,
            |payload| {
                payload.fill(0);
                let mut offset = plan.offset;
                while offset < end {
                    let len = (end - offset).min(plan.len) as usize;
                    gather_xor(mem, &m.sgl, offset, &mut payload[..len]);
                    offset += plan.len;
                }
                true
            },
        )
        .map(HwTransmit::Datagram)
    }
}

/// Bytes of a data packet besides its payload (base and MSG headers, ICRC).
const DATA_OVERHEAD: usize = BASE_LEN + Opcode::Write.ext_len() + ICRC_LEN;

/// A MULTI_ACK with one entry and a full bitmap: the least room one gets,
/// whatever the MTU.
const MULTI_ACK_ROOM: usize =
    BASE_LEN + Opcode::MultiAck.ext_len() + metaroce_proto::ENTRY_FIXED_LEN + 32 + ICRC_LEN;

/// Reads bytes `offset..offset + out.len()` of a message from the buffers of
/// `sgl` (already checked to hold them) into `out`.
fn gather<M: Memory>(mem: &mut M, sgl: &SgList, offset: u32, out: &mut [u8]) {
    let mut at = 0;
    for p in sgl.pieces(offset, out.len() as u32) {
        let end = at + p.len as usize;
        mem.read(p.addr, &mut out[at..end]);
        at = end;
    }
}

/// Bytes [`gather_xor`] reads at a time into a buffer on the stack.
const XOR_CHUNK: usize = 256;

/// XORs bytes `offset..offset + out.len()` of a message (from the buffers
/// of `sgl`, already checked to hold them) into `out`, a chunk at a time
/// through the stack: a PARITY is built in the transmit buffer, without an
/// allocation.
fn gather_xor<M: Memory>(mem: &mut M, sgl: &SgList, offset: u32, out: &mut [u8]) {
    let mut chunk = [0u8; XOR_CHUNK];
    for (i, part) in out.chunks_mut(XOR_CHUNK).enumerate() {
        let bytes = &mut chunk[..part.len()];
        gather(mem, sgl, offset + (i * XOR_CHUNK) as u32, bytes);
        for (o, b) in part.iter_mut().zip(bytes.iter()) {
            *o ^= b;
        }
    }
}

/// The local end used in every ICRC: the NIC's address, and the source port
/// each entropy value leaves from.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PseudoLocal<'a> {
    pub cfg: &'a crate::config::NicConfig,
}

fn seal(
    repr: &Repr,
    payload_len: usize,
    src_port: u16,
    local: &PseudoLocal<'_>,
    remote: &RemoteEnd,
    buf: &mut [u8],
    fill: impl FnOnce(&mut [u8]) -> bool,
) -> Option<Transmit> {
    let len = repr.emit(buf, payload_len).ok()?;
    let hdr = repr.header_len();
    if !fill(&mut buf[hdr..hdr + payload_len]) {
        return None;
    }
    let wire_port = local.cfg.wire_port(src_port);
    let pseudo = PseudoHeader::new(local.cfg.local_ip, wire_port, remote.ip, remote.udp_port);
    Packet::new_unchecked(&mut buf[..len]).fill_icrc(&pseudo);
    Some(Transmit {
        dst_ip: remote.ip,
        dst_port: remote.udp_port,
        src_port,
        len,
        ecn_capable: true,
    })
}

/// The descriptor of a packet the RTL builds; addressed and ECN-capable as
/// [`seal`] sends it.
fn describe(
    repr: &Repr,
    payload_addr: u64,
    payload_len: u32,
    src_port: u16,
    remote: &RemoteEnd,
) -> TxDescriptor {
    TxDescriptor {
        repr: *repr,
        payload_addr,
        payload_len,
        src_port,
        dst_ip: remote.ip,
        dst_port: remote.udp_port,
        ecn_capable: true,
    }
}

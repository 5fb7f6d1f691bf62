//! The data path: datagrams and the RTL's verdicts in, table operations and datagrams out.

use alloc::collections::VecDeque;

use metaroce_proto::auth::AUTH_TRAILER_LEN;
use metaroce_proto::{
    BASE_LEN, Ext, ICRC_LEN, MsgRepr, Opcode, Packet, PseudoHeader, Repr, VERSION,
};

use super::timing::Timers;
use super::{Nic, RxMeta, Transmit};
use crate::datapath::{Datapath, HwTransmit, HwVerdict, PlacedPacket, TableDone, TableRequest};
use crate::memory::Memory;
use crate::path::{PathView, SlotFate};
use crate::ports::PortsReady;
use crate::qp::{PseudoLocal, Qp, RxData};

impl Nic {
    /// On an authenticated QP (the one `datagram`'s `dst_qpn` names), checks
    /// the auth trailer and the replay window before anything else and
    /// returns the packet without the trailer; `None` (counted) when it
    /// fails. Any other datagram is returned as it is.
    fn authenticate<'d>(&mut self, datagram: &'d [u8]) -> Option<&'d [u8]> {
        let Some(qpn) = datagram.get(4..8) else {
            return Some(datagram);
        };
        let qpn = u32::from_be_bytes([qpn[0], qpn[1], qpn[2], qpn[3]]);
        let qp = match self.qps.get_mut(&qpn) {
            Some(qp) => qp,
            None => match self.lingering.get_mut(&qpn) {
                Some(l) => &mut l.qp,
                None => return Some(datagram),
            },
        };
        let Some(auth) = qp.auth.as_mut() else {
            return Some(datagram);
        };
        let Ok((seq, len)) = auth.mac.open(auth.peer_qpn, datagram) else {
            self.shared.drops.bad_tag += 1;
            return None;
        };
        if !auth.rx.accept(seq) {
            self.shared.drops.replayed += 1;
            return None;
        }
        datagram.get(..len)
    }

    pub(super) fn mark_ready(ready: &mut VecDeque<u32>, qp: &mut Qp) {
        if !qp.ready {
            qp.ready = true;
            ready.push_back(qp.qpn);
        }
    }

    /// After a call changed a live QP: it may have something to send, and
    /// its timers may have moved.
    pub(super) fn touched(ready: &mut VecDeque<u32>, timers: &mut Timers, qp: &mut Qp) {
        Self::mark_ready(ready, qp);
        timers.rearm(qp);
    }

    /// Handles one received datagram. Whatever is wrong with it is counted in
    /// [`Nic::drops`]; nothing invalid is ever placed.
    pub fn handle_datagram<M: Memory>(
        &mut self,
        now: u64,
        datagram: &[u8],
        meta: RxMeta,
        mem: &mut M,
    ) {
        let Some(datagram) = self.authenticate(datagram) else {
            return;
        };
        // Without atomics their opcodes are unknown (§6.2 step 3, after the
        // length and version checks).
        if !self.cfg.has_atomics()
            && datagram.len() >= BASE_LEN + ICRC_LEN
            && datagram[0] == VERSION
            && Opcode::try_from(datagram[1]).is_ok_and(Opcode::is_atomic)
        {
            self.shared.drops.bad_opcode += 1;
            return;
        }
        let packet = match Packet::new_checked(datagram) {
            Ok(p) => p,
            Err(e) => return self.shared.drops.count_wire_error(&e),
        };
        let pseudo = PseudoHeader::new(meta.src_ip, meta.src_port, meta.dst_ip, meta.dst_port);
        if let Err(e) = packet.verify_icrc(&pseudo) {
            return self.shared.drops.count_wire_error(&e);
        }
        let repr = match Repr::parse(&packet) {
            Ok(r) => r,
            Err(e) => return self.shared.drops.count_wire_error(&e),
        };
        self.clock_lingering(now);
        let mut ctx = self.shared.ctx(now, mem, self.cfg.mtu);
        let Some(qp) = self.qps.get_mut(&repr.dst_qpn) else {
            let Some(l) = self
                .lingering
                .get_mut(&repr.dst_qpn)
                .filter(|l| l.until.is_none_or(|u| u > now))
            else {
                ctx.drops.unknown_qp += 1;
                return;
            };
            l.qp.on_packet_closed(&mut ctx, &repr, &meta);
            Self::mark_ready(&mut self.ready, &mut l.qp);
            return;
        };
        let was_sending = qp.received_data_within(now, self.cfg.fair_share_window_ns);
        qp.on_packet(&mut ctx, &repr, RxData::Bytes(packet.payload()), &meta);
        if !was_sending && qp.received_data_within(now, 0) {
            // A connection that starts sending to us changes everyone's fair
            // share: recount now rather than at the end of the window, so an
            // incast is paced from its first round trip.
            self.next_fair_recount = now;
        }
        Self::touched(&mut self.ready, &mut self.timers, qp);
    }

    /// Hardware data path: handles the verdict event of a message packet the
    /// RTL checked (and placed, if its verdict says so). The engine applies
    /// its own connection, stream and message rules, with the RTL's verdict
    /// in place of its memory and receive checks, and completes messages as
    /// for [`Nic::handle_datagram`]. Where its rules disagree with the
    /// verdict, [`Stats::hw_disagreements`](crate::counters::Stats::hw_disagreements) counts it. `mem` is the
    /// firmware's own access to host memory: touched only to execute an
    /// atomic that retires with this packet (the RTL placed the packet).
    pub fn handle_placed<M: Memory>(&mut self, now: u64, p: &PlacedPacket, mem: &mut M) {
        let Some(qp) = self.qps.get_mut(&p.dst_qpn) else {
            // The RTL's QP table holds only live QPs: it should not get here.
            self.shared.stats.hw_disagreements += 1;
            return;
        };
        let Some(remote) = qp.remote else {
            self.shared.stats.hw_disagreements += 1;
            return;
        };
        // The RTL checked the peer: the packet comes from the QP's peer.
        let repr = Repr {
            opcode: p.opcode,
            flags: p.flags,
            dst_qpn: p.dst_qpn,
            src_qpn: remote.qpn,
            stream: p.stream,
            path: p.path,
            conn_psn: p.conn_psn,
            path_psn: p.path_psn,
            timestamp: p.timestamp,
            ext: Ext::Msg(MsgRepr {
                msn: p.msn,
                recv_idx: p.recv_idx,
                msg_len: p.msg_len,
                offset: p.offset,
                remote_va: 0,
                rkey: 0,
                imm: p.imm,
            }),
        };
        let meta = RxMeta {
            src_ip: remote.ip,
            src_port: p.src_port,
            dst_ip: self.cfg.local_ip,
            dst_port: self.cfg.udp_port,
            ecn_ce: p.ecn_ce,
        };
        let was_sending = qp.received_data_within(now, self.cfg.fair_share_window_ns);
        let before = (
            self.shared.stats.data_accepted,
            self.shared.stats.duplicates,
        );
        let mut ctx = self.shared.ctx(now, mem, self.cfg.mtu);
        let data = RxData::Placed {
            len: p.payload_len,
            verdict: p.verdict,
        };
        qp.on_packet(&mut ctx, &repr, data, &meta);
        let after = (
            self.shared.stats.data_accepted,
            self.shared.stats.duplicates,
        );
        let agreed = match p.verdict {
            HwVerdict::Placed => after.0 > before.0,
            HwVerdict::Duplicate => after.1 > before.1,
            _ => true,
        };
        if !agreed {
            self.shared.stats.hw_disagreements += 1;
        }
        if !was_sending && qp.received_data_within(now, 0) {
            // As on the software data path: a new sender recounts at once.
            self.next_fair_recount = now;
        }
        Self::touched(&mut self.ready, &mut self.timers, qp);
    }

    /// Hardware data path: the next operation for the NIC's TX table, for
    /// path `path` of QP `qpn` (which table slot holds it is the
    /// firmware's choice). A path's operations must be performed in the
    /// order they come, and each one's result given to
    /// [`Nic::handle_table_result`].
    pub fn poll_table_op(&mut self) -> Option<TableRequest> {
        let timers = &mut self.timers;
        self.qps.values_mut().find_map(|qp| {
            let (path, op) = qp.poll_table_op()?;
            timers.rearm(qp);
            Some(TableRequest {
                qpn: qp.qpn,
                path,
                op,
            })
        })
    }

    /// Hardware data path: the NIC's TX table finished `done` for path
    /// `path` of QP `qpn` (an operation from [`Nic::poll_table_op`], or a
    /// received ACK its ACK receiver applied). `fates` are the data
    /// transmissions it resolved, in order; `view` is the path's entry read
    /// back after it. Acknowledged transmissions are delivered, lost ones
    /// retransmitted on another path; a result the engine did not expect
    /// counts in [`Stats::hw_disagreements`](crate::counters::Stats::hw_disagreements).
    pub fn handle_table_result(
        &mut self,
        now: u64,
        qpn: u32,
        path: u16,
        done: &TableDone,
        fates: &[SlotFate],
        view: PathView,
    ) {
        let Some(qp) = self.qps.get_mut(&qpn) else {
            return; // destroyed meanwhile
        };
        let mut mem = NoMemory;
        let mut ctx = self.shared.ctx(now, &mut mem, self.cfg.mtu);
        qp.on_table_result(&mut ctx, path, done, fates, view);
        Self::touched(&mut self.ready, &mut self.timers, qp);
    }

    /// Writes the next datagram to send into `buf` (at least MTU + 128 bytes)
    /// and says where it goes. QPs take turns.
    pub fn poll_transmit<M: Memory>(
        &mut self,
        now: u64,
        buf: &mut [u8],
        mem: &mut M,
    ) -> Option<Transmit> {
        self.poll_transmit_on(now, buf, mem, PortsReady::ALL)
    }

    /// [`Nic::poll_transmit`] for a NIC with several ports (planes) of which
    /// only `ports` can take a packet now: data goes only on paths whose
    /// entropy value maps to a ready port (spec §5.3). A QP with data only for
    /// busy ports keeps its turn for a later call.
    pub fn poll_transmit_on<M: Memory>(
        &mut self,
        now: u64,
        buf: &mut [u8],
        mem: &mut M,
        ports: PortsReady,
    ) -> Option<Transmit> {
        match self.poll_out(now, buf, mem, Datapath::Software, ports)? {
            HwTransmit::Datagram(t) => Some(t),
            // The software data path seals every packet itself.
            HwTransmit::Descriptor(_) => None,
        }
    }

    /// Hardware data path: the next packet for the RTL. A data packet or
    /// PROBE comes as a descriptor (nothing is read from `mem`: the RTL
    /// fetches the payload; the memory region is still checked); a NACK or
    /// DISCONNECT is written whole into `buf`. No ACKs: the RTL sends them.
    pub fn poll_hardware(&mut self, now: u64, buf: &mut [u8]) -> Option<HwTransmit> {
        self.poll_out(now, buf, &mut NoMemory, Datapath::Hardware, PortsReady::ALL)
    }

    /// The rate hint the NIC's ACKs carry now, Mbit/s: the line rate shared
    /// among the connections sending to it (the hardware data path writes
    /// it into the RTL's QP table).
    pub fn ack_rate_hint(&mut self, now: u64) -> u32 {
        self.recount_active_senders(now);
        self.cfg.line_rate_mbps / self.active_senders.max(1)
    }

    fn poll_out<M: Memory>(
        &mut self,
        now: u64,
        buf: &mut [u8],
        mem: &mut M,
        datapath: Datapath,
        ports: PortsReady,
    ) -> Option<HwTransmit> {
        let rate_hint = self.ack_rate_hint(now);
        self.clock_lingering(now);
        let local = PseudoLocal { cfg: &self.cfg };
        while let Some(qpn) = self.ready.pop_front() {
            let (qp, live) = match self.qps.get_mut(&qpn) {
                Some(qp) => (qp, true),
                None => match self.lingering.get_mut(&qpn) {
                    Some(l) => (&mut l.qp, false),
                    None => continue,
                },
            };
            let mut ctx = self.shared.ctx(now, mem, self.cfg.mtu);
            let transmit = qp.poll_transmit(&mut ctx, &local, rate_hint, buf, datapath, ports);
            if live {
                self.timers.rearm(qp);
            }
            match transmit {
                Some(mut t) => {
                    if let (Some(auth), HwTransmit::Datagram(d)) = (qp.auth.as_mut(), &mut t) {
                        // The trailer follows the ICRC (spec §11.2); callers
                        // give buffers with room (MTU + 256 bytes).
                        let trailer = auth.mac.trailer(qpn, auth.tx_seq, &buf[..d.len]);
                        if let Some(room) = buf.get_mut(d.len..d.len + AUTH_TRAILER_LEN) {
                            room.copy_from_slice(&trailer);
                            d.len += AUTH_TRAILER_LEN;
                            auth.tx_seq += 1;
                        }
                    }
                    // It may have more: back of the line, so QPs take turns.
                    self.ready.push_back(qpn);
                    self.requeue_port_blocked();
                    return Some(t);
                }
                // Data only for busy ports: it keeps its place in line.
                None if qp.take_port_blocked() => self.port_blocked.push_back(qpn),
                None => qp.ready = false,
            }
        }
        self.requeue_port_blocked();
        None
    }

    /// Puts the QPs a poll passed over for busy ports back at the front of
    /// the line, in their order.
    fn requeue_port_blocked(&mut self) {
        while let Some(qpn) = self.port_blocked.pop_back() {
            self.ready.push_front(qpn);
        }
    }

    fn recount_active_senders(&mut self, now: u64) {
        if now < self.next_fair_recount {
            return;
        }
        let window = self.cfg.fair_share_window_ns;
        let active = self
            .qps
            .values()
            .filter(|q| q.received_data_within(now, window))
            .count();
        self.active_senders = (active as u32).max(1);
        self.next_fair_recount = now + window;
    }
}

/// The memory of the hardware data path's calls that take none: the RTL
/// places and fetches every payload (atomics, the exception, go through
/// the memory the firmware gives `handle_datagram` and `handle_placed`).
struct NoMemory;

impl Memory for NoMemory {
    fn write(&mut self, _addr: u64, _data: &[u8]) {}

    fn read(&mut self, _addr: u64, _out: &mut [u8]) {}
}

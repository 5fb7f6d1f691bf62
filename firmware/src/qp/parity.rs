//! Receiving a PARITY packet (spec §3.12, §6.10): its checks, its mark at
//! the path level, and the rebuild of the one packet of its group that has
//! not arrived, from the PARITY and the group's placed packets.

use alloc::boxed::Box;
use alloc::vec;
use alloc::vec::Vec;

use metaroce_proto::{Flags, MsgRepr, Opcode, Repr};

use crate::RxMeta;
use crate::ctx::Ctx;
use crate::memory::Memory;
use crate::mr::Access;
use crate::rx::ConnCheck;
use crate::tx::MAX_PARITY_GROUP;

use super::Qp;
use super::recv::RxData;

/// A checked PARITY that found more than one packet of its group missing
/// (one of them may still be on its way: a PARITY can overtake its group's
/// packets on another path).
pub(super) struct PendingParity {
    repr: Repr,
    msg: MsgRepr,
    payload: Vec<u8>,
    count: u32,
    reply_port: u16,
}

/// Where a PARITY's group stands at the receiver.
enum GroupState {
    /// Every packet accepted: nothing to rebuild.
    Whole,
    /// Exactly this packet (index in the group) missing.
    Missing(u32),
    /// More than one packet missing.
    Short,
}

impl Qp {
    /// A PARITY packet: dropped (counted) unless well formed, marked at the
    /// path level like a data packet (so it is acknowledged, with the
    /// `conn_cum` a rebuild moved), then the rebuild if exactly one packet
    /// of its group is missing; with more missing, it is kept (replacing an
    /// older one) until the next of them arrives.
    pub(super) fn on_parity<M: Memory>(
        &mut self,
        ctx: &mut Ctx<'_, M>,
        repr: &Repr,
        msg: &MsgRepr,
        data: RxData<'_>,
        meta: &RxMeta,
    ) {
        // Only a QP that announced PARITY_OK takes PARITY, and only the
        // software data path knows it (the RTL drops it as unknown).
        let (RxData::Bytes(parity), true) = (data, self.cfg().parity_group > 0) else {
            ctx.drops.bad_opcode += 1;
            return;
        };
        let Some(count) = self.check_parity(ctx, repr, msg, parity.len()) else {
            return;
        };
        if !self.mark_arrival(ctx, repr, meta) {
            return;
        }
        match self.group_state(repr.conn_psn, count) {
            GroupState::Whole => ctx.stats.parity_unused += 1,
            GroupState::Missing(lost) => {
                self.rebuild(ctx, repr, msg, parity, count, lost, meta.src_port);
            }
            GroupState::Short => {
                let pending = PendingParity {
                    repr: *repr,
                    msg: *msg,
                    payload: parity.to_vec(),
                    count,
                    reply_port: meta.src_port,
                };
                if self.pending_parity.replace(Box::new(pending)).is_some() {
                    ctx.stats.parity_unused += 1;
                }
            }
        }
    }

    /// After data packet `conn_psn` was accepted: if it belongs to the kept
    /// PARITY's group, the rebuild when one packet is now missing, the
    /// PARITY forgotten when none is.
    pub(super) fn retry_parity<M: Memory>(&mut self, ctx: &mut Ctx<'_, M>, conn_psn: u32) {
        let Some(p) = self.pending_parity.as_ref() else {
            return;
        };
        if conn_psn.wrapping_sub(p.repr.conn_psn) >= p.count {
            return;
        }
        match self.group_state(p.repr.conn_psn, p.count) {
            GroupState::Short => {}
            GroupState::Whole => {
                self.pending_parity = None;
                ctx.stats.parity_unused += 1;
            }
            GroupState::Missing(lost) => {
                let p = self.pending_parity.take().expect("checked above");
                self.rebuild(
                    ctx,
                    &p.repr,
                    &p.msg,
                    &p.payload,
                    p.count,
                    lost,
                    p.reply_port,
                );
            }
        }
    }

    /// Which packets of the group of `count` packets from `conn_psn` on are
    /// not yet accepted.
    fn group_state(&self, conn_psn: u32, count: u32) -> GroupState {
        let mut missing =
            (0..count).filter(|&k| self.rx.conn.check(conn_psn.wrapping_add(k)) == ConnCheck::New);
        match (missing.next(), missing.next()) {
            (None, _) => GroupState::Whole,
            (Some(lost), None) => GroupState::Missing(lost),
            _ => GroupState::Short,
        }
    }

    /// The checks of a PARITY before it touches any state (spec §6.10):
    /// its stream; its group of 2..=64 packets; its payload of 1..=mtu
    /// bytes, every packet of the group starting inside the message; every
    /// conn PSN of the group inside the receive window. Returns the group's
    /// packet count, or `None` when the packet is dropped (counted).
    fn check_parity<M: Memory>(
        &mut self,
        ctx: &mut Ctx<'_, M>,
        repr: &Repr,
        msg: &MsgRepr,
        len: usize,
    ) -> Option<u32> {
        if self.rx.stream_mut(usize::from(repr.stream)).is_none() {
            ctx.drops.bad_stream += 1;
            return None;
        }
        let count = msg.recv_idx;
        if !(2..=u32::from(MAX_PARITY_GROUP)).contains(&count) {
            ctx.drops.bad_format += 1;
            return None;
        }
        let last_offset = u64::from(msg.offset) + u64::from(count - 1) * len as u64;
        if len == 0 || len > ctx.mtu as usize || last_offset >= u64::from(msg.msg_len) {
            ctx.drops.bad_length += 1;
            return None;
        }
        let last_psn = repr.conn_psn.wrapping_add(count - 1);
        if [repr.conn_psn, last_psn]
            .iter()
            .any(|&psn| self.rx.conn.check(psn) == ConnCheck::OutOfWindow)
        {
            ctx.drops.conn_window += 1;
            return None;
        }
        Some(count)
    }

    /// Rebuilds packet `lost` of the group of a checked PARITY: the XOR of
    /// the PARITY and the group's other packets, read back from where they
    /// were placed, then placed and accepted like the packet itself would
    /// have been. The message must be a WRITE or WRITE_IMM whose packets
    /// arrived before (its entry gives the opcode, `recv_idx` and `imm`);
    /// otherwise nothing is rebuilt.
    #[allow(clippy::too_many_arguments)]
    fn rebuild<M: Memory>(
        &mut self,
        ctx: &mut Ctx<'_, M>,
        repr: &Repr,
        msg: &MsgRepr,
        parity: &[u8],
        count: u32,
        lost: u32,
        reply_port: u16,
    ) {
        let stream = usize::from(repr.stream);
        let Some(entry) = self.rx.streams[stream].msgs.get(&msg.msn) else {
            ctx.stats.parity_unused += 1;
            return;
        };
        let (opcode, recv_idx, imm) = (entry.opcode, entry.recv_idx, entry.imm);
        if !matches!(opcode, Opcode::Write | Opcode::WriteImm) || entry.msg_len != msg.msg_len {
            ctx.drops.bad_format += 1;
            return;
        }
        let step = parity.len() as u32;
        // Offset, length and address of packet `k` (the checks keep every
        // offset inside the message).
        let packet = |k: u32| {
            let offset = msg.offset + k * step;
            let len = (msg.msg_len - offset).min(step);
            (offset, len, msg.remote_va.checked_add(u64::from(k * step)))
        };
        let mut rebuilt = parity.to_vec();
        let mut placed = vec![0u8; parity.len()];
        for k in (0..count).filter(|&k| k != lost) {
            let (_, len, va) = packet(k);
            let readable = va.filter(|&va| {
                ctx.mrs
                    .check_remote(self.pd, msg.rkey, va, u64::from(len), Access::REMOTE_WRITE)
                    .is_ok()
            });
            let Some(va) = readable else {
                ctx.drops.remote_access += 1;
                return;
            };
            let bytes = &mut placed[..len as usize];
            ctx.mem.read(va, bytes);
            for (r, b) in rebuilt.iter_mut().zip(bytes.iter()) {
                *r ^= b;
            }
        }
        let (offset, len, va) = packet(lost);
        let Some(remote_va) = va else {
            ctx.drops.remote_access += 1;
            return;
        };
        rebuilt.truncate(len as usize);
        let last = offset + len == msg.msg_len;
        let mut flags = Flags::empty();
        flags.set(Flags::FIRST, offset == 0);
        flags.set(Flags::LAST, last);
        flags.set(
            Flags::SOLICITED,
            last && repr.flags.contains(Flags::SOLICITED),
        );
        let lost_repr = Repr {
            opcode,
            flags,
            conn_psn: repr.conn_psn.wrapping_add(lost),
            ..*repr
        };
        let lost_msg = MsgRepr {
            recv_idx,
            offset,
            remote_va,
            imm,
            ..*msg
        };
        ctx.stats.parity_rebuilt += 1;
        self.place_new(
            ctx,
            &lost_repr,
            &lost_msg,
            RxData::Bytes(&rebuilt),
            reply_port,
        );
    }
}

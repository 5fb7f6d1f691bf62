//! What the firmware writes into the hardware NIC's tables, whatever carries the
//! writes: the pure part of running the engine (`Datapath::Hardware`) on a `NicCore`.
//!
//! Used by the host driver ([`super::DeviceBackend`], writes through BAR0 and the TX
//! queue) and by the simulator's firmware model (`metaroce_sim_tb::hw_nic`, writes on
//! `NicCore`'s configuration port), so both write the same words in the same order.
//!
//! [`Tables`] is the firmware's copy of the RTL's tables: QP entries, MR entries,
//! the entropy table and the TX table's slot map. Each method compares the engine
//! with that copy and emits the configuration words (`cfg_addr`, `cfg_data`) that
//! bring the RTL up to it through a [`CfgSink`], in an order that never shows the RTL
//! a half-written entry (slot words before the control word that counts them; a
//! retired receive leaves the ring before its slot is reused; the valid bit last).
//! Every address and code comes from [`super::codes`] (generated from
//! `metaroce_hdl`).

use std::net::IpAddr;

use metaroce_firmware::datapath::{TableRequest, TxDescriptor};
use metaroce_firmware::{MemoryRegion, Nic, QpState, RecvWr, TableOp};

use crate::hw::codes::ack_rx::{MAP_PATH_SHIFT, MAP_VALID_BIT, SLOT_MAP_CFG};
use crate::hw::codes::core::*;
use crate::hw::codes::tx;

/// Receives configuration words: `(cfg_addr, cfg_data)` in `NicCore`'s map.
pub type CfgSink<'a> = &'a mut dyn FnMut(u16, u64);

/// `NicCore`'s `cfg_addr` bit that selects the TX builder's map, as an offset to add
/// to the `tx_build::cfg` addresses.
pub const NIC_CORE_TX_CFG: u16 = 1 << tx::CFG_TX_BIT;

/// Entries of the RTL's entropy table.
pub const TABLE_PATHS: usize = tx::PATHS;

mod entries;
mod tx_config;
mod verdicts;

pub use entries::{OpInputs, ResultEntry, SlotState, cfg_words, desc_words, op_words, placed_addr};
pub use tx_config::{Addresses, configure_tx, entropy_cfg_addr, mapped};
pub use verdicts::{VerdictFields, count_refusal, hw_verdict};

/// The firmware's copy of one QP entry of the RTL.
#[derive(Clone, Debug, Default)]
struct QpEntry {
    qpn: u32,
    /// State written (1 RTR, 2 RTS, 0 other; `u64::MAX` after the entry was
    /// written in full, before its first state).
    state: u64,
    /// Per stream with a ring: (base `recv_idx`, count) written, and the
    /// `recv_idx` up to which slots are written.
    rings: [(u32, u32, u32); RQ_STREAMS],
    /// READ entries: (stream, MSN) written, if valid.
    reads: [Option<(u16, u32)>; READS],
    /// ACK rate hint written.
    rate: u32,
    /// MSN-head words written ([`msn_head_words`]).
    heads: [u64; MSN_STREAMS / 2],
}

/// Why a table could not follow the engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableError {
    /// All QP entries are taken.
    QpTableFull,
    /// All MR entries are taken.
    MrTableFull,
    /// All TX table slots are taken.
    SlotsFull,
    /// More READs outstanding on a QP than it has READ entries.
    ReadsFull,
    /// A table operation for a (QP, path) with no slot.
    NoSlot,
}

/// The firmware's copy of the RTL's tables (see the module docs).
#[derive(Debug)]
pub struct Tables {
    qps: [Option<QpEntry>; QPS],
    mrs: [Option<u32>; MRS],
    entropy: [Option<u16>; TABLE_PATHS],
    slots: Vec<Option<(u32, u16)>>,
    errors: u64,
}

impl Tables {
    /// Empty tables for an RTL with `slots` TX table slots.
    pub fn new(slots: usize) -> Self {
        Tables {
            qps: Default::default(),
            mrs: [None; MRS],
            entropy: [None; TABLE_PATHS],
            slots: vec![None; slots],
            errors: 0,
        }
    }

    /// Times the tables could not follow the engine (a [`TableError`]).
    pub fn errors(&self) -> u64 {
        self.errors
    }

    fn fail<T>(&mut self, e: TableError) -> Result<T, TableError> {
        self.errors += 1;
        Err(e)
    }

    /// The global registers: MTU and the local address.
    pub fn write_globals(ip: IpAddr, mtu: u32, sink: CfgSink<'_>) {
        sink(cfg_addr(CFG_GLOBAL, 0, GLOBAL_MTU).into(), mtu.into());
        let ip = u128::from_be_bytes(mapped(ip));
        sink(
            cfg_addr(CFG_GLOBAL, 0, GLOBAL_LOCAL_IP_HI).into(),
            (ip >> 64) as u64,
        );
        sink(
            cfg_addr(CFG_GLOBAL, 0, GLOBAL_LOCAL_IP_LO).into(),
            ip as u64,
        );
    }

    /// The TX builder's address registers ([`configure_tx`] in `NicCore`'s map);
    /// false when the families differ.
    pub fn write_addresses(a: &Addresses, sink: CfgSink<'_>) -> bool {
        configure_tx(a, &mut |addr, data| {
            sink(NIC_CORE_TX_CFG | u16::from(addr), data)
        })
    }

    /// A free MR entry exists.
    pub fn has_free_mr(&self) -> bool {
        self.mrs.iter().any(Option::is_none)
    }

    /// Writes a registered region into a free MR entry.
    pub fn add_mr(&mut self, mr: &MemoryRegion, sink: CfgSink<'_>) -> Result<(), TableError> {
        let Some(e) = self.mrs.iter().position(Option::is_none) else {
            return self.fail(TableError::MrTableFull);
        };
        let e8 = e as u8;
        sink(
            cfg_addr(CFG_MR, e8, MR_KEY_PD).into(),
            u64::from(mr.rkey) | u64::from(mr.pd) << 32,
        );
        sink(cfg_addr(CFG_MR, e8, MR_BASE).into(), mr.addr);
        sink(cfg_addr(CFG_MR, e8, MR_LEN).into(), mr.len);
        sink(
            cfg_addr(CFG_MR, e8, MR_CTRL).into(),
            1 | u64::from(mr.access.bits()) << 1,
        );
        self.mrs[e] = Some(mr.lkey);
        Ok(())
    }

    /// The lkeys in the MR table.
    pub fn mr_keys(&self) -> impl Iterator<Item = u32> + '_ {
        self.mrs.iter().flatten().copied()
    }

    /// Frees the MR entry of `lkey`; false when it has none.
    pub fn remove_mr(&mut self, lkey: u32, sink: CfgSink<'_>) -> bool {
        let Some(e) = self.mrs.iter().position(|&k| k == Some(lkey)) else {
            return false;
        };
        sink(cfg_addr(CFG_MR, e as u8, MR_CTRL).into(), 0);
        self.mrs[e] = None;
        true
    }

    /// A free QP entry and `paths` free TX table slots exist.
    pub fn has_room_for_qp(&self, paths: u16) -> bool {
        self.qps.iter().any(Option::is_none)
            && self.slots.iter().filter(|s| s.is_none()).count() >= usize::from(paths)
    }

    /// Takes a QP entry for `qpn` (written at RTR).
    pub fn add_qp(&mut self, qpn: u32) -> Result<(), TableError> {
        let Some(e) = self.qps.iter().position(Option::is_none) else {
            return self.fail(TableError::QpTableFull);
        };
        self.qps[e] = Some(QpEntry {
            qpn,
            ..QpEntry::default()
        });
        Ok(())
    }

    /// The QPNs with an entry.
    pub fn qpns(&self) -> impl Iterator<Item = u32> + '_ {
        self.qps.iter().flatten().map(|q| q.qpn)
    }

    /// Frees `qpn`'s entry (invalid) and its TX table slots (unmapped in the ACK
    /// receiver); false when it has none.
    pub fn remove_qp(&mut self, qpn: u32, sink: CfgSink<'_>) -> bool {
        let Some(e) = self.entry_of(qpn) else {
            return false;
        };
        sink(cfg_addr(CFG_QP, e as u8, QP_CTRL).into(), 0);
        self.qps[e] = None;
        for (slot, s) in self.slots.iter_mut().enumerate() {
            if s.is_some_and(|(q, _)| q == qpn) {
                sink(SLOT_MAP_CFG + slot as u16, 0);
                *s = None;
            }
        }
        true
    }

    fn entry_of(&self, qpn: u32) -> Option<usize> {
        self.qps
            .iter()
            .position(|q| q.as_ref().is_some_and(|q| q.qpn == qpn))
    }

    /// Writes a QP's whole entry (peer, PD, streams, first PSN, ACK registers,
    /// empty rings), valid bit last; nothing when the QP has no entry or no peer.
    pub fn write_qp_entry(&mut self, nic: &mut Nic, qpn: u32, now: u64, sink: CfgSink<'_>) {
        let (Some(e), Some((_, pd, streams, Some(remote)))) =
            (self.entry_of(qpn), nic.qp_entry(qpn))
        else {
            return;
        };
        let e8 = e as u8;
        let ip = u128::from_be_bytes(mapped(remote.ip));
        let mut q = |w: u8, d: u64| sink(cfg_addr(CFG_QP, e8, w).into(), d);
        q(QP_QPNS, u64::from(qpn) | u64::from(remote.qpn) << 32);
        q(QP_PEER_IP_HI, (ip >> 64) as u64);
        q(QP_PEER_IP_LO, ip as u64);
        q(QP_PD_STREAMS, u64::from(pd) | u64::from(streams) << 32);
        q(QP_CONN_PSN, remote.initial_psn.into());
        q(QP_PEER_PORT, remote.udp_port.into());
        let rate = nic.ack_rate_hint(now);
        q(
            QP_RATE_CREDIT,
            u64::from(rate) | u64::from(CONN_WINDOW) << 32,
        );
        for s in 0..RQ_STREAMS {
            let (a, d) = ring_ctrl(e, s, 0, 0);
            sink(a, d);
        }
        for k in 0..READS as u8 {
            sink(cfg_addr(CFG_QP, e8, QP_READ_CTRL + 3 * k).into(), 0);
        }
        let heads = msn_head_words(nic, qpn, e);
        for &(a, d) in &heads {
            sink(a, d);
        }
        if let Some(entry) = self.qps[e].as_mut() {
            entry.heads = heads.map(|(_, d)| d);
            entry.rings = [(0, 0, 0); RQ_STREAMS];
            entry.reads = [None; READS];
            entry.rate = rate;
            entry.state = u64::MAX;
        }
    }

    /// Brings the RTL's QP states, receive rings, MSN heads, READ entries and ACK rate
    /// hints up to the engine's (see the module docs for the write order).
    pub fn sync(&mut self, nic: &mut Nic, now: u64, sink: CfgSink<'_>) {
        for e in 0..QPS {
            let Some(entry) = self.qps[e].clone() else {
                continue;
            };
            let Some((state, ..)) = nic.qp_entry(entry.qpn) else {
                continue;
            };
            if entry.state == u64::MAX && matches!(state, QpState::Init | QpState::Reset) {
                continue;
            }
            let mut entry = entry;
            self.sync_rings(nic, e, &mut entry, sink);
            for (k, (a, d)) in msn_head_words(nic, entry.qpn, e).into_iter().enumerate() {
                if entry.heads[k] != d {
                    sink(a, d);
                    entry.heads[k] = d;
                }
            }
            if self.sync_reads(nic, e, &mut entry, sink).is_err() {
                self.errors += 1;
            }
            let e8 = e as u8;
            let code = match state {
                QpState::Rtr => 1,
                QpState::Rts => 2,
                _ => 0,
            };
            if code != entry.state {
                sink(cfg_addr(CFG_QP, e8, QP_CTRL).into(), 1 | code << 1);
                entry.state = code;
            }
            let rate = nic.ack_rate_hint(now);
            if rate != entry.rate {
                sink(
                    cfg_addr(CFG_QP, e8, QP_RATE_CREDIT).into(),
                    u64::from(rate) | u64::from(CONN_WINDOW) << 32,
                );
                entry.rate = rate;
            }
            self.qps[e] = Some(entry);
        }
    }

    /// The receive rings of QP entry `e`: the oldest [`RQ_SLOTS`] posted receives of
    /// each stream with a ring.
    fn sync_rings(&mut self, nic: &Nic, e: usize, entry: &mut QpEntry, sink: CfgSink<'_>) {
        let e8 = e as u8;
        for s in 0..RQ_STREAMS {
            let Some((base, recvs)) = nic.posted_receives(entry.qpn, s as u16) else {
                continue;
            };
            // Runs after every event: look before copying anything.
            let count = recvs.take(RQ_SLOTS as usize).count() as u32;
            let (old_base, old_count, written) = entry.rings[s];
            if (old_base, old_count) == (base, count) {
                continue;
            }
            let Some((_, recvs)) = nic.posted_receives(entry.qpn, s as u16) else {
                continue;
            };
            let recvs: Vec<RecvWr> = recvs.take(count as usize).copied().collect();
            if base != old_base {
                // Retire first: what stays of the old ring.
                let end = old_base.wrapping_add(old_count);
                let left = if base.wrapping_sub(old_base) > old_count {
                    0
                } else {
                    end.wrapping_sub(base).min(old_count)
                };
                let (a, d) = ring_ctrl(e, s, base, left);
                sink(a, d);
            }
            let mut written = if written.wrapping_sub(base) > RQ_SLOTS {
                base
            } else {
                written
            };
            for (i, wr) in recvs.iter().enumerate() {
                let idx = base.wrapping_add(i as u32);
                if idx.wrapping_sub(written) >= 1 << 31 {
                    continue; // written before
                }
                let at = |word| cfg_ring(e8, s as u8, (idx % RQ_SLOTS) as u8, word);
                // The hardware data path posts one buffer per receive.
                let sge = wr.sgl.first();
                sink(at(RQ_ADDR), sge.addr);
                sink(
                    at(RQ_LEN_LKEY),
                    u64::from(sge.len) | u64::from(sge.lkey) << 32,
                );
                written = idx.wrapping_add(1);
            }
            let (a, d) = ring_ctrl(e, s, base, count);
            sink(a, d);
            entry.rings[s] = (base, count, written);
        }
    }

    /// The READ entries of QP entry `e`: the engine's outstanding READs.
    fn sync_reads(
        &mut self,
        nic: &Nic,
        e: usize,
        entry: &mut QpEntry,
        sink: CfgSink<'_>,
    ) -> Result<(), TableError> {
        let e8 = e as u8;
        let reads: Vec<_> = nic.outstanding_reads(entry.qpn).collect();
        for k in 0..READS {
            let keep = entry.reads[k]
                .is_some_and(|(st, msn)| reads.iter().any(|r| (r.0, r.1) == (st, msn)));
            if entry.reads[k].is_some() && !keep {
                sink(cfg_addr(CFG_QP, e8, QP_READ_CTRL + 3 * k as u8).into(), 0);
                entry.reads[k] = None;
            }
        }
        for &(stream, msn, sge, atomic) in &reads {
            if entry.reads.contains(&Some((stream, msn))) {
                continue;
            }
            let Some(k) = entry.reads.iter().position(Option::is_none) else {
                return Err(TableError::ReadsFull);
            };
            let w = QP_READ_CTRL + 3 * k as u8;
            sink(cfg_addr(CFG_QP, e8, w + 1).into(), sge.addr);
            sink(
                cfg_addr(CFG_QP, e8, w + 2).into(),
                u64::from(sge.len) | u64::from(sge.lkey) << 32,
            );
            sink(
                cfg_addr(CFG_QP, e8, w).into(),
                1 << 63
                    | u64::from(atomic) << READ_ATOMIC_BIT
                    | u64::from(stream) << 32
                    | u64::from(msn),
            );
            entry.reads[k] = Some((stream, msn));
        }
        Ok(())
    }

    /// The TX table slot of a table operation's (QP, path): its mapped slot, or for
    /// an `Init` a free slot, mapped in the ACK receiver (a configuration word).
    pub fn slot_for(&mut self, req: &TableRequest, sink: CfgSink<'_>) -> Result<usize, TableError> {
        let key = Some((req.qpn, req.path));
        if let Some(slot) = self.slots.iter().position(|&s| s == key) {
            return Ok(slot);
        }
        if !matches!(req.op, TableOp::Init { .. }) {
            return self.fail(TableError::NoSlot);
        }
        let Some(slot) = self.slots.iter().position(Option::is_none) else {
            return self.fail(TableError::SlotsFull);
        };
        self.slots[slot] = key;
        let word = u64::from(req.qpn) | u64::from(req.path) << MAP_PATH_SHIFT | 1 << MAP_VALID_BIT;
        sink(SLOT_MAP_CFG + slot as u16, word);
        Ok(slot)
    }

    /// The (QP, path) a TX table slot holds.
    pub fn slot(&self, slot: usize) -> Option<(u32, u16)> {
        self.slots.get(slot).copied().flatten()
    }

    /// The entropy-table write a descriptor needs first (its path's entry differs
    /// from its UDP source port), as `(cfg_addr, cfg_data)`; the copy is updated.
    pub fn entropy_write(&mut self, d: &TxDescriptor) -> Option<(u16, u64)> {
        let path = usize::from(d.repr.path) % TABLE_PATHS;
        if self.entropy[path] == Some(d.src_port) {
            return None;
        }
        self.entropy[path] = Some(d.src_port);
        let addr = NIC_CORE_TX_CFG | u16::from(entropy_cfg_addr(d.repr.path));
        Some((addr, d.src_port.into()))
    }
}

// The engine refuses a QP with more streams than the RTL keeps heads for.
const _: () = assert!(MSN_STREAMS == metaroce_firmware::datapath::HW_MAX_STREAMS);

/// The RTL's MSN-head words of QP entry `e` for the engine's QP `qpn` (spec §6.5):
/// word `MSN_HEADS + k` holds the heads of streams `2k` (bits 31..0) and `2k + 1`
/// (bits 63..32), 0 for a stream the QP does not have.
pub fn msn_head_words(nic: &Nic, qpn: u32, e: usize) -> [(u16, u64); MSN_STREAMS / 2] {
    let head = |s: usize| u64::from(nic.msn_head(qpn, s as u16).unwrap_or(0));
    core::array::from_fn(|k| {
        (
            cfg_addr(CFG_RQ, e as u8, MSN_HEADS + k as u8).into(),
            head(2 * k) | head(2 * k + 1) << 32,
        )
    })
}

/// The RTL's ring control word of stream `s` of QP entry `e`: the oldest posted
/// receive's index and how many are posted.
fn ring_ctrl(e: usize, s: usize, base: u32, count: u32) -> (u16, u64) {
    (
        cfg_addr(CFG_RQ, e as u8, s as u8).into(),
        u64::from(base) | u64::from(count) << 32,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    use metaroce_firmware::Drops;

    use crate::hw::codes::regs;

    #[test]
    fn refusals_count_by_reason_and_nothing_else_counts() {
        let mut d = Drops::default();
        for code in [
            V_TRUNCATED,
            V_BAD_ICRC,
            V_BAD_ICRC,
            V_WRONG_PEER,
            V_UNEXPECTED_PAYLOAD,
            V_MSN_WINDOW,
        ] {
            count_refusal(code, &mut d);
        }
        assert_eq!(
            (
                d.truncated,
                d.bad_icrc,
                d.wrong_peer,
                d.bad_format,
                d.msn_window
            ),
            (1, 2, 1, 1, 1)
        );
        // Placements, duplicates and refusals the engine itself counts (it gets
        // those verdicts), probes and firmware datagrams: nothing here.
        for code in [
            V_PLACED,
            V_DUPLICATE,
            V_REMOTE_ACCESS,
            V_RNR,
            V_PROBE,
            V_FIRMWARE,
        ] {
            count_refusal(code, &mut d);
        }
        assert_eq!(d.total(), 6);
    }

    #[test]
    fn mixed_families_write_nothing() {
        let a = Addresses {
            local_mac: [2, 0, 0, 0, 0, 1],
            peer_mac: [2, 0, 0, 0, 0, 2],
            local_ip: Ipv4Addr::LOCALHOST.into(),
            peer_ip: "::1".parse().expect("v6"),
            dst_port: 4791,
            ttl: 64,
            dscp: 0,
        };
        let mut n = 0;
        assert!(!configure_tx(&a, &mut |_, _| n += 1));
        assert_eq!(n, 0);
        let v4 = Addresses {
            peer_ip: Ipv4Addr::new(10, 0, 0, 2).into(),
            ..a
        };
        assert!(configure_tx(&v4, &mut |_, _| n += 1));
        assert_eq!(n, 3);
    }

    #[test]
    fn queue_and_event_words_follow_the_documented_layout() {
        use super::super::codes::tx_op;
        // A kind-2 entry: SACK in w0..w3, w4 = psn | len << 32 | OP_CTRL << 48.
        let mut sack = [0u8; 32];
        sack[0] = 0x81;
        sack[31] = 0x40;
        let i = OpInputs {
            code: tx_op::SEND,
            psn: 0x1234_5678,
            len: 1500,
            probe: true,
            retx: true,
            rtt: Some(7),
            ce: 9,
            acked: 3,
            value: 0xBEEF,
            sack,
        };
        let w = op_words(5, &i);
        assert_eq!(w[0], 0x81);
        assert_eq!(w[3], 0x40 << 56);
        assert_eq!(w[4] as u32, 0x1234_5678);
        assert_eq!((w[4] >> 32) as u16, 1500);
        let ctrl = (w[4] >> 48) as u32;
        assert_eq!(ctrl & 7, u32::from(tx_op::SEND));
        assert_eq!(ctrl >> 3 & 0xF, 5);
        assert_eq!(ctrl >> 7, 0b111, "probe, retx, rtt_valid");
        assert_eq!(w[5], 7 | 9 << 32);
        assert_eq!(w[6], 3 | 0xBEEF << 32);
        assert_eq!(w[9] >> 56, u64::from(regs::TXQ_TABLE_OP));
        assert_eq!(w[7] | w[8] | w[9] & ((1 << 56) - 1), 0, "reserved bits");
        // A result entry and its view entry.
        let mut a = [0u64; 8];
        let mut b = [0u64; 8];
        a[0] = 4 | 6000 << 32;
        a[1] = 77 | 5 << 32 | 1 << 36 | u64::from(tx_op::SEND) << 37;
        a[2] = 10 | 8 << 32;
        a[6] = 3 | 11 << 32;
        b[2] = 2 | 1 << 32;
        b[3] = 0xC123 | 1 << 16 | 1 << 17 | 4 << 18;
        let r = ResultEntry::parse(&a);
        assert_eq!(
            (r.pkts, r.bytes, r.psn, r.slot, r.ok, r.code),
            (4, 6000, 77, 5, true, tx_op::SEND)
        );
        let v = SlotState::from_event(&a, &b);
        assert_eq!((v.next_psn, v.una, v.samples, v.sent), (10, 8, 3, 11));
        assert_eq!((v.repaths, v.timeouts, v.entropy), (2, 1, 0xC123));
        assert!(v.rtt_valid && v.quarantined && !v.can_send);
        assert_eq!(v.backoff, 4);
        // A verdict entry's placement address: bits 23..0 in w6, 47..24 in w7.
        let mut e = [0u64; 8];
        assert_eq!(placed_addr(&e), None);
        e[6] = 1 << 37 | 0x56_789A << 40;
        e[7] = 0x1234 << 32 | 1 << 63;
        assert_eq!(placed_addr(&e), Some(0x0012_3456_789A));
    }

    #[test]
    fn slot_map_needs_init_first() {
        let mut t = Tables::new(2);
        let mut words = Vec::new();
        let send = TableRequest {
            qpn: 0x10,
            path: 0,
            op: TableOp::Window { bytes: 1 },
        };
        assert_eq!(
            t.slot_for(&send, &mut |a, d| words.push((a, d))),
            Err(TableError::NoSlot)
        );
        let init = |path| TableRequest {
            qpn: 0x10,
            path,
            op: TableOp::Init { entropy: 7 },
        };
        assert_eq!(t.slot_for(&init(0), &mut |a, d| words.push((a, d))), Ok(0));
        assert_eq!(t.slot_for(&send, &mut |a, d| words.push((a, d))), Ok(0));
        assert_eq!(t.slot_for(&init(1), &mut |a, d| words.push((a, d))), Ok(1));
        assert_eq!(
            t.slot_for(&init(2), &mut |a, d| words.push((a, d))),
            Err(TableError::SlotsFull)
        );
        assert_eq!(words.len(), 2, "one slot-map word per Init");
        assert_eq!(words[1].0, SLOT_MAP_CFG + 1);
        assert_eq!(t.errors(), 2);
        let mut freed = Vec::new();
        assert!(t.add_qp(0x10).is_ok());
        assert!(t.remove_qp(0x10, &mut |a, d| freed.push((a, d))));
        assert_eq!(freed.len(), 3, "QP_CTRL and two slot-map words");
        assert_eq!(t.slot(0), None);
    }
}

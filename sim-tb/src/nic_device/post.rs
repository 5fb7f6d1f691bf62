//! The host's producer side during the run: the TX queue (engine
//! descriptors with their entropy-table writes, the queued TX table
//! operations, one entry of an unknown kind) and the firmware TX queue
//! (firmware datagrams, two malformed entries among them).

use std::collections::VecDeque;
use std::net::Ipv4Addr;

use metaroce_driver::hw::tables;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::host::{cfg_entry, desc_entry, entry, ftq_entry};
use super::tb::DeviceTb;
use super::txt::{QSLOT, QueuedOp};
use super::{DeviceRun, FWTX_PORT, regs};
use crate::frame::mapped_bits;
use crate::tx_build::{NIC_CORE_TX_CFG, TABLE_PATHS, TxItem, entropy_cfg_addr};

/// A firmware datagram as posted: (destination IP, UDP source port, bytes).
pub(super) type FwDatagram = (u128, u16, Vec<u8>);

/// What the host posts, and how far it got.
pub(super) struct Poster<'a> {
    /// The engine's descriptors, in order.
    pub(super) items: &'a [TxItem],
    /// The TX table operations to queue among them.
    pub(super) qops: &'a [QueuedOp],
    /// The entropy of each path of the TX builder's table, as last written.
    table: [Option<u16>; TABLE_PATHS],
    /// Descriptors posted.
    pub(super) next_item: usize,
    /// The entry of an unknown kind is posted.
    bad_txq_posted: bool,
    /// The TX table operations are posted.
    qops_posted: bool,
    /// The cycle `TXQ.CONS` was last read.
    last_cons_read: u64,
    /// Firmware TX queue entries not posted yet.
    pub(super) fw_items: VecDeque<Vec<u8>>,
    /// The well-formed firmware datagrams, in order (the frames that must
    /// come out).
    pub(super) fw_want: Vec<FwDatagram>,
    /// The cycle the next firmware datagram may be posted.
    next_fw: u64,
}

impl<'a> Poster<'a> {
    /// Nothing posted yet; the firmware datagrams drawn from `seed`.
    pub(super) fn new(items: &'a [TxItem], qops: &'a [QueuedOp], seed: u64) -> Self {
        let (fw_items, fw_want) = firmware_datagrams(seed);
        Poster {
            items,
            qops,
            table: [None; TABLE_PATHS],
            next_item: 0,
            bad_txq_posted: false,
            qops_posted: false,
            last_cons_read: 0,
            fw_items,
            fw_want,
            next_fw: 0,
        }
    }

    /// Every descriptor and every firmware entry posted.
    pub(super) fn all_posted(&self) -> bool {
        self.next_item == self.items.len() && self.fw_items.is_empty()
    }

    /// TX queue: posts descriptors (with their entropy writes first) while
    /// there is room, rings the doorbell, and reads `TXQ.CONS` back (at most
    /// every 200 cycles) when room runs short.
    pub(super) fn tx_queue(&mut self, tb: &mut DeviceTb, run: &mut DeviceRun, now: u64) {
        let mut posted = false;
        while self.next_item < self.items.len() && tb.txq.room() >= 2 {
            if self.next_item >= self.items.len() / 3 && !self.qops_posted {
                // TX table operations among the descriptors (the descriptors
                // after them wait for room for all of them).
                if tb.txq.room() < self.qops.len() as u32 {
                    break;
                }
                self.post_table_ops(tb, run);
                posted = true;
                continue;
            }
            self.post_item(tb, run);
            posted = true;
        }
        if posted {
            let prod = tb.txq.idx;
            tb.bar_write(tb.reg(regs::txq::TYPE, regs::txq::PROD), prod);
        }
        if tb.txq.room() < self.qops.len() as u32 && now - self.last_cons_read > 200 {
            self.last_cons_read = now;
            tb.txq.dev = tb.bar_read(tb.reg(regs::txq::TYPE, regs::txq::CONS));
        }
    }

    /// The TX table operations on [`QSLOT`], one entry each.
    fn post_table_ops(&mut self, tb: &mut DeviceTb, run: &mut DeviceRun) {
        for (i, ..) in self.qops {
            tb.mem
                .post(&mut tb.txq, &entry(&tables::op_words(QSLOT, i)));
            run.txq_entries += 1;
            run.queued_ops.0 += 1;
        }
        self.qops_posted = true;
    }

    /// The next descriptor, after its path's entropy write if the table
    /// holds another; halfway, an entry of an unknown kind after it.
    fn post_item(&mut self, tb: &mut DeviceTb, run: &mut DeviceRun) {
        let TxItem { desc, entropy } = self.items[self.next_item];
        let path = usize::from(desc.repr.path) % self.table.len();
        if self.table[path] != Some(entropy) {
            let a = NIC_CORE_TX_CFG | u16::from(entropy_cfg_addr(desc.repr.path));
            tb.mem.post(&mut tb.txq, &cfg_entry(a, entropy.into()));
            self.table[path] = Some(entropy);
            run.txq_entries += 1;
        }
        tb.mem.post(&mut tb.txq, &desc_entry(&desc));
        run.txq_entries += 1;
        self.next_item += 1;
        if self.next_item == self.items.len() / 2 && !self.bad_txq_posted {
            // An entry of an unknown kind: skipped and counted.
            tb.mem
                .post(&mut tb.txq, &entry(&[0, 0, 0, 0, 0, 0, 0, 0, 0, 7 << 56]));
            run.txq_entries += 1;
            self.bad_txq_posted = true;
        }
    }

    /// Firmware TX queue: one datagram every 3,000 cycles, if there is room.
    pub(super) fn fw_queue(&mut self, tb: &mut DeviceTb, now: u64) {
        if now < self.next_fw || self.fw_items.is_empty() {
            return;
        }
        self.next_fw = now + 3_000;
        tb.ftq.dev = tb.bar_read(tb.reg(regs::ftq::TYPE, regs::ftq::CONS));
        if tb.ftq.room() > 0 {
            let e = self.fw_items.pop_front().expect("an item");
            tb.mem.post(&mut tb.ftq, &e);
            let prod = tb.ftq.idx;
            tb.bar_write(tb.reg(regs::ftq::TYPE, regs::ftq::PROD), prod);
        }
    }
}

/// Six firmware datagrams to `10.0.9.x` (as firmware TX queue entries, two
/// malformed ones after the third) and the well-formed ones as posted.
fn firmware_datagrams(seed: u64) -> (VecDeque<Vec<u8>>, Vec<FwDatagram>) {
    let mut fw_items: VecDeque<Vec<u8>> = VecDeque::new();
    let mut fw_want: Vec<FwDatagram> = Vec::new();
    let mut frng = SmallRng::seed_from_u64(seed ^ 0xF7);
    for i in 0..6u16 {
        let dst = mapped_bits(Ipv4Addr::new(10, 0, 9, i as u8 + 1).into());
        let len = [1u16, 100, 128, 37, 64, 127][usize::from(i)];
        // Not a MetaRoCE header (first byte 0xFF): never taken for an ACK.
        let data: Vec<u8> = (0..len)
            .map(|k| if k == 0 { 0xFF } else { frng.r#gen() })
            .collect();
        fw_items.push_back(ftq_entry(dst, 0xC000 + i, FWTX_PORT, len, &data));
        fw_want.push((dst, 0xC000 + i, data));
        if i == 2 {
            // Malformed: length 0, then 200 (more than 128): skipped.
            fw_items.push_back(ftq_entry(dst, 1, FWTX_PORT, 0, &[]));
            fw_items.push_back(ftq_entry(dst, 1, FWTX_PORT, 200, &[0; 200]));
        }
    }
    (fw_items, fw_want)
}

//! The firmware's side of the TX queue: entries written and flushed, table words as
//! kind-1 entries, the engine's packets as descriptors and firmware datagrams.

use std::time::Instant;

use metaroce_firmware::datapath::{HwTransmit, TxDescriptor};
use metaroce_firmware::{Nic, Transmit};

use super::{Firmware, QUEUE_TIMEOUT, timed};
use crate::device::Device;
use crate::hw::DriverError;
use crate::hw::codes::regs;
use crate::hw::tables;

impl Firmware {
    /// Writes the next TX queue entry, waiting for room when the queue is full.
    pub(super) fn txq_push(&mut self, words: &[u64]) -> Result<(), DriverError> {
        if self.txq.room(&mut self.dev)? == 0 {
            self.txq.doorbell(&mut self.dev)?;
            let start = Instant::now();
            while self.txq.room(&mut self.dev)? == 0 {
                if start.elapsed() > QUEUE_TIMEOUT {
                    return Err(DriverError::Protocol(format!(
                        "TX queue: the device took no entry for {QUEUE_TIMEOUT:?}"
                    )));
                }
                std::thread::yield_now();
            }
        }
        self.txq.push(words, &[]);
        Ok(())
    }

    /// Rings the TX queue's doorbell and waits until the device has taken every entry
    /// (before memory a queued entry may still refer to is unmapped).
    pub(super) fn flush_txq(&mut self) -> Result<(), DriverError> {
        self.txq.doorbell(&mut self.dev)?;
        let start = Instant::now();
        loop {
            self.txq.refresh(&mut self.dev)?;
            if self.txq.pending() == 0 {
                return Ok(());
            }
            if start.elapsed() > QUEUE_TIMEOUT {
                return Err(DriverError::Protocol(format!(
                    "TX queue: {} entries not taken after {QUEUE_TIMEOUT:?}",
                    self.txq.pending()
                )));
            }
            std::thread::yield_now();
        }
    }

    /// Table words as kind-1 TX queue entries (in order with what is queued).
    pub(super) fn cfg_writes(&mut self, words: &[(u16, u64)]) -> Result<(), DriverError> {
        for &(addr, data) in words {
            self.txq_push(&tables::cfg_words(addr, data))?;
            self.stats.cfg_writes += 1;
        }
        Ok(())
    }

    /// Writes `words` (emptied) as table words and waits until the device has taken
    /// them: what they set holds when the caller returns.
    pub(super) fn cfg_writes_taken(
        &mut self,
        words: &mut Vec<(u16, u64)>,
    ) -> Result<(), DriverError> {
        self.cfg_writes(&std::mem::take(words))?;
        self.flush_txq()
    }

    /// Takes the engine's next packet: a descriptor goes into the TX queue after the
    /// entries of what it caused (its path's `Send`, a READ's entry); a firmware
    /// datagram into the firmware TX queue. Returns whether there was one.
    pub(super) fn transmit_one(&mut self, nic: &mut Nic) -> Result<bool, DriverError> {
        // It may be a datagram: the firmware TX queue needs room for one.
        if self.ftq.room(&mut self.dev)? < 1 {
            return Ok(false);
        }
        let now = self.now();
        let buf = &mut self.buf;
        match timed(&mut self.time.engine_ns, || nic.poll_hardware(now, buf)) {
            Some(HwTransmit::Descriptor(d)) => {
                self.follow(nic)?;
                self.post_descriptor(&d)?;
            }
            Some(HwTransmit::Datagram(t)) => {
                // What it caused goes first, as for a descriptor: an atomic's
                // path `Send` and its READ entry (its response is matched there).
                self.follow(nic)?;
                self.post_datagram(&t);
            }
            None => {
                // Nothing to send, but the look may have failed a QP (its source
                // region was deregistered): its completions and state.
                self.follow(nic)?;
                return Ok(false);
            }
        }
        Ok(true)
    }

    pub(super) fn post_descriptor(&mut self, d: &TxDescriptor) -> Result<(), DriverError> {
        if self.peer.is_none_or(|p| p.0 != d.dst_ip) {
            // The TX builder has one peer.
            self.stats.interface_errors += 1;
            return Ok(());
        }
        if let Some((addr, data)) = self.tables.entropy_write(d) {
            self.txq_push(&tables::cfg_words(addr, data))?;
            self.stats.entropy_writes += 1;
        }
        let len = d.payload_len as usize;
        if len > 0 {
            self.dev.sync_for_device(d.payload_addr, len)?;
        }
        self.txq_push(&tables::desc_words(
            &d.repr,
            d.ecn_capable,
            d.payload_addr,
            d.payload_len as u16,
        ))?;
        self.stats.descriptors += 1;
        self.time.descriptors += 1;
        Ok(())
    }

    pub(super) fn post_datagram(&mut self, t: &Transmit) {
        let len = t.len.min(regs::FW_SLOT_BYTES);
        if t.len > len || len == 0 {
            self.stats.interface_errors += 1;
            return;
        }
        let ip = u128::from_be_bytes(tables::mapped(t.dst_ip));
        let hdr = [
            ip as u64,
            (ip >> 64) as u64,
            u64::from(t.src_port) | u64::from(t.dst_port) << 16 | (len as u64) << 32,
            0,
        ];
        self.ftq.push(&hdr, &self.buf[..len]);
        self.stats.firmware_frames += 1;
    }
}

//! The firmware's own queues in the RTL: the receive queue (`m_fw_*`)
//! that hands verdict-10 datagrams up whole, checked against the frames
//! that came in, and the transmit port (`s_fwtx_*`) the datagrams the
//! firmware builds itself go down.

use super::firmware::Input;
use super::{HwNic, LANES};
use crate::frame::mapped;

impl HwNic {
    /// Firmware transmit port: the first datagram's next beat (in `beat`),
    /// its addressing held.
    pub(super) fn drive_fw_tx(&mut self, beat: &mut [u8; LANES]) {
        self.fw_tx_beat = None;
        let [dst_ip, src_port, dst_port] = self.p.fw_tx_addr;
        match self.fw_tx.front() {
            Some((bytes, t)) => {
                let n = (bytes.len() - self.fw_tx_off).min(LANES);
                beat[..n].copy_from_slice(&bytes[self.fw_tx_off..self.fw_tx_off + n]);
                let last = self.fw_tx_off + n == bytes.len();
                self.p.fw_tx.offer(&mut self.sim, beat, n, last);
                let mut ip = mapped(t.dst_ip);
                ip.reverse();
                self.sim.set_bytes(dst_ip, &ip);
                self.sim.set(src_port, t.src_port.into());
                self.sim.set(dst_port, t.dst_port.into());
                self.fw_tx_beat = Some(n);
            }
            None => self.p.fw_tx.idle(&mut self.sim),
        }
    }

    /// The firmware transmit port's beat taken, and the receive queue's
    /// beat (a verdict-10 datagram's bytes).
    pub(super) fn observe_fw(&mut self) {
        if let Some(n) = self.fw_tx_beat {
            if self.p.fw_tx.ready(&mut self.sim) {
                self.fw_tx_off += n;
                if self
                    .fw_tx
                    .front()
                    .is_some_and(|(b, _)| self.fw_tx_off == b.len())
                {
                    self.fw_tx.pop_front();
                    self.fw_tx_off = 0;
                }
            }
        }
        if self.p.fw.take(&mut self.sim, &mut self.fw_bytes) == Some(true) {
            let [len, trunc, src_port] = self.p.fw_meta.map(|p| self.sim.get(p));
            self.on_fw_datagram(len as usize, trunc == 1, src_port as u16);
        }
    }

    /// The firmware's receive side: a datagram the RTL handed up whole
    /// (checked against the frame that came in, then queued for the engine).
    pub(super) fn on_fw_datagram(&mut self, len: usize, trunc: bool, src_port: u16) {
        let bytes = std::mem::take(&mut self.fw_bytes);
        let expected = self.fw_expect.pop_front().flatten();
        let same = expected.as_ref().is_some_and(|(want, meta)| {
            want.len() == len && want.starts_with(&bytes) && meta.src_port == src_port
        });
        if !same || (!trunc && bytes.len() != len) {
            self.counters.fw_rx_mismatches += 1;
        }
        let waiting = self
            .inbox
            .iter()
            .position(|i| matches!(i, Input::Datagram(None)));
        if trunc {
            self.counters.fw_rx_truncated += 1;
            if let Some(at) = waiting {
                self.inbox.remove(at);
            }
            return;
        }
        let input = Input::Datagram(Some((bytes, src_port)));
        match waiting {
            Some(at) => self.inbox[at] = input,
            None => self.inbox.push_back(input),
        }
    }
}

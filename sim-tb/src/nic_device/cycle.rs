//! One clock cycle of the bench ([`DeviceTb::step`]): the host's side of
//! every port (BAR, MAC RX source, MAC TX sink, DMA read requests and
//! completions, DMA writes, interrupts) driven, then the cycle's handshakes
//! observed, and each finished DMA write checked against the rings and
//! regions the host has set up.

use super::host::ReadReq;
use super::regs;
use super::tb::DeviceTb;
use crate::device_port::LANES;
use crate::nic_core::ack_of;

/// Which of the host's sinks are ready this cycle.
#[derive(Clone, Copy)]
struct Readies {
    /// The MAC TX sink.
    mac: bool,
    /// The DMA read request port.
    rd: bool,
    /// The DMA write port.
    wr: bool,
}

impl DeviceTb<'_> {
    /// One clock cycle: the host's side of every port, then the edge.
    pub(super) fn step(&mut self) {
        self.drive_bar();
        self.drive_mac_rx();
        let ready = Readies {
            mac: !self.knob(self.knobs.mac_stall),
            rd: !self.knob(self.knobs.dmar_stall),
            wr: !self.knob(self.knobs.dmaw_stall),
        };
        // Read completions, in request order, once due.
        if self.cpl.is_none() && !self.knob(self.knobs.dmac_stall) {
            self.next_completion();
        }
        self.drive_sinks(ready);
        self.sim.eval();

        // Observe the handshakes of this cycle.
        self.observe_bar_and_rx();
        let frame_done = self.take_tx_beat(ready.mac);
        self.take_read_request(ready.rd);
        if self.cpl.is_some() && self.p.dmac.ready(&mut self.sim) {
            self.cpl = None;
        }
        let finished = self.take_write_beat(ready.wr);
        if self.sim.get(self.p.irq_valid) == 1 {
            let vector = self.sim.get(self.p.irq_vector) as usize;
            self.irqs.push((self.cycle, vector));
        }
        self.sim.tick();
        self.cycle += 1;
        if let Some((addr, len)) = finished {
            self.write = None;
            self.write_done(addr, len);
        }
        if let Some(f) = frame_done {
            self.tx_data += u64::from(ack_of(&f).is_none());
            self.tx_frames.push(f);
        }
    }

    /// The time and the BAR request of this cycle.
    fn drive_bar(&mut self) {
        let p = &self.p;
        let sim = &mut self.sim;
        sim.set(p.now, self.cycle * 10);
        let (wv, wa, wd) = self.bar_wr.take().map_or((0, 0, 0), |(a, d)| (1, a, d));
        sim.set(p.bar_wr_valid, wv);
        sim.set(p.bar_wr_addr, wa.into());
        sim.set(p.bar_wr_data, wd.into());
        let (rv, ra) = self.bar_rd.take().map_or((0, 0), |a| (1, a));
        sim.set(p.bar_rd_valid, rv);
        sim.set(p.bar_rd_addr, ra.into());
    }

    /// MAC RX: a beat, once offered, stays until taken.
    fn drive_mac_rx(&mut self) {
        if self.rx_on
            && !self.rx_offered
            && self.rx_next < self.rx_wire.len()
            && !self.knob(self.knobs.rx_idle)
        {
            self.rx_offered = true;
        }
        let p = &self.p;
        let sim = &mut self.sim;
        if self.rx_offered {
            let f = &self.rx_wire[self.rx_next];
            let end = (self.rx_off + LANES).min(f.len());
            p.rx.offer(sim, &f[self.rx_off..end], end - self.rx_off, end == f.len());
        } else {
            p.rx.idle(sim);
        }
    }

    /// The next completion beat of the oldest read request, if it is due.
    fn next_completion(&mut self) {
        let cycle = self.cycle;
        let Some(r) = self.reads.front_mut().filter(|r| r.due <= cycle) else {
            return;
        };
        if r.len == 0 {
            self.errors.push(format!(
                "zero-length DMA read at {:#x} (tag {})",
                r.addr, r.tag
            ));
            r.len = 1;
        }
        let n = (r.len - r.sent).min(LANES);
        let data = self.mem.read(r.addr + r.sent as u64, n);
        if data.is_none() {
            self.errors.push(format!(
                "DMA read of unmapped memory at {:#x} (tag {})",
                r.addr, r.tag
            ));
        }
        r.sent += n;
        let last = r.sent == r.len;
        self.cpl = Some((data.unwrap_or(vec![0; n]), last, r.tag));
        if last {
            self.reads.pop_front();
        }
    }

    /// The readies of the host's sinks and the completion beat offered.
    fn drive_sinks(&mut self, ready: Readies) {
        let p = &self.p;
        let sim = &mut self.sim;
        p.tx.set_ready(sim, ready.mac);
        sim.set(p.dmar_ready, ready.rd.into());
        p.dmaw.set_ready(sim, ready.wr);
        sim.set(p.irq_ready, 1);
        match &self.cpl {
            Some((data, last, tag)) => {
                p.dmac.offer(sim, data, data.len(), *last);
                sim.set(p.dmac_tag, (*tag).into());
            }
            None => p.dmac.idle(sim),
        }
    }

    /// A BAR read response; the MAC RX beat taken.
    fn observe_bar_and_rx(&mut self) {
        let p = &self.p;
        let sim = &mut self.sim;
        if sim.get(p.bar_rd_resp_valid) == 1 {
            self.bar_resp = Some(sim.get(p.bar_rd_resp_data) as u32);
        }
        if self.rx_offered && p.rx.ready(sim) {
            self.rx_offered = false;
            self.rx_off += LANES;
            if self.rx_off >= self.rx_wire[self.rx_next].len() {
                self.rx_next += 1;
                self.rx_off = 0;
            }
        }
    }

    /// A MAC TX beat taken; returns the frame it ends.
    fn take_tx_beat(&mut self, mac_ready: bool) -> Option<Vec<u8>> {
        let p = &self.p;
        let sim = &mut self.sim;
        if mac_ready && p.tx.take(sim, &mut self.tx_cur) == Some(true) {
            return Some(std::mem::take(&mut self.tx_cur));
        }
        None
    }

    /// A DMA read request taken: queued, answered after the latency.
    fn take_read_request(&mut self, rd_ready: bool) {
        let p = &self.p;
        let sim = &mut self.sim;
        if rd_ready && sim.get(p.dmar_valid) == 1 {
            self.reads.push_back(ReadReq {
                due: self.cycle + self.knobs.read_latency,
                addr: sim.get(p.dmar_addr),
                len: sim.get(p.dmar_len) as usize,
                tag: sim.get(p.dmar_tag) as u8,
                sent: 0,
            });
        }
    }

    /// A DMA write beat taken and applied to host memory; returns the
    /// (address, length) of the write it ends.
    fn take_write_beat(&mut self, wr_ready: bool) -> Option<(u64, usize)> {
        let p = &self.p;
        let sim = &mut self.sim;
        let mut beat = [0u8; LANES];
        if !wr_ready {
            return None;
        }
        let (n, last) = p.dmaw.read_beat(sim, &mut beat)?;
        let first = sim.get(p.dmaw_first) == 1;
        if first != self.write.is_none() {
            self.errors
                .push(format!("cycle {}: m_dmaw_first out of step", self.cycle));
        }
        if first {
            self.write = Some((sim.get(p.dmaw_addr), sim.get(p.dmaw_len) as usize, 0));
        }
        let (addr, len, done) = self.write.as_mut()?;
        // Applied beat by beat, as a host would see the bytes land.
        if !self.mem.write(*addr + *done as u64, &beat[..n]) {
            self.errors
                .push(format!("DMA write to unmapped memory at {:#x}", *addr));
        }
        *done += n;
        if !last {
            return None;
        }
        if *done != *len {
            self.errors.push(format!(
                "DMA write at {addr:#x}: {done} bytes for length {len}"
            ));
        }
        Some((*addr, *len))
    }

    /// A finished DMA write: which ring or region it was, checked against
    /// what the host has freed.
    fn write_done(&mut self, addr: u64, len: usize) {
        // The cycle of the last beat's handshake (`step` has counted it).
        let cycle = self.cycle - 1;
        self.writes.push((addr, len, cycle));

        if self.evq.holds(addr) {
            let want = self.evq.slot(self.evq_written);
            if addr != want || len != regs::EVQ_ENTRY {
                self.errors.push(format!(
                    "event entry {} written at {addr:#x} ({len} B), expected {want:#x}",
                    self.evq_written
                ));
            }
            if self.evq_written.wrapping_sub(self.evq.dev) >= self.evq.size() {
                self.errors.push(format!(
                    "event entry {} overwrote an entry the host had not freed (CONS {})",
                    self.evq_written, self.evq.dev
                ));
            }
            self.evq_written += 1;
            self.evq_done.push(cycle);
        } else if self.frq.holds(addr) {
            self.frq_write_done(addr, len, cycle);
        } else if addr >= self.mr_range.0 && addr < self.mr_range.1 {
            self.mr_writes += 1;
            self.mr_addrs.push(addr);
        } else {
            self.errors.push(format!(
                "DMA write at {addr:#x} ({len} B) outside every region"
            ));
        }
    }

    /// A finished write into the firmware receive ring: an entry's data,
    /// then its header.
    fn frq_write_done(&mut self, addr: u64, len: usize, cycle: u64) {
        let slot = self.frq.slot(self.frq_written);
        if self.frq_written.wrapping_sub(self.frq.dev) >= self.frq.size() {
            self.errors.push(format!(
                "firmware receive entry {} overwrote an unfreed entry",
                self.frq_written
            ));
        }
        if addr == slot && self.frq_data_written == self.frq_written {
            self.frq_data_written += 1;
        } else if addr == slot + regs::FW_SLOT_BYTES as u64
            && len == 8
            && self.frq_data_written == self.frq_written + 1
        {
            self.frq_written += 1;
            self.frq_done.push(cycle);
        } else {
            self.errors.push(format!(
                "firmware receive ring write at {addr:#x} ({len} B) out of order"
            ));
        }
    }
}

//! Host memory as the RTL reaches it: the DMA port's writes land in it,
//! the payload fetch port reads from it (requests always taken, data a
//! beat a cycle), every access checked against its range.

use metaroce_firmware::{Memory, VecMemory};

use super::{HwNic, LANES};

/// `addr .. addr + len` lies in host memory.
fn mem_range(mem: &VecMemory, addr: u64, len: usize) -> bool {
    addr.checked_sub(mem.base())
        .and_then(|o| o.checked_add(len as u64))
        .is_some_and(|end| end <= mem.len() as u64)
}

impl HwNic {
    /// Payload fetch: requests always taken, the first fetch's next beat
    /// (in `beat`).
    pub(super) fn drive_fetch(&mut self, beat: &mut [u8; LANES]) {
        self.sim.set(self.feed.rd_ready, 1);
        match self.fetch.front() {
            Some(&(addr, len)) => {
                let n = (len - self.fetch_off).min(LANES);
                let at = addr + self.fetch_off as u64;
                if mem_range(&self.mem, at, n) {
                    beat[..n].copy_from_slice(self.mem.slice(at, n));
                } else {
                    beat[..n].fill(0);
                }
                let last = self.fetch_off + n == len;
                self.feed.pay.offer(&mut self.sim, beat, n, last);
            }
            None => self.feed.pay.idle(&mut self.sim),
        }
    }

    /// DMA writes into host memory, a beat a cycle; a write is applied
    /// whole at its last beat, when it lies in memory and its length
    /// agrees with its data.
    pub(super) fn observe_dma(&mut self) {
        if !self.p.dma.valid(&mut self.sim) {
            return;
        }
        if self.sim.get(self.p.dma_first) == 1 {
            let addr = self.sim.get(self.p.dma_addr);
            let len = self.sim.get(self.p.dma_len) as usize;
            self.dma = Some((addr, len, Vec::with_capacity(len)));
        }
        let mut stray = Vec::new();
        let data = match self.dma.as_mut() {
            Some((_, _, data)) => data,
            None => {
                self.counters.interface_errors += 1;
                &mut stray
            }
        };
        if self.p.dma.take(&mut self.sim, data) != Some(true) {
            return;
        }
        self.dma_done += 1;
        if let Some((addr, len, data)) = self.dma.take() {
            if data.len() == len && mem_range(&self.mem, addr, len) {
                self.mem.write(addr, &data);
                self.counters.dma_writes += 1;
                self.counters.dma_bytes += len as u64;
            } else {
                self.counters.interface_errors += 1;
            }
        }
    }

    /// Fetch requests (queued) and the data beat taken.
    pub(super) fn observe_fetch(&mut self) {
        if self.sim.get(self.feed.rd_valid) == 1 {
            let addr = self.sim.get(self.feed.rd_addr);
            let len = self.sim.get(self.feed.rd_len) as usize;
            if !mem_range(&self.mem, addr, len) {
                self.counters.interface_errors += 1;
            }
            if len > 0 {
                self.fetch.push_back((addr, len));
                self.counters.fetches += 1;
            }
        }
        if let Some(&(_, len)) = self.fetch.front() {
            if self.feed.pay.ready(&mut self.sim) {
                self.fetch_off += (len - self.fetch_off).min(LANES);
                if self.fetch_off == len {
                    self.fetch.pop_front();
                    self.fetch_off = 0;
                }
            }
        }
    }
}

//! The host's consumer side during the run: the event ring and the
//! firmware receive ring read by their phase bits and freed, each event
//! decoded (verdict, fate, operation result and its slot view), a placed
//! packet's event checked against the data written before it.

use metaroce_driver::hw::tables;

use super::DeviceRun;
use super::regs;
use super::tb::DeviceTb;

/// One verdict event as the host read it.
pub(super) struct VerdictEv {
    /// The verdict code.
    pub(super) code: u8,
    /// The datagram's opcode.
    pub(super) opcode: u8,
    /// Its destination QP.
    pub(super) dst_qpn: u32,
    /// Its path.
    pub(super) path: u16,
    /// Its path PSN.
    pub(super) path_psn: u32,
    /// Its payload length.
    pub(super) len: u16,
    /// Its UDP source port.
    pub(super) src_port: u16,
}

/// A TX table operation's result entry, its view entry, and the fate
/// events read by then.
pub(super) type OpResult = ([u64; 8], [u64; 8], usize);

/// A firmware receive entry: (UDP source port, datagram length, cut to the
/// slot, the bytes in the slot).
pub(super) type FwRx = (u16, u16, bool, Vec<u8>);

/// What the host read from the event ring and the firmware receive ring.
#[derive(Default)]
pub(super) struct Consumer {
    /// Verdict events, in order.
    pub(super) verdicts: Vec<VerdictEv>,
    /// Fate events: (raised by the hardware path, lost, connection PSN).
    pub(super) fates: Vec<(bool, bool, u32)>,
    /// Queued operations' results, in order.
    pub(super) results: Vec<OpResult>,
    /// Firmware receive entries, in order.
    pub(super) fw_rx: Vec<FwRx>,
    /// A result entry waiting for its view entry.
    result_entry: Option<[u64; 8]>,
    /// Verdict events of placed packets with a payload.
    placed_seen: u64,
}

impl Consumer {
    /// Reads every new event entry by its phase bit, then frees them
    /// (`EVQ.CONS`).
    pub(super) fn event_ring(&mut self, tb: &mut DeviceTb, run: &mut DeviceRun) {
        let mut consumed = false;
        loop {
            let slot = tb.evq.slot(tb.evq.idx);
            let w7 = tb.mem.u64_at(slot + 56);
            if (w7 >> 63 == 1) != tb.evq.phase(tb.evq.idx) {
                break;
            }
            let e = tb.mem.read(slot, 64).expect("mapped");
            if w7 as u32 != tb.evq.idx {
                tb.errors.push(format!(
                    "event entry {}: sequence {}",
                    tb.evq.idx, w7 as u32
                ));
            }
            self.event(tb, &e, ((w7 >> 56) & 0xF) as u8);
            tb.evq.idx += 1;
            run.evq_max_fill = run
                .evq_max_fill
                .max(u64::from(tb.evq_written.wrapping_sub(tb.evq.dev)));
            consumed = true;
        }
        if consumed {
            tb.evq.dev = tb.evq.idx;
            let cons = tb.evq.idx;
            tb.bar_write(tb.reg(regs::evq::TYPE, regs::evq::CONS), cons);
        }
    }

    /// One event entry `e` of type `ty`.
    fn event(&mut self, tb: &mut DeviceTb, e: &[u8], ty: u8) {
        let words: [u64; 8] = std::array::from_fn(|i| le(e, 8 * i, 8));
        if self.result_entry.is_some() && ty != regs::EV_VIEW {
            tb.errors.push(format!(
                "event entry {}: type {ty} after a result entry, not its view",
                tb.evq.idx
            ));
            self.result_entry = None;
        }
        match ty {
            regs::EV_VERDICT => self.verdict(tb, e, &words),
            regs::EV_FATE => {
                let w0 = le(e, 0, 8);
                self.fates
                    .push((w0 >> 33 & 1 == 1, w0 >> 32 & 1 == 1, w0 as u32));
            }
            regs::EV_OP_RESULT => self.result_entry = Some(words),
            regs::EV_VIEW => match self.result_entry.take() {
                Some(a) => self.results.push((a, words, self.fates.len())),
                None => tb.errors.push(format!(
                    "event entry {}: a view entry with no result before it",
                    tb.evq.idx
                )),
            },
            t => tb
                .errors
                .push(format!("event entry {}: type {t}", tb.evq.idx)),
        }
    }

    /// A verdict event: a placed packet's only after its data, carrying the
    /// address its data was written at; no other carries an address.
    fn verdict(&mut self, tb: &mut DeviceTb, e: &[u8], words: &[u64; 8]) {
        let v = VerdictEv {
            dst_qpn: le(e, 0, 4) as u32,
            opcode: e[4],
            path_psn: le(e, 8, 4) as u32,
            path: le(e, 12, 2) as u16,
            len: le(e, 48, 2) as u16,
            src_port: le(e, 50, 2) as u16,
            code: e[52] & 0x1F,
        };
        let addr = tables::placed_addr(words);
        if v.code == 0 && v.len > 0 {
            self.placed_seen += 1;
            if tb.mr_writes < self.placed_seen {
                tb.errors.push(format!(
                    "verdict event {} (placed) visible before its data: {} of {} placements written",
                    self.verdicts.len(),
                    tb.mr_writes,
                    self.placed_seen
                ));
            }
            let want = tb.mr_addrs.get(self.placed_seen as usize - 1).copied();
            if addr.is_none() || addr != want {
                tb.errors.push(format!(
                    "verdict event {} (placed): address {addr:x?}, its data went to {want:x?}",
                    self.verdicts.len()
                ));
            }
        } else if addr.is_some() {
            tb.errors.push(format!(
                "verdict event {} (code {}, {} bytes) carries a placement address",
                self.verdicts.len(),
                v.code,
                v.len
            ));
        }
        self.verdicts.push(v);
    }

    /// Reads every new firmware receive entry by its phase bit, then frees
    /// them (`FRQ.CONS`).
    pub(super) fn fw_ring(&mut self, tb: &mut DeviceTb) {
        let mut consumed = false;
        loop {
            let slot = tb.frq.slot(tb.frq.idx);
            let hdr = tb.mem.u64_at(slot + regs::FW_SLOT_BYTES as u64);
            if (hdr >> 63 == 1) != tb.frq.phase(tb.frq.idx) {
                break;
            }
            let len = hdr as u16;
            let n = usize::from(len).min(regs::FW_SLOT_BYTES);
            let data = tb.mem.read(slot, n).expect("mapped");
            self.fw_rx
                .push(((hdr >> 16) as u16, len, hdr >> 32 & 1 == 1, data));
            tb.frq.idx += 1;
            consumed = true;
        }
        if consumed {
            tb.frq.dev = tb.frq.idx;
            let cons = tb.frq.idx;
            tb.bar_write(tb.reg(regs::frq::TYPE, regs::frq::CONS), cons);
        }
    }
}

/// The little-endian value of `n` bytes at `at`.
fn le(b: &[u8], at: usize, n: usize) -> u64 {
    let mut v = [0u8; 8];
    v[..n].copy_from_slice(&b[at..at + n]);
    u64::from_le_bytes(v)
}

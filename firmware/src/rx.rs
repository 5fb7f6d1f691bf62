//! The receiver half of a connection: per-path arrival tracking (cumulative
//! PSN plus 256-bit SACK), connection-level duplicate detection, receive
//! queues and per-stream in-order completion.

use alloc::collections::{BTreeMap, VecDeque};
use alloc::vec;
use alloc::vec::Vec;

use metaroce_proto::{AckEntry, AckRepr, MultiAckRepr, Opcode, SACK_BITS, Sack};

use crate::config::MAX_PATHS;
use crate::verbs::RecvWr;

/// Receive state of one path.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct RxPath {
    cum: u32,
    sack: Sack,
    rx_count: u32,
    ce_count: u32,
    echo_ts: u64,
    reply_port: u16,
    ece: bool,
    ack_pending: bool,
}

/// Outcome of marking a path PSN.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PathMark {
    /// First arrival.
    New,
    /// Seen before (still acknowledged again).
    Duplicate,
    /// Absurdly far ahead: dropped.
    OutOfWindow,
}

impl RxPath {
    /// Records the arrival of `psn`. A PSN more than 256 ahead slides the
    /// window: the sender only sends that far ahead once everything below has
    /// been resolved (acknowledged or declared lost) on its side.
    fn mark(&mut self, psn: u32) -> PathMark {
        let d = psn.wrapping_sub(self.cum);
        if d >= 1 << 31 {
            return PathMark::Duplicate;
        }
        if d >= 1 << 30 {
            return PathMark::OutOfWindow;
        }
        if d > SACK_BITS {
            let n = d - SACK_BITS;
            let cum_received = self.sack.get(n - 1);
            self.sack.shift_down(n);
            self.cum = self.cum.wrapping_add(n);
            if cum_received {
                self.advance_over_cum();
            }
            return self.mark(psn);
        }
        if d == 0 {
            self.advance_over_cum();
            return PathMark::New;
        }
        if self.sack.get(d - 1) {
            return PathMark::Duplicate;
        }
        self.sack.set(d - 1);
        PathMark::New
    }

    /// `cum` has arrived: move past it and every consecutive arrival after it.
    fn advance_over_cum(&mut self) {
        let ones = self.sack.leading_ones();
        self.sack.shift_down(ones + 1);
        self.cum = self.cum.wrapping_add(ones + 1);
    }
}

/// Connection-level set of accepted PSNs in `[cum, cum + window)`.
#[derive(Debug, Clone)]
pub(crate) struct ConnBitmap {
    cum: u32,
    window: u32,
    words: Vec<u64>,
}

/// Where a connection PSN falls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ConnCheck {
    /// Not yet accepted, inside the window.
    New,
    /// Accepted before.
    Duplicate,
    /// Beyond the window.
    OutOfWindow,
}

impl ConnBitmap {
    fn new(window: u32) -> Self {
        // A power of two, so `psn % window` never aliases across the 2^32 wrap.
        let words = window.div_ceil(64).max(1).next_power_of_two() as usize;
        ConnBitmap {
            cum: 0,
            window: (words * 64) as u32,
            words: vec![0; words],
        }
    }

    fn bit(&self, psn: u32) -> (usize, u64) {
        let i = psn % self.window;
        ((i / 64) as usize, 1 << (i % 64))
    }

    pub fn check(&self, psn: u32) -> ConnCheck {
        let d = psn.wrapping_sub(self.cum);
        if d >= 1 << 31 {
            ConnCheck::Duplicate
        } else if d >= self.window {
            ConnCheck::OutOfWindow
        } else {
            let (w, m) = self.bit(psn);
            if self.words[w] & m != 0 {
                ConnCheck::Duplicate
            } else {
                ConnCheck::New
            }
        }
    }

    /// Accepts a PSN that [`ConnBitmap::check`] found new.
    pub fn accept(&mut self, psn: u32) {
        let (w, m) = self.bit(psn);
        self.words[w] |= m;
        loop {
            let (w, m) = self.bit(self.cum);
            if self.words[w] & m == 0 {
                break;
            }
            self.words[w] &= !m;
            self.cum = self.cum.wrapping_add(1);
        }
    }

    pub fn cum(&self) -> u32 {
        self.cum
    }

    /// The window, PSNs (a power of two at least the receive window).
    pub fn window(&self) -> u32 {
        self.window
    }
}

/// A message being received.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RxMsg {
    pub opcode: Opcode,
    pub msn: u32,
    pub msg_len: u32,
    pub placed: u32,
    pub seen: bool,
    pub recv_idx: u32,
    pub imm: u32,
    pub solicited: bool,
    /// READ_REQ: what to read.
    pub remote_va: u64,
    /// READ_REQ: the key it was checked with.
    pub rkey: u32,
    /// Atomic request: its operands (add, or compare and swap).
    pub operands: [u64; 2],
}

impl RxMsg {
    fn complete(&self) -> bool {
        self.seen && self.placed >= self.msg_len
    }
}

/// A stream's receive side.
#[derive(Debug, Default, Clone)]
pub(crate) struct RxStream {
    next_msn: u32,
    pub msgs: BTreeMap<u32, RxMsg>,
    pub recvs: VecDeque<RecvWr>,
    /// recv_idx of `recvs[0]`.
    pub recv_base: u32,
}

impl RxStream {
    /// The posted receive a message with `recv_idx` consumes.
    pub fn receive_for(&self, recv_idx: u32) -> Option<&RecvWr> {
        let i = recv_idx.wrapping_sub(self.recv_base);
        self.recvs.get(i as usize).filter(|_| i < 1 << 31)
    }

    /// The MSN head: the oldest message not yet retired.
    pub fn msn_head(&self) -> u32 {
        self.next_msn
    }

    /// True when `msn` is older than every message still tracked.
    pub fn is_completed(&self, msn: u32) -> bool {
        msn.wrapping_sub(self.next_msn) >= 1 << 31
    }

    /// True when `msn` is less than `window` after the oldest message not
    /// yet completed (older ones are judged by [`RxStream::is_completed`]).
    pub fn msn_in_window(&self, msn: u32, window: u32) -> bool {
        let d = msn.wrapping_sub(self.next_msn);
        d >= 1 << 31 || d < window
    }

    /// Pops the next message in order if it is complete.
    pub fn pop_ready(&mut self) -> Option<RxMsg> {
        let msg = *self.msgs.get(&self.next_msn).filter(|m| m.complete())?;
        self.msgs.remove(&self.next_msn);
        self.next_msn = self.next_msn.wrapping_add(1);
        Some(msg)
    }
}

/// The receiver half.
pub(crate) struct Rx {
    paths: Vec<RxPath>,
    pending: VecDeque<u16>,
    pub conn: ConnBitmap,
    pub streams: Vec<RxStream>,
    /// Streams the QP carries; state for one is created on first use.
    max_streams: u16,
    pub last_data_ns: Option<u64>,
    /// The peer's packets carry MULTI_ACK_OK: it accepts MULTI_ACKs (§6.4).
    pub peer_multi_ack: bool,
}

impl Rx {
    pub fn new(streams: u16, window: u32) -> Self {
        Rx {
            paths: Vec::new(),
            pending: VecDeque::new(),
            conn: ConnBitmap::new(window),
            streams: Vec::new(),
            max_streams: streams,
            last_data_ns: None,
            peer_multi_ack: false,
        }
    }

    /// Sets the first connection PSN the peer sends (RTR).
    pub fn start(&mut self, initial_psn: u32) {
        self.conn.cum = initial_psn;
    }

    /// Records a packet's arrival on `path` (below [`MAX_PATHS`]) and
    /// schedules an ACK for it. A path's state is allocated when it first
    /// carries a packet.
    pub fn on_path_arrival(
        &mut self,
        path: u16,
        psn: u32,
        ts: u64,
        ce: bool,
        reply_port: u16,
    ) -> PathMark {
        let i = usize::from(path.min(MAX_PATHS - 1));
        if i >= self.paths.len() {
            self.paths.resize(i + 1, RxPath::default());
        }
        let p = &mut self.paths[i];
        let mark = p.mark(psn);
        if mark == PathMark::OutOfWindow {
            return mark;
        }
        p.rx_count = p.rx_count.wrapping_add(1);
        if ce {
            p.ce_count = p.ce_count.wrapping_add(1);
            p.ece = true;
        }
        p.echo_ts = p.echo_ts.max(ts);
        p.reply_port = reply_port;
        if !p.ack_pending {
            p.ack_pending = true;
            self.pending.push_back(path);
        }
        mark
    }

    /// The next ACK to send: (path, reply port, ECE, ACK fields).
    pub fn poll_ack(&mut self, rate_hint: u32, credit: u32) -> Option<(u16, u16, bool, AckRepr)> {
        let (entry, port) = self.poll_ack_entry(usize::MAX, |_| true)?;
        let conn = MultiAckRepr {
            conn_cum: self.conn.cum(),
            credit,
            rate_hint,
            count: 1,
        };
        Some((entry.path, port, entry.ece, entry.ack(&conn)))
    }

    /// The reply port of the first pending path whose reply port `ready`
    /// accepts, else of the first pending path; `None` when none is pending.
    pub fn ack_port(&self, ready: impl Fn(u16) -> bool) -> Option<u16> {
        let port = |&path: &u16| self.paths[usize::from(path)].reply_port;
        let first = self.pending.front().map(port)?;
        Some(
            self.pending
                .iter()
                .map(port)
                .find(|&p| ready(p))
                .unwrap_or(first),
        )
    }

    /// The ACK of the first pending path whose reply port `keep` accepts,
    /// as a MULTI_ACK entry with that reply port, if its entry takes at
    /// most `room` bytes (else it stays pending).
    pub fn poll_ack_entry(
        &mut self,
        room: usize,
        keep: impl Fn(u16) -> bool,
    ) -> Option<(AckEntry, u16)> {
        let at = (self.pending.iter())
            .position(|&path| keep(self.paths[usize::from(path)].reply_port))?;
        let path = self.pending[at];
        let p = &mut self.paths[usize::from(path)];
        let entry = AckEntry {
            path,
            ece: p.ece,
            path_cum: p.cum,
            sack: p.sack,
            echo_ts: p.echo_ts,
            ce_count: p.ce_count,
            rx_count: p.rx_count,
        };
        if entry.wire_len() > room {
            return None;
        }
        self.pending.remove(at);
        p.ack_pending = false;
        p.ece = false;
        Some((entry, p.reply_port))
    }

    /// The receive state of stream `id`, created on first use; `None` beyond
    /// the QP's streams.
    pub fn stream_mut(&mut self, id: usize) -> Option<&mut RxStream> {
        if id >= usize::from(self.max_streams) {
            return None;
        }
        if id >= self.streams.len() {
            self.streams.resize_with(id + 1, RxStream::default);
        }
        self.streams.get_mut(id)
    }

    /// Flushes every posted receive (QP to ERR), in order.
    pub fn drain_receives(&mut self) -> impl Iterator<Item = RecvWr> + '_ {
        self.streams.iter_mut().flat_map(|s| s.recvs.drain(..))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_tracking_advances_over_holes_once_filled_and_slides_past_256() {
        let mut p = RxPath::default();
        assert_eq!(p.mark(0), PathMark::New);
        assert_eq!(p.mark(2), PathMark::New);
        assert_eq!((p.cum, p.sack.get(0)), (1, true));
        assert_eq!(p.mark(2), PathMark::Duplicate);
        assert_eq!(p.mark(1), PathMark::New);
        assert_eq!((p.cum, p.sack.is_empty()), (3, true));
        // 3 is lost for good; 300 arrives: the window slides so 300 fits.
        assert_eq!(p.mark(300), PathMark::New);
        assert_eq!(p.cum, 300 - SACK_BITS - 1 + 1);
        assert!(p.sack.get(300 - p.cum - 1));
        assert_eq!(p.mark(0), PathMark::Duplicate);
        assert_eq!(p.mark(p.cum.wrapping_add(1 << 30)), PathMark::OutOfWindow);
    }

    #[test]
    fn connection_bitmap_dedups_and_bounds_the_window() {
        let mut c = ConnBitmap::new(128);
        c.cum = u32::MAX - 1; // across the wrap
        assert_eq!(c.check(u32::MAX), ConnCheck::New);
        c.accept(u32::MAX);
        assert_eq!(c.check(u32::MAX), ConnCheck::Duplicate);
        assert_eq!(c.cum(), u32::MAX - 1);
        c.accept(u32::MAX - 1);
        assert_eq!(c.cum(), 0);
        assert_eq!(c.check(u32::MAX - 5), ConnCheck::Duplicate);
        assert_eq!(c.check(127), ConnCheck::New);
        assert_eq!(c.check(128), ConnCheck::OutOfWindow);
    }
}

//! The engine's side: the senders' paths, the ACKs the receivers send, and what the table must do with each.
use std::collections::VecDeque;
use std::net::IpAddr;

use metaroce_firmware::SlotFate;
use metaroce_proto::{AckRepr, Ext, Flags, Opcode, Packet, PseudoHeader, Repr};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::{AckRxRun, LOCAL, QPNS, UNKNOWN_QPN, qp_path};
use crate::frame::peer_frame;
use crate::rx_parser::Frame;
use crate::rx_path::{self, Arrival, Engine};
use crate::tx_path::{Golden, Op, OpResult, SLOTS};

/// What the table finished, in the RTL's order.
pub(super) enum Done {
    /// A firmware operation: slot, operation, result (with its fates).
    Fw(usize, Op, OpResult),
    /// An ACK the hardware applied: slot, packets, bytes, `conn_cum`, fates.
    Hw(usize, u32, u32, u32, Vec<SlotFate>),
    /// An ACK the hardware refused (spec §5.5 step 0).
    Refused,
}

/// A fed ACK the RTL must apply or refuse (as the engine decides when its
/// turn comes): its slot and the engine's parse of it.
pub(super) struct Expected {
    pub(super) slot: usize,
    pub(super) ack: AckRepr,
    /// Description for mismatch messages.
    pub(super) what: String,
}

/// The network and engines around the table.
pub(super) struct World {
    pub(super) rng: SmallRng,
    pub(super) gold: Vec<Golden>,
    pub(super) rx: Vec<Engine>,
    /// Per slot: transmissions in flight (path PSN, send time).
    pub(super) net: Vec<Vec<(u32, u64)>>,
    /// Valid ACK frames sent before (slot, datagram, pseudo-header), for stale re-sends.
    pub(super) history: Vec<(usize, Vec<u8>, PseudoHeader)>,
    pub(super) next_conn_psn: u32,
    pub(super) now_ns: u64,
    pub(super) rtl_window: Vec<u32>,
    /// Per slot: `rx_count` of the newest ACK applied (the engine's
    /// `Tx::ack_rx_count`).
    pub(super) last_rx: Vec<u32>,
}

/// One round's input.
#[derive(Default)]
pub(super) struct Round {
    pub(super) frames: Vec<Vec<u8>>,
    pub(super) expected: VecDeque<Expected>,
    /// Firmware operations: (cycle of the round from which it is offered, slot, operation).
    pub(super) ops: VecDeque<(u64, usize, Op)>,
}

/// Offsets in the base header (`metaroce_proto::BaseHeader`).
pub(super) const DST_QPN_AT: usize = 4;
pub(super) const SRC_QPN_AT: usize = 8;
pub(super) const PATH_AT: usize = 14;
/// Offsets of the ACK extension's `path_cum`, `echo_ts`, `ce_count` and
/// `rx_count` (`metaroce_proto::AckHeader`).
pub(super) const PATH_CUM_AT: usize = metaroce_proto::BASE_LEN + 4;
pub(super) const ECHO_TS_AT: usize = metaroce_proto::BASE_LEN + 40;
pub(super) const CE_COUNT_AT: usize = metaroce_proto::BASE_LEN + 48;
pub(super) const RX_COUNT_AT: usize = metaroce_proto::BASE_LEN + 60;

impl World {
    pub(super) fn new(seed: u64) -> Self {
        World {
            rng: SmallRng::seed_from_u64(seed),
            gold: (0..SLOTS).map(|s| Golden::new(0xC000 + s as u16)).collect(),
            rx: QPNS.iter().map(|&q| Engine::with_peer_qpn(q)).collect(),
            net: vec![Vec::new(); SLOTS],
            history: Vec::new(),
            next_conn_psn: 0,
            now_ns: 1_000_000,
            rtl_window: vec![0; SLOTS],
            last_rx: vec![0; SLOTS],
        }
    }

    /// The next round: deliveries and the ACKs they cause (with hostile
    /// variants, stale re-sends and PROBEs), and the firmware's operations.
    pub(super) fn round(&mut self, run: &mut AckRxRun) -> Round {
        self.now_ns += self.rng.gen_range(1_000..40_000);
        let mut r = Round::default();
        for _ in 0..self.rng.gen_range(0..=4) {
            let slot = self.rng.gen_range(0..SLOTS);
            self.deliver(slot, &mut r, run);
        }
        if self.rng.gen_bool(0.1) {
            self.peer_probe(&mut r, run);
        }
        if self.rng.gen_bool(0.05) && !self.history.is_empty() {
            let (slot, bytes, pseudo) =
                self.history[self.rng.gen_range(0..self.history.len())].clone();
            self.feed_valid(slot, bytes, pseudo, "stale", &mut r);
            run.stale += 1;
        }
        let mut ops = Vec::new();
        for _ in 0..self.rng.gen_range(0..=4) {
            let slot = self.rng.gen_range(0..SLOTS);
            if let Some(op) = self.send_op(slot) {
                ops.push((slot, op));
            }
        }
        if self.rng.gen_bool(0.03) {
            let slot = self.rng.gen_range(0..SLOTS);
            let entropy = self.rng.r#gen();
            let op = if self.rng.gen_bool(0.5) {
                Op::Timeout { entropy }
            } else {
                Op::Move { entropy }
            };
            ops.push((slot, op));
        }
        // Offered at random points while the frames arrive (an ACK frame
        // is about 20 cycles), so they meet the ACKs' operations.
        let span = 24 * r.frames.len() as u64 + 8;
        let mut at: Vec<u64> = ops.iter().map(|_| self.rng.gen_range(0..span)).collect();
        at.sort_unstable();
        r.ops = at
            .into_iter()
            .zip(ops)
            .map(|(t, (slot, op))| (t, slot, op))
            .collect();
        r
    }

    /// A send on `slot` as the engine would make it: data when `can_send`
    /// allows it, a probe when quarantined; none near the 256-PSN limit.
    pub(super) fn send_op(&mut self, slot: usize) -> Option<Op> {
        let g = self.gold[slot].path();
        if g.slots_len() >= 200 {
            return None;
        }
        let len: u16 = self.rng.gen_range(0..=4096);
        let probe = g.stats().quarantined;
        if !probe && !g.can_send(len.into()) {
            return None;
        }
        self.next_conn_psn = self.next_conn_psn.wrapping_add(1);
        Some(Op::Send {
            conn_psn: self.next_conn_psn,
            len: if probe { 0 } else { len },
            probe,
            retx: !probe && self.rng.gen_bool(0.1),
        })
    }

    /// Delivers some of `slot`'s transmissions to its receiver and feeds
    /// the ACKs it sends (10 % lost, 10 % followed by a hostile variant).
    pub(super) fn deliver(&mut self, slot: usize, r: &mut Round, run: &mut AckRxRun) {
        let (qp, path) = qp_path(slot);
        for _ in 0..self.rng.gen_range(1..=4) {
            if self.net[slot].is_empty() {
                return;
            }
            let i = self.rng.gen_range(0..self.net[slot].len());
            let (psn, ts) = if self.rng.gen_bool(0.03) {
                self.net[slot][i]
            } else {
                self.net[slot].swap_remove(i)
            };
            let ev = Arrival {
                path,
                psn,
                ce: self.rng.gen_bool(0.2),
            };
            let entropy = self.gold[slot].path().stats().entropy;
            let (sent, _) = self.rx[qp].probe(ev, entropy, ts);
            for s in sent {
                if self.rng.gen_bool(0.1) {
                    continue;
                }
                let t = &s.transmit;
                let pseudo =
                    PseudoHeader::new(self.rx[qp].local_ip(), t.src_port, t.dst_ip, t.dst_port);
                if self.rng.gen_bool(0.1) {
                    self.hostile(s.bytes.clone(), pseudo, r, run);
                }
                if self.rng.gen_bool(0.06) {
                    self.forged(slot, s.bytes.clone(), pseudo, r, run);
                }
                let mut bytes = s.bytes;
                let kind = if self.rng.gen_bool(0.03) {
                    // A valid ACK whose echoed timestamp gives no RTT
                    // sample: 0 (no timestamp) or ahead of now.
                    let ts = match self.rng.gen_range(0..2) {
                        0 => 0,
                        _ => self.now_ns + self.rng.gen_range(1..1_000_000),
                    };
                    bytes[ECHO_TS_AT..ECHO_TS_AT + 8].copy_from_slice(&u64::to_be_bytes(ts));
                    Packet::new_unchecked(&mut bytes[..]).fill_icrc(&pseudo);
                    "no-RTT"
                } else {
                    "fresh"
                };
                self.history.push((slot, bytes.clone(), pseudo));
                if self.history.len() > 256 {
                    self.history.remove(0);
                }
                self.feed_valid(slot, bytes, pseudo, kind, r);
            }
        }
    }

    /// Feeds a valid ACK datagram for `slot`; the RTL must apply it.
    pub(super) fn feed_valid(
        &mut self,
        slot: usize,
        bytes: Vec<u8>,
        pseudo: PseudoHeader,
        kind: &str,
        r: &mut Round,
    ) {
        let parsed = Packet::new_checked(&bytes[..])
            .ok()
            .and_then(|p| Repr::parse(&p).ok());
        if let Some(Repr {
            opcode: Opcode::Ack,
            ext: Ext::Ack(ack),
            path,
            ..
        }) = parsed
        {
            r.expected.push_back(Expected {
                slot,
                ack,
                what: format!("{kind} ACK path {path} cum {:#x}", ack.path_cum),
            });
        }
        r.frames.push(peer_frame(&Frame { bytes, pseudo }, 0));
    }

    /// A hostile variant of an ACK datagram, which must change nothing.
    pub(super) fn hostile(
        &mut self,
        mut bytes: Vec<u8>,
        pseudo: PseudoHeader,
        r: &mut Round,
        run: &mut AckRxRun,
    ) {
        let kind = self.rng.gen_range(0..4);
        let put = |b: &mut Vec<u8>, at: usize, v: &[u8]| b[at..at + v.len()].copy_from_slice(v);
        match kind {
            0 => {
                // Inside the ACK extension, so the framing checks pass.
                let bit = self
                    .rng
                    .gen_range(8 * metaroce_proto::BASE_LEN..8 * (bytes.len() - 4));
                bytes[bit / 8] ^= 1 << (bit % 8);
            }
            1 => put(&mut bytes, DST_QPN_AT, &UNKNOWN_QPN.to_be_bytes()),
            2 => put(&mut bytes, SRC_QPN_AT, &(0x7777u32).to_be_bytes()),
            _ => {
                let path: u16 = self.rng.gen_range(rx_path::PATHS as u16..64);
                put(&mut bytes, PATH_AT, &path.to_be_bytes());
            }
        }
        if kind != 0 {
            Packet::new_unchecked(&mut bytes[..]).fill_icrc(&pseudo);
        }
        run.hostile[kind] += 1;
        r.frames.push(peer_frame(&Frame { bytes, pseudo }, 0));
    }

    /// A forged ACK that passes the receive core's checks (ICRC
    /// recomputed), which the engine refuses or applies without its CE
    /// count (spec §5.5 step 0): a path PSN never sent (`path_cum` at least
    /// 300 beyond what the path has sent: a round sends far fewer), a CE
    /// count 2^20 ahead of the receive count, or the same on a receive
    /// count 2^20 back (not the newest: applied, its CE count ignored).
    pub(super) fn forged(
        &mut self,
        slot: usize,
        mut bytes: Vec<u8>,
        pseudo: PseudoHeader,
        r: &mut Round,
        run: &mut AckRxRun,
    ) {
        let get = |b: &[u8], at: usize| u32::from_be_bytes(b[at..at + 4].try_into().expect("4"));
        let put =
            |b: &mut Vec<u8>, at: usize, v: u32| b[at..at + 4].copy_from_slice(&v.to_be_bytes());
        let kind = self.rng.gen_range(0..3);
        match kind {
            0 => {
                let next = self.gold[slot].path().view().next_psn;
                let cum = next.wrapping_add(300 + self.rng.gen_range(0..1 << 20));
                put(&mut bytes, PATH_CUM_AT, cum);
            }
            _ => {
                let ce =
                    get(&bytes, CE_COUNT_AT).wrapping_add((1 << 20) + self.rng.gen_range(0..1000));
                put(&mut bytes, CE_COUNT_AT, ce);
                if kind == 2 {
                    let rx = get(&bytes, RX_COUNT_AT).wrapping_sub(1 << 20);
                    put(&mut bytes, RX_COUNT_AT, rx);
                }
            }
        }
        Packet::new_unchecked(&mut bytes[..]).fill_icrc(&pseudo);
        run.forged[kind] += 1;
        let what = ["forged-unsent", "forged-ce", "forged-old-ce"][kind];
        self.feed_valid(slot, bytes, pseudo, what, r);
    }

    /// A PROBE from the peer to one of our QPs (verdict PROBE: another
    /// event between the ACKs).
    pub(super) fn peer_probe(&mut self, r: &mut Round, run: &mut AckRxRun) {
        let qp = self.rng.gen_range(0..2);
        let repr = Repr {
            opcode: Opcode::Probe,
            flags: Flags::ACK_REQ,
            dst_qpn: QPNS[qp],
            src_qpn: self.rx[qp].qpn(),
            stream: 0,
            path: self.rng.gen_range(0..8),
            // The connection's current PSN: nothing else arrives (§3.7).
            conn_psn: 0,
            path_psn: self.rng.gen_range(0..64),
            timestamp: self.now_ns,
            ext: Ext::None,
        };
        let pseudo = PseudoHeader::new(
            self.rx[qp].local_ip(),
            0xC123,
            IpAddr::V4(LOCAL),
            metaroce_proto::DEFAULT_UDP_PORT,
        );
        let mut bytes = vec![0u8; repr.buffer_len(0)];
        repr.emit(&mut bytes, 0).expect("emit PROBE");
        Packet::new_unchecked(&mut bytes[..]).fill_icrc(&pseudo);
        run.probes += 1;
        r.frames.push(peer_frame(&Frame { bytes, pseudo }, 0));
    }
}

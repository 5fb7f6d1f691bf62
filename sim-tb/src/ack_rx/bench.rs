//! The bench: `NicCore`'s ports it drives, one round of received ACKs and table operations cycle by cycle, and the replay of what the table finished against the engine.
use std::net::IpAddr;

use metaroce_firmware::{PathView, SlotFate};
use metaroce_proto::Opcode;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::ack_rx_codes::*;
use super::world::{Done, Round, World};
use super::{AckRxRun, LOCAL, QPNS, qp_path};
use crate::axis::Axis;
use crate::core_check::metaroce_hdl_codes::*;
use crate::frame::mapped_bits;
use crate::rx_path::{self, Engine};
use crate::tx_path::{Op, OpResult, ResultPorts, SLOTS, TxPathTb, diff_result};
use crate::{Model, Port, Sim, SimError};

/// Ports of the top the bench drives besides the table's.
pub(super) struct Ports {
    /// MAC RX (`s_axis_*`).
    pub(super) s: Axis,
    /// MAC TX (`m_axis_*`), always ready.
    pub(super) m: Axis,
    /// Placed payloads (`m_dma_*`), always ready.
    pub(super) dma: Axis,
    pub(super) now: Port,
    pub(super) cfg_we: Port,
    pub(super) cfg_addr: Port,
    pub(super) cfg_data: Port,
    pub(super) cnt_sel: Port,
    pub(super) cnt_val: Port,
    pub(super) op_valid: Port,
    pub(super) op_ready: Port,
    pub(super) res: ResultPorts,
    pub(super) fate_hw: Port,
    pub(super) ev_valid: Port,
    pub(super) ev_code: Port,
    pub(super) ev_opcode: Port,
    pub(super) ev_dst_qpn: Port,
    pub(super) ev_path: Port,
    pub(super) done_valid: Port,
    pub(super) done_slot: Port,
    pub(super) done_pkts: Port,
    pub(super) done_bytes: Port,
    pub(super) done_conn_cum: Port,
    /// `ackrx_cnt_applied`, `_unmapped`, `_overflow`, `_pair_err`, `_refused`.
    pub(super) cnt: [Port; 5],
}

impl Ports {
    pub(super) fn new(s: &Sim) -> Result<Self, SimError> {
        Ok(Ports {
            s: Axis::new(s, "s_axis")?,
            m: Axis::new(s, "m_axis")?,
            dma: Axis::new(s, "m_dma")?,
            now: s.port("now")?,
            cfg_we: s.port("cfg_we")?,
            cfg_addr: s.port("cfg_addr")?,
            cfg_data: s.port("cfg_data")?,
            cnt_sel: s.port("cnt_sel")?,
            cnt_val: s.port("cnt_val")?,
            op_valid: s.port("op_valid")?,
            op_ready: s.port("op_ready")?,
            res: ResultPorts::new(s)?,
            fate_hw: s.port("m_fate_hw")?,
            ev_valid: s.port("m_ev_valid")?,
            ev_code: s.port("m_ev_code")?,
            ev_opcode: s.port("m_ev_opcode")?,
            ev_dst_qpn: s.port("m_ev_dst_qpn")?,
            ev_path: s.port("m_ev_path")?,
            done_valid: s.port("m_ackrx_valid")?,
            done_slot: s.port("m_ackrx_slot")?,
            done_pkts: s.port("m_ackrx_pkts")?,
            done_bytes: s.port("m_ackrx_bytes")?,
            done_conn_cum: s.port("m_ackrx_conn_cum")?,
            cnt: [
                s.port("ackrx_cnt_applied")?,
                s.port("ackrx_cnt_unmapped")?,
                s.port("ackrx_cnt_overflow")?,
                s.port("ackrx_cnt_pair_err")?,
                s.port("ackrx_cnt_refused")?,
            ],
        })
    }
}

/// The bench: the top with the table driver on its ports.
pub(super) struct Bench {
    pub(super) tb: TxPathTb,
    pub(super) p: Ports,
    pub(super) rng: SmallRng,
}

impl Bench {
    pub(super) fn new(seed: u64, rx: &[Engine]) -> Result<Self, SimError> {
        let mut tb = TxPathTb::on(Model::NicCore64)?;
        let p = Ports::new(tb.sim())?;
        // The firmware receive queue is drained (it holds the input when full).
        let fw_ready = tb.sim().port("m_fw_tready")?;
        tb.sim().set(fw_ready, 1);
        let mut b = Bench {
            tb,
            p,
            rng: SmallRng::seed_from_u64(seed ^ 0xACC),
        };
        b.configure(rx);
        Ok(b)
    }

    pub(super) fn cfg(&mut self, addr: u16, data: u64) {
        let (p, sim) = (&self.p, self.tb.sim());
        sim.set(p.cfg_we, 1);
        sim.set(p.cfg_addr, addr.into());
        sim.set(p.cfg_data, data);
        sim.tick();
        sim.set(p.cfg_we, 0);
        sim.eval();
    }

    /// The receive core's QP entries (RTS, peer = the receiver engines),
    /// the local IP, and the slot map.
    pub(super) fn configure(&mut self, rx: &[Engine]) {
        for (e, (&qpn, engine)) in QPNS.iter().zip(rx).enumerate() {
            let e = e as u8;
            let a = |w| u16::from(cfg_addr(CFG_QP, e, w));
            let ip = mapped_bits(engine.local_ip());
            self.cfg(a(QP_QPNS), u64::from(qpn) | u64::from(engine.qpn()) << 32);
            self.cfg(a(QP_PEER_IP_HI), (ip >> 64) as u64);
            self.cfg(a(QP_PEER_IP_LO), ip as u64);
            self.cfg(a(QP_PD_STREAMS), 16 << 32);
            self.cfg(a(QP_CONN_PSN), 0);
            self.cfg(a(QP_PEER_PORT), metaroce_proto::DEFAULT_UDP_PORT.into());
            self.cfg(a(QP_CTRL), 1 | u64::from(QP_STATE_RTS) << 1);
        }
        let ip = mapped_bits(IpAddr::V4(LOCAL));
        self.cfg(
            cfg_addr(CFG_GLOBAL, 0, GLOBAL_LOCAL_IP_HI).into(),
            (ip >> 64) as u64,
        );
        self.cfg(
            cfg_addr(CFG_GLOBAL, 0, GLOBAL_LOCAL_IP_LO).into(),
            ip as u64,
        );
        for slot in 0..SLOTS {
            let (qp, path) = qp_path(slot);
            let word = u64::from(QPNS[qp]) | u64::from(path) << MAP_PATH_SHIFT | 1 << MAP_VALID_BIT;
            self.cfg(SLOT_MAP_CFG + slot as u16, word);
        }
        let (p, sim) = (&self.p, self.tb.sim());
        p.m.set_ready(sim, true);
        p.dma.set_ready(sim, true);
    }

    /// Runs one round in the RTL: the frames into MAC RX (source idle 20 %
    /// of cycles) while the firmware's operations go to the op port (the
    /// fate stream ready 75 %); returns what finished, in order.
    pub(super) fn run_round(&mut self, r: &mut Round, now: u64, run: &mut AckRxRun) -> Vec<Done> {
        self.tb.sim().set(self.p.now, now);
        let mut st = RoundState {
            seen_refused: self.tb.sim().get(self.p.cnt[4]),
            ..RoundState::default()
        };
        let want_applied = r.expected.len();
        loop {
            st.cycle += 1;
            let fed_active = self.feed(r, &mut st, run);
            let Some(active) = self.observe(r, &mut st, run) else {
                break;
            };
            let fed = st.frame == r.frames.len() && r.ops.is_empty();
            st.quiet = if fed_active || active {
                0
            } else {
                st.quiet + 1
            };
            // Done: everything fed and finished, then 64 quiet cycles (an
            // ACK applied that should not be would show up there).
            if fed && st.applied >= want_applied && st.quiet > 64 {
                break;
            }
            if st.quiet > 20_000 {
                run.mismatches.push(format!(
                    "round {}: stuck ({} of {} frames in, {} operations left, {} of {want_applied} ACKs applied)",
                    run.rounds,
                    st.frame,
                    r.frames.len(),
                    r.ops.len(),
                    st.applied,
                ));
                break;
            }
        }
        for (hw, f) in st.fates.iter().enumerate() {
            if !f.is_empty() {
                run.mismatches.push(format!(
                    "round {}: {} fate events (hw {hw}) after the last result",
                    run.rounds,
                    f.len()
                ));
            }
        }
        st.done
    }

    /// One cycle's inputs up to the clock edge: the next MAC RX beat, the
    /// firmware's next operation once due (held until taken), the fate
    /// stream's ready; then the handshakes and the fate event of the
    /// cycle. Whether a fate event came.
    pub(super) fn feed(&mut self, r: &Round, st: &mut RoundState, run: &mut AckRxRun) -> bool {
        let p = &self.p;
        let beat = r.frames.get(st.frame).map(|f| {
            let end = (st.at + 8).min(f.len());
            (&f[st.at..end], end == f.len())
        });
        let offer = beat.is_some() && !self.rng.gen_bool(0.2);
        match beat {
            Some((bytes, last)) if offer => p.s.offer(self.tb.sim(), bytes, bytes.len(), last),
            _ => p.s.idle(self.tb.sim()),
        }
        let pending = r
            .ops
            .front()
            .filter(|(due, ..)| st.cycle >= *due)
            .map(|(_, slot, op)| (*slot, op.clone()));
        if let Some((slot, op)) = &pending
            && !st.issued
        {
            self.tb.drive(*slot, op);
        }
        let ready = self.rng.gen_bool(0.75);
        let sim = self.tb.sim();
        sim.set(p.op_valid, (pending.is_some() && !st.issued).into());
        sim.set(p.res.fate_ready, ready.into());
        sim.eval();
        if offer && p.s.ready(sim) {
            st.at += 8;
            if beat.is_some_and(|(_, last)| last) {
                st.frame += 1;
                st.at = 0;
            }
        }
        if pending.is_some() && !st.issued {
            if sim.get(p.op_ready) == 1 {
                st.issued = true;
                run.fw_waited += u64::from(st.waited > 0);
                run.fw_max_wait = run.fw_max_wait.max(st.waited);
                st.waited = 0;
            } else {
                st.waited += 1;
            }
        }
        run.hw_cycles += sim.get(p.fate_hw);
        let Some(f) = p.res.fate(sim, ready) else {
            return false;
        };
        st.fates[sim.get(p.fate_hw) as usize].push(f);
        true
    }

    /// The clock edge, then what it brought: a mapped ACK's verdict event
    /// (for the latency), a firmware operation's result, a refused or an
    /// applied ACK, each appended to `st.done`. Whether anything finished,
    /// or `None` on a result no operation was waiting for.
    pub(super) fn observe(
        &mut self,
        r: &mut Round,
        st: &mut RoundState,
        run: &mut AckRxRun,
    ) -> Option<bool> {
        let p = &self.p;
        let sim = self.tb.sim();
        sim.tick();
        sim.set(p.op_valid, 0);
        sim.eval();
        let c = sim.cycles();
        if sim.get(p.ev_valid) == 1
            && sim.get(p.ev_code) == u64::from(V_FIRMWARE)
            && sim.get(p.ev_opcode) == Opcode::Ack as u64
            && QPNS.contains(&(sim.get(p.ev_dst_qpn) as u32))
            && sim.get(p.ev_path) < rx_path::PATHS as u64
        {
            st.last_ev = Some(c);
        }
        let busy = sim.get(p.fate_hw) == 1;
        if busy
            && !st.was_busy
            && let Some(e) = st.last_ev.take()
        {
            run.ev_to_busy_min = run.ev_to_busy_min.min(c - e);
        }
        st.was_busy = busy;
        let mut active = false;
        if sim.get(p.res.valid) == 1 {
            let Some((_, slot, op)) = r.ops.pop_front() else {
                run.mismatches.push(format!(
                    "round {}: res_valid without a firmware operation",
                    run.rounds
                ));
                return None;
            };
            let res = p.res.result(sim, std::mem::take(&mut st.fates[0]));
            st.done.push(Done::Fw(slot, op, res));
            st.issued = false;
            active = true;
        }
        // A refusal counts in the cycle after the ACK's turn.
        let refused = sim.get(p.cnt[4]);
        if refused != st.seen_refused {
            st.seen_refused = refused;
            st.done.push(Done::Refused);
            st.applied += 1;
            active = true;
        }
        if sim.get(p.done_valid) == 1 {
            st.done.push(Done::Hw(
                sim.get(p.done_slot) as usize,
                sim.get(p.done_pkts) as u32,
                sim.get(p.done_bytes) as u32,
                sim.get(p.done_conn_cum) as u32,
                std::mem::take(&mut st.fates[1]),
            ));
            st.applied += 1;
            active = true;
        }
        Some(active)
    }
}

/// Where a round stands in the RTL ([`Bench::run_round`]).
#[derive(Default)]
pub(super) struct RoundState {
    /// Clock cycles into the round.
    pub(super) cycle: u64,
    /// The frame MAC RX is at, and its next byte.
    pub(super) frame: usize,
    pub(super) at: usize,
    /// The firmware's pending operation was taken (its result not yet in).
    pub(super) issued: bool,
    /// Cycles the pending operation has waited for `op_ready`.
    pub(super) waited: u64,
    /// Fate events since the last result: the firmware's, the hardware's.
    pub(super) fates: [Vec<SlotFate>; 2],
    /// ACKs applied or refused.
    pub(super) applied: usize,
    /// `ackrx_cnt_refused` as last seen.
    pub(super) seen_refused: u64,
    /// Cycles without any event.
    pub(super) quiet: u64,
    /// The cycle of the last mapped ACK's verdict event not yet matched
    /// by `m_fate_hw` rising; whether `m_fate_hw` was high last cycle.
    pub(super) last_ev: Option<u64>,
    pub(super) was_busy: bool,
    /// What finished, in order.
    pub(super) done: Vec<Done>,
}

/// Replays the RTL's order on the engine and compares.
pub(super) fn replay(w: &mut World, r: &mut Round, done: Vec<Done>, run: &mut AckRxRun) {
    let now = w.now_ns;
    for d in done {
        match d {
            Done::Fw(slot, op, got) => {
                run.fw_ops += 1;
                let want = w.gold[slot].apply(&op, now);
                if let Some(m) = diff_result(&got, &want) {
                    run.mismatches
                        .push(format!("round {} slot {slot} {op:?}: {m}", run.rounds));
                }
                if let Op::Send { .. } = op
                    && got.ok
                    && !w.rng.gen_bool(0.08)
                {
                    w.net[slot].push((got.psn, now));
                }
            }
            Done::Refused | Done::Hw(..) => {
                let Some(e) = r.expected.pop_front() else {
                    run.mismatches.push(format!(
                        "round {}: ACK settled that the RTL must not take",
                        run.rounds
                    ));
                    continue;
                };
                let tag = format!("round {} {} (slot {})", run.rounds, e.what, e.slot);
                let ack = e.ack;
                // `Tx::on_ack`'s evidence check (spec §5.5 step 0).
                let v = *w.gold[e.slot].path().view();
                let rx_step = ack.rx_count.wrapping_sub(w.last_rx[e.slot]);
                let evidence = v.ack_evidence(ack.path_cum, &ack.sack, ack.ce_count, rx_step);
                let Done::Hw(slot, pkts, bytes, conn_cum, fates) = d else {
                    run.refused += 1;
                    if evidence.is_some() {
                        run.mismatches
                            .push(format!("{tag}: refused, the engine applies it"));
                    }
                    continue;
                };
                run.acks_applied += 1;
                if slot != e.slot {
                    run.mismatches
                        .push(format!("{tag}: applied to slot {slot}"));
                    continue;
                }
                let Some(ce_count) = evidence else {
                    run.mismatches
                        .push(format!("{tag}: applied, the engine refuses it"));
                    continue;
                };
                if rx_step < 1 << 31 {
                    w.last_rx[slot] = ack.rx_count;
                }
                let want = w.gold[slot].apply(
                    &Op::Ack {
                        path_cum: ack.path_cum,
                        sack: ack.sack,
                    },
                    now,
                );
                let got = OpResult {
                    ok: true,
                    psn: 0,
                    pkts,
                    bytes,
                    fates,
                };
                for f in &got.fates {
                    run.hw_fates[usize::from(matches!(f, SlotFate::Lost { .. }))] += 1;
                }
                if let Some(m) = diff_result(&got, &want) {
                    run.mismatches.push(format!("{tag}: {m}"));
                }
                if conn_cum != ack.conn_cum {
                    run.mismatches.push(format!(
                        "{tag}: conn_cum RTL {conn_cum:#x}, ACK {:#x}",
                        ack.conn_cum
                    ));
                }
                // `Tx::on_ack`: the RTT sample from the echoed timestamp,
                // only when the ACK acknowledged something new (the RTL
                // saturates at 2^32 - 1 ns; this traffic stays far below).
                let ended = v.quarantined && !w.gold[slot].path().view().quarantined;
                let rtt = PathView::ack_rtt(now, ack.echo_ts, want.pkts > 0 || ended);
                run.rtt_samples += u64::from(rtt.is_some());
                w.gold[slot].apply(
                    &Op::Feedback {
                        rtt_ns: rtt.map(|t| u32::try_from(t).unwrap_or(u32::MAX)),
                        ce_count,
                        acked: want.pkts,
                        bytes: want.bytes,
                    },
                    now,
                );
            }
        }
    }
    for e in r.expected.drain(..) {
        run.mismatches.push(format!(
            "round {} {} (slot {}): never applied",
            run.rounds, e.what, e.slot
        ));
    }
}

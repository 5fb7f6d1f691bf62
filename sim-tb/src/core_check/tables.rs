//! The engine's tables copied into the RTL through its table write port,
//! as the firmware would: QPs, receive rings, outstanding READs, regions
//! and the global registers.

use metaroce_driver::hw::tables::msn_head_words;

use super::engine::{Conn, Engine};
use super::metaroce_hdl_codes::*;
use super::{INITIAL_PSN, MTU};
use crate::frame::mapped_bits;
use crate::rx_core::RxCoreTb;

/// The firmware's copy of the MSN-head words it wrote for each connection
/// (spec §6.5), to write only those that change.
pub(super) struct HeadWords(Vec<[u64; MSN_STREAMS / 2]>);

impl HeadWords {
    /// The words [`Engine::program`] writes for `e`'s connections.
    pub(super) fn new(e: &Engine) -> Self {
        Self(
            (0..e.conns.len())
                .map(|c| e.head_words(c).map(|(_, d)| d))
                .collect(),
        )
    }

    /// The table writes that bring the RTL's heads up to `e`'s.
    pub(super) fn changed(&mut self, e: &Engine) -> Vec<(u16, u64)> {
        let mut out = Vec::new();
        for (c, written) in self.0.iter_mut().enumerate() {
            for (k, (a, d)) in e.head_words(c).into_iter().enumerate() {
                if written[k] != d {
                    written[k] = d;
                    out.push((a, d));
                }
            }
        }
        out
    }
}

impl Engine {
    /// The RTL table writes of connection `c`'s receive `idx` of stream
    /// `s` (before it is counted in the ring's control word).
    pub(super) fn ring_entry(&self, c: usize, s: usize, idx: u32) -> [(u16, u64); 2] {
        let sge = self.recv_sge(s, idx);
        let at = |word| cfg_ring(c as u8, s as u8, (idx % RQ_SLOTS) as u8, word);
        [
            (at(RQ_ADDR), sge.addr),
            (
                at(RQ_LEN_LKEY),
                u64::from(sge.len) | u64::from(sge.lkey) << 32,
            ),
        ]
    }

    /// The RTL's ring control word of stream `s` of QP entry `e` with
    /// `consumed` of `posted` receives gone.
    pub(super) fn ring_ctrl(e: usize, s: usize, consumed: u32, posted: u32) -> (u16, u64) {
        (
            cfg_addr(CFG_RQ, e as u8, s as u8).into(),
            u64::from(consumed) | u64::from(posted - consumed) << 32,
        )
    }

    /// The RTL's MSN-head words of connection `c` (QP entry `c`).
    pub(super) fn head_words(&self, c: usize) -> [(u16, u64); MSN_STREAMS / 2] {
        msn_head_words(&self.nics[c], self.conns[c].qpn, c)
    }

    /// Copies the QP and MR tables and the ACK registers into the RTL (the
    /// firmware's job). Entry `i` is connection `i`; the idle QP comes last.
    pub(super) fn program(&self, tb: &mut RxCoreTb) {
        self.program_with(&mut |a, d| tb.write_cfg(a, d));
    }

    /// [`Engine::program`] through any table port: `write(cfg_addr, data)`.
    pub(super) fn program_with(&self, write: &mut dyn FnMut(u16, u64)) {
        let nic = &self.nics[0];
        let entries = self
            .conns
            .iter()
            .map(|c| (*c, QP_STATE_RTS, INITIAL_PSN))
            .chain([(
                Conn {
                    qpn: self.idle_qpn,
                    ..self.conns[0]
                },
                QP_STATE_INIT,
                0,
            )]);
        for (i, (c, state, psn)) in entries.enumerate() {
            let e = i as u8;
            let ip = mapped_bits(c.peer);
            write(
                u16::from(cfg_addr(CFG_QP, e, QP_QPNS)),
                u64::from(c.qpn) | u64::from(c.peer_qpn) << 32,
            );
            write(
                u16::from(cfg_addr(CFG_QP, e, QP_PEER_IP_HI)),
                (ip >> 64) as u64,
            );
            write(u16::from(cfg_addr(CFG_QP, e, QP_PEER_IP_LO)), ip as u64);
            write(
                u16::from(cfg_addr(CFG_QP, e, QP_PD_STREAMS)),
                u64::from(self.mrs[0].pd) | u64::from(nic.config().qp.streams) << 32,
            );
            write(u16::from(cfg_addr(CFG_QP, e, QP_CONN_PSN)), psn.into());
            write(
                u16::from(cfg_addr(CFG_QP, e, QP_PEER_PORT)),
                c.peer_port.into(),
            );
            // What the engine puts in its ACKs (see the module docs).
            let rate_hint = nic.config().line_rate_mbps;
            let credit = nic.config().qp.recv_window;
            write(
                u16::from(cfg_addr(CFG_QP, e, QP_RATE_CREDIT)),
                u64::from(rate_hint) | u64::from(credit) << 32,
            );
            // The rings (not cleared by reset): every stream's control word.
            for s in 0..RQ_STREAMS {
                let posted = self.posted.get(i).map_or(0, |p| p[s]);
                for idx in 0..posted {
                    for (a, d) in self.ring_entry(i, s, idx) {
                        write(a, d);
                    }
                }
                let (a, d) = Self::ring_ctrl(i, s, 0, posted);
                write(a, d);
            }
            // The MSN heads (not cleared by reset either); the idle QP's
            // are the engine's for a QP it does not have: 0.
            let nic = self.nics.get(i).unwrap_or(nic);
            for (a, d) in msn_head_words(nic, c.qpn, i) {
                write(a, d);
            }
            write(
                u16::from(cfg_addr(CFG_QP, e, QP_CTRL)),
                1 | u64::from(state) << 1,
            );
        }
        for c in 0..self.conns.len() {
            for (k, r) in self.reads[c].iter().enumerate() {
                let w = QP_READ_CTRL + 3 * k as u8;
                let e = c as u8;
                write(u16::from(cfg_addr(CFG_QP, e, w + 1)), r.sge.addr);
                write(
                    u16::from(cfg_addr(CFG_QP, e, w + 2)),
                    u64::from(r.sge.len) | u64::from(r.sge.lkey) << 32,
                );
                write(
                    u16::from(cfg_addr(CFG_QP, e, w)),
                    1 << 63
                        | u64::from(r.atomic) << READ_ATOMIC_BIT
                        | u64::from(r.stream) << 32
                        | u64::from(r.msn),
                );
            }
        }
        for (i, mr) in self.mrs.iter().enumerate() {
            let e = i as u8;
            write(
                u16::from(cfg_addr(CFG_MR, e, MR_KEY_PD)),
                u64::from(mr.rkey) | u64::from(mr.pd) << 32,
            );
            write(u16::from(cfg_addr(CFG_MR, e, MR_BASE)), mr.addr);
            write(u16::from(cfg_addr(CFG_MR, e, MR_LEN)), mr.len);
            write(
                u16::from(cfg_addr(CFG_MR, e, MR_CTRL)),
                1 | u64::from(mr.access.bits()) << 1,
            );
        }
        write(u16::from(cfg_addr(CFG_GLOBAL, 0, GLOBAL_MTU)), MTU.into());
        let ip = mapped_bits(self.local);
        write(
            u16::from(cfg_addr(CFG_GLOBAL, 0, GLOBAL_LOCAL_IP_HI)),
            (ip >> 64) as u64,
        );
        write(
            u16::from(cfg_addr(CFG_GLOBAL, 0, GLOBAL_LOCAL_IP_LO)),
            ip as u64,
        );
    }
}

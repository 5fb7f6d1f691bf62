//! The `NicCore` ports the model drives and watches besides the TX
//! feeder's (`crate::tx_build::FeedPorts`) and the TX table's
//! (`crate::tx_path::TablePorts`), resolved once by name; its five
//! AXI-Stream ports as one [`Axis`] each, driven and watched a
//! beat at a time.

use crate::axis::Axis;
use crate::{Port, Sim, SimError};

/// The resolved ports the model drives besides the TX feeder's.
pub(super) struct Ports {
    /// MAC RX (`s_axis_*`).
    pub(super) rx: Axis,
    /// MAC TX (`m_axis_*`).
    pub(super) tx: Axis,
    pub(super) now: Port,
    /// The DMA port's data (`m_dma_t*`), and its write's first beat,
    /// address and length.
    pub(super) dma: Axis,
    pub(super) dma_first: Port,
    pub(super) dma_addr: Port,
    pub(super) dma_len: Port,
    pub(super) eth_ev_valid: Port,
    pub(super) eth_ev_reason: Port,
    pub(super) ev_valid: Port,
    pub(super) ev_code: Port,
    /// opcode, flags, dst_qpn, stream, path, conn_psn, path_psn,
    /// timestamp, msn, recv_idx, msg_len, offset, imm, len, src_port.
    pub(super) ev: [Port; 15],
    /// `m_fate_hw`, `m_ackrx_valid`, `m_ackrx_slot`, `m_ackrx_pkts`, `m_ackrx_bytes`.
    pub(super) ackrx: [Port; 5],
    /// The firmware receive queue (`m_fw_*`), and its datagram's length,
    /// truncation and UDP source port.
    pub(super) fw: Axis,
    /// `m_fw_len`, `m_fw_trunc`, `m_fw_src_port`.
    pub(super) fw_meta: [Port; 3],
    /// The firmware transmit port (`s_fwtx_*`).
    pub(super) fw_tx: Axis,
    /// `s_fwtx_dst_ip`, `s_fwtx_src_port`, `s_fwtx_dst_port`.
    pub(super) fw_tx_addr: [Port; 3],
    pub(super) err: Port,
    pub(super) cnt_sel: Port,
    pub(super) cnt_val: Port,
    pub(super) ack_frames: Port,
    pub(super) fw_tx_frames: Port,
}

const EV_PORTS: [&str; 15] = [
    "opcode",
    "flags",
    "dst_qpn",
    "stream",
    "path",
    "conn_psn",
    "path_psn",
    "timestamp",
    "msn",
    "recv_idx",
    "msg_len",
    "offset",
    "imm",
    "len",
    "src_port",
];

impl Ports {
    /// Looks the ports up in `sim`.
    pub(super) fn new(sim: &Sim) -> Result<Self, SimError> {
        let mut ev = Vec::new();
        for name in EV_PORTS {
            ev.push(sim.port(&format!("m_ev_{name}"))?);
        }
        Ok(Self {
            rx: Axis::new(sim, "s_axis")?,
            tx: Axis::new(sim, "m_axis")?,
            now: sim.port("now")?,
            dma: Axis::new(sim, "m_dma")?,
            dma_first: sim.port("m_dma_first")?,
            dma_addr: sim.port("m_dma_addr")?,
            dma_len: sim.port("m_dma_len")?,
            eth_ev_valid: sim.port("m_eth_ev_valid")?,
            eth_ev_reason: sim.port("m_eth_ev_reason")?,
            ev_valid: sim.port("m_ev_valid")?,
            ev_code: sim.port("m_ev_code")?,
            ev: ev.try_into().expect("15 event ports"),
            ackrx: [
                sim.port("m_fate_hw")?,
                sim.port("m_ackrx_valid")?,
                sim.port("m_ackrx_slot")?,
                sim.port("m_ackrx_pkts")?,
                sim.port("m_ackrx_bytes")?,
            ],
            fw: Axis::new(sim, "m_fw")?,
            fw_meta: [
                sim.port("m_fw_len")?,
                sim.port("m_fw_trunc")?,
                sim.port("m_fw_src_port")?,
            ],
            fw_tx: Axis::new(sim, "s_fwtx")?,
            fw_tx_addr: [
                sim.port("s_fwtx_dst_ip")?,
                sim.port("s_fwtx_src_port")?,
                sim.port("s_fwtx_dst_port")?,
            ],
            err: sim.port("m_err")?,
            cnt_sel: sim.port("cnt_sel")?,
            cnt_val: sim.port("cnt_val")?,
            ack_frames: sim.port("ack_cnt_frames")?,
            fw_tx_frames: sim.port("fwtx_cnt_frames")?,
        })
    }
}

//! The RTL NIC's side of the run: connecting its QP, draining the model.

use std::net::SocketAddr;
use std::time::Instant;

use anyhow::{Context as _, anyhow};
use metaroce_driver::verbs::{ConnectOptions, QpConfig, QpEndpoint, QpTransition, RemoteEnd};
use metaroce_sim_tb::hw_nic::{HwNic, HwNicConfig};
use metaroce_sim_tb::traffic::HwEnd;
use metaroce_sim_tb::udp_bridge::UdpBridge;

use super::soft::Soft;
use super::{InteropConfig, MEM_BASE, QP_PATHS, RTL_PSN, RTL_RATE_MBPS, STREAMS};

/// The RTL NIC's MAC address on the bridge.
pub(super) const RTL_MAC: [u8; 6] = [2, 0, 0, 0, 0, 1];
/// The MAC address the bridge answers for (the soft NIC's side).
pub(super) const PEER_MAC: [u8; 6] = [2, 0, 0, 0, 0, 2];

/// The RTL NIC (its MAC port on `bridge`), one QP, connected to the soft NIC's;
/// `to_soft`/`to_rtl` are where each NIC sends to reach the other.
pub(super) fn connect_rtl(
    cfg: &InteropConfig,
    soft: &mut Soft,
    bridge: &UdpBridge,
    (to_soft, to_rtl): (SocketAddr, SocketAddr),
    mem_len: usize,
) -> anyhow::Result<HwEnd> {
    let rtl = HwNic::new(HwNicConfig {
        mac: RTL_MAC,
        peer_mac: PEER_MAC,
        ip: cfg.rtl_ip,
        peer_ip: to_soft.ip(),
        udp_port: bridge.local_addr().port(),
        peer_udp_port: to_soft.port(),
        mem_base: MEM_BASE,
        mem_len,
        clock_ps: 1_000,
        line_rate_mbps: RTL_RATE_MBPS,
        seed: cfg.seed ^ 0x4D7,
    })?;
    let qp = QpConfig {
        paths: QP_PATHS,
        streams: STREAMS,
        ..QpConfig::default()
    };
    let mut rtl = HwEnd::new(rtl, &qp, 1)
        .map_err(|e| anyhow!(e))
        .context("registering the RTL NIC's memory and creating its QP")?;
    let rtl_qpn = rtl.qpns[0];
    let soft_end = soft.qp.endpoint();
    let opts = ConnectOptions::default();
    rtl.nic.modify_qp(rtl_qpn, QpTransition::Init)?;
    rtl.nic.modify_qp(
        rtl_qpn,
        QpTransition::Rtr(RemoteEnd {
            qpn: soft_end.qpn,
            ip: to_soft.ip(),
            udp_port: to_soft.port(),
            initial_psn: soft_end.psn,
        }),
    )?;
    rtl.nic.modify_qp(
        rtl_qpn,
        QpTransition::Rts {
            initial_psn: RTL_PSN,
            retry_cnt: opts.retry_cnt,
            rnr_retry: opts.rnr_retry,
            timeout_ns: opts.timeout_ns,
        },
    )?;
    soft.qp.connect(
        &QpEndpoint {
            qpn: rtl_qpn,
            addr: to_rtl,
            psn: RTL_PSN,
        },
        &opts,
    )?;
    Ok(rtl)
}

/// Drains the model's own queues (no new frames come in) so the counter
/// reads, which clock the model, find it idle.
pub(super) fn drain_model(
    rtl: &mut HwEnd,
    bridge: &mut UdpBridge,
    out: &mut Vec<Vec<u8>>,
    start: Instant,
) {
    for _ in 0..100_000 {
        if rtl.nic.idle() {
            break;
        }
        let now = start.elapsed().as_nanos() as u64;
        rtl.nic.step_at(now, out);
        for f in out.drain(..) {
            bridge.send_frame(&f);
        }
    }
}

//! The soft NIC's side of the run: its Verbs objects as the traffic's NIC.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use anyhow::Context as _;
use metaroce_driver::soft::{SoftBackend, SoftConfig};
use metaroce_driver::verbs::{
    Access, AsyncEvent, CompletionQueue, Context, MemoryRegion, Payload, ProtectionDomain,
    QpConfig, QpInit, QueuePair, RecvWr, SendRequest, Wc,
};
use metaroce_firmware::{Completion, Event, SendWr};
use metaroce_sim_tb::traffic::{NicError, SLOTS, TrafficNic};

use super::{InteropConfig, LINGER_NS, QP_PATHS, STREAMS};

/// The soft NIC's Verbs objects (the context last: it closes the device).
pub(super) struct Soft {
    pub(super) qp: QueuePair,
    mr: MemoryRegion,
    send_cq: CompletionQueue,
    recv_cq: CompletionQueue,
    _pd: ProtectionDomain,
    pub(super) ctx: Context,
}

/// The soft NIC as the traffic's NIC: its one QP is connection 0.
impl TrafficNic for Soft {
    fn addr(&self) -> u64 {
        self.mr.addr()
    }

    fn keys(&self) -> (u32, u32) {
        (self.mr.lkey(), self.mr.rkey())
    }

    fn write(&mut self, off: u64, bytes: &[u8]) {
        // Out of the region it writes nothing, and the check finds the
        // bytes wrong.
        let _ = self.mr.write(off as usize, bytes);
    }

    fn read(&self, off: u64, out: &mut [u8]) -> bool {
        self.mr.read(off as usize, out)
    }

    fn post_send(&mut self, _conn: usize, wr: SendWr) -> Result<(), NicError> {
        self.qp.post_send(&SendRequest {
            wr_id: wr.wr_id,
            op: wr.op,
            payload: Payload::Sges(wr.sgl.as_slice()),
            signaled: wr.signaled,
            solicited: wr.solicited,
            stream: wr.stream,
        })?;
        Ok(())
    }

    fn post_recv(&mut self, _conn: usize, wr: RecvWr) -> Result<(), NicError> {
        self.qp.post_recv(wr)?;
        Ok(())
    }

    fn rnr_refusals(&self) -> u64 {
        self.ctx.drops().receiver_not_ready
    }

    fn poll(&mut self, out: &mut Vec<Event>) {
        let mut wcs = [Wc::default(); 32];
        for (cq, is_recv) in [(&self.send_cq, false), (&self.recv_cq, true)] {
            loop {
                let n = cq.poll(&mut wcs);
                out.extend(wcs[..n].iter().map(|w| {
                    Event::Completion(Completion {
                        qpn: w.qp_num,
                        wr_id: w.wr_id,
                        status: w.status,
                        opcode: w.opcode,
                        byte_len: w.byte_len,
                        imm: w.imm,
                        stream: w.stream,
                        is_recv,
                        solicited: w.solicited,
                    })
                }));
                if n < wcs.len() {
                    break;
                }
            }
        }
        while let Some(e) = self.ctx.poll_async_event() {
            // This side has no shared receive queues: QP errors are all it reports.
            if let AsyncEvent::QpFatal { qp_num, status } = e {
                out.push(Event::QpError {
                    qpn: qp_num,
                    status,
                });
            }
        }
    }
}

/// Starts the soft NIC: one QP, a send and a receive CQ, one region of
/// `mem` bytes.
pub(super) fn start_soft(cfg: &InteropConfig, mem: usize) -> anyhow::Result<Soft> {
    let mut sc = SoftConfig::new(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 0));
    sc.nic.seed = cfg.seed ^ 0x50F7;
    sc.nic.qp.paths = QP_PATHS;
    sc.nic.qp.streams = STREAMS;
    sc.nic.linger_max_ns = LINGER_NS;
    let ctx = Context::open(SoftBackend::start(sc).context("starting the soft NIC")?);
    let pd = ctx.alloc_pd();
    let send_cq = ctx.create_cq(4 * SLOTS, None);
    let recv_cq = ctx.create_cq(4 * SLOTS, None);
    let mut init = QpInit::new(&send_cq, &recv_cq);
    init.config = Some(QpConfig {
        paths: QP_PATHS,
        streams: STREAMS,
        ..ctx.default_qp_config()
    });
    let qp = pd.create_qp(&init)?;
    let mr = pd.alloc_mr(
        mem,
        Access::LOCAL_WRITE | Access::REMOTE_WRITE | Access::REMOTE_READ | Access::REMOTE_ATOMIC,
    )?;
    Ok(Soft {
        qp,
        mr,
        send_cq,
        recv_cq,
        _pd: pd,
        ctx,
    })
}

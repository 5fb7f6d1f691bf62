//! Protection domains (`ibv_pd`) and registered memory regions (`ibv_mr`).

use std::sync::{Arc, Mutex};

use super::context::CtxInner;
use super::router::{Route, SendSlots};
use super::srq::SrqInner;
use super::{
    Access, Context, Error, QpInit, QueuePair, RegisterError, Result, Sge, SharedReceiveQueue,
    VerbsError,
};
use crate::hostmem::HostBuffer;

/// A protection domain (`ibv_pd`).
pub struct ProtectionDomain {
    pub(super) ctx: Context,
    pub(super) pd: u32,
}

impl std::fmt::Debug for ProtectionDomain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProtectionDomain")
            .field("pd", &self.pd)
            .finish()
    }
}

impl ProtectionDomain {
    /// Registers a new zeroed buffer of `len` bytes.
    pub fn alloc_mr(&self, len: usize, access: Access) -> Result<MemoryRegion> {
        if len == 0 {
            return Err(Error::Register(RegisterError::InvalidRange));
        }
        self.reg_mr(HostBuffer::zeroed(len), access)
    }

    /// Registers `buf`; the region owns it, so the NIC can never touch freed memory.
    pub fn reg_mr(&self, buf: HostBuffer, access: Access) -> Result<MemoryRegion> {
        let buf = Arc::new(buf);
        let (pd, addr, len) = (self.pd, buf.addr(), buf.len() as u64);
        let mr = self.ctx.inner.control(|c| {
            let mr = c.nic.register_mr(pd, addr, len, access)?;
            c.memory.insert(Arc::clone(&buf));
            Ok::<_, Error>(mr)
        })?;
        Ok(MemoryRegion {
            ctx: Arc::clone(&self.ctx.inner),
            buf,
            mr,
        })
    }

    /// Creates a shared receive queue of `max_wr` receives.
    pub fn create_srq(&self, max_wr: usize) -> Result<SharedReceiveQueue> {
        let pd = self.pd;
        let srqn = self.ctx.inner.control(|c| c.nic.create_srq(pd, max_wr))?;
        Ok(SharedReceiveQueue {
            inner: Arc::new(SrqInner {
                ctx: Arc::clone(&self.ctx.inner),
                srqn,
            }),
        })
    }

    /// Creates an RC queue pair in RESET.
    pub fn create_qp(&self, init: &QpInit<'_>) -> Result<QueuePair> {
        let mut cfg = match &init.config {
            Some(c) => c.clone(),
            None => self.ctx.default_qp_config(),
        };
        cfg.srq = init
            .srq
            .and_then(|s| std::num::NonZeroU32::new(s.inner.srqn));
        let depth = cfg.max_send_wr.clamp(1, 1 << 20);
        let inline = if init.max_inline > 0 {
            let len = init.max_inline as usize * depth;
            Some(self.alloc_mr(len, Access::LOCAL_WRITE)?)
        } else {
            None
        };
        let pd = self.pd;
        let (qpn, psn) = self.ctx.inner.control(|c| {
            let qpn = c.nic.create_qp(pd, Some(cfg.clone()))?;
            Ok::<_, VerbsError>((qpn, c.nic.random_psn()))
        })?;
        let route = Arc::new(Route {
            send_cq: Arc::clone(&init.send_cq.inner),
            recv_cq: Arc::clone(&init.recv_cq.inner),
            sq: Mutex::new(SendSlots::new(depth)),
        });
        self.ctx.inner.router.add_route(qpn, Arc::clone(&route));
        Ok(QueuePair {
            ctx: self.ctx.clone(),
            srq: init.srq.cloned(),
            qpn,
            psn,
            streams: cfg.streams,
            max_inline: init.max_inline,
            inline,
            route,
        })
    }

    /// The protection domain number.
    pub fn handle(&self) -> u32 {
        self.pd
    }
}

/// A registered memory region (`ibv_mr`) that owns its buffer. Dropping it deregisters
/// the region and takes the buffer away from the datapath before it is freed.
pub struct MemoryRegion {
    ctx: Arc<CtxInner>,
    buf: Arc<HostBuffer>,
    mr: metaroce_firmware::MemoryRegion,
}

impl std::fmt::Debug for MemoryRegion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryRegion")
            .field("addr", &format_args!("{:#x}", self.mr.addr))
            .field("len", &self.mr.len)
            .field("lkey", &self.mr.lkey)
            .field("rkey", &self.mr.rkey)
            .finish()
    }
}

impl MemoryRegion {
    /// Address of the first byte.
    pub fn addr(&self) -> u64 {
        self.mr.addr
    }
    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.buf.len()
    }
    /// Always false (regions are never empty).
    pub fn is_empty(&self) -> bool {
        false
    }
    /// Local key.
    pub fn lkey(&self) -> u32 {
        self.mr.lkey
    }
    /// Remote key.
    pub fn rkey(&self) -> u32 {
        self.mr.rkey
    }
    /// Access rights.
    pub fn access(&self) -> Access {
        self.mr.access
    }
    /// A scatter/gather element for `offset..offset + len` of this region (not checked
    /// here; the NIC checks it when the work request runs).
    pub fn sge(&self, offset: usize, len: u32) -> Sge {
        Sge {
            addr: self.mr.addr.wrapping_add(offset as u64),
            len,
            lkey: self.mr.lkey,
        }
    }
    /// Copies `data` into the region at `offset`; false if it does not fit.
    pub fn write(&self, offset: usize, data: &[u8]) -> bool {
        self.buf.write_at(offset, data)
    }
    /// Copies the region's bytes at `offset` into `out`; false if out of range.
    pub fn read(&self, offset: usize, out: &mut [u8]) -> bool {
        self.buf.read_at(offset, out)
    }
    /// True if the bytes at `offset` equal `expected`.
    pub fn equals(&self, offset: usize, expected: &[u8]) -> bool {
        self.buf.equals(offset, expected)
    }
    /// The region's contents, copied.
    pub fn to_vec(&self) -> Vec<u8> {
        let mut v = vec![0; self.len()];
        self.buf.read_at(0, &mut v);
        v
    }
}

impl Drop for MemoryRegion {
    fn drop(&mut self) {
        let (lkey, addr) = (self.mr.lkey, self.mr.addr);
        self.ctx.control(|c| {
            c.nic.deregister_mr(lkey);
            c.memory.remove(addr);
        });
    }
}

//! The objects behind the C handles, and the registries that validate handles.
//!
//! Each object keeps the C structure a program sees (`ibv_context`, `ibv_cq`, …) at a
//! fixed address inside an `Arc`, next to the Verbs API object it stands for. A handle
//! passed in by the program is looked up in its type's [`Registry`] before anything is
//! dereferenced, so a NULL, stale or foreign pointer is refused with `EINVAL` instead of
//! being followed. The lookup returns a clone of the `Arc`, so an object stays alive
//! for the duration of a call even if another thread destroys it meanwhile. The
//! registry itself is [`metaroce_cabi::registry`], shared with librdmacm.

use std::cell::UnsafeCell;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use metaroce_driver::verbs::{
    CompChannel, CompletionQueue, Context, MemoryRegion, ProtectionDomain, QueuePair,
    SharedReceiveQueue,
};

use crate::abi::{
    ibv_comp_channel, ibv_context, ibv_cq, ibv_mr, ibv_pd, ibv_qp, ibv_qp_attr, ibv_qp_cap,
    ibv_qp_ex, ibv_srq, verbs_context,
};
use crate::device::Device;
use crate::verbs::qp_ex::WrBuilder;

pub use metaroce_cabi::registry::{Object, Registry, lock};

/// The registries of every object type.
pub struct Registries {
    /// Device contexts.
    pub contexts: Registry<Ctx>,
    /// Protection domains.
    pub pds: Registry<Pd>,
    /// Memory regions.
    pub mrs: Registry<Mr>,
    /// Completion channels.
    pub channels: Registry<Channel>,
    /// Completion queues.
    pub cqs: Registry<Cq>,
    /// Queue pairs.
    pub qps: Registry<Qp>,
    /// Shared receive queues.
    pub srqs: Registry<Srq>,
}

/// The process's registries.
pub fn reg() -> &'static Registries {
    static R: std::sync::OnceLock<Registries> = std::sync::OnceLock::new();
    R.get_or_init(|| Registries {
        contexts: Registry::new(),
        pds: Registry::new(),
        mrs: Registry::new(),
        channels: Registry::new(),
        cqs: Registry::new(),
        qps: Registry::new(),
        srqs: Registry::new(),
    })
}

macro_rules! object {
    ($t:ty, $c:ty) => {
        // SAFETY: the C view is only accessed through raw pointers: written by this
        // library under the object's own locks or before the handle is published, and
        // read or written by the program as ibverbs allows; every other field is Sync.
        unsafe impl Sync for $t {}
        // SAFETY: as above; the raw pointers in the C view are plain addresses.
        unsafe impl Send for $t {}
        impl Object for $t {
            type C = $c;
            fn c_ptr(&self) -> *mut $c {
                self.c.get()
            }
        }
    };
}

/// An opened device (`ibv_context`, inside a `verbs_context`).
pub struct Ctx {
    /// The C view.
    pub c: UnsafeCell<verbs_context>,
    /// The device.
    pub dev: &'static Device,
    /// The Verbs API context on the backend.
    pub verbs: Context,
    /// UDP port of the context's NIC, reported as the port's LID.
    pub port: u16,
    /// The eventfd reported as `async_fd` (closed with the context).
    pub async_fd: std::os::fd::OwnedFd,
}
// SAFETY: as for the types below (`object!`).
unsafe impl Sync for Ctx {}
// SAFETY: as for the types below (`object!`).
unsafe impl Send for Ctx {}
impl Object for Ctx {
    type C = ibv_context;
    /// The `ibv_context`: the last member of the `verbs_context`.
    fn c_ptr(&self) -> *mut ibv_context {
        // SAFETY: computes the address of a field inside our live cell; nothing is read.
        unsafe { &raw mut (*self.c.get()).context }
    }
}

/// A protection domain.
pub struct Pd {
    /// The C view.
    pub c: UnsafeCell<ibv_pd>,
    /// Keeps the context alive.
    pub ctx: Arc<Ctx>,
    /// The Verbs API object.
    pub pd: ProtectionDomain,
}
object!(Pd, ibv_pd);

/// A memory region.
pub struct Mr {
    /// The C view.
    pub c: UnsafeCell<ibv_mr>,
    /// Its protection domain (kept alive).
    pub pd: Arc<Pd>,
    /// The Verbs API object (deregisters when dropped).
    pub _mr: MemoryRegion,
}
object!(Mr, ibv_mr);

/// A completion channel.
pub struct Channel {
    /// The C view.
    pub c: UnsafeCell<ibv_comp_channel>,
    /// Keeps the context alive.
    pub ctx: Arc<Ctx>,
    /// The Verbs API object.
    pub ch: CompChannel,
    /// The CQs tied to it, by [`CompletionQueue::id`] (C handle addresses).
    pub cqs: Mutex<HashMap<u32, usize>>,
}
object!(Channel, ibv_comp_channel);

/// A completion queue.
pub struct Cq {
    /// The C view.
    pub c: UnsafeCell<ibv_cq>,
    /// Keeps the context alive.
    pub ctx: Arc<Ctx>,
    /// Its channel, if any.
    pub channel: Option<Arc<Channel>>,
    /// The Verbs API object.
    pub cq: CompletionQueue,
    /// Serialises `comp_events_completed` updates.
    pub events: Mutex<()>,
}
object!(Cq, ibv_cq);

/// A shared receive queue.
pub struct Srq {
    /// The C view.
    pub c: UnsafeCell<ibv_srq>,
    /// Keeps the protection domain alive.
    pub pd: Arc<Pd>,
    /// The Verbs API object.
    pub srq: SharedReceiveQueue,
}
object!(Srq, ibv_srq);

/// A queue pair.
pub struct Qp {
    /// The C view: an `ibv_qp_ex`, whose `ibv_qp` is the handle; its builder
    /// functions are set for QPs created with `send_ops_flags`.
    pub c: UnsafeCell<ibv_qp_ex>,
    /// The `IBV_QP_EX_WITH_*` operations of the `ibv_wr_*` API (0: created without
    /// it, `ibv_qp_to_qp_ex` gives NULL).
    pub send_ops: u64,
    /// The work requests an `ibv_wr_start` … `ibv_wr_complete` sequence built so far.
    pub builder: Mutex<WrBuilder>,
    /// Keeps the protection domain alive.
    pub pd: Arc<Pd>,
    /// Keep the completion queues alive.
    pub _cqs: [Arc<Cq>; 2],
    /// Its shared receive queue, kept alive (`ibv_destroy_srq` is `EBUSY` meanwhile).
    pub _srq: Option<Arc<Srq>>,
    /// The Verbs API object.
    pub qp: QueuePair,
    /// `sq_sig_all`: every send completes.
    pub sig_all: bool,
    /// Capabilities granted at creation.
    pub cap: ibv_qp_cap,
    /// Attributes set so far (`ibv_query_qp`), and the state.
    pub attr: Mutex<ibv_qp_attr>,
}
// SAFETY: as for the other objects (`object!`).
unsafe impl Sync for Qp {}
// SAFETY: as above.
unsafe impl Send for Qp {}
impl Object for Qp {
    type C = ibv_qp;
    /// The `ibv_qp`: the first member of the `ibv_qp_ex`.
    fn c_ptr(&self) -> *mut ibv_qp {
        // SAFETY: computes the address of a field inside our live cell; nothing is read.
        unsafe { &raw mut (*self.c.get()).qp_base }
    }
}

impl Qp {
    /// Records the state the program sees in `qp->state`.
    pub fn set_state(&self, attr: &mut ibv_qp_attr, state: i32) {
        attr.qp_state = state;
        attr.cur_qp_state = state;
        // SAFETY: `state` is a plain int in our C view; programs only read it.
        unsafe { (*self.c_ptr()).state = state };
    }
}

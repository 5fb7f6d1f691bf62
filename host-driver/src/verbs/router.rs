//! Routing the engine's completions and asynchronous events to the completion queues and channels.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

use metaroce_firmware::Event;

use super::cq::CqInner;
use super::{AsyncEvent, Wc, WcStatus};
use crate::backend::EventSink;

/// One outstanding send work request.
#[derive(Clone, Copy)]
pub(super) struct Pending {
    pub(super) wr_id: u64,
    pub(super) signaled: bool,
}

/// The send queue's slots: engine work requests carry a slot index as their id, so the
/// Verbs layer can hide unsignaled successes and reuse inline buffers safely.
pub(super) struct SendSlots {
    pub(super) slots: Vec<Option<Pending>>,
    pub(super) free: Vec<u32>,
}

impl SendSlots {
    pub(super) fn new(depth: usize) -> Self {
        SendSlots {
            slots: vec![None; depth],
            free: (0..depth as u32).rev().collect(),
        }
    }
}

/// Where a QP's completions go.
pub(super) struct Route {
    pub(super) send_cq: Arc<CqInner>,
    pub(super) recv_cq: Arc<CqInner>,
    pub(super) sq: Mutex<SendSlots>,
}

/// The context's event sink: each QP's route, and the asynchronous events not yet read.
#[derive(Default)]
pub(super) struct Router {
    routes: RwLock<HashMap<u32, Arc<Route>>>,
    pub(super) async_events: Mutex<VecDeque<AsyncEvent>>,
}

impl Router {
    /// Sends QP `qpn`'s completions along `route` from now on.
    pub(super) fn add_route(&self, qpn: u32, route: Arc<Route>) {
        self.routes
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(qpn, route);
    }

    /// Forgets QP `qpn`'s route (the QP is gone).
    pub(super) fn remove_route(&self, qpn: u32) {
        self.routes
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&qpn);
    }
}

/// Locks `m`, also after another thread panicked holding it.
pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl EventSink for Router {
    fn deliver(&self, event: Event) {
        match event {
            Event::Completion(c) => {
                let routes = self.routes.read().unwrap_or_else(|p| p.into_inner());
                let Some(route) = routes.get(&c.qpn) else {
                    return;
                };
                if c.is_recv {
                    route.recv_cq.push(Wc::from_engine(&c, c.wr_id));
                    return;
                }
                let mut sq = lock(&route.sq);
                let Some(p) = sq.slots.get_mut(c.wr_id as usize).and_then(Option::take) else {
                    return;
                };
                sq.free.push(c.wr_id as u32);
                drop(sq);
                if p.signaled || c.status != WcStatus::Success {
                    route.send_cq.push(Wc::from_engine(&c, p.wr_id));
                }
            }
            Event::QpError { qpn, status } => {
                lock(&self.async_events).push_back(AsyncEvent::QpFatal {
                    qp_num: qpn,
                    status,
                });
            }
            Event::SrqLimitReached { srqn } => {
                lock(&self.async_events).push_back(AsyncEvent::SrqLimitReached { srq: srqn });
            }
        }
    }

    fn device_fatal(&self, _why: &str) {
        lock(&self.async_events).push_back(AsyncEvent::DeviceFatal);
    }
}

//! An id's events: queued on its channel, turned into the `rdma_cm_event` the program
//! reads (doing what rdma-core does on reading one), acknowledged, and moved between
//! channels.

use super::*;

impl Id {
    pub(super) fn push(&self, st: &St, me: &Arc<Id>, kind: c_int, status: c_int) {
        self.push_with(st, me, kind, status, rdma_conn_param::default(), Vec::new());
    }

    pub(super) fn push_with(
        &self,
        st: &St,
        me: &Arc<Id>,
        kind: c_int,
        status: c_int,
        param: rdma_conn_param,
        pdata: Vec<u8>,
    ) {
        st.channel.push(Pending {
            id: me.clone(),
            listener: None,
            kind,
            status,
            param,
            pdata,
        });
    }

    /// Turns a queued event into the event the program gets, doing what rdma-core does
    /// when it reads one: for a REP on an id with a QP, the QP to RTS and the RTU (the
    /// program then sees ESTABLISHED); for a request, the new id's context and channel.
    /// None: the event is dropped (its id is gone).
    fn deliver(p: Pending) -> Option<*mut rdma_cm_event> {
        let Pending {
            id,
            listener,
            mut kind,
            mut status,
            mut param,
            pdata,
        } = p;
        if id.st().destroyed {
            return None;
        }
        match kind {
            event::CONNECT_REQUEST => {
                let l = listener.as_ref()?;
                let (sync, ctx) = {
                    let lst = l.st();
                    if lst.destroyed {
                        drop(lst);
                        id.abandon();
                        return None;
                    }
                    // SAFETY: reads a plain field of the listener's live C view.
                    (lst.sync, unsafe { (*l.c()).context })
                };
                // SAFETY: writes a plain field of the new id's C view, not yet published.
                unsafe { (*id.c()).context = ctx };
                if sync && id.migrate(None).is_err() {
                    id.abandon();
                    return None;
                }
            }
            event::CONNECT_RESPONSE if !id.qp().is_null() => {
                let mut st = id.st();
                let done = id
                    .to_rts(&st)
                    .and_then(|()| st.conn.clone().ok_or(libc::ECONNRESET)?.send(&Msg::Rtu));
                match done {
                    Ok(()) if st.state == State::RepReceived => {
                        st.state = State::Connected;
                        kind = event::ESTABLISHED;
                    }
                    Ok(()) => kind = event::ESTABLISHED,
                    Err(e) => {
                        let _ = id.qp_to_err();
                        if let Some(c) = st.conn.take() {
                            let _ = c.send(&Msg::Rej {
                                reason: REJ_CONSUMER_DEFINED,
                                pdata: Vec::new(),
                            });
                            c.close();
                        }
                        st.state = State::Failed;
                        kind = event::CONNECT_ERROR;
                        status = -e;
                    }
                }
            }
            event::REJECTED => {
                let _ = id.qp_to_err();
            }
            event::DISCONNECTED => id.st().disconnect_delivered = true,
            _ => {}
        }
        let owner = listener.clone().unwrap_or_else(|| id.clone());
        let pdata: Box<[u8]> = pdata.into_boxed_slice();
        if !pdata.is_empty() {
            param.private_data = pdata.as_ptr().cast();
            param.private_data_len = u8::try_from(pdata.len()).unwrap_or(u8::MAX);
        }
        // SAFETY: all-zero is a valid `rdma_cm_event`; the union is then given its
        // `conn` member.
        let mut c: rdma_cm_event = unsafe { std::mem::zeroed() };
        c.id = id.c();
        c.listen_id = listener.as_ref().map_or(std::ptr::null_mut(), |l| l.c());
        c.event = kind;
        c.status = status;
        c.param.conn = param;
        *lock(&owner.unacked) += 1;
        Some(reg().events.insert(Arc::new(Event {
            c: UnsafeCell::new(c),
            _pdata: pdata,
            owner,
        })))
    }

    /// `rdma_get_cm_event`: the next event of `channel`.
    pub fn next_event(channel: &Channel) -> Result<*mut rdma_cm_event, Errno> {
        loop {
            if let Some(ev) = Self::deliver(channel.pop()?) {
                return Ok(ev);
            }
        }
    }

    /// `rdma_ack_cm_event`.
    pub fn ack(ev: *mut rdma_cm_event) -> Result<(), Errno> {
        let ev = reg().events.remove_any(ev)?;
        let mut n = lock(&ev.owner.unacked);
        *n = n.saturating_sub(1);
        ev.owner.acked.notify_all();
        Ok(())
    }

    /// Acknowledges the event a synchronous id keeps in `id->event`, if any.
    pub fn ack_own_event(&self) {
        let c = self.c();
        // SAFETY: `event` is a plain field of our live C view; the event it holds was
        // handed out by this library to this id.
        unsafe {
            let ev = std::mem::replace(&mut (*c).event, std::ptr::null_mut());
            if !ev.is_null() {
                let _ = Self::ack(ev);
            }
        }
    }

    /// For synchronous ids: waits for the event the last operation causes and keeps it
    /// in `id->event` (acknowledging the previous one), as rdma-core's `ucma_complete`.
    pub fn complete(&self) -> Result<(), Errno> {
        let channel = {
            let st = self.st();
            if !st.sync {
                return Ok(());
            }
            st.channel.clone()
        };
        self.ack_own_event();
        let c = self.c();
        // SAFETY: writes the `event` field of our live C view and reads the live event
        // just handed out.
        unsafe {
            let ev = Self::next_event(&channel)?;
            (*c).event = ev;
            let (kind, status) = ((*ev).event, (*ev).status);
            match (kind, status) {
                (_, 0) => Ok(()),
                (event::REJECTED, _) => Err(libc::ECONNREFUSED),
                (_, s) => Err(s.abs()),
            }
        }
    }

    /// `rdma_migrate_id` (`None`: to a new private channel, synchronous use). Events of
    /// the id still queued move with it; waits until those already handed out are
    /// acknowledged.
    pub fn migrate(&self, to: Option<Arc<Channel>>) -> Result<(), Errno> {
        let sync = to.is_none();
        if sync && self.st().sync {
            return Err(libc::EINVAL);
        }
        let to = match to {
            Some(c) => c,
            None => private_channel()?,
        };
        let (old, was_sync) = {
            let mut st = self.st();
            let me = self as *const Id;
            for ev in st
                .channel
                .take_where(|p| std::ptr::eq(Arc::as_ptr(&p.id), me) && p.listener.is_none())
            {
                to.push(ev);
            }
            let old = std::mem::replace(&mut st.channel, to.clone());
            let was_sync = st.sync;
            st.sync = sync;
            // SAFETY: writes a plain field of our live C view.
            unsafe { (*self.c()).channel = to.c_ptr() };
            (old, was_sync)
        };
        if was_sync {
            self.ack_own_event();
        }
        self.wait_acked();
        if was_sync {
            let _ = reg().channels.remove_any(old.c_ptr());
        }
        Ok(())
    }

    pub(super) fn wait_acked(&self) {
        let mut n = lock(&self.unacked);
        while *n > 0 {
            n = self.acked.wait(n).unwrap_or_else(|e| e.into_inner());
        }
    }
}

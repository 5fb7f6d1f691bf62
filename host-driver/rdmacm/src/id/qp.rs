//! How a connection moves its id's QP: the attributes each state gets from the
//! exchange (`rdma_init_qp_attr`) and the transitions the library makes itself.

use super::*;

impl Id {
    /// `rdma_init_qp_attr`: the attributes the connection gives the QP for a state.
    pub fn init_qp_attr(&self, want: c_int) -> Result<(ibv_qp_attr, c_int), Errno> {
        let st = self.st();
        self.qp_attr(&st, want)
    }

    fn qp_attr(&self, st: &St, want: c_int) -> Result<(ibv_qp_attr, c_int), Errno> {
        use abi::*;
        let dev = st.dev.as_ref().ok_or(libc::EINVAL)?;
        let mut a = ibv_qp_attr {
            qp_state: want,
            ..Default::default()
        };
        let mask = match want {
            IBV_QPS_INIT => {
                a.pkey_index = 0;
                a.port_num = PORT;
                // Before the peer is known the QP grants nothing; once it is, what the
                // kernel CM grants: remote writes, and reads/atomics if it accepts any.
                if st.peer.is_some() {
                    a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
                    if st.responder_resources > 0 {
                        a.qp_access_flags |= IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
                    }
                }
                IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS
            }
            IBV_QPS_RTR => {
                let peer = st.peer.as_ref().ok_or(libc::EINVAL)?;
                a.path_mtu = dev.port.active_mtu.min(c_int::from(peer.mtu).max(1));
                a.dest_qp_num = peer.qpn;
                a.rq_psn = peer.psn;
                a.max_dest_rd_atomic = st.responder_resources;
                a.min_rnr_timer = 0;
                a.ah_attr.is_global = 1;
                a.ah_attr.grh.dgid.raw = peer.gid;
                a.ah_attr.grh.sgid_index = 0;
                a.ah_attr.grh.hop_limit = 64;
                a.ah_attr.grh.traffic_class = st.tos;
                a.ah_attr.dlid = peer.lid;
                a.ah_attr.port_num = PORT;
                IBV_QP_STATE
                    | IBV_QP_AV
                    | IBV_QP_PATH_MTU
                    | IBV_QP_DEST_QPN
                    | IBV_QP_RQ_PSN
                    | IBV_QP_MAX_DEST_RD_ATOMIC
                    | IBV_QP_MIN_RNR_TIMER
            }
            IBV_QPS_RTS => {
                if st.peer.is_none() {
                    return Err(libc::EINVAL);
                }
                a.sq_psn = st.psn;
                a.timeout = st.ack_timeout.unwrap_or(DEFAULT_ACK_TIMEOUT);
                a.retry_cnt = st.retry_count;
                a.rnr_retry = st.rnr_retry_count;
                a.max_rd_atomic = st.initiator_depth;
                IBV_QP_STATE
                    | IBV_QP_TIMEOUT
                    | IBV_QP_RETRY_CNT
                    | IBV_QP_RNR_RETRY
                    | IBV_QP_SQ_PSN
                    | IBV_QP_MAX_QP_RD_ATOMIC
            }
            _ => return Err(libc::EINVAL),
        };
        Ok((a, mask))
    }

    /// Moves the id's QP (if any) to `state` with the connection's attributes.
    fn modify(&self, st: &St, state: c_int) -> Result<(), Errno> {
        let qp = self.qp();
        if qp.is_null() {
            return Ok(());
        }
        let (mut a, mask) = self.qp_attr(st, state)?;
        verbs::modify_qp(qp, &mut a, mask)
    }

    /// INIT (again, now with the connection's access rights) → RTR → RTS.
    pub(super) fn to_rts(&self, st: &St) -> Result<(), Errno> {
        self.modify(st, IBV_QPS_INIT)?;
        self.modify(st, IBV_QPS_RTR)?;
        self.modify(st, IBV_QPS_RTS)
    }

    /// Moves the id's QP (if any) to ERR, as the kernel CM does on a rejection or a
    /// disconnect.
    pub fn qp_to_err(&self) -> Result<(), Errno> {
        let qp = self.qp();
        if qp.is_null() {
            return Ok(());
        }
        let mut a = ibv_qp_attr {
            qp_state: IBV_QPS_ERR,
            ..Default::default()
        };
        verbs::modify_qp(qp, &mut a, abi::IBV_QP_STATE)
    }

    /// The QP `rdma_create_qp` just made: to INIT, as the kernel CM's attributes say.
    pub fn init_qp(&self, qp: *mut ibv_qp) -> Result<(), Errno> {
        let st = self.st();
        let (mut a, mask) = self.qp_attr(&st, IBV_QPS_INIT)?;
        verbs::modify_qp(qp, &mut a, mask)
    }
}

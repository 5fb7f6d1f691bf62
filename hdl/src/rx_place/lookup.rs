//! The tables, their lookups and S2's checks ([`PlaceLookup`]).

use rust_hdl::prelude::*;

use super::links::{ChecksOut, MetaIn};
use super::{PlaceCheck, PlaceGlobals, PlaceMr, PlaceQps, PlaceReads, PlaceRings, PlaceSums};
use crate::bus::CfgIn;

/// S0 to S2 of [`RxPlace`](super::RxPlace) beside its metadata registers:
/// the QP lookup and the RAM reads (S0), the READ match, the MR key lookup
/// and the sums (S1), the state-free checks (S2, registered for S3), over
/// the firmware-written tables ([`PlaceQps`], [`PlaceGlobals`],
/// [`PlaceRings`], [`PlaceReads`], [`PlaceMr`]), and the ACK read port.
/// A port ending in `0`, `1` or `2` is the datagram's field in that stage.
#[derive(LogicBlock, Default)]
pub struct PlaceLookup {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: invalidates every table entry.
    pub rst: Signal<In, Bit>,
    /// Table write port.
    pub cfg: CfgIn<9>,
    /// S0: a datagram is here.
    pub en0: Signal<In, Bit>,
    /// S0: destination QPN.
    pub dst_qpn0: Signal<In, Bits<32>>,
    /// S0: the stream id's low bits.
    pub stream0: Signal<In, Bits<4>>,
    /// S0: the `recv_idx`'s low bits (the ring slot).
    pub slot0: Signal<In, Bits<3>>,
    /// S0: remote address.
    pub remote_va0: Signal<In, Bits<64>>,
    /// S0: rkey.
    pub rkey0: Signal<In, Bits<32>>,
    /// S0: `dst_qpn0` is in the QP table.
    pub hit0: Signal<Out, Bit>,
    /// S0: the QP table entry holding it.
    pub qi0: Signal<Out, Bits<2>>,
    /// S1: a datagram is here.
    pub en1: Signal<In, Bit>,
    /// S1: its QP entry.
    pub qi1: Signal<In, Bits<2>>,
    /// S1: opcode.
    pub opcode1: Signal<In, Bits<8>>,
    /// S1: stream id.
    pub stream1: Signal<In, Bits<16>>,
    /// S1: MSN.
    pub msn1: Signal<In, Bits<32>>,
    /// S1: offset.
    pub offset1: Signal<In, Bits<32>>,
    /// S1: message length.
    pub msg_len1: Signal<In, Bits<32>>,
    /// S1: posted-receive index.
    pub recv_idx1: Signal<In, Bits<32>>,
    /// S1: payload bytes.
    pub pl1: Signal<In, Bits<16>>,
    /// S1: offset + payload bytes.
    pub end_off1: Signal<In, Bits<33>>,
    /// S2: the fields only the checks read (`valid`: a datagram is here).
    pub m2: MetaIn,
    /// S2: its QP entry.
    pub qi2: Signal<In, Bits<2>>,
    /// S2: the QP was found.
    pub qhit2: Signal<In, Bit>,
    /// S2: MSG opcode.
    pub is_msg2: Signal<In, Bit>,
    /// S2: opcode.
    pub opcode2: Signal<In, Bits<8>>,
    /// S2: stream id.
    pub stream2: Signal<In, Bits<16>>,
    /// S2: path id.
    pub path2: Signal<In, Bits<16>>,
    /// S2: MSN.
    pub msn2: Signal<In, Bits<32>>,
    /// S2: message length.
    pub msg_len2: Signal<In, Bits<32>>,
    /// S2: offset.
    pub offset2: Signal<In, Bits<32>>,
    /// S3: the checks ([`PlaceCheck`], registered).
    pub v: ChecksOut,
    /// S3: payload bytes.
    pub plen: Signal<Out, Bits<16>>,
    /// S3: the frame has payload beats.
    pub has_beats: Signal<Out, Bit>,
    /// S3: where the payload goes.
    pub dest: Signal<Out, Bits<64>>,
    /// `RxPlace::ack_qp`.
    pub ack_qp: Signal<In, Bits<2>>,
    /// `RxPlace::ack_qpn`.
    pub ack_qpn: Signal<Out, Bits<32>>,
    /// `RxPlace::ack_peer_qpn`.
    pub ack_peer_qpn: Signal<Out, Bits<32>>,
    /// `RxPlace::ack_peer_ip`.
    pub ack_peer_ip: Signal<Out, Bits<128>>,
    /// `RxPlace::ack_peer_port`.
    pub ack_peer_port: Signal<Out, Bits<16>>,
    /// `RxPlace::ack_rate`.
    pub ack_rate: Signal<Out, Bits<32>>,
    /// `RxPlace::ack_credit`.
    pub ack_credit: Signal<Out, Bits<32>>,
    /// `RxPlace::ack_local_ip`.
    pub ack_local_ip: Signal<Out, Bits<128>>,
    // The QP entries' firmware-written fields, the global registers.
    qps: PlaceQps,
    globals: PlaceGlobals,
    // Receive rings and MSN heads: written by the firmware, read in S0.
    rings: PlaceRings,
    // The outstanding READs (read and matched in S1) and the MRs
    // (looked up in S1, checked in S2).
    reads: PlaceReads,
    mrs: PlaceMr,
    // S1's remote address and rkey.
    p_remote_va: DFF<Bits<64>>,
    p_rkey: DFF<Bits<32>>,
    // S1's sums (the placement address, the MR check's range, the ring's
    // checks), registered.
    sums: PlaceSums,
    check: PlaceCheck,
}

impl Logic for PlaceLookup {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, p_remote_va, p_rkey);
        // ---- S0: the QP lookup, the ring's control word of (QP, stream),
        // the slot of `recv_idx` (a stream >= RQ_STREAMS never uses them)
        // and the MSN heads' word ----
        self.qps.clock.next = self.clock.val();
        self.qps.rst.next = self.rst.val();
        CfgIn::<9>::link(&mut self.cfg, &mut self.qps.cfg);
        self.globals.clock.next = self.clock.val();
        self.globals.rst.next = self.rst.val();
        self.globals.cfg.we.next = self.cfg.we.val() & (self.cfg.addr.val().get_bits::<3>(6) == 2);
        self.globals.cfg.addr.next = self.cfg.addr.val().get_bits::<4>(0);
        self.globals.cfg.data.next = self.cfg.data.val();
        self.qps.dst_qpn.next = self.dst_qpn0.val();
        self.hit0.next = self.qps.hit0.val();
        self.qi0.next = self.qps.qi0.val();
        self.rings.clock.next = self.clock.val();
        CfgIn::<9>::link(&mut self.cfg, &mut self.rings.cfg);
        self.rings.qi0.next = self.qps.qi0.val();
        self.rings.stream.next = self.stream0.val();
        self.rings.slot.next = self.slot0.val();
        self.rings.en1.next = self.en1.val();
        if self.en0.val() {
            self.p_remote_va.d.next = self.remote_va0.val();
            self.p_rkey.d.next = self.rkey0.val();
        }

        // ---- S1: the READ match and the MR key lookup (written through
        // with this cycle's table write), the sums ----
        self.reads.clock.next = self.clock.val();
        self.reads.rst.next = self.rst.val();
        CfgIn::<9>::link(&mut self.cfg, &mut self.reads.cfg);
        self.reads.en1.next = self.en1.val();
        self.reads.qi.next = self.qi1.val();
        self.reads.stream.next = self.stream1.val();
        self.reads.msn.next = self.msn1.val();
        self.reads.opcode.next = self.opcode1.val();
        self.mrs.clock.next = self.clock.val();
        self.mrs.rst.next = self.rst.val();
        CfgIn::<9>::link(&mut self.cfg, &mut self.mrs.cfg);
        self.mrs.en.next = self.en1.val();
        self.mrs.opcode.next = self.opcode1.val();
        self.mrs.rd1.next = self.reads.rd1.val();
        self.mrs.rkey.next = self.p_rkey.q.val();
        self.mrs.recv_lkey.next = self.rings.sge_ll.val().get_bits::<32>(32);
        self.mrs.lkey0.next = self.reads.lkey0.val();
        self.mrs.lkey1.next = self.reads.lkey1.val();
        self.sums.clock.next = self.clock.val();
        self.sums.en.next = self.en1.val();
        self.sums.opcode.next = self.opcode1.val();
        self.sums.rd1.next = self.reads.rd1.val();
        self.sums.offset.next = self.offset1.val();
        self.sums.pl.next = self.pl1.val();
        self.sums.end_off.next = self.end_off1.val();
        self.sums.msg_len.next = self.msg_len1.val();
        self.sums.recv_idx.next = self.recv_idx1.val();
        self.sums.remote_va.next = self.p_remote_va.q.val();
        self.sums.rq_ctl.next = self.rings.ctl.val();
        self.sums.rq_addr.next = self.rings.sge_addr.val();
        self.sums.rq_len.next = self.rings.sge_ll.val().get_bits::<32>(0);
        self.sums.rd0_addr.next = self.reads.addr0.val();
        self.sums.rd1_addr.next = self.reads.addr1.val();

        // ---- S2: the state-free checks, with the MR chosen in S1 and the
        // QP entry's fields that only the firmware writes ----
        self.check.clock.next = self.clock.val();
        MetaIn::link(&mut self.m2, &mut self.check.m);
        self.check.is_msg.next = self.is_msg2.val();
        self.check.opcode.next = self.opcode2.val();
        self.check.stream.next = self.stream2.val();
        self.check.path.next = self.path2.val();
        self.check.msn.next = self.msn2.val();
        self.check.msg_len.next = self.msg_len2.val();
        self.check.offset.next = self.offset2.val();
        self.check.qhit.next = self.qhit2.val();
        self.check.mtu.next = self.globals.mtu.val();
        self.check.rq_hit.next = self.sums.rq_hit.val();
        self.check.rq_long.next = self.sums.rq_long.val();
        self.check.dest_s1.next = self.sums.dest.val();
        self.check.heads.next = self.rings.heads.val();
        self.check.rdhit.next = self.reads.hit.val();
        self.check.rd_len.next = self.reads.len.val();
        self.mrs.en2.next = self.m2.valid.val();
        self.mrs.maddr.next = self.sums.maddr.val();
        self.mrs.wend.next = self.sums.wend.val();
        self.check.mhit.next = self.mrs.hit.val();
        self.check.m_access.next = self.mrs.access.val();
        self.check.m_pd_ok.next = self.mrs.pd_ok.val();
        self.check.m_in_range.next = self.mrs.in_range.val();
        self.qps.en2.next = self.m2.valid.val();
        self.qps.qi2.next = self.qi2.val();
        self.check.q_peer.next = self.qps.peer.val();
        self.check.q_peer_ip.next = self.qps.peer_ip.val();
        self.mrs.q_pd.next = self.qps.pd.val();
        self.check.q_streams.next = self.qps.streams.val();
        ChecksOut::link(&mut self.v, &mut self.check.v);
        self.plen.next = self.check.plen.val();
        self.has_beats.next = self.check.has_beats.val();
        self.dest.next = self.check.dest.val();

        // ---- the ACK generator's read port ----
        self.qps.ack_qp.next = self.ack_qp.val();
        self.ack_qpn.next = self.qps.ack_qpn.val();
        self.ack_peer_qpn.next = self.qps.ack_peer_qpn.val();
        self.ack_peer_ip.next = self.qps.ack_peer_ip.val();
        self.ack_peer_port.next = self.qps.ack_peer_port.val();
        self.ack_rate.next = self.qps.ack_rate.val();
        self.ack_credit.next = self.qps.ack_credit.val();
        self.ack_local_ip.next = self.globals.local_ip.val();
    }
}

//! The QP table's firmware-written fields ([`PlaceQps`]).

use rust_hdl::prelude::*;

use super::QPS;
use crate::bus::CfgIn;

/// The QP entries of [`RxPlace`](super::RxPlace) as the firmware writes
/// them (table 0: valid, QPN and peer QPN, peer IP, PD and streams, peer
/// UDP port, rate hint and credit; the state and connection window are
/// [`PlaceConn`](super::PlaceConn)'s, the outstanding READs
/// [`PlaceReads`](super::PlaceReads)'), with their three read ports, all
/// combinational from the registers (a write shows the next cycle):
///
/// * S0, the lookup: the entry valid with `dst_qpn` (the last one when
///   several have it), by loop-and-compare (a small CAM).
/// * S2: the peer, PD and streams of the datagram's entry (0 without a
///   datagram), which only the firmware writes: S2 sees writes up to S1.
/// * The ACK generator's port: `ack_qp`'s QPNs, peer address and port,
///   rate hint and credit.
#[derive(LogicBlock, Default)]
pub struct PlaceQps {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: every entry invalid.
    pub rst: Signal<In, Bit>,
    /// Table write port (table 0).
    pub cfg: CfgIn<9>,
    /// S0: the destination QPN to look up.
    pub dst_qpn: Signal<In, Bits<32>>,
    /// S0: an entry has it.
    pub hit0: Signal<Out, Bit>,
    /// S0: that entry.
    pub qi0: Signal<Out, Bits<2>>,
    /// S2: a datagram is here.
    pub en2: Signal<In, Bit>,
    /// S2: its entry.
    pub qi2: Signal<In, Bits<2>>,
    /// S2: the peer's QPN.
    pub peer: Signal<Out, Bits<32>>,
    /// S2: the peer's IP.
    pub peer_ip: Signal<Out, Bits<128>>,
    /// S2: the protection domain.
    pub pd: Signal<Out, Bits<32>>,
    /// S2: the streams.
    pub streams: Signal<Out, Bits<16>>,
    /// ACK read port: QP entry.
    pub ack_qp: Signal<In, Bits<2>>,
    /// ACK read port: its QPN.
    pub ack_qpn: Signal<Out, Bits<32>>,
    /// ACK read port: the peer's QPN.
    pub ack_peer_qpn: Signal<Out, Bits<32>>,
    /// ACK read port: the peer's IP.
    pub ack_peer_ip: Signal<Out, Bits<128>>,
    /// ACK read port: the peer's UDP port.
    pub ack_peer_port: Signal<Out, Bits<16>>,
    /// ACK read port: rate hint.
    pub ack_rate: Signal<Out, Bits<32>>,
    /// ACK read port: credit.
    pub ack_credit: Signal<Out, Bits<32>>,
    q_valid: DFF<Bits<QPS>>,
    q_qpn: [DFF<Bits<32>>; QPS],
    q_peer: [DFF<Bits<32>>; QPS],
    q_peer_ip: [DFF<Bits<128>>; QPS],
    q_pd: [DFF<Bits<32>>; QPS],
    q_streams: [DFF<Bits<16>>; QPS],
    q_port: [DFF<Bits<16>>; QPS],
    q_rate: [DFF<Bits<32>>; QPS],
    q_credit: [DFF<Bits<32>>; QPS],
    // Table writes: the half of an IP address kept.
    ip_half: Signal<Local, Bits<64>>,
}

impl Logic for PlaceQps {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, q_valid);
        for i in 0..QPS {
            self.q_qpn[i].clock.next = self.clock.val();
            self.q_qpn[i].d.next = self.q_qpn[i].q.val();
            self.q_peer[i].clock.next = self.clock.val();
            self.q_peer[i].d.next = self.q_peer[i].q.val();
            self.q_peer_ip[i].clock.next = self.clock.val();
            self.q_peer_ip[i].d.next = self.q_peer_ip[i].q.val();
            self.q_pd[i].clock.next = self.clock.val();
            self.q_pd[i].d.next = self.q_pd[i].q.val();
            self.q_streams[i].clock.next = self.clock.val();
            self.q_streams[i].d.next = self.q_streams[i].q.val();
            self.q_port[i].clock.next = self.clock.val();
            self.q_port[i].d.next = self.q_port[i].q.val();
            self.q_rate[i].clock.next = self.clock.val();
            self.q_rate[i].d.next = self.q_rate[i].q.val();
            self.q_credit[i].clock.next = self.clock.val();
            self.q_credit[i].d.next = self.q_credit[i].q.val();
        }
        // ---- S0: the lookup ----
        self.hit0.next = false;
        self.qi0.next = 0.into();
        for i in 0..QPS {
            if self.q_valid.q.val().get_bit(i) & (self.q_qpn[i].q.val() == self.dst_qpn.val()) {
                self.hit0.next = true;
                self.qi0.next = i.to_bits::<2>();
            }
        }
        // ---- S2: the fields that only the firmware writes ----
        self.peer.next = 0.into();
        self.peer_ip.next = 0.into();
        self.pd.next = 0.into();
        self.streams.next = 0.into();
        if self.en2.val() {
            for i in 0..QPS {
                if self.qi2.val().index() == i {
                    self.peer.next = self.q_peer[i].q.val();
                    self.peer_ip.next = self.q_peer_ip[i].q.val();
                    self.pd.next = self.q_pd[i].q.val();
                    self.streams.next = self.q_streams[i].q.val();
                }
            }
        }
        // ---- the ACK generator's read port ----
        self.ack_qpn.next = 0.into();
        self.ack_peer_qpn.next = 0.into();
        self.ack_peer_ip.next = 0.into();
        self.ack_peer_port.next = 0.into();
        self.ack_rate.next = 0.into();
        self.ack_credit.next = 0.into();
        for i in 0..QPS {
            if self.ack_qp.val().index() == i {
                self.ack_qpn.next = self.q_qpn[i].q.val();
                self.ack_peer_qpn.next = self.q_peer[i].q.val();
                self.ack_peer_ip.next = self.q_peer_ip[i].q.val();
                self.ack_peer_port.next = self.q_port[i].q.val();
                self.ack_rate.next = self.q_rate[i].q.val();
                self.ack_credit.next = self.q_credit[i].q.val();
            }
        }
        // ---- table writes ----
        self.ip_half.next = 0.into();
        if self.cfg.we.val() & (self.cfg.addr.val().get_bits::<3>(6) == 0) {
            for i in 0..QPS {
                if self.cfg.addr.val().get_bits::<2>(4).index() == i {
                    if self.cfg.addr.val().get_bits::<4>(0) == 0 {
                        self.q_valid.d.next = self
                            .q_valid
                            .q
                            .val()
                            .replace_bit(i, self.cfg.data.val().get_bit(0));
                    }
                    if self.cfg.addr.val().get_bits::<4>(0) == 1 {
                        self.q_qpn[i].d.next = self.cfg.data.val().get_bits::<32>(0);
                        self.q_peer[i].d.next = self.cfg.data.val().get_bits::<32>(32);
                    }
                    if self.cfg.addr.val().get_bits::<4>(0) == 2 {
                        self.ip_half.next = self.q_peer_ip[i].q.val().get_bits::<64>(0);
                        self.q_peer_ip[i].d.next = bit_cast::<128, 64>(self.ip_half.val())
                            | (bit_cast::<128, 64>(self.cfg.data.val()) << 64);
                    }
                    if self.cfg.addr.val().get_bits::<4>(0) == 3 {
                        self.ip_half.next = self.q_peer_ip[i].q.val().get_bits::<64>(64);
                        self.q_peer_ip[i].d.next = (bit_cast::<128, 64>(self.ip_half.val()) << 64)
                            | bit_cast::<128, 64>(self.cfg.data.val());
                    }
                    if self.cfg.addr.val().get_bits::<4>(0) == 4 {
                        self.q_pd[i].d.next = self.cfg.data.val().get_bits::<32>(0);
                        self.q_streams[i].d.next = self.cfg.data.val().get_bits::<16>(32);
                    }
                    if self.cfg.addr.val().get_bits::<4>(0) == 6 {
                        self.q_port[i].d.next = self.cfg.data.val().get_bits::<16>(0);
                    }
                    if self.cfg.addr.val().get_bits::<4>(0) == 7 {
                        self.q_rate[i].d.next = self.cfg.data.val().get_bits::<32>(0);
                        self.q_credit[i].d.next = self.cfg.data.val().get_bits::<32>(32);
                    }
                }
            }
        }
        if self.rst.val() {
            self.q_valid.d.next = 0.into();
        }
    }
}

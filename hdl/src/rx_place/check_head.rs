//! S2's checks before the connection window ([`CheckHead`]).

use rust_hdl::prelude::*;

/// The checks of [`PlaceCheck`](super::PlaceCheck) that come before the
/// connection window in the engine's order: before the QP state (`head`:
/// the parser's drop reason, then an unknown QP, 6) and after it (`mid`:
/// not the peer, 8; path ≥ 64, 9; a PROBE, which passes on to S3 as
/// `probe`; an opcode the RTL does not handle, 10; a stream beyond the
/// QP's, 11; a receive of a stream without a ring, 10). Registered for S3;
/// computed only while `en` is high, otherwise 0.
#[derive(LogicBlock, Default)]
pub struct CheckHead {
    /// Clock (the outputs are registered).
    pub clock: Signal<In, Clock>,
    /// A datagram is in S2.
    pub en: Signal<In, Bit>,
    /// Parser: drop.
    pub drop: Signal<In, Bit>,
    /// Parser: drop reason.
    pub reason: Signal<In, Bits<3>>,
    /// The QP was found.
    pub qhit: Signal<In, Bit>,
    /// Source QPN.
    pub src_qpn: Signal<In, Bits<32>>,
    /// Source IP.
    pub src_ip: Signal<In, Bits<128>>,
    /// QP: the peer's QPN.
    pub q_peer: Signal<In, Bits<32>>,
    /// QP: the peer's IP.
    pub q_peer_ip: Signal<In, Bits<128>>,
    /// Path id.
    pub path: Signal<In, Bits<16>>,
    /// Opcode.
    pub opcode: Signal<In, Bits<8>>,
    /// The opcode is one the RTL checks (WRITE, WRITE_IMM, SEND, SEND_IMM,
    /// READ request and response, atomic request and response).
    pub known: Signal<In, Bit>,
    /// The opcode consumes a posted receive (SEND, SEND_IMM, WRITE_IMM).
    pub is_recv: Signal<In, Bit>,
    /// Stream id.
    pub stream: Signal<In, Bits<16>>,
    /// QP: streams.
    pub q_streams: Signal<In, Bits<16>>,
    /// Registered: a code is in `head`.
    pub head_hit: Signal<Out, Bit>,
    /// Registered: that code.
    pub head: Signal<Out, Bits<5>>,
    /// Registered: a code is in `mid`.
    pub mid_hit: Signal<Out, Bit>,
    /// Registered: that code.
    pub mid: Signal<Out, Bits<5>>,
    /// Registered: a PROBE that passed `mid`.
    pub probe: Signal<Out, Bit>,
    r_head_hit: DFF<Bit>,
    r_head: DFF<Bits<5>>,
    r_mid_hit: DFF<Bit>,
    r_mid: DFF<Bits<5>>,
    r_probe: DFF<Bit>,
}

impl Logic for CheckHead {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, r_head_hit, r_head, r_mid_hit, r_mid, r_probe);
        self.head_hit.next = self.r_head_hit.q.val();
        self.head.next = self.r_head.q.val();
        self.mid_hit.next = self.r_mid_hit.q.val();
        self.mid.next = self.r_mid.q.val();
        self.probe.next = self.r_probe.q.val();
        self.r_head_hit.d.next = false;
        self.r_head.d.next = 0.into();
        self.r_mid_hit.d.next = false;
        self.r_mid.d.next = 0.into();
        self.r_probe.d.next = false;
        if self.en.val() {
            // Before the QP state (7, S3's).
            if self.drop.val() {
                self.r_head_hit.d.next = true;
                self.r_head.d.next = bit_cast::<5, 3>(self.reason.val());
            } else if !self.qhit.val() {
                self.r_head_hit.d.next = true;
                self.r_head.d.next = 6.into();
            }
            // After it, before the connection window (12, S3's).
            self.r_mid_hit.d.next = true;
            if (self.src_qpn.val() != self.q_peer.val())
                | (self.src_ip.val() != self.q_peer_ip.val())
            {
                self.r_mid.d.next = 8.into();
            } else if self.path.val() >= 64 {
                self.r_mid.d.next = 9.into();
            } else if self.opcode.val() == 0x12 {
                self.r_mid_hit.d.next = false;
                self.r_probe.d.next = true;
            } else if !self.known.val() {
                self.r_mid.d.next = 10.into();
            } else if self.stream.val() >= self.q_streams.val() {
                self.r_mid.d.next = 11.into();
            } else if self.is_recv.val() & (self.stream.val() >= 4) {
                // Receives of streams without a ring are the firmware's.
                self.r_mid.d.next = 10.into();
            } else {
                self.r_mid_hit.d.next = false;
            }
        }
    }
}

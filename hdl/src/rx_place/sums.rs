//! S1's sums for S2's checks of one datagram ([`PlaceSums`]).

use rust_hdl::prelude::*;

/// S1 of [`RxPlace`](super::RxPlace): the arithmetic that S2's checks
/// ([`PlaceCheck`](super::PlaceCheck)) compare, from values S1 already
/// has, so S2 only compares. Registered for S2:
///
/// * `dest`, where the payload goes: the WRITE's (WRITE_IMM's) remote
///   address, else the local SGE's (the matched READ's for a READ_RESP,
///   the receive's otherwise) plus the offset;
/// * the MR check's range (`MrTable::check`): its start `maddr` (the
///   remote address for WRITE, WRITE_IMM, READ and atomic requests, else
///   the local address; 65 bits, a sum past 2^64 never passes) and its
///   end `wend` = `maddr` + the checked length (the payload; a READ
///   request's message length; 8 for an atomic request). The local end is
///   the SGE's address plus `end_off` (offset + payload, summed in S0), so
///   no sum waits for another;
/// * the receive ring's checks: `recv_idx` is in the ring (`rq_hit`) and
///   the message is longer than its receive (`rq_long`).
///
/// The local SGE is chosen by the opcode first (READ entry 0's for a
/// READ_RESP, the receive's otherwise), two adders make its range, two
/// more READ entry 1's, and the READ match (`rd1`, the last to settle)
/// chooses between the sums; a fifth adder makes the remote range.
/// Computed only while `en` is high (a datagram in S1), otherwise 0.
#[derive(LogicBlock, Default)]
pub struct PlaceSums {
    /// Clock (the outputs are registered).
    pub clock: Signal<In, Clock>,
    /// A datagram is in S1.
    pub en: Signal<In, Bit>,
    /// Opcode.
    pub opcode: Signal<In, Bits<8>>,
    /// Outstanding-READ entry 1 matches the response (else entry 0's
    /// address is used).
    pub rd1: Signal<In, Bit>,
    /// Offset.
    pub offset: Signal<In, Bits<32>>,
    /// Payload bytes (length - 68, from S0).
    pub pl: Signal<In, Bits<16>>,
    /// Offset + payload bytes (33 bits, from S0).
    pub end_off: Signal<In, Bits<33>>,
    /// Message length.
    pub msg_len: Signal<In, Bits<32>>,
    /// Posted-receive index.
    pub recv_idx: Signal<In, Bits<32>>,
    /// Remote address.
    pub remote_va: Signal<In, Bits<64>>,
    /// Ring control word of (QP, stream): {count, base `recv_idx`}.
    pub rq_ctl: Signal<In, Bits<36>>,
    /// Ring slot of `recv_idx`: SGE address.
    pub rq_addr: Signal<In, Bits<64>>,
    /// Ring slot of `recv_idx`: SGE length.
    pub rq_len: Signal<In, Bits<32>>,
    /// Outstanding-READ entry 0: local address.
    pub rd0_addr: Signal<In, Bits<64>>,
    /// Outstanding-READ entry 1: local address.
    pub rd1_addr: Signal<In, Bits<64>>,
    /// Registered: where the payload goes.
    pub dest: Signal<Out, Bits<64>>,
    /// Registered: the MR check's start address (65 bits).
    pub maddr: Signal<Out, Bits<65>>,
    /// Registered: the MR check's end address (66 bits).
    pub wend: Signal<Out, Bits<66>>,
    /// Registered: `recv_idx` has a posted receive in the ring.
    pub rq_hit: Signal<Out, Bit>,
    /// Registered: the message is longer than that receive.
    pub rq_long: Signal<Out, Bit>,
    r_dest: DFF<Bits<64>>,
    r_maddr: DFF<Bits<65>>,
    r_wend: DFF<Bits<66>>,
    r_rq_hit: DFF<Bit>,
    r_rq_long: DFF<Bit>,
    remote: Signal<Local, Bit>,
    rresp: Signal<Local, Bit>,
    rlen: Signal<Local, Bits<32>>,
    sge: Signal<Local, Bits<64>>,
    la1: Signal<Local, Bits<65>>,
    le1: Signal<Local, Bits<66>>,
    re: Signal<Local, Bits<66>>,
    la: Signal<Local, Bits<65>>,
    le: Signal<Local, Bits<66>>,
    rq_off: Signal<Local, Bits<32>>,
}

impl Logic for PlaceSums {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, r_dest, r_maddr, r_wend, r_rq_hit, r_rq_long);
        self.dest.next = self.r_dest.q.val();
        self.maddr.next = self.r_maddr.q.val();
        self.wend.next = self.r_wend.q.val();
        self.rq_hit.next = self.r_rq_hit.q.val();
        self.rq_long.next = self.r_rq_long.q.val();
        self.remote.next = false;
        self.rresp.next = false;
        self.rlen.next = 0.into();
        self.sge.next = 0.into();
        self.re.next = 0.into();
        self.la.next = 0.into();
        self.le.next = 0.into();
        self.la1.next = 0.into();
        self.le1.next = 0.into();
        self.rq_off.next = 0.into();
        self.r_dest.d.next = 0.into();
        self.r_maddr.d.next = 0.into();
        self.r_wend.d.next = 0.into();
        self.r_rq_hit.d.next = false;
        self.r_rq_long.d.next = false;
        if self.en.val() {
            // The opcodes checked at the remote address under the rkey:
            // WRITE, WRITE_IMM, READ request, atomic requests.
            self.remote.next = (self.opcode.val() == 0x01)
                | (self.opcode.val() == 0x02)
                | (self.opcode.val() == 0x05)
                | (self.opcode.val() == 0x08)
                | (self.opcode.val() == 0x09);
            self.rresp.next = self.opcode.val() == 0x06;
            // The remote range's length: the payload (WRITE, WRITE_IMM),
            // the message (READ request), the 8 bytes of an atomic.
            self.rlen.next = bit_cast::<32, 16>(self.pl.val());
            if self.opcode.val() == 0x05 {
                self.rlen.next = self.msg_len.val();
            } else if (self.opcode.val() == 0x08) | (self.opcode.val() == 0x09) {
                self.rlen.next = 8.into();
            }
            self.re.next =
                bit_cast::<66, 64>(self.remote_va.val()) + bit_cast::<66, 32>(self.rlen.val());
            // The local SGE: the matched READ's for a READ_RESP, else the
            // receive's; plus the offset (the start) and plus offset +
            // payload (the end of the local range). The READ match (`rd1`)
            // comes last, so it chooses between sums: READ entry 1's, and
            // the SGE the opcode chooses (READ entry 0's or the receive's).
            self.sge.next = self.rq_addr.val();
            if self.rresp.val() {
                self.sge.next = self.rd0_addr.val();
            }
            self.la.next =
                bit_cast::<65, 64>(self.sge.val()) + bit_cast::<65, 32>(self.offset.val());
            self.le.next =
                bit_cast::<66, 64>(self.sge.val()) + bit_cast::<66, 33>(self.end_off.val());
            self.la1.next =
                bit_cast::<65, 64>(self.rd1_addr.val()) + bit_cast::<65, 32>(self.offset.val());
            self.le1.next =
                bit_cast::<66, 64>(self.rd1_addr.val()) + bit_cast::<66, 33>(self.end_off.val());
            if self.rresp.val() & self.rd1.val() {
                self.la.next = self.la1.val();
                self.le.next = self.le1.val();
            }
            // The payload goes to the local address, a WRITE's (WRITE_IMM's)
            // to the remote one.
            self.r_dest.d.next = self.la.val().get_bits::<64>(0);
            if (self.opcode.val() == 0x01) | (self.opcode.val() == 0x02) {
                self.r_dest.d.next = self.remote_va.val();
            }
            self.r_maddr.d.next = self.la.val();
            self.r_wend.d.next = self.le.val();
            if self.remote.val() {
                self.r_maddr.d.next = bit_cast::<65, 64>(self.remote_va.val());
                self.r_wend.d.next = self.re.val();
            }
            // The posted receive the message consumes (`receive_for`) and
            // its length.
            self.rq_off.next = self.recv_idx.val() - self.rq_ctl.val().get_bits::<32>(0);
            self.r_rq_hit.d.next =
                self.rq_off.val() < bit_cast::<32, 4>(self.rq_ctl.val().get_bits::<4>(32));
            self.r_rq_long.d.next = self.msg_len.val() > self.rq_len.val();
        }
    }
}

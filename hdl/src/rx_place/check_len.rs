//! S2's length, MSN-window and READ-fit checks ([`CheckLen`]).

use rust_hdl::prelude::*;

/// The checks of [`PlaceCheck`](super::PlaceCheck) on a datagram's
/// lengths and numbers, each a flag S3 puts in the engine's order:
/// `bad_len` (13: payload over the MTU, or past the message's end; a READ
/// request with a payload or offset; an atomic request whose payload is
/// not its operands, 8 bytes or 16 for COMPARE_SWAP, or whose offset is
/// not 0 or message length not 8), `rd_ok` (a response matches an
/// outstanding READ and fits it, `Tx::read_response_fits`), and the MSN
/// window (spec §6.5: `msn_before`, before its stream's head; `msn_far`,
/// 256 or more after it). Registered for S3; computed only while `en` is
/// high, otherwise 0.
#[derive(LogicBlock, Default)]
pub struct CheckLen {
    /// Clock (the outputs are registered).
    pub clock: Signal<In, Clock>,
    /// A datagram is in S2.
    pub en: Signal<In, Bit>,
    /// Opcode (COMPARE_SWAP, 0x09, carries 16 bytes).
    pub opcode: Signal<In, Bits<8>>,
    /// A READ request.
    pub is_rreq: Signal<In, Bit>,
    /// An atomic request.
    pub is_areq: Signal<In, Bit>,
    /// Payload bytes.
    pub pl: Signal<In, Bits<16>>,
    /// Offset + payload bytes (33 bits).
    pub end_off: Signal<In, Bits<33>>,
    /// MTU.
    pub mtu: Signal<In, Bits<16>>,
    /// Message length.
    pub msg_len: Signal<In, Bits<32>>,
    /// Offset.
    pub offset: Signal<In, Bits<32>>,
    /// An outstanding READ (atomic) matches the response.
    pub rdhit: Signal<In, Bit>,
    /// Its length.
    pub rd_len: Signal<In, Bits<32>>,
    /// MSN.
    pub msn: Signal<In, Bits<32>>,
    /// The stream is odd (its head is the word's upper half).
    pub odd: Signal<In, Bit>,
    /// MSN heads of the stream pair.
    pub heads: Signal<In, Bits<64>>,
    /// Registered: the length checks fail (13).
    pub bad_len: Signal<Out, Bit>,
    /// Registered: the response matches an outstanding READ and fits it.
    pub rd_ok: Signal<Out, Bit>,
    /// Registered: the MSN is before its stream's head.
    pub msn_before: Signal<Out, Bit>,
    /// Registered: the MSN is a window or more after its stream's head.
    pub msn_far: Signal<Out, Bit>,
    r_bad_len: DFF<Bit>,
    r_rd_ok: DFF<Bit>,
    r_msn_before: DFF<Bit>,
    r_msn_far: DFF<Bit>,
    rd_fits: Signal<Local, Bit>,
    dm: Signal<Local, Bits<32>>,
    bl: Signal<Local, Bit>,
}

impl Logic for CheckLen {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, r_bad_len, r_rd_ok, r_msn_before, r_msn_far);
        self.bad_len.next = self.r_bad_len.q.val();
        self.rd_ok.next = self.r_rd_ok.q.val();
        self.msn_before.next = self.r_msn_before.q.val();
        self.msn_far.next = self.r_msn_far.q.val();
        self.rd_fits.next = false;
        self.dm.next = 0.into();
        self.bl.next = false;
        self.r_bad_len.d.next = false;
        self.r_rd_ok.d.next = false;
        self.r_msn_before.d.next = false;
        self.r_msn_far.d.next = false;
        if self.en.val() {
            // The response fits its READ (`Tx::read_response_fits`).
            self.rd_fits.next = (self.msg_len.val() == self.rd_len.val())
                & (self.end_off.val() <= bit_cast::<33, 32>(self.rd_len.val()));
            self.r_rd_ok.d.next = self.rdhit.val() & self.rd_fits.val();
            // The MSN window (spec §6.5): before the stream's head is a
            // completed message, a window or more after it too far.
            if self.odd.val() {
                self.dm.next = self.msn.val() - self.heads.val().get_bits::<32>(32);
            } else {
                self.dm.next = self.msn.val() - self.heads.val().get_bits::<32>(0);
            }
            self.r_msn_before.d.next = self.dm.val().get_bit(31);
            self.r_msn_far.d.next = !self.dm.val().get_bit(31) & (self.dm.val() >= 256);
            // An atomic request's payload is its operands (8 bytes, 16 for
            // COMPARE_SWAP), its offset 0 and its message length 8.
            if self.is_areq.val() {
                if self.opcode.val() == 0x09 {
                    self.bl.next = self.pl.val() != 16;
                } else {
                    self.bl.next = self.pl.val() != 8;
                }
                self.r_bad_len.d.next =
                    self.bl.val() | (self.offset.val() != 0) | (self.msg_len.val() != 8);
            } else {
                self.r_bad_len.d.next = (self.pl.val() > self.mtu.val())
                    | (self.end_off.val() > bit_cast::<33, 32>(self.msg_len.val()))
                    | (self.is_rreq.val() & ((self.pl.val() != 0) | (self.offset.val() != 0)));
            }
        }
    }
}

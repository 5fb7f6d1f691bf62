//! [`MacRx`](super::MacRx)'s line side ([`MacRxLine`]): GMII into the
//! ring (which it holds), each frame judged and committed or forgotten
//! when it ends.

use rust_hdl::prelude::*;

use super::RX_BUFFER_BITS;
use crate::helpers::native_block;
use crate::mac::{CrcByte, FCS_RESIDUE, MIN_PAYLOAD};

/// Where [`MacRxLine`] is on the line.
#[derive(Copy, Clone, PartialEq, Debug, LogicState)]
enum RxState {
    /// Line idle (or a frame just ended).
    Idle,
    /// In the preamble, waiting for the SFD.
    Preamble,
    /// In a frame's bytes (its FCS included).
    Data,
    /// In a frame being ignored (no preamble), until the line is idle.
    Skip,
}

native_block! {
    /// GMII registered in, then each frame's bytes written into the ring (a
    /// rust-hdl `RAM` of 4 KiB, 9 bits per byte: the byte and a last-byte
    /// mark; the reader reads it through `ring_raddr`, `ring_rdata`) as
    /// they arrive,
    /// with the FCS checked byte by byte ([`CrcByte`]). When the line goes
    /// idle the frame is committed if its FCS is right, no receive error
    /// was signalled, it has at least 64 bytes with its FCS, and it fitted
    /// (the ring is full when it holds `2^12` bytes from the reader's
    /// `read_ptr` on): its last byte before the FCS is rewritten with the
    /// mark and the committed end (`committed`, a register) moves there, so
    /// the next frame overwrites the FCS. Otherwise its bytes are
    /// forgotten and one counter says why.
    MacRxLine []
    check {
        RX_BUFFER_BITS == 12,
        "the buffer's RAM and pointers are sized for 12 bits"
    }
    ports {
        #[doc = "The GMII receive clock."]
        clock: Signal<In, Clock>,
        #[doc = "Synchronous reset: nothing committed, counters zero."]
        rst: Signal<In, Bit>,
        #[doc = "GMII receive data."]
        gmii_rxd: Signal<In, Bits<8>>,
        #[doc = "GMII receive data valid."]
        gmii_rx_dv: Signal<In, Bit>,
        #[doc = "GMII receive error."]
        gmii_rx_er: Signal<In, Bit>,
        #[doc = "The reader's next ring address (bytes before it are free)."]
        read_ptr: Signal<In, Bits<13>>,
        #[doc = "The end of the committed frames (a register)."]
        committed: Signal<Out, Bits<13>>,
        #[doc = "Ring read address (the reader's)."]
        ring_raddr: Signal<In, Bits<12>>,
        #[doc = "Ring read data (bit 8: the frame's last byte), the clock after its address."]
        ring_rdata: Signal<Out, Bits<9>>,
        #[doc = "Frames committed (wraps)."]
        frames: Signal<Out, Bits<32>>,
        #[doc = "Frames dropped for a wrong FCS."]
        fcs_errors: Signal<Out, Bits<32>>,
        #[doc = "Frames dropped for a receive error signalled by the PHY."]
        rx_errors: Signal<Out, Bits<32>>,
        #[doc = "Frames dropped for being shorter than 64 bytes with their FCS."]
        runts: Signal<Out, Bits<32>>,
        #[doc = "Frames dropped for want of room in the buffer."]
        no_room: Signal<Out, Bits<32>>,
    }
    state {
        state: DFF<RxState>,
        rxd: DFF<Bits<8>>,
        rxdv: DFF<Bit>,
        rxer: DFF<Bit>,
        crc: DFF<Bits<32>>,
        len: DFF<Bits<16>>,
        err: DFF<Bit>,
        full: DFF<Bit>,
        hist: DFF<Bits<40>>,
        w_start: DFF<Bits<13>>,
        w_ptr: DFF<Bits<13>>,
        n_frames: DFF<Bits<32>>,
        n_fcs: DFF<Bits<32>>,
        n_err: DFF<Bits<32>>,
        n_runt: DFF<Bits<32>>,
        n_room: DFF<Bits<32>>,
        ring: RAM<Bits<9>, 12>,
        check: CrcByte,
        used: Signal<Local, Bits<13>>,
    }
    consts {
        c_residue: Constant<Bits<32>> = Constant::new(FCS_RESIDUE.to_bits()),
        c_min: Constant<Bits<16>> = Constant::new((MIN_PAYLOAD + 4).to_bits()),
        c_init: Constant<Bits<32>> = Constant::new(u32::MAX.to_bits()),
        c_mark: Constant<Bits<9>> = Constant::new(0x100usize.to_bits()),
        c_cap: Constant<Bits<13>> = Constant::new((1usize << RX_BUFFER_BITS).to_bits()),
    }
}

impl Logic for MacRxLine {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, state, rxd, rxdv, rxer, crc, len, err, full, hist, w_start, w_ptr,
            n_frames, n_fcs, n_err, n_runt, n_room
        );
        self.frames.next = self.n_frames.q.val();
        self.fcs_errors.next = self.n_fcs.q.val();
        self.rx_errors.next = self.n_err.q.val();
        self.runts.next = self.n_runt.q.val();
        self.no_room.next = self.n_room.q.val();
        self.committed.next = self.w_start.q.val();
        self.ring.read_clock.next = self.clock.val();
        self.ring.write_clock.next = self.clock.val();
        self.ring.read_address.next = self.ring_raddr.val();
        self.ring_rdata.next = self.ring.read_data.val();

        // Registered GMII into the ring.
        self.rxd.d.next = self.gmii_rxd.val();
        self.rxdv.d.next = self.gmii_rx_dv.val();
        self.rxer.d.next = self.gmii_rx_er.val();
        self.check.crc_in.next = self.crc.q.val();
        self.check.octet.next = self.rxd.q.val();
        self.ring.write_address.next = bit_cast::<12, 13>(self.w_ptr.q.val());
        self.ring.write_data.next = bit_cast::<9, 8>(self.rxd.q.val());
        self.ring.write_enable.next = false;
        // Bytes in the ring, unread or of the frame arriving: 2^12 is full.
        self.used.next = self.w_ptr.q.val() - self.read_ptr.val();
        match self.state.q.val() {
            RxState::Idle => {
                if self.rxdv.q.val() {
                    if self.rxd.q.val() == 0x55 {
                        self.state.d.next = RxState::Preamble;
                    } else {
                        self.state.d.next = RxState::Skip;
                    }
                }
            }
            RxState::Preamble => {
                if !self.rxdv.q.val() {
                    self.state.d.next = RxState::Idle;
                } else if self.rxd.q.val() == 0xD5 {
                    self.state.d.next = RxState::Data;
                    self.crc.d.next = self.c_init.val();
                    self.len.d.next = 0.into();
                    self.err.d.next = false;
                    self.full.d.next = false;
                    self.w_ptr.d.next = self.w_start.q.val();
                } else if self.rxd.q.val() != 0x55 {
                    self.state.d.next = RxState::Skip;
                }
            }
            RxState::Data => {
                if self.rxdv.q.val() {
                    self.crc.d.next = self.check.crc_out.val();
                    self.len.d.next = self.len.q.val() + 1;
                    if self.rxer.q.val() {
                        self.err.d.next = true;
                    }
                    if (self.used.val() == self.c_cap.val()) | self.full.q.val() {
                        self.full.d.next = true;
                    } else {
                        self.ring.write_enable.next = true;
                        self.w_ptr.d.next = self.w_ptr.q.val() + 1;
                        self.hist.d.next =
                            (self.hist.q.val() << 8) | bit_cast::<40, 8>(self.rxd.q.val());
                    }
                } else {
                    self.state.d.next = RxState::Idle;
                    if self.err.q.val() {
                        self.n_err.d.next = self.n_err.q.val() + 1;
                    } else if self.crc.q.val() != self.c_residue.val() {
                        self.n_fcs.d.next = self.n_fcs.q.val() + 1;
                    } else if self.len.q.val() < self.c_min.val() {
                        self.n_runt.d.next = self.n_runt.q.val() + 1;
                    } else if self.full.q.val() {
                        self.n_room.d.next = self.n_room.q.val() + 1;
                    } else {
                        // Committed: the byte before the FCS marked last,
                        // and the next frame overwrites the FCS.
                        self.ring.write_address.next = bit_cast::<12, 13>(self.w_ptr.q.val() - 5);
                        self.ring.write_data.next =
                            bit_cast::<9, 8>(self.hist.q.val().get_bits::<8>(32))
                                | self.c_mark.val();
                        self.ring.write_enable.next = true;
                        self.w_start.d.next = self.w_ptr.q.val() - 4;
                        self.n_frames.d.next = self.n_frames.q.val() + 1;
                    }
                }
            }
            RxState::Skip => {
                if !self.rxdv.q.val() {
                    self.state.d.next = RxState::Idle;
                }
            }
        }

        if self.rst.val() {
            self.state.d.next = RxState::Idle;
            self.w_start.d.next = 0.into();
            self.w_ptr.d.next = 0.into();
            self.n_frames.d.next = 0.into();
            self.n_fcs.d.next = 0.into();
            self.n_err.d.next = 0.into();
            self.n_runt.d.next = 0.into();
            self.n_room.d.next = 0.into();
        }
    }
}

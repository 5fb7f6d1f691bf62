//! [`ParserCheck`], [`RxParser`](super::RxParser)'s validation.

use rust_hdl::prelude::*;

use super::{DropReason, VERSION};
use crate::helpers::{konst, native_block};

native_block! {
    /// The validation of a frame that has ended (combinational): its
    /// opcode's class (known, MSG, payload allowed, the length it needs:
    /// 32 + extension + 4) and the first failing check, in the order of the
    /// module doc's list ([`DropReason`]).
    ParserCheck[]
    ports {
        #[doc = "Base header: version."]
        version: Signal<In, Bits<8>>,
        #[doc = "Base header: opcode."]
        op: Signal<In, Bits<8>>,
        #[doc = "Frame length in bytes (ICRC included)."]
        len: Signal<In, Bits<16>>,
        #[doc = "The ICRC trailer matches."]
        icrc_ok: Signal<In, Bit>,
        #[doc = "A MSG opcode (0x01..=0x06, 0x08..=0x0A)."]
        is_msg: Signal<Out, Bit>,
        #[doc = "[`DropReason`] code."]
        reason: Signal<Out, Bits<3>>,
        #[doc = "The frame must be dropped."]
        drop: Signal<Out, Bit>,
    }
    state {
        known: Signal<Local, Bit>,
        has_payload: Signal<Local, Bit>,
        min_len: Signal<Local, Bits<16>>,
        r: Signal<Local, Bits<3>>,
    }
    consts {
        c_version: Constant<Bits<8>> = konst(VERSION as usize),
        c_truncated: Constant<Bits<3>> = konst(DropReason::Truncated as usize),
        c_bad_version: Constant<Bits<3>> = konst(DropReason::BadVersion as usize),
        c_bad_opcode: Constant<Bits<3>> = konst(DropReason::BadOpcode as usize),
        c_unexpected_payload: Constant<Bits<3>> = konst(DropReason::UnexpectedPayload as usize),
        c_bad_icrc: Constant<Bits<3>> = konst(DropReason::BadIcrc as usize),
        c_min_len: Constant<Bits<16>> = konst(36),
    }
}

impl Logic for ParserCheck {
    #[hdl_gen]
    fn update(&mut self) {
        // Length needed per opcode: 32 + extension + 4 (ICRC).
        self.known.next = false;
        self.has_payload.next = false;
        self.min_len.next = self.c_min_len.val();
        self.is_msg.next = false;
        if (self.op.val() >= 0x01) & (self.op.val() <= 0x06) {
            self.known.next = true;
            self.has_payload.next = self.op.val() != 0x05;
            self.min_len.next = 68.into();
            self.is_msg.next = true;
        }
        // Atomics (FETCH_ADD, COMPARE_SWAP, ATOMIC_RESP): MSG opcodes whose
        // payload is the operands or the value found.
        if (self.op.val() >= 0x08) & (self.op.val() <= 0x0A) {
            self.known.next = true;
            self.has_payload.next = true;
            self.min_len.next = 68.into();
            self.is_msg.next = true;
        }
        if self.op.val() == 0x10 {
            self.known.next = true;
            self.min_len.next = 100.into();
        }
        if self.op.val() == 0x11 {
            self.known.next = true;
            self.min_len.next = 52.into();
        }
        if self.op.val() == 0x12 {
            self.known.next = true;
        }
        if (self.op.val() >= 0x20) & (self.op.val() <= 0x22) {
            self.known.next = true;
            self.min_len.next = 68.into();
        }
        self.r.next = 0.into();
        if self.len.val() < self.c_min_len.val() {
            self.r.next = self.c_truncated.val();
        } else if self.version.val() != self.c_version.val() {
            self.r.next = self.c_bad_version.val();
        } else if !self.known.val() {
            self.r.next = self.c_bad_opcode.val();
        } else if self.len.val() < self.min_len.val() {
            self.r.next = self.c_truncated.val();
        } else if !self.has_payload.val() & (self.len.val() > self.min_len.val()) {
            self.r.next = self.c_unexpected_payload.val();
        } else if !self.icrc_ok.val() {
            self.r.next = self.c_bad_icrc.val();
        }
        self.reason.next = self.r.val();
        self.drop.next = self.r.val().any();
    }
}

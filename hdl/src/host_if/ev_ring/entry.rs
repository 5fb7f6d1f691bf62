//! [`EvEntry`], the entry [`EvRing`]'s writer sends.

use rust_hdl::prelude::*;

use super::*;

native_block! {
    /// The event ring entry being written (512 bits), loaded in the
    /// writer's load cycle (`EvSeq::load_*`) from a FIFO's head: a
    /// TX-table entry (its slot view's first part in words 2..6, the rest
    /// kept for the view entry that follows a result), a verdict event
    /// (with its placement write's address when `pa_ok`: bits 23..0 in
    /// w6\[63:40\], 47..24 in w7\[55:32\], w6\[37\] set), or that view entry;
    /// word 7 carries the index `prod` (bits 31..0), the type (59..56) and
    /// the phase (63). Held until the next load; `word` is the register.
    EvEntry[]
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "`EVQ.SIZE_LOG2` (the phase is the inverse of this bit of `prod`)."]
        size_log2: Signal<In, Bits<5>>,
        #[doc = "The entry's index (`EVQ.PROD`)."]
        prod: Signal<In, Bits<32>>,
        #[doc = "Load the TX-table FIFO's head."]
        load_tt: Signal<In, Bit>,
        #[doc = "Load the verdict FIFO's head."]
        load_ev: Signal<In, Bit>,
        #[doc = "Load the view entry of the result loaded before."]
        load_view: Signal<In, Bit>,
        #[doc = "The TX-table FIFO's head below its type: slot view and payload."]
        tt: Signal<In, Bits<TT_LO>>,
        #[doc = "Its type (the head's top 4 bits)."]
        ttype: Signal<In, Bits<4>>,
        #[doc = "The verdict FIFO's head."]
        ev: Signal<In, Bits<EVF_BITS>>,
        #[doc = "The verdict's placement address is there and fits in 48 bits."]
        pa_ok: Signal<In, Bit>,
        #[doc = "The placement addresses' head (its 48 bits, when `pa_ok`)."]
        pa: Signal<In, Bits<48>>,
        #[doc = "The entry."]
        word: Signal<Out, Bits<ENTRY_BITS>>,
    }
    state {
        e: DFF<Bits<ENTRY_BITS>>,
        vhi: DFF<Bits<VHI_BITS>>,
        ent: Signal<Local, Bits<ENTRY_BITS>>,
    }
    consts {
        k_verdict: Constant<Bits<4>> = konst(usize::from(ev_type::VERDICT)),
        k_view: Constant<Bits<4>> = konst(usize::from(ev_type::VIEW)),
    }
}

impl Logic for EvEntry {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, e, vhi);
        self.word.next = self.e.q.val();
        // The entry is laid out only in a cycle that loads it.
        self.ent.next = 0.into();
        if self.load_tt.val() | self.load_ev.val() | self.load_view.val() {
            // Word 7: the entry's index in bits 31..0, its type in 59..56, the
            // phase in 63.
            self.ent.next = bit_cast::<ENTRY_BITS, 32>(self.prod.val()) << 448;
            self.ent.next = self
                .ent
                .val()
                .replace_bit(511, !self.prod.val().get_bit(self.size_log2.val().index()));
            if self.load_tt.val() {
                // Words 2..6 carry the first part of a result's slot view
                // (zeros for a fate); the rest follows in a view entry.
                self.ent.next = self.ent.val()
                    | (bit_cast::<ENTRY_BITS, 4>(self.ttype.val()) << 504)
                    | bit_cast::<ENTRY_BITS, 448>(self.tt.val().get_bits::<448>(0));
                self.vhi.d.next = self.tt.val().get_bits::<VHI_BITS>(448);
            }
            if self.load_ev.val() {
                // The placement address: bits 23..0 in w6[63:40], 47..24 in
                // w7[55:32], w6[37] set when it is there.
                self.ent.next = self.ent.val()
                    | (bit_cast::<ENTRY_BITS, 4>(self.k_verdict.val()) << 504)
                    | bit_cast::<ENTRY_BITS, EVF_BITS>(self.ev.val());
                if self.pa_ok.val() {
                    self.ent.next = self.ent.val().replace_bit(421, true)
                        | (bit_cast::<ENTRY_BITS, 24>(self.pa.val().get_bits::<24>(0)) << 424)
                        | (bit_cast::<ENTRY_BITS, 24>(self.pa.val().get_bits::<24>(24)) << 480);
                }
            }
            if self.load_view.val() {
                self.ent.next = self.ent.val()
                    | (bit_cast::<ENTRY_BITS, 4>(self.k_view.val()) << 504)
                    | bit_cast::<ENTRY_BITS, VHI_BITS>(self.vhi.q.val());
            }
            self.e.d.next = self.ent.val();
        }
    }
}

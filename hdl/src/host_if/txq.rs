//! The TX queue's entry fetcher and the entry held for execution, as
//! native rust-hdl blocks of [`super::HostIf`].
//!
//! [`TxqFetch`] reads the TX queue's next entry (128-byte stride, the
//! first 80 bytes, at `base + (fetched mod 2^size_log2) · 128`) through
//! the DMA read arbiter (tag 0) one entry ahead of the entry being
//! executed, so the next entry (a table operation behind a descriptor the
//! TX builder has not taken yet) is fetched while the descriptor waits,
//! not behind its payload read. The fetched entry moves to execution when
//! the held one leaves (or none is held); the entry leaves when the TX
//! builder takes its descriptor (kind 0), when its table write is issued
//! (kind 1), when the TX table takes its operation (kind 2), or at once
//! when it is malformed (unknown kind, reserved bits set: skipped and
//! counted). A descriptor held in the cycle after a table write waits
//! that cycle: the write reaches the core a cycle after it is issued
//! ([`super::CfgStage`]), and the descriptor must meet the tables as they
//! are after it (a path's entropy rewritten between two of its
//! descriptors, `docs/hardware.md` §18). [`TxqKind`] decodes the held
//! entry's kind, in a block of its own: the TX table's op port takes a kind-2 entry through a
//! combinational path, so what decides the offer must not share a kernel
//! with what the handshake decides.
//!
//! rust-hdl's simulator runs it (the test below); under Verilator it is
//! part of [`crate::NicDevice`] (`metaroce-sim-tb`, `nic_device`).
//! `docs/hardware.md` §18 gives the entry format.

use rust_hdl::prelude::*;

use crate::helpers::{konst, native_block};

/// 64-bit words of a TX queue entry the device reads (80 bytes).
pub const ENTRY_WORDS: usize = 10;
/// Bits of a held entry: word `k` at `[64k +: 64]`.
pub const ENTRY_BITS: usize = 64 * ENTRY_WORDS;

/// Where [`TxqFetch`] is with the next entry.
#[derive(Copy, Clone, PartialEq, Debug, LogicState)]
pub enum PfState {
    /// No entry fetched: waits for the queue to hold one.
    Idle,
    /// The entry's read waits for the arbiter.
    Req,
    /// The entry's completion beats.
    Recv,
    /// The entry is fetched: it waits for the held one to leave.
    Full,
}

native_block! {
    /// The kind of the held TX queue entry (byte 79), with the checks of
    /// its reserved bits.
    TxqKind[]
    check { true, "TxqKind" }
    ports {
        #[doc = "The held entry."]
        ds: Signal<In, Bits<ENTRY_BITS>>,
        #[doc = "A descriptor (kind 0, its reserved bits 0)."]
        kind0: Signal<Out, Bit>,
        #[doc = "A table write (kind 1)."]
        kind1: Signal<Out, Bit>,
        #[doc = "A TX table operation (kind 2, its reserved bits 0)."]
        kind2: Signal<Out, Bit>,
    }
    state {
        // Temporary: every bit of the entry, read (the fields are not
        // this block's).
        unused_ds: Signal<Local, Bit>,
    }
    consts {}
}

impl Logic for TxqKind {
    #[hdl_gen]
    fn update(&mut self) {
        self.unused_ds.next = self.ds.val().xor();
        self.kind0.next = (self.ds.val().get_bits::<8>(632) == 0)
            & (self.ds.val().get_bits::<7>(9) == 0)
            & (self.ds.val().get_bits::<40>(592) == 0);
        self.kind1.next = self.ds.val().get_bits::<8>(632) == 1;
        self.kind2.next = (self.ds.val().get_bits::<8>(632) == 2)
            & (self.ds.val().get_bits::<6>(314) == 0)
            & (self.ds.val().get_bits::<128>(448) == 0)
            & (self.ds.val().get_bits::<56>(576) == 0);
    }
}

native_block! {
    /// The TX queue's entry fetcher and its held entry at `W`-bit beats
    /// (64 or 512).
    TxqFetch[W]
    check { W == 64 || W == 512, "TxqFetch<{W}>: 64 or 512 bits" }
    ports {
        #[doc = "Clock."]
        clock: Signal<In, Clock>,
        #[doc = "Synchronous reset: idle, nothing held, indices and counts 0."]
        rst: Signal<In, Bit>,
        #[doc = "`TXQ.CTRL`: the queue is enabled."]
        ctrl: Signal<In, Bit>,
        #[doc = "`TXQ.PROD`."]
        prod: Signal<In, Bits<32>>,
        #[doc = "`TXQ.BASE_HI:BASE_LO`."]
        base: Signal<In, Bits<64>>,
        #[doc = "`TXQ.SIZE_LOG2`."]
        size_log2: Signal<In, Bits<5>>,
        #[doc = "The DMA read arbiter issues the entry's read this cycle."]
        grant: Signal<In, Bit>,
        #[doc = "DMA read completion: data."]
        c_tdata: Signal<In, Bits<W>>,
        #[doc = "DMA read completion: beat valid."]
        c_tvalid: Signal<In, Bit>,
        #[doc = "DMA read completion: the request's last beat."]
        c_tlast: Signal<In, Bit>,
        #[doc = "DMA read completion: the request's tag."]
        c_tag: Signal<In, Bits<4>>,
        #[doc = "The TX builder takes the descriptor."]
        desc_ready: Signal<In, Bit>,
        #[doc = "A table write from the registers (`CFG.CFG_DATA_HI`) has the table port this cycle."]
        cfg_busy: Signal<In, Bit>,
        #[doc = "The TX table takes the held operation."]
        op_take: Signal<In, Bit>,
        #[doc = "A firmware TX entry is consumed this cycle (the TX vector's count)."]
        ftq_adv: Signal<In, Bit>,
        #[doc = "The entry's read waits for the arbiter."]
        req: Signal<Out, Bit>,
        #[doc = "The entry's address."]
        addr: Signal<Out, Bits<64>>,
        #[doc = "The held entry (word k at `[64k +: 64]`)."]
        ds: Signal<Out, Bits<ENTRY_BITS>>,
        #[doc = "A descriptor is held for the TX builder."]
        desc_valid: Signal<Out, Bit>,
        #[doc = "The held table write is issued this cycle."]
        cfg_go: Signal<Out, Bit>,
        #[doc = "A TX table operation is held."]
        op_held: Signal<Out, Bit>,
        #[doc = "`TXQ.CONS`: entries consumed."]
        cons: Signal<Out, Bits<32>>,
        #[doc = "`CNT.TXQ_BAD`: entries skipped."]
        bad: Signal<Out, Bits<32>>,
        #[doc = "Entries of both TX queues consumed in the last cycle (interrupt vector 2)."]
        inc: Signal<Out, Bits<2>>,
    }
    state {
        kind: TxqKind,
        st: DFF<PfState>,
        beat: DFF<Bits<4>>,
        pf: [DFF<Bits<64>>; ENTRY_WORDS],
        fetched: DFF<Bits<32>>,
        held: DFF<Bit>,
        // A table write was issued in the last cycle: it reaches the core
        // only now (`CfgStage`), so a descriptor waits this cycle.
        cfg_late: DFF<Bit>,
        ds_buf: DFF<Bits<ENTRY_BITS>>,
        n_cons: DFF<Bits<32>>,
        n_bad: DFF<Bits<32>>,
        n_inc: DFF<Bits<2>>,
        // Temporaries: the ring's index mask; one fetched word, the
        // fetched entry as one value (built only in the cycle it moves to
        // execution); the held entry leaves (register inputs only).
        mask: Signal<Local, Bits<32>>,
        word: Signal<Local, Bits<64>>,
        pf_all: Signal<Local, Bits<ENTRY_BITS>>,
        adv: Signal<Local, Bit>,
    }
    consts {
        // Entry word j comes in beat k_beat[j], at bit k_lane[j].
        k_beat: [Constant<Bits<4>>; ENTRY_WORDS] = std::array::from_fn(|j| konst(j / (W / 64))),
        k_lane: [Constant<Bits<16>>; ENTRY_WORDS] =
            std::array::from_fn(|j| konst(64 * (j % (W / 64)))),
        k_word: [Constant<Bits<16>>; ENTRY_WORDS] = std::array::from_fn(|j| konst(64 * j)),
        k_one: Constant<Bits<32>> = konst(1),
        k_tag: Constant<Bits<4>> = konst(usize::from(super::tag::TXQ)),
    }
}

impl<const W: usize> Logic for TxqFetch<W> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, st, beat, fetched, held, cfg_late, ds_buf, n_cons, n_bad, n_inc
        );
        for j in 0..ENTRY_WORDS {
            self.pf[j].clock.next = self.clock.val();
            self.pf[j].d.next = self.pf[j].q.val();
        }
        self.kind.ds.next = self.ds_buf.q.val();

        // ---- outputs: from the registers and the registers' inputs alone ----
        self.mask.next = (self.k_one.val() << self.size_log2.val()) - 1;
        self.addr.next =
            self.base.val() + (bit_cast::<64, 32>(self.fetched.q.val() & self.mask.val()) << 7);
        self.req.next = self.st.q.val() == PfState::Req;
        self.ds.next = self.ds_buf.q.val();
        self.desc_valid.next = self.held.q.val() & self.kind.kind0.val() & !self.cfg_late.q.val();
        self.cfg_go.next = self.held.q.val() & self.kind.kind1.val() & !self.cfg_busy.val();
        self.op_held.next = self.held.q.val() & self.kind.kind2.val();
        self.cons.next = self.n_cons.q.val();
        self.bad.next = self.n_bad.q.val();
        self.inc.next = self.n_inc.q.val();

        // ---- the registers: the handshakes reach only their inputs ----
        self.adv.next = self.held.q.val()
            & ((self.kind.kind0.val() & self.desc_ready.val() & !self.cfg_late.q.val())
                | (self.kind.kind1.val() & !self.cfg_busy.val())
                | self.op_take.val()
                | (!self.kind.kind0.val() & !self.kind.kind1.val() & !self.kind.kind2.val()));
        self.cfg_late.d.next = self.cfg_go.val();
        self.n_inc.d.next =
            bit_cast::<2, 1>(self.adv.val().into()) + bit_cast::<2, 1>(self.ftq_adv.val().into());
        self.word.next = 0.into();
        self.pf_all.next = 0.into();
        match self.st.q.val() {
            PfState::Idle => {
                if self.ctrl.val() & (self.fetched.q.val() != self.prod.val()) {
                    self.st.d.next = PfState::Req;
                    self.beat.d.next = 0.into();
                }
            }
            PfState::Req => {
                if self.grant.val() {
                    self.st.d.next = PfState::Recv;
                }
            }
            PfState::Recv => {
                if self.c_tvalid.val() & (self.c_tag.val() == self.k_tag.val()) {
                    for j in 0..ENTRY_WORDS {
                        if self.beat.q.val() == self.k_beat[j].val() {
                            self.pf[j].d.next = self
                                .c_tdata
                                .val()
                                .get_bits::<64>(self.k_lane[j].val().index());
                        }
                    }
                    self.beat.d.next = self.beat.q.val() + 1;
                    if self.c_tlast.val() {
                        self.fetched.d.next = self.fetched.q.val() + 1;
                        self.st.d.next = PfState::Full;
                    }
                }
            }
            _ => {
                // Full: to execution when the held entry leaves.
                if !self.held.q.val() | self.adv.val() {
                    // The words as one value only here, where it loads.
                    for j in 0..ENTRY_WORDS {
                        self.word.next = self.pf[j].q.val();
                        self.pf_all.next = self.pf_all.val()
                            | (bit_cast::<ENTRY_BITS, 64>(self.word.val()) << self.k_word[j].val());
                    }
                    self.ds_buf.d.next = self.pf_all.val();
                    self.st.d.next = PfState::Idle;
                }
            }
        }
        if self.adv.val() {
            if !self.kind.kind0.val() & !self.kind.kind1.val() & !self.kind.kind2.val() {
                self.n_bad.d.next = self.n_bad.q.val() + 1;
            }
            self.n_cons.d.next = self.n_cons.q.val() + 1;
        }
        if (self.st.q.val() == PfState::Full) & (!self.held.q.val() | self.adv.val()) {
            self.held.d.next = true;
        } else if self.adv.val() {
            self.held.d.next = false;
        }
        if self.rst.val() {
            self.st.d.next = PfState::Idle;
            self.beat.d.next = 0.into();
            self.held.d.next = false;
            self.cfg_late.d.next = false;
            self.fetched.d.next = 0.into();
            self.n_cons.d.next = 0.into();
            self.n_bad.d.next = 0.into();
            self.n_inc.d.next = 0.into();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// What the fetcher showed in one cycle: the read waits, a descriptor
    /// is held, the held entry's first word, `cons`, `inc`, a table write
    /// is issued (sampled before the cycle's edge).
    type Seen = (bool, bool, u64, u64, u64, bool);

    /// Runs the 64-bit fetcher through rust-hdl's simulator: the queue
    /// (base 0x1000, 4 entries) holds `prod` entries; the arbiter grants
    /// each read at once and the completion (entry `e`'s word `k` is
    /// `e << 8 | k`, byte 79 `kinds[e]`) starts the cycle after; the TX
    /// builder takes a descriptor from cycle `take_from` on; a BAR table
    /// write holds the table port until cycle `cfg_free`. Returns what it
    /// showed in each of `cycles` cycles and the addresses it read.
    fn simulate(
        prod: u64,
        kinds: Vec<u64>,
        take_from: usize,
        cfg_free: usize,
        cycles: usize,
    ) -> (Vec<Seen>, Vec<u64>) {
        let seen = Arc::new(Mutex::new((Vec::new(), Vec::new())));
        let out = seen.clone();
        let mut sim = Simulation::new();
        sim.add_clock(5, |x: &mut Box<TxqFetch<64>>| x.clock.next = !x.clock.val());
        sim.add_testbench(move |mut sim: Sim<TxqFetch<64>>| {
            let mut x = sim.init()?;
            x.rst.next = true;
            wait_clock_cycles!(sim, clock, x, 2);
            wait_clock_false!(sim, clock, x);
            x.rst.next = false;
            x.ctrl.next = true;
            x.prod.next = prod.to_bits();
            x.base.next = 0x1000u64.to_bits();
            x.size_log2.next = 2u64.to_bits();
            // The completion beats still to send (entry, word).
            let mut beats: Vec<(u64, u64)> = Vec::new();
            let mut entry = 0;
            for c in 0..cycles {
                // A read's completion starts in the cycle after its grant.
                let beat = beats.first().copied();
                x.grant.next = x.req.val();
                if x.req.val() {
                    seen.lock().unwrap().1.push(x.addr.val().to_u64());
                    beats.extend((0..ENTRY_WORDS as u64).map(|k| (entry, k)));
                    entry += 1;
                }
                x.c_tvalid.next = beat.is_some();
                let (e, k) = beat.unwrap_or_default();
                let kind = kinds[e as usize % kinds.len()];
                let word = if k == 9 { kind << 56 } else { e << 8 | k };
                x.c_tdata.next = word.to_bits();
                x.c_tlast.next = k == 9;
                x.c_tag.next = 0u64.to_bits();
                x.desc_ready.next = c >= take_from;
                x.cfg_busy.next = c < cfg_free;
                x = sim.wait(1, x)?;
                let cfg_go = x.cfg_go.val();
                wait_clock_true!(sim, clock, x);
                if beat.is_some() {
                    beats.remove(0);
                }
                wait_clock_false!(sim, clock, x);
                seen.lock().unwrap().0.push((
                    x.req.val(),
                    x.desc_valid.val(),
                    x.ds.val().get_bits::<64>(0).to_u64(),
                    x.cons.val().to_u64(),
                    x.inc.val().to_u64(),
                    cfg_go,
                ));
            }
            sim.done(x)
        });
        let mut uut = TxqFetch::<64>::default();
        uut.connect_all();
        sim.run(Box::new(uut), 100_000).unwrap();
        Arc::try_unwrap(out).unwrap().into_inner().unwrap()
    }

    #[test]
    fn rust_hdl_model_fetches_ahead_and_executes_in_order() {
        // Two descriptors, the TX builder busy until cycle 40.
        let (seen, addrs) = simulate(2, vec![0], 40, 0, 60);
        // Both entries read (the second one ahead, while the first waits),
        // at base + index * 128.
        assert_eq!(addrs, vec![0x1000, 0x1080]);
        let first_held = seen.iter().position(|s| s.1).expect("a descriptor held");
        assert_eq!(seen[first_held].2, 0, "entry 0's first word");
        assert!(first_held < 40);
        // Nothing leaves before the builder takes it, then one a cycle.
        assert!(seen[..40].iter().all(|s| s.3 == 0));
        assert_eq!(seen.last().unwrap().3, 2);
        assert_eq!(seen.iter().map(|s| s.4).sum::<u64>(), 2);
        let second = seen
            .iter()
            .rposition(|s| s.1 && s.2 == 1 << 8)
            .expect("entry 1 held");
        assert!(second >= 40);
    }

    #[test]
    fn rust_hdl_model_skips_unknown_kinds() {
        // Kind 7 is no kind: skipped at once, counted.
        let (seen, _) = simulate(3, vec![7], 1000, 0, 80);
        assert!(seen.iter().all(|s| !s.1));
        assert_eq!(seen.last().unwrap().3, 3);
    }

    #[test]
    fn rust_hdl_model_holds_a_descriptor_a_cycle_after_a_table_write() {
        // A table write (kind 1) waits for the port until cycle 40, the
        // descriptor behind it (kind 0) fetched meanwhile; the builder is
        // ready throughout.
        let (seen, _) = simulate(2, vec![1, 0], 0, 40, 60);
        let go = seen
            .iter()
            .position(|s| s.5)
            .expect("the table write issued");
        assert!(go >= 40);
        assert_eq!(seen.iter().filter(|s| s.5).count(), 1);
        // The descriptor is held in the cycle after the write (sampled
        // after that cycle's edge) but offered only in the one after, when
        // the write has reached the core (`CfgStage`).
        assert!(!seen[go].1, "no descriptor offered right after the write");
        assert!(seen[go + 1].1, "the descriptor offered the cycle after");
        assert_eq!(seen[go + 1].2, 1 << 8, "entry 1's first word");
        assert_eq!(seen.last().unwrap().3, 2);
    }
}

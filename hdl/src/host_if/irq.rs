//! Interrupt moderation of one vector, as a rust-hdl kernel.
//!
//! [`IrqModerator`] counts the entries of its vector since its last
//! interrupt and times how long the oldest has waited: it requests the
//! interrupt (`fire`) when the count reaches `coalesce` (if not 0) or the
//! wait reaches `holdoff` cycles (0: at once), and restarts both when the
//! interrupt is taken (`take`; entries arriving in that cycle count for
//! the next one). So no entry waits more than `holdoff + 2` cycles (one to
//! count it, one to compare), and a burst of `coalesce` entries raises one
//! interrupt at once. `count` counts the interrupts taken.
//!
//! [`crate::NicDevice`] has one per vector and takes their requests in
//! vector order onto its `m_irq_*` port; the registers come from the
//! host interface's `IRQ` block.

use rust_hdl::prelude::*;

/// One vector's moderation.
#[derive(LogicBlock)]
pub struct IrqModerator {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: nothing pending, count 0.
    pub rst: Signal<In, Bit>,
    /// Entries completed this cycle (0–3).
    pub inc: Signal<In, Bits<2>>,
    /// The vector is enabled.
    pub enable: Signal<In, Bit>,
    /// Entries that raise the interrupt at once (0: the timer alone).
    pub coalesce: Signal<In, Bits<16>>,
    /// Cycles the oldest entry may wait (0: no wait).
    pub holdoff: Signal<In, Bits<24>>,
    /// The interrupt is taken this cycle.
    pub take: Signal<In, Bit>,
    /// The interrupt is due.
    pub fire: Signal<Out, Bit>,
    /// Interrupts taken.
    pub count: Signal<Out, Bits<32>>,
    pend: DFF<Bits<16>>,
    timer: DFF<Bits<24>>,
    cnt: DFF<Bits<32>>,
    inc16: Signal<Local, Bits<16>>,
    c_timer_max: Constant<Bits<24>>,
}

impl Default for IrqModerator {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            rst: Default::default(),
            inc: Default::default(),
            enable: Default::default(),
            coalesce: Default::default(),
            holdoff: Default::default(),
            take: Default::default(),
            fire: Default::default(),
            count: Default::default(),
            pend: Default::default(),
            timer: Default::default(),
            cnt: Default::default(),
            inc16: Default::default(),
            c_timer_max: Constant::new(0xFF_FFFFusize.to_bits()),
        }
    }
}

impl Logic for IrqModerator {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, pend, timer, cnt);
        self.inc16.next = bit_cast::<16, 2>(self.inc.val());
        self.fire.next = self.enable.val()
            & (self.pend.q.val() != 0)
            & (((self.coalesce.val() != 0) & (self.pend.q.val() >= self.coalesce.val()))
                | (self.timer.q.val() >= self.holdoff.val()));
        self.count.next = self.cnt.q.val();
        if self.take.val() {
            self.pend.d.next = self.inc16.val();
            self.timer.d.next = 0.into();
            self.cnt.d.next = self.cnt.q.val() + 1;
        } else {
            self.pend.d.next = self.pend.q.val() + self.inc16.val();
            if (self.pend.q.val() != 0) & (self.timer.q.val() != self.c_timer_max.val()) {
                self.timer.d.next = self.timer.q.val() + 1;
            }
        }
        if self.rst.val() {
            self.pend.d.next = 0.into();
            self.timer.d.next = 0.into();
            self.cnt.d.next = 0.into();
        }
    }
}

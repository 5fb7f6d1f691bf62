//! MAC transmit arbiter: two frame sources share one AXI-Stream, frame by
//! frame.
//!
//! [`TxArb`] forwards whole frames from `s_ack` (ACK frames) and
//! `s_data` (data frames from the TX builder) to `m_axis`, one beat per
//! cycle, never mixing beats of two frames. **Policy: round robin per
//! frame.** When both sources have a frame waiting at a frame boundary,
//! the one not served last goes; a lone source goes at once. So an ACK
//! waits at most one data frame and data frames are never starved by ACKs.
//!
//! The choice is made from the sources' `tvalid` only and is locked from
//! the cycle the first beat is shown until the last beat is taken, so a
//! beat, once offered on `m_axis`, stays until it is taken (AXI-Stream),
//! even if the other source becomes valid meanwhile. The path is
//! combinational (multiplexer, no register): no bubble between frames and
//! no added latency.
//!
//! Native rust-hdl: rust-hdl's own simulator runs the block (the test
//! below); it is verified under Verilator inside [`crate::NicCore`].

use rust_hdl::prelude::*;

use crate::bus::{AxisIn, AxisOut};

/// The arbiter at `W`-bit beats (`B = W / 8` lanes).
#[derive(LogicBlock, Default)]
pub struct TxArb<const W: usize, const B: usize> {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: no frame in progress, ACKs first next.
    pub rst: Signal<In, Bit>,
    /// ACK frames.
    pub s_ack: AxisIn<W, B>,
    /// Data frames.
    pub s_data: AxisIn<W, B>,
    /// Frames to the MAC.
    pub m_axis: AxisOut<W, B>,
    /// A frame is in progress on `m_axis`.
    locked: DFF<Bit>,
    /// Its source: ACK (high) or data.
    owner: DFF<Bit>,
    /// The last frame served was an ACK frame.
    last_ack: DFF<Bit>,
    /// This cycle's source: ACK (high) or data.
    pick: Signal<Local, Bit>,
}

impl<const W: usize, const B: usize> Logic for TxArb<W, B> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, locked, owner, last_ack);
        self.pick.next = self.s_ack.tvalid.val();
        if self.s_ack.tvalid.val() & self.s_data.tvalid.val() {
            self.pick.next = !self.last_ack.q.val();
        }
        if self.locked.q.val() {
            self.pick.next = self.owner.q.val();
        }
        self.m_axis.tvalid.next = self.s_data.tvalid.val();
        self.m_axis.tdata.next = self.s_data.tdata.val();
        self.m_axis.tkeep.next = self.s_data.tkeep.val();
        self.m_axis.tlast.next = self.s_data.tlast.val();
        if self.pick.val() {
            self.m_axis.tvalid.next = self.s_ack.tvalid.val();
            self.m_axis.tdata.next = self.s_ack.tdata.val();
            self.m_axis.tkeep.next = self.s_ack.tkeep.val();
            self.m_axis.tlast.next = self.s_ack.tlast.val();
        }
        self.s_ack.tready.next = self.pick.val() & self.m_axis.tready.val();
        self.s_data.tready.next = !self.pick.val() & self.m_axis.tready.val();
        if self.m_axis.tvalid.val() {
            self.owner.d.next = self.pick.val();
            self.locked.d.next = !(self.m_axis.tready.val() & self.m_axis.tlast.val());
            if self.m_axis.tready.val() & self.m_axis.tlast.val() {
                self.last_ack.d.next = self.pick.val();
            }
        }
        if self.rst.val() {
            self.locked.d.next = false;
            self.last_ack.d.next = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use std::sync::{Arc, Mutex};

    /// Beats of frame `f` of source `src` (1 ACK, 0 data): `len` beats
    /// tagged (source, frame, beat).
    fn frame(src: u64, f: u64, len: u64) -> Vec<u64> {
        (0..len).map(|b| src << 32 | f << 8 | b).collect()
    }

    /// Runs rust-hdl's simulator of `TxArb<64, 8>` with both sources
    /// offering `frames` frames each (lengths 1 to 4 beats; a source
    /// offers a beat it has with probability `p_valid`) and a MAC that is
    /// ready at random. Returns the sources of the frames forwarded, in
    /// order, after checking that they are whole and in each source's
    /// order, and that an offered beat never changed before it was taken.
    fn simulate(frames: u64, p_valid: f64) -> Vec<u64> {
        let out = Arc::new(Mutex::new((Vec::new(), false)));
        let result = out.clone();
        let mut sim = Simulation::new();
        sim.add_clock(5, |x: &mut Box<TxArb<64, 8>>| x.clock.next = !x.clock.val());
        sim.add_testbench(move |mut sim: Sim<TxArb<64, 8>>| {
            let mut rng = rand::rngs::StdRng::seed_from_u64(0xA4B);
            let srcs: [Vec<Vec<u64>>; 2] = std::array::from_fn(|s| {
                (0..frames).map(|f| frame(s as u64, f, 1 + f % 4)).collect()
            });
            let mut x = sim.init()?;
            x.rst.next = true;
            wait_clock_cycles!(sim, clock, x, 2);
            wait_clock_false!(sim, clock, x);
            x.rst.next = false;
            let mut at = [(0usize, 0usize); 2];
            let mut shown: Option<u64> = None;
            // A beat offered stays offered until taken (AXI-Stream).
            let mut valid = [false; 2];
            for _ in 0..40 * frames {
                for s in 0..2 {
                    let (f, b) = at[s];
                    valid[s] = f < srcs[s].len() && (valid[s] || rng.gen_bool(p_valid));
                    let (data, last) = match srcs[s].get(f) {
                        Some(fr) => (fr[b], b + 1 == fr.len()),
                        None => (0, false),
                    };
                    if s == 1 {
                        x.s_ack.tvalid.next = valid[s];
                        x.s_ack.tdata.next = data.to_bits();
                        x.s_ack.tkeep.next = 0xFFu64.to_bits();
                        x.s_ack.tlast.next = last;
                    } else {
                        x.s_data.tvalid.next = valid[s];
                        x.s_data.tdata.next = data.to_bits();
                        x.s_data.tkeep.next = 0xFFu64.to_bits();
                        x.s_data.tlast.next = last;
                    }
                }
                x.m_axis.tready.next = rng.gen_bool(0.6);
                x = sim.wait(1, x)?;
                let mut o = out.lock().unwrap();
                if x.m_axis.tvalid.val() {
                    let beat = x.m_axis.tdata.val().to_u64();
                    if shown.is_some_and(|b| b != beat) {
                        o.1 = true;
                    }
                    shown = Some(beat);
                    if x.m_axis.tready.val() {
                        o.0.push(beat);
                        shown = None;
                    }
                } else if shown.is_some() {
                    o.1 = true;
                }
                drop(o);
                for (s, taken) in [x.s_data.tready.val(), x.s_ack.tready.val()]
                    .into_iter()
                    .enumerate()
                {
                    if valid[s] && taken {
                        valid[s] = false;
                        at[s].1 += 1;
                        if at[s].1 == srcs[s][at[s].0].len() {
                            at[s] = (at[s].0 + 1, 0);
                        }
                    }
                }
                wait_clock_true!(sim, clock, x);
                wait_clock_false!(sim, clock, x);
            }
            sim.done(x)
        });
        let mut uut = TxArb::<64, 8>::default();
        uut.connect_all();
        sim.run(Box::new(uut), 1_000_000).unwrap();
        let (beats, changed) = Arc::try_unwrap(result).unwrap().into_inner().unwrap();
        assert!(
            !changed,
            "an offered beat changed or vanished before it was taken"
        );
        // Every beat of every frame, whole frames in each source's order.
        assert_eq!(
            beats.len() as u64,
            2 * (0..frames).map(|f| 1 + f % 4).sum::<u64>()
        );
        let mut next = [0u64; 2];
        let mut runs = Vec::new();
        let mut i = 0;
        while i < beats.len() {
            let (src, f) = (beats[i] >> 32, beats[i] >> 8 & 0xFF_FFFF);
            assert_eq!(f, next[src as usize], "source {src} out of order");
            next[src as usize] += 1;
            let want = frame(src, f, 1 + f % 4);
            assert_eq!(
                &beats[i..i + want.len()],
                &want[..],
                "frame {f} of {src} mixed"
            );
            i += want.len();
            runs.push(src);
        }
        runs
    }

    #[test]
    fn rust_hdl_model_forwards_whole_frames_when_sources_pause() {
        let runs = simulate(40, 0.7);
        assert_eq!(runs.len(), 80);
        // Both sources got turns while the other was pausing.
        assert!(runs.windows(2).any(|w| w[0] == w[1]));
    }

    #[test]
    fn rust_hdl_model_alternates_frames_when_both_wait() {
        // Round robin per frame, ACKs first after reset.
        let runs = simulate(40, 1.0);
        let want: Vec<u64> = (0..80).map(|i| 1 - i % 2).collect();
        assert_eq!(runs, want);
    }
}

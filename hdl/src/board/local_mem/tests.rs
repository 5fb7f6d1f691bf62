//! rust-hdl simulation of [`LocalMem`] against a byte array: random DMA
//! reads and writes at any alignment with back-pressure and gaps, while
//! the byte port reads and writes beside them; then each path reads what
//! the other wrote.

use rand::{Rng, SeedableRng, rngs::SmallRng};
use rust_hdl::prelude::*;

use super::*;

/// Word address bits of the memory under test: 256 bytes.
const N: usize = 5;
type Mem = LocalMem<N>;
/// The byte port works above this address while DMA runs below it.
const SPLIT: usize = 192;

/// A DMA operation in progress.
enum Dma {
    /// A read of `len` bytes at `addr` with `tag`: its request is
    /// `asked` (taken); `got` holds the bytes received.
    Read {
        addr: usize,
        len: usize,
        tag: u8,
        asked: bool,
        got: Vec<u8>,
    },
    /// A write of `data` at `addr`; `sent` bytes were taken.
    Write {
        addr: usize,
        data: Vec<u8>,
        sent: usize,
    },
}

/// What the byte port does in one clock.
#[derive(Clone, Copy, PartialEq)]
enum Byte {
    /// Nothing.
    Idle,
    /// A write (the DMA write port stalls this clock).
    Write,
    /// A read: the byte expected in the next clock.
    Read(u8),
}

/// The byte port's inputs for one clock, between `lo` and `hi`.
fn byte_port(x: &mut Mem, rng: &mut SmallRng, model: &mut [u8], lo: usize, hi: usize) -> Byte {
    x.mem_valid.next = false;
    x.mem_write.next = false;
    if !rng.gen_bool(0.2) {
        return Byte::Idle;
    }
    let a = rng.gen_range(lo..hi);
    x.mem_valid.next = true;
    x.mem_addr.next = (a as u64).into();
    if rng.r#gen() {
        let v: u8 = rng.r#gen();
        x.mem_write.next = true;
        x.mem_wdata.next = (v as u64).into();
        model[a] = v;
        Byte::Write
    } else {
        Byte::Read(model[a])
    }
}

/// The DMA ports' inputs for one clock; the operation's handshakes this
/// clock are applied to `op` (from the outputs before the edge, and
/// `byte`: `m_dmaw_tready` follows the byte port's input of this clock,
/// which `val()` does not show yet). Returns whether the operation is done.
fn dma_port(x: &mut Mem, rng: &mut SmallRng, model: &mut [u8], op: &mut Dma, byte: Byte) -> bool {
    x.m_dmar_valid.next = false;
    x.m_dmaw_tvalid.next = false;
    x.s_dmac_tready.next = false;
    match op {
        Dma::Read {
            addr,
            len,
            tag,
            asked,
            got,
        } => {
            if !*asked {
                x.m_dmar_valid.next = true;
                x.m_dmar_addr.next = (*addr as u64).into();
                x.m_dmar_len.next = (*len as u64).into();
                x.m_dmar_tag.next = (*tag as u64).into();
                *asked = x.m_dmar_ready.val();
                return false;
            }
            let ready = rng.gen_bool(0.7);
            x.s_dmac_tready.next = ready;
            if !(ready && x.s_dmac_tvalid.val()) {
                return false;
            }
            let keep = x.s_dmac_tkeep.val().index();
            let n = keep.count_ones() as usize;
            assert_eq!(keep, (1 << n) - 1, "tkeep {keep:#x} not packed");
            let data = x.s_dmac_tdata.val().to_u64().to_le_bytes();
            got.extend_from_slice(&data[..n]);
            assert_eq!(x.s_dmac_tag.val().index(), *tag as usize, "tag");
            let last = x.s_dmac_tlast.val();
            assert_eq!(last, got.len() >= *len, "tlast at {} of {len}", got.len());
            if last {
                assert_eq!(
                    &got[..],
                    &model[*addr..*addr + *len],
                    "read of {len} at {addr}"
                );
            }
            last
        }
        Dma::Write { addr, data, sent } => {
            if !rng.gen_bool(0.8) {
                return false;
            }
            let n = (data.len() - *sent).min(8);
            let mut word = [0u8; 8];
            word[..n].copy_from_slice(&data[*sent..*sent + n]);
            x.m_dmaw_tvalid.next = true;
            x.m_dmaw_first.next = *sent == 0;
            x.m_dmaw_addr.next = (*addr as u64).into();
            x.m_dmaw_tdata.next = u64::from_le_bytes(word).into();
            x.m_dmaw_tkeep.next = ((1u64 << n) - 1).into();
            if byte != Byte::Write {
                model[*addr + *sent..*addr + *sent + n].copy_from_slice(&data[*sent..*sent + n]);
                *sent += n;
            }
            *sent == data.len()
        }
    }
}

#[test]
fn dma_and_byte_port_share_the_memory() {
    let mut sim = Simulation::new();
    sim.add_clock(5, |x: &mut Box<Mem>| x.clock.next = !x.clock.val());
    sim.add_testbench(move |mut sim: Sim<Mem>| {
        let mut x = sim.init()?;
        wait_clock_false!(sim, clock, x);
        let mut rng = SmallRng::seed_from_u64(16);
        let mut model = vec![0u8; Mem::BYTES];
        let mut ops = 0;
        let mut op: Option<Dma> = None;
        let mut byte = Byte::Idle;
        // Random DMA operations below SPLIT, the byte port above it.
        while ops < 400 {
            if let Byte::Read(want) = byte {
                sim_assert_eq!(sim, x.mem_rdata.val().index() as u8, want, x);
            }
            byte = byte_port(&mut x, &mut rng, &mut model, SPLIT, Mem::BYTES);
            let cur = op.get_or_insert_with(|| {
                let addr = rng.gen_range(0..SPLIT - 1);
                let len = rng.gen_range(1..=(SPLIT - addr).min(40));
                if rng.r#gen() {
                    let data = (0..len).map(|_| rng.r#gen()).collect();
                    Dma::Write {
                        addr,
                        data,
                        sent: 0,
                    }
                } else {
                    let tag = rng.gen_range(0..16);
                    Dma::Read {
                        addr,
                        len,
                        tag,
                        asked: false,
                        got: Vec::new(),
                    }
                }
            });
            if dma_port(&mut x, &mut rng, &mut model, cur, byte) {
                op = None;
                ops += 1;
            }
            wait_clock_true!(sim, clock, x);
            wait_clock_false!(sim, clock, x);
        }
        // Each path reads the whole memory: what the other wrote is there.
        x.mem_valid.next = false;
        x.m_dmaw_tvalid.next = false;
        let mut whole = Dma::Read {
            addr: 0,
            len: Mem::BYTES,
            tag: 5,
            asked: false,
            got: Vec::new(),
        };
        while !dma_port(&mut x, &mut rng, &mut model, &mut whole, Byte::Idle) {
            wait_clock_true!(sim, clock, x);
            wait_clock_false!(sim, clock, x);
        }
        x.s_dmac_tready.next = false;
        for (a, &want) in model.iter().enumerate() {
            x.mem_valid.next = true;
            x.mem_addr.next = (a as u64).into();
            wait_clock_true!(sim, clock, x);
            wait_clock_false!(sim, clock, x);
            sim_assert_eq!(sim, x.mem_rdata.val().index() as u8, want, x);
        }
        sim.done(x)
    });
    sim.run(Box::new(Mem::default()), 10_000_000).unwrap();
}

//! A Gigabit Ethernet MAC at the GMII level (8 bits per clock at 125 MHz),
//! native Rust-HDL, for a board whose PHY speaks RGMII or GMII.
//!
//! * [`MacTx`]: frames from an 8-bit AXI-Stream to GMII: preamble and SFD,
//!   padding to the 60-byte minimum, the FCS, and the 12-byte inter-frame gap.
//! * [`MacRx`]: GMII to frames on an 8-bit AXI-Stream, store and forward: a
//!   frame leaves only after its FCS proved right, without its FCS; a frame
//!   with a bad FCS, a receive error, fewer than 64 bytes or no room is dropped
//!   whole and counted.
//!
//! Both run on the GMII clock; the FCS is the reflected CRC-32 of
//! [`crate::icrc`], one byte per clock through [`CrcByte`] (a fixed XOR
//! matrix generated from the golden `crc_byte`). The width conversion to the
//! core's beats and the clock-domain crossing belong to the board top.

mod rx;
mod tx;

pub use rx::MacRx;
pub use tx::MacTx;

use rust_hdl::prelude::*;

use crate::icrc::{Affine, beat_map};

/// The register a receiver's CRC holds after a whole frame and its right FCS
/// (the CRC-32 residue): a frame is good when its CRC register ends here.
pub const FCS_RESIDUE: u32 = 0xDEBB_20E3;

/// Bytes of a frame before its FCS, at least: shorter frames are padded
/// with zeros by [`MacTx`], and refused by [`MacRx`] (runts).
pub const MIN_PAYLOAD: usize = 60;

/// One byte into the reflected CRC-32 register (initial value and final
/// inversion are the user's), as 32 reductions of the register and the byte
/// over fixed masks.
#[derive(LogicBlock)]
pub struct CrcByte {
    /// The register before the byte.
    pub crc_in: Signal<In, Bits<32>>,
    /// The byte.
    pub octet: Signal<In, Bits<8>>,
    /// The register after the byte.
    pub crc_out: Signal<Out, Bits<32>>,
    x: Signal<Local, Bits<40>>,
    acc: Signal<Local, Bits<32>>,
    rows: [Constant<Bits<40>>; 32],
}

impl Default for CrcByte {
    fn default() -> Self {
        let map: Affine = beat_map(1);
        assert_eq!(map.k, 0, "a CRC step is linear");
        Self {
            crc_in: Default::default(),
            octet: Default::default(),
            crc_out: Default::default(),
            x: Default::default(),
            acc: Default::default(),
            rows: std::array::from_fn(|o| Constant::new(map.row::<40>(o, 0))),
        }
    }
}

impl Logic for CrcByte {
    #[hdl_gen]
    fn update(&mut self) {
        self.x.next =
            bit_cast::<40, 32>(self.crc_in.val()) | (bit_cast::<40, 8>(self.octet.val()) << 32);
        self.acc.next = 0.into();
        for o in 0..32 {
            self.acc.next = self
                .acc
                .val()
                .replace_bit(o, (self.x.val() & self.rows[o].val()).xor());
        }
        self.crc_out.next = self.acc.val();
    }
}

#[cfg(test)]
mod tests;

//! The constant CRC matrices the block is built with (computed in Rust at construction).

use rust_hdl::prelude::*;

use super::{DSTART, UNZ_BITS};
use crate::icrc::{Affine, advance, beat_map, feed, le32, rows};

/// The register after the 40 pseudo-header bytes (source and destination
/// IP, network order, IPv4 mapped into IPv6; UDP ports and length; two zero
/// bytes) from the initial value: `metaroce_proto`'s ICRC seed.
fn pseudo_seed(src: u128, dst: u128, sport: u16, dport: u16, ulen: u16) -> u32 {
    let mut ph = [0u8; 40];
    ph[..16].copy_from_slice(&src.to_be_bytes());
    ph[16..32].copy_from_slice(&dst.to_be_bytes());
    ph[32..34].copy_from_slice(&sport.to_be_bytes());
    ph[34..36].copy_from_slice(&dport.to_be_bytes());
    ph[36..38].copy_from_slice(&ulen.to_be_bytes());
    feed(u32::MAX, &ph)
}

/// A `u16` from two input bytes.
fn le16(x: &[u8]) -> u16 {
    u16::from_le_bytes([x[0], x[1]])
}

/// The beat matrices of the CRC register stages
/// ([`super::crc_pipe::TxCrcPipe`]) at `W`-bit beats.
pub(super) struct BeatRows<const W: usize> {
    /// `Z`: `B` zero bytes into the CRC register.
    pub(super) beat_z: [Constant<Bits<32>>; 32],
    /// The beat's share (register 0).
    pub(super) beat_d: [Constant<Bits<W>>; 32],
}

impl<const W: usize> BeatRows<W> {
    pub(super) fn new() -> Self {
        let beat = beat_map(W / 8);
        Self {
            beat_z: rows(&beat, 0),
            beat_d: rows(&beat, 32),
        }
    }
}

/// `Z^-m` for the trailing-zero count `m` of a beat of `b` lanes, row `o`
/// at bits `32m..` (for [`super::crc_pipe::TxIcrcOut`]).
pub(super) fn unzero_rows(b: usize) -> [Constant<Bits<UNZ_BITS>>; 32] {
    let unz: Vec<Affine> = (0..b)
        .map(|m| Affine::of(32, |x| advance(le32(x), -(m as isize))))
        .collect();
    std::array::from_fn(|o| {
        let mut row = Bits::<UNZ_BITS>::default();
        for (m, map) in unz.iter().enumerate() {
            for i in 0..32 {
                if map.row::<32>(o, 0).get_bit(i) {
                    row = row.replace_bit(32 * m + i, true);
                }
            }
        }
        Constant::new(row)
    })
}

/// The pseudo-header rows of the configuration side
/// ([`super::regs::TxDerived`]) for beats of `b` lanes: one byte into the
/// CRC register (the pseudo-header goes in a byte a cycle), and the seed
/// moved to the end of a frame's first beat.
pub(super) struct PseudoRows {
    /// One byte into the CRC register: the register's share, row `o`.
    pub(super) byte_z: [Constant<Bits<32>>; 32],
    /// The byte's share.
    pub(super) byte_d: [Constant<Bits<8>>; 32],
    /// The seed moved to the register at the end of a frame's first beat,
    /// IPv4 and IPv6: `Z^(B - DSTART)`.
    pub(super) first4: [Constant<Bits<32>>; 32],
    pub(super) first6: [Constant<Bits<32>>; 32],
}

impl PseudoRows {
    pub(super) fn new(b: usize) -> Self {
        let step = beat_map(1);
        let first = |d: usize| Affine::of(32, |x| advance(le32(x), b as isize - d as isize));
        Self {
            byte_z: rows(&step, 0),
            byte_d: rows(&step, 32),
            first4: rows(&first(DSTART[0]), 0),
            first6: rows(&first(DSTART[1]), 0),
        }
    }
}

/// The share of `ulen << 16 | sport` in the CRC register at the end of a
/// frame's first beat, IPv4 and IPv6 (for the descriptor side,
/// [`super::side::TxSide`]).
pub(super) fn port_rows(b: usize) -> [[Constant<Bits<32>>; 32]; 2] {
    DSTART.map(|d| {
        rows(
            &Affine::of(32, |x| {
                let seed = pseudo_seed(0, 0, le16(&x[..2]), 0, le16(&x[2..]));
                advance(seed, b as isize - d as isize)
            }),
            0,
        )
    })
}

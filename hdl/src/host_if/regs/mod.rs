//! The BAR0 register map of [`crate::NicDevice`]: the one source of truth.
//!
//! BAR0 is a linked list of register blocks, as in Corundum: every block
//! starts with three read-only words, its type (`+0x00`), its version
//! (`+0x04`) and the BAR offset of the next block (`+0x08`, 0 ends the
//! list). The identification block is at offset 0. A driver walks the list
//! from 0 and finds blocks by type, so a bitstream may add, move or drop
//! blocks without breaking it.
//!
//! This table makes the register file (the read multiplexer, the write
//! decoder, the register storage and its reset:
//! [`crate::host_if::RegFile`]'s constants), the host interface's wiring
//! to it ([`crate::host_if::HostIf`]'s kernel) and `docs/regmap.md`
//! ([`regmap_markdown`]; `cargo test -p metaroce-hdl` fails when the
//! committed document differs). Registers are 32 bits; accesses are whole,
//! 4-byte aligned words.
//!
//! `table.rs` holds the blocks and their registers ([`BLOCKS`]), this
//! module the types and the lookups, `doc.rs` the generated document and
//! its hash ([`regmap_markdown`], [`map_hash`]).

mod doc;
mod table;

pub use doc::{map_hash, regmap_markdown};
pub use table::BLOCKS;

/// Bytes of the BAR0 window the device decodes (16-bit byte addresses).
pub const BAR_BYTES: u32 = 1 << 16;

/// Version of the register map (the ID block's `MAP_VERSION`): bumped on
/// any change a driver could notice.
pub const MAP_VERSION: u32 = 3;

/// How the host may access a register and where its value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Read-only constant of the build (the block headers and the
    /// identification block: [`crate::host_if::reg_file::id_value`]).
    /// Writes are ignored and counted as bad accesses.
    Id,
    /// Read-only: the value of a signal of the host interface (the name of
    /// a signal of [`crate::host_if::HostIf`], which hands it to the
    /// register file when a read asks for it), or a constant `32'dN` (a
    /// build constant of the register file). Writes are ignored and counted
    /// as bad accesses.
    Ro(&'static str),
    /// Read/write storage of `bits` bits (the upper bits read 0), reset to
    /// `reset`.
    Rw {
        /// Stored bits.
        bits: u32,
        /// Value after reset.
        reset: u32,
    },
    /// Write-only: a write is a command (its data goes to the hardware
    /// that cycle); reads return 0.
    Wo,
}

/// One 32-bit register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reg {
    /// Name (upper case), unique within its block.
    pub name: &'static str,
    /// Byte offset from the block's base (a multiple of 4, at least 0x0C).
    pub offset: u16,
    /// Access and source.
    pub access: Access,
    /// What it holds or does.
    pub doc: &'static str,
}

/// One register block of the list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegBlock {
    /// Short name (upper case); also the prefix of its storage in the RTL.
    pub name: &'static str,
    /// Type word (`+0x00`): how a driver finds the block.
    pub type_id: u32,
    /// Version word (`+0x04`).
    pub version: u32,
    /// BAR offset of the block.
    pub base: u16,
    /// What the block is for.
    pub doc: &'static str,
    /// Its registers after the three header words.
    pub regs: &'static [Reg],
}

/// Offset of the type word in every block.
pub const HDR_TYPE: u16 = 0x00;
/// Offset of the version word in every block.
pub const HDR_VERSION: u16 = 0x04;
/// Offset of the next-block word in every block.
pub const HDR_NEXT: u16 = 0x08;

/// Block type: identification.
pub const TYPE_ID: u32 = 0x4D52_0001;
/// Block type: configuration and table port.
pub const TYPE_CFG: u32 = 0x4D52_0002;
/// Block type: counters.
pub const TYPE_CNT: u32 = 0x4D52_0003;
/// Block type: per-path TX table operations and reads.
pub const TYPE_TXT: u32 = 0x4D52_0004;
/// Block type: TX descriptor queue (host → device).
pub const TYPE_TXQ: u32 = 0x4D52_0005;
/// Block type: firmware transmit queue (host → device).
pub const TYPE_FTQ: u32 = 0x4D52_0006;
/// Block type: event ring (device → host).
pub const TYPE_EVQ: u32 = 0x4D52_0007;
/// Block type: firmware receive ring (device → host).
pub const TYPE_FRQ: u32 = 0x4D52_0008;
/// Block type: interrupt moderation.
pub const TYPE_IRQ: u32 = 0x4D52_0009;

/// Interrupt vectors.
pub const IRQ_VECTORS: usize = 3;
/// Vector raised for new event-ring entries.
pub const IRQ_EVQ: usize = 0;
/// Vector raised for new firmware-receive-ring entries.
pub const IRQ_FRQ: usize = 1;
/// Vector raised when TX or firmware-TX queue entries are consumed.
pub const IRQ_TX: usize = 2;

/// The block called `name`.
///
/// # Panics
/// If there is none.
pub fn block(name: &str) -> &'static RegBlock {
    BLOCKS
        .iter()
        .find(|b| b.name == name)
        .unwrap_or_else(|| panic!("no register block {name}"))
}

impl RegBlock {
    /// The BAR offset of this block's register `name`.
    ///
    /// # Panics
    /// If the block has no such register.
    pub fn addr(&self, name: &str) -> u16 {
        self.base
            + self
                .regs
                .iter()
                .find(|r| r.name == name)
                .unwrap_or_else(|| panic!("no register {}.{name}", self.name))
                .offset
    }

    /// The BAR offset of the next block (0 for the last one).
    pub fn next(&self) -> u16 {
        let i = BLOCKS
            .iter()
            .position(|b| b.base == self.base)
            .expect("a listed block");
        BLOCKS.get(i + 1).map_or(0, |b| b.base)
    }
}

/// Every decoded register: (BAR offset, block, register), in address
/// order, the three header words of each block included as read-only
/// constants.
pub fn all_regs() -> Vec<(u16, &'static RegBlock, Reg)> {
    let mut v = Vec::new();
    for b in BLOCKS {
        for (name, offset, doc) in [
            ("TYPE", HDR_TYPE, "block type"),
            ("VERSION", HDR_VERSION, "block version"),
            ("NEXT", HDR_NEXT, "BAR offset of the next block, 0 for none"),
        ] {
            v.push((
                b.base + offset,
                b,
                Reg {
                    name,
                    offset,
                    access: Access::Id,
                    doc,
                },
            ));
        }
        for r in b.regs {
            v.push((b.base + r.offset, b, *r));
        }
    }
    v.sort_by_key(|(a, _, _)| *a);
    v
}

/// The value a header word reads.
pub(crate) fn header_value(b: &RegBlock, offset: u16) -> u32 {
    match offset {
        HDR_TYPE => b.type_id,
        HDR_VERSION => b.version,
        _ => u32::from(b.next()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_are_unique_aligned_and_inside_their_block() {
        let regs = all_regs();
        for w in regs.windows(2) {
            assert_ne!(
                w[0].0, w[1].0,
                "{} and {} overlap",
                w[0].2.name, w[1].2.name
            );
        }
        for (i, b) in BLOCKS.iter().enumerate() {
            let end = BLOCKS.get(i + 1).map_or(BAR_BYTES, |n| u32::from(n.base));
            for r in b.regs {
                assert_eq!(r.offset % 4, 0, "{}.{} unaligned", b.name, r.name);
                assert!(r.offset > HDR_NEXT, "{}.{} in the header", b.name, r.name);
                assert!(
                    u32::from(b.base + r.offset) < end,
                    "{}.{} runs into the next block",
                    b.name,
                    r.name
                );
            }
        }
    }

    #[test]
    fn the_list_starts_at_zero_and_ends() {
        assert_eq!(BLOCKS[0].base, 0);
        assert_eq!(BLOCKS[0].type_id, TYPE_ID);
        assert_eq!(BLOCKS.last().expect("blocks").next(), 0);
        let mut types: Vec<_> = BLOCKS.iter().map(|b| b.type_id).collect();
        types.dedup();
        assert_eq!(types.len(), BLOCKS.len(), "types unique");
    }
}

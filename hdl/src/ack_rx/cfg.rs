//! The slot map: configuration entry `s` (`cfg_addr` = `s`, below the slot
//! count) says which (local QPN, path) TX table slot `s` holds.

/// Bits 31..0: local QPN (the ACK's destination QPN).
pub const QPN_SHIFT: u32 = 0;
/// Bits 47..32: path index.
pub const PATH_SHIFT: u32 = 32;
/// Bit 48: the entry is valid (else ACKs for it are not applied).
pub const VALID_BIT: u32 = 48;

/// The configuration word mapping a slot to (`qpn`, `path`).
pub const fn word(qpn: u32, path: u16) -> u64 {
    (qpn as u64) << QPN_SHIFT | (path as u64) << PATH_SHIFT | 1 << VALID_BIT
}

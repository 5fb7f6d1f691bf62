//! Configuration write port map: `cfg_addr = table << 6 | entry`, 64-bit
//! data, write-only. Writes take effect the next cycle: a register write
//! holds `s_desc_ready` low in its cycle and for [`CFG_SETTLE`](super::CFG_SETTLE) cycles
//! after, while what is derived from it settles. Registers are not
//! cleared by reset.

/// Table select: registers.
pub const REGS: u8 = 0;
/// Table select: entropy table, entry = path, bits 15..0 = UDP source port.
pub const ENTROPY: u8 = 1;
/// Register 0: bits 47..0 local MAC (network order, first byte in
/// bits 47..40), bits 63..48 UDP destination port.
pub const LOCAL: u8 = 0;
/// Register 1: bits 47..0 peer MAC, bits 55..48 IPv4 TTL / IPv6 hop
/// limit, bits 61..56 DSCP, bit 62 IPv6 (else IPv4). Change it only
/// while no frame is in flight.
pub const PEER: u8 = 1;
/// Bit of [`PEER`] that selects IPv6.
pub const PEER_IPV6_BIT: u32 = 62;
/// Register 2: bits 31..0 local IPv4 address, bits 63..32 peer IPv4
/// address (first byte in the top bits of each).
pub const IPV4: u8 = 2;
/// Registers 3 and 4: local IPv6 address bits 127..64 and 63..0
/// (first byte in the top bits).
pub const LOCAL_IPV6: u8 = 3;
/// Registers 5 and 6: peer IPv6 address bits 127..64 and 63..0.
pub const PEER_IPV6: u8 = 5;

/// The `cfg_addr` of `entry` in `table`.
pub const fn addr(table: u8, entry: u8) -> u8 {
    table << 6 | entry
}

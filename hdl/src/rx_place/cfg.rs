//! Table write port map (9-bit `cfg_addr`): `table << 6 | entry << 4 |
//! word` ([`addr`]) for the QP, MR, global and ring-control
//! tables; bit 8 set: the receive rings' slots ([`ring`]).

/// Table select: QP table.
pub const QP: u8 = 0;
/// Table select: MR table.
pub const MR: u8 = 1;
/// Table select: global registers.
pub const GLOBAL: u8 = 2;
/// Table select: receive-ring control words. Entry = QP slot, word =
/// stream (0..[`super::RQ_STREAMS`]): bits 31..0 the `recv_idx` of the
/// oldest posted receive, bits 35..32 how many are posted (0..=8).
/// Not cleared by reset: the firmware writes every stream's word when
/// it sets a QP entry up.
pub const RQ: u8 = 3;
/// Word of table [`RQ`] (entry = QP slot) holding the MSN heads of
/// streams 0 and 1 (bits 31..0, 63..32); word `MSN_HEADS + k` holds
/// streams `2k` and `2k + 1`, up to [`super::MSN_STREAMS`]. The head is
/// the stream's oldest message not yet retired (the engine's
/// `Nic::msn_head`). Not cleared by reset: the firmware writes every
/// word when it sets a QP entry up, and a word again when one of its
/// heads moves.
pub const MSN_HEADS: u8 = 8;
/// Receive-ring slot word: the receive's SGE address.
pub const RQ_ADDR: u8 = 0;
/// Receive-ring slot word: bits 31..0 the SGE length, bits 63..32 its lkey.
pub const RQ_LEN_LKEY: u8 = 1;
/// The `cfg_addr` of `word` ([`RQ_ADDR`] or [`RQ_LEN_LKEY`]) of ring slot
/// `slot` (= `recv_idx mod 8`) of `stream` of QP entry `qp`.
pub const fn ring(qp: u8, stream: u8, slot: u8, word: u8) -> u16 {
    1 << 8 | (qp as u16) << 6 | (stream as u16) << 4 | (slot as u16) << 1 | word as u16
}
/// QP word of READ entry `e` (0 or 1): `9 + 3e` bit 63 valid, bit 62
/// ([`READ_ATOMIC_BIT`]) the entry is an atomic's, bits 47..32 stream,
/// bits 31..0 MSN; `10 + 3e` the SGE address; `11 + 3e` bits 31..0 its
/// length (= the READ's message length, 8 for an atomic), bits 63..32 its
/// lkey.
pub const fn qp_read(e: u8, word: u8) -> u8 {
    9 + 3 * e + word
}
/// Bit of READ entry word `9 + 3e` set for an atomic's entry: only an
/// ATOMIC_RESP matches it, and only a READ_RESP matches the others.
pub const READ_ATOMIC_BIT: u8 = 62;
/// QP word 0: bit 0 valid, bits 2..1 state ([`STATE_RTR`], [`STATE_RTS`],
/// else [`STATE_IDLE`]: not receiving).
pub const QP_CTRL: u8 = 0;
/// QP state: RESET, INIT or ERR (drops with `qp_state`).
pub const STATE_IDLE: u8 = 0;
/// QP state: RTR.
pub const STATE_RTR: u8 = 1;
/// QP state: RTS.
pub const STATE_RTS: u8 = 2;
/// QP word 1: bits 31..0 QPN, bits 63..32 peer QPN.
pub const QP_QPNS: u8 = 1;
/// QP word 2: peer IP bits 127..64 (IPv4 mapped into IPv6).
pub const QP_PEER_IP_HI: u8 = 2;
/// QP word 3: peer IP bits 63..0.
pub const QP_PEER_IP_LO: u8 = 3;
/// QP word 4: bits 31..0 PD, bits 47..32 streams.
pub const QP_PD_STREAMS: u8 = 4;
/// QP word 5: bits 31..0 first connection PSN expected; clears the bitmap.
pub const QP_CONN_PSN: u8 = 5;
/// MR word 0: bit 0 valid, bits 4..1 access (LOCAL_WRITE, REMOTE_WRITE,
/// REMOTE_READ, REMOTE_ATOMIC: `Access::bits() << 1`).
pub const MR_CTRL: u8 = 0;
/// MR word 1: bits 31..0 rkey, bits 63..32 PD.
pub const MR_KEY_PD: u8 = 1;
/// MR word 2: base address.
pub const MR_BASE: u8 = 2;
/// MR word 3: length in bytes.
pub const MR_LEN: u8 = 3;
/// QP word 6: bits 15..0 the peer's UDP port (ACK destination port).
pub const QP_PEER_PORT: u8 = 6;
/// QP word 7: bits 31..0 the ACK's rate hint (Mbit/s), bits 63..32 its
/// credit (packets).
pub const QP_RATE_CREDIT: u8 = 7;
/// Global word 0: MTU (largest payload) in bytes, bits 15..0.
pub const GLOBAL_MTU: u8 = 0;
/// Global word 1: local IP bits 127..64 (IPv4 mapped into IPv6), the ACK's source.
pub const GLOBAL_LOCAL_IP_HI: u8 = 1;
/// Global word 2: local IP bits 63..0.
pub const GLOBAL_LOCAL_IP_LO: u8 = 2;

/// The `cfg_addr` of `word` of `entry` in `table`.
pub const fn addr(table: u8, entry: u8, word: u8) -> u8 {
    table << 6 | entry << 4 | word
}

//! RX placement: QP and MR tables, the receive checks of WRITE, SEND and
//! READ-response packets, and direct placement as DMA write commands.
//!
//! [`RxPlace`] sits behind [`crate::RxParser`] (see [`crate::RxCore`]). For
//! every frame the parser reports (`meta_*`, one pulse after the frame's
//! last beat) it looks the QP up (S0, which also addresses the path tracker
//! [`crate::RxPathTable`] with `trk_rd_addr`) and decides in the next cycle
//! (S1, with the tracker's `trk_cum`), in the engine's order
//! (`metaroce_firmware` `Nic::handle_datagram`, `Qp::on_packet`,
//! `Qp::on_message`; first failure wins):
//!
//! | code | verdict | engine counter |
//! |---|---|---|
//! | 0 | placed (WRITE, WRITE_IMM, SEND/SEND_IMM of streams 0..[`RQ_STREAMS`], or READ_RESP accepted) | `stats.data_accepted` |
//! | 1–5 | parser drop reasons ([`crate::DropReason`]) | `truncated` … `bad_icrc` |
//! | 6 | no QP with `dst_qpn` | `unknown_qp` |
//! | 7 | QP neither RTR nor RTS | `qp_state` |
//! | 8 | source QPN or source IP is not the peer | `wrong_peer` |
//! | 9 | path ≥ 64 | `bad_path` |
//! | 17 | PROBE: path-tracked and acknowledged, nothing else; but 12 when its connection PSN is more than 256 from the cumulative PSN either way (spec §3.7), then 16 as below | — |
//! | 10 | another opcode: passed to the firmware (READ requests, atomic requests and ATOMIC_RESPs only after the checks below, tracked and accepted) | — |
//! | 11 | stream ≥ the QP's streams | `bad_stream` |
//! | 10 | SEND, SEND_IMM or WRITE_IMM of a stream ≥ [`RQ_STREAMS`] (no ring in the RTL): passed to the firmware | — |
//! | 12 | connection PSN beyond the 256-PSN receive window | `conn_window` |
//! | 13 | payload > MTU, or offset + payload > message length; READ request with a payload or offset; atomic request whose payload is not its operands (8 bytes, 16 for COMPARE_SWAP), offset ≠ 0 or message length ≠ 8 | `bad_length` |
//! | 21 | READ_RESP or ATOMIC_RESP with a new connection PSN: no outstanding READ (atomic) with its (stream, MSN), or its message length or range does not fit it; dropped untracked, PSN not accepted (spec §6.8) | `unexpected_response` |
//! | 4 | WRITE, WRITE_IMM, SEND/SEND_IMM, READ request or atomic request with a new connection PSN whose MSN is before its stream's MSN head (a new packet of a completed message); dropped untracked, PSN not accepted (the parser's `UnexpectedPayload` code, counted alike by the engine) | `bad_format` |
//! | 23 | WRITE, WRITE_IMM, SEND/SEND_IMM, READ request or atomic request with a new connection PSN whose MSN is 256 or more after its stream's MSN head (the firmware writes the heads, [`cfg::MSN_HEADS`]); dropped untracked, PSN not accepted (spec §6.5) | `msn_window` |
//! | 16 | path PSN 2^30 or more beyond the path's cumulative PSN (also for a PROBE) | `path_window` |
//! | 14 | connection PSN accepted before: not placed again | `stats.duplicates` |
//! | 15 | WRITE, WRITE_IMM: rkey unknown, other PD, range outside the MR, or no REMOTE_WRITE (READ request: REMOTE_READ over the message; atomic request: REMOTE_ATOMIC over its 8 bytes) | `remote_access` |
//! | 18 | SEND, WRITE_IMM: no posted receive with its `recv_idx` on its stream (RNR NACK) | `receiver_not_ready` |
//! | 19 | SEND: message longer than the receive; atomic request: address not 8-byte aligned (invalid-request NACK) | `invalid_request` |
//! | 20 | SEND: the receive's lkey check fails (remote-operational NACK) | `remote_access` |
//! | 22 | READ_RESP matched to its READ: the lkey check of its bytes fails; PSN accepted, the READ fails and the QP goes to ERR (state 0) | `unexpected_response` |
//!
//! SEND/SEND_IMM of streams below [`RQ_STREAMS`] are checked against the
//! receive ring of their (QP, stream) (the engine's `Qp::on_message`:
//! `receive_for(recv_idx)`, `msg_len` ≤ the receive's length, `check_local`
//! on `sge.addr + offset`) and placed at `sge.addr + offset`; WRITE_IMM
//! needs a posted receive of its stream too (its completion consumes it)
//! and is then checked and placed as a WRITE (rkey, `remote_va`); the
//! completion itself (with the immediate, from the event) is the
//! firmware's, as for SENDs. A new READ_RESP is first matched to the QP's
//! outstanding-READ table (`Tx::read_response_fits`: `msg_len` equal to
//! the READ's length, `offset + len` inside it) before it is path-tracked
//! or takes its connection PSN; then its bytes get the lkey check
//! (`on_read_response`'s `check_local`) and are placed likewise. The lkey check is
//! the same MR lookup and bounds check as the WRITE's rkey check, with the
//! key, address and needed access chosen by opcode.
//!
//! Atomics (spec §6.8) are checked here and executed by the firmware: a
//! FETCH_ADD or COMPARE_SWAP like a READ request (the length rules of an
//! atomic, the rkey with REMOTE_ATOMIC over the 8 bytes at `remote_va`,
//! then their 8-byte alignment), then tracked, accepted and handed up
//! (verdict 10); an ATOMIC_RESP is matched like a READ response, to an
//! outstanding-READ entry marked atomic ([`cfg::READ_ATOMIC_BIT`]), then
//! tracked, accepted and handed up: its 8 bytes are a value in network
//! order, which the firmware writes in the host's.
//!
//! Not checked here (the engine does it; see `docs/hardware.md`): message
//! consistency (`bad_format` for a WRITE, WRITE_IMM or SEND whose MSN was
//! seen with another opcode or length). The other half of `bad_format`, a
//! new packet of a completed message (an MSN before its stream's head), is
//! verdict 4.
//!
//! The verdict event (`m_ev_*`, the cycle after S1) carries what the path
//! tracker and the firmware need: `m_ev_track` (the engine path-tracks the
//! packet: placed, duplicate, remote access, 18–22, and PROBE), the QP's
//! connection cumulative PSN after the verdict, whether the QP is still
//! receiving (`m_ev_live`), and the header fields.
//!
//! # Store and forward
//! The verdict (ICRC) is known only after a frame's last byte, so the
//! parser's payload stream goes into a data FIFO first, and each verdict
//! into a verdict FIFO. The output side pops a verdict, then that frame's
//! beats (up to `tlast`): to the DMA port when placed, otherwise dropped. A
//! dropped packet therefore never reaches the DMA port. The DMA port carries
//! the payload only (the ICRC trailer is cut off with `tkeep`); `m_dma_first`
//! marks a write's first beat, with `m_dma_addr` and `m_dma_len` valid.
//! Frames longer than an MTU stop filling the data FIFO after
//! [`CAP_BYTES`] (their verdict is `bad_length`), so the FIFO, sized for two
//! such frames, never deadlocks. `can_accept` tells the parent to stop
//! taking input while either FIFO is nearly full.
//!
//! # Tables
//! Written by the firmware through `cfg_we`/`cfg_addr`/`cfg_data` (one
//! 64-bit word per cycle); the map is in `docs/hardware.md` and in
//! [`mod@cfg`]. 4 QPs and 4 MRs, looked up associatively (by QPN and by rkey).
//! Per QP and stream below [`RQ_STREAMS`], a ring of [`RQ_SLOTS`] posted
//! receives (a control word with the base `recv_idx` and the count, table
//! [`cfg::RQ`]; the slots, slot = `recv_idx mod RQ_SLOTS`, at
//! [`cfg::ring`]), kept in RAMs without reset that are read once per
//! datagram with registered reads (block-RAM style); and [`READS`]
//! outstanding READs (QP words 9–14). The firmware posts and retires
//! receives, the RTL only reads them.
//! Each QP keeps its connection receive state: the cumulative connection PSN
//! and a 256-bit bitmap of accepted PSNs above it (the engine's
//! `ConnBitmap` with a 256-packet window), updated in the cycle of the
//! verdict so back-to-back packets of one QP see each other.
//!
//! # Counters
//! One 32-bit counter per verdict code; `cnt_sel` selects one, `cnt_val`
//! shows it a cycle later.
//!
//! # ACK read port
//! `ack_qp` selects a QP entry; `ack_*` show its QPNs, peer address and
//! UDP port, rate hint and credit, and the local IP (combinational).
//!
//! The block is custom Verilog (tables are arrays, which rust-hdl kernels
//! cannot index); it has no rust-hdl simulation model and is verified
//! under Verilator only (`metaroce-sim-tb`, against the engine).

use rust_hdl::prelude::*;

use crate::helpers::hand_written;

/// Payload bytes of one frame kept in the data FIFO; later beats of a
/// longer (hence `bad_length`) frame are dropped on the way in, except the
/// one with `tlast`.
pub const CAP_BYTES: usize = 4160;
/// QP table entries.
pub const QPS: usize = 4;
/// MR table entries.
pub const MRS: usize = 4;
/// Connection receive window in PSNs (the engine's `recv_window`).
pub const CONN_WINDOW: u32 = 256;
/// Posted receives per (QP, stream) in a receive ring.
pub const RQ_SLOTS: usize = 8;
/// Streams per QP with a receive ring (0..RQ_STREAMS); SEND, SEND_IMM and
/// WRITE_IMM of higher streams go to the firmware (verdict 10).
pub const RQ_STREAMS: usize = 4;
/// Outstanding-READ entries per QP.
pub const READS: usize = 2;
/// Streams per QP with an MSN head in the RTL (0..MSN_STREAMS): the
/// firmware gives a QP on the hardware data path at most this many.
pub const MSN_STREAMS: usize = 16;
// `rx_place.v.in` and the map are written for these sizes (slot, stream
// and entry indices, the QP words 9–14, the ring addresses).
const _: () = assert!(RQ_SLOTS == 8 && RQ_STREAMS == 4 && READS == 2 && MSN_STREAMS == 16);

/// Table write port map (9-bit `cfg_addr`): `table << 6 | entry << 4 |
/// word` ([`addr`](cfg::addr)) for the QP, MR, global and ring-control
/// tables; bit 8 set: the receive rings' slots ([`ring`](cfg::ring)).
pub mod cfg {
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
}

/// Verdict codes (`m_ev_code`); see the module docs.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Verdict {
    /// Accepted and placed (WRITE, WRITE_IMM, SEND, SEND_IMM, READ_RESP).
    Placed = 0,
    /// Parser: truncated.
    Truncated = 1,
    /// Parser: bad version.
    BadVersion = 2,
    /// Parser: unknown opcode.
    BadOpcode = 3,
    /// Parser: payload on an opcode without one; or a new message packet
    /// whose MSN is before its stream's MSN head (a completed message).
    /// The engine counts both as `bad_format`.
    UnexpectedPayload = 4,
    /// Parser: ICRC mismatch.
    BadIcrc = 5,
    /// No QP with the destination QPN.
    UnknownQp = 6,
    /// QP is not receiving (neither RTR nor RTS).
    QpState = 7,
    /// Source QPN or IP is not the connected peer.
    WrongPeer = 8,
    /// Path id ≥ 64.
    BadPath = 9,
    /// Another opcode, or a SEND/SEND_IMM/WRITE_IMM of a stream without a
    /// ring ([`RQ_STREAMS`] or more): handed to the firmware. Also a READ
    /// request, an atomic request or an ATOMIC_RESP that passed every check
    /// here: tracked, its connection PSN accepted, then handed up.
    Firmware = 10,
    /// Stream id beyond the QP's streams.
    BadStream = 11,
    /// Connection PSN beyond the receive window.
    ConnWindow = 12,
    /// Payload longer than the MTU or than the message.
    BadLength = 13,
    /// Connection PSN already accepted.
    Duplicate = 14,
    /// rkey, PD, bounds or access check failed.
    RemoteAccess = 15,
    /// Path PSN 2^30 or more ahead of the path's cumulative PSN.
    PathWindow = 16,
    /// PROBE: path-tracked and acknowledged.
    Probe = 17,
    /// SEND or WRITE_IMM: no posted receive for its `recv_idx` (the firmware sends an RNR NACK).
    Rnr = 18,
    /// SEND: longer than its receive; atomic request: address not 8-byte
    /// aligned (invalid-request NACK).
    InvalidRequest = 19,
    /// SEND: the receive's lkey check failed (remote-operational NACK).
    RemoteOperational = 20,
    /// READ_RESP with a new connection PSN: no outstanding READ with its
    /// (stream, MSN), or it does not fit the READ (length, range); dropped
    /// untracked, its PSN not accepted.
    UnexpectedResponse = 21,
    /// READ_RESP matched to its READ: its lkey check failed; the READ fails,
    /// the QP goes to ERR.
    BadResponse = 22,
    /// A new message packet (not a response) whose MSN is [`CONN_WINDOW`]
    /// or more after its stream's MSN head ([`cfg::MSN_HEADS`]): dropped
    /// untracked, PSN not accepted (spec §6.5).
    MsnWindow = 23,
}

impl Verdict {
    /// Every verdict, by code.
    pub const ALL: [Verdict; 24] = [
        Self::Placed,
        Self::Truncated,
        Self::BadVersion,
        Self::BadOpcode,
        Self::UnexpectedPayload,
        Self::BadIcrc,
        Self::UnknownQp,
        Self::QpState,
        Self::WrongPeer,
        Self::BadPath,
        Self::Firmware,
        Self::BadStream,
        Self::ConnWindow,
        Self::BadLength,
        Self::Duplicate,
        Self::RemoteAccess,
        Self::PathWindow,
        Self::Probe,
        Self::Rnr,
        Self::InvalidRequest,
        Self::RemoteOperational,
        Self::UnexpectedResponse,
        Self::BadResponse,
        Self::MsnWindow,
    ];

    /// The verdict with code `code` (5 bits).
    pub fn from_code(code: u8) -> Option<Self> {
        Self::ALL.get(usize::from(code)).copied()
    }
}

/// The placement block at `W`-bit beats (`B = W / 8` lanes).
#[derive(LogicBlock, Default)]
pub struct RxPlace<const W: usize, const B: usize> {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: empties the FIFOs, invalidates every table entry,
    /// zeroes the counters.
    pub rst: Signal<In, Bit>,
    /// Parser metadata pulse (see `RxParser::m_meta_valid`).
    pub meta_valid: Signal<In, Bit>,
    /// Parser verdict: drop.
    pub meta_drop: Signal<In, Bit>,
    /// Parser drop reason.
    pub meta_reason: Signal<In, Bits<3>>,
    /// Datagram length.
    pub meta_len: Signal<In, Bits<16>>,
    /// MSG opcode (the parser stripped 64 bytes, else 32).
    pub meta_is_msg: Signal<In, Bit>,
    /// Opcode.
    pub meta_opcode: Signal<In, Bits<8>>,
    /// Destination QPN.
    pub meta_dst_qpn: Signal<In, Bits<32>>,
    /// Source QPN.
    pub meta_src_qpn: Signal<In, Bits<32>>,
    /// Source IP.
    pub meta_src_ip: Signal<In, Bits<128>>,
    /// Stream id.
    pub meta_stream: Signal<In, Bits<16>>,
    /// Path id.
    pub meta_path: Signal<In, Bits<16>>,
    /// Connection PSN.
    pub meta_conn_psn: Signal<In, Bits<32>>,
    /// MSG message length.
    pub meta_msg_len: Signal<In, Bits<32>>,
    /// MSG offset.
    pub meta_offset: Signal<In, Bits<32>>,
    /// MSG remote address.
    pub meta_remote_va: Signal<In, Bits<64>>,
    /// MSG rkey.
    pub meta_rkey: Signal<In, Bits<32>>,
    /// Base header version (for the event).
    pub meta_version: Signal<In, Bits<8>>,
    /// Flags (for the event).
    pub meta_flags: Signal<In, Bits<16>>,
    /// Path PSN.
    pub meta_path_psn: Signal<In, Bits<32>>,
    /// Sender timestamp.
    pub meta_timestamp: Signal<In, Bits<64>>,
    /// MSG message sequence number (for the event).
    pub meta_msn: Signal<In, Bits<32>>,
    /// MSG posted-receive index (for the event).
    pub meta_recv_idx: Signal<In, Bits<32>>,
    /// MSG immediate (for the event).
    pub meta_imm: Signal<In, Bits<32>>,
    /// UDP source port of the datagram.
    pub meta_src_port: Signal<In, Bits<16>>,
    /// IP ECN CE mark of the datagram.
    pub meta_ce: Signal<In, Bit>,
    /// S0: path tracker entry to read (`qp << 6 | path`).
    pub trk_rd_addr: Signal<Out, Bits<8>>,
    /// S1: that entry's cumulative path PSN (from [`crate::RxPathTable`]).
    pub trk_cum: Signal<In, Bits<32>>,
    /// Parser payload beats (headers stripped, ICRC still at the end).
    pub s_tdata: Signal<In, Bits<W>>,
    /// Payload byte enables.
    pub s_tkeep: Signal<In, Bits<B>>,
    /// Payload beat valid.
    pub s_tvalid: Signal<In, Bit>,
    /// Payload beat taken (the data FIFO has room).
    pub s_tready: Signal<Out, Bit>,
    /// Last payload beat of a frame.
    pub s_tlast: Signal<In, Bit>,
    /// Both FIFOs have room for what an upstream frame in flight can add:
    /// the parent takes input only while this is high.
    pub can_accept: Signal<Out, Bit>,
    /// Table write strobe.
    pub cfg_we: Signal<In, Bit>,
    /// Table write address ([`cfg::addr`], [`cfg::ring`]).
    pub cfg_addr: Signal<In, Bits<9>>,
    /// Table write data.
    pub cfg_data: Signal<In, Bits<64>>,
    /// DMA write: first beat of a write; `m_dma_addr`/`m_dma_len` are valid.
    pub m_dma_first: Signal<Out, Bit>,
    /// DMA write destination address.
    pub m_dma_addr: Signal<Out, Bits<64>>,
    /// DMA write length in bytes.
    pub m_dma_len: Signal<Out, Bits<16>>,
    /// DMA write data, packed from lane 0.
    pub m_dma_tdata: Signal<Out, Bits<W>>,
    /// DMA write byte enables (packed).
    pub m_dma_tkeep: Signal<Out, Bits<B>>,
    /// DMA write beat valid.
    pub m_dma_tvalid: Signal<Out, Bit>,
    /// DMA engine takes the beat.
    pub m_dma_tready: Signal<In, Bit>,
    /// Last beat of the write.
    pub m_dma_tlast: Signal<Out, Bit>,
    /// One-cycle pulse per frame: its verdict is in `m_ev_code`.
    pub m_ev_valid: Signal<Out, Bit>,
    /// [`Verdict`] code.
    pub m_ev_code: Signal<Out, Bits<5>>,
    /// The engine path-tracks this packet (feeds the path tracker).
    pub m_ev_track: Signal<Out, Bit>,
    /// The QP was found: `m_ev_conn_cum` is valid.
    pub m_ev_qhit: Signal<Out, Bit>,
    /// The QP's connection cumulative PSN after this verdict.
    pub m_ev_conn_cum: Signal<Out, Bits<32>>,
    /// Event: version.
    pub m_ev_version: Signal<Out, Bits<8>>,
    /// Event: opcode.
    pub m_ev_opcode: Signal<Out, Bits<8>>,
    /// Event: flags.
    pub m_ev_flags: Signal<Out, Bits<16>>,
    /// Event: destination QPN.
    pub m_ev_dst_qpn: Signal<Out, Bits<32>>,
    /// Event: path id.
    pub m_ev_path: Signal<Out, Bits<16>>,
    /// Event: path PSN.
    pub m_ev_path_psn: Signal<Out, Bits<32>>,
    /// Event: sender timestamp.
    pub m_ev_timestamp: Signal<Out, Bits<64>>,
    /// Event: UDP source port.
    pub m_ev_src_port: Signal<Out, Bits<16>>,
    /// Event: IP ECN CE mark.
    pub m_ev_ce: Signal<Out, Bit>,
    /// Event: MSN.
    pub m_ev_msn: Signal<Out, Bits<32>>,
    /// Event: posted-receive index.
    pub m_ev_recv_idx: Signal<Out, Bits<32>>,
    /// Event: immediate.
    pub m_ev_imm: Signal<Out, Bits<32>>,
    /// Event: the QP is still receiving (RTR or RTS) after this verdict.
    pub m_ev_live: Signal<Out, Bit>,
    /// Event: stream id.
    pub m_ev_stream: Signal<Out, Bits<16>>,
    /// Event: connection PSN.
    pub m_ev_conn_psn: Signal<Out, Bits<32>>,
    /// Event: MSG offset.
    pub m_ev_offset: Signal<Out, Bits<32>>,
    /// Event: MSG message length.
    pub m_ev_msg_len: Signal<Out, Bits<32>>,
    /// Event: payload bytes (MSG opcodes; 0 otherwise).
    pub m_ev_len: Signal<Out, Bits<16>>,
    /// ACK read port: QP entry.
    pub ack_qp: Signal<In, Bits<2>>,
    /// ACK read port: its QPN (the ACK's source QPN).
    pub ack_qpn: Signal<Out, Bits<32>>,
    /// ACK read port: the peer's QPN (the ACK's destination QPN).
    pub ack_peer_qpn: Signal<Out, Bits<32>>,
    /// ACK read port: the peer's IP.
    pub ack_peer_ip: Signal<Out, Bits<128>>,
    /// ACK read port: the peer's UDP port.
    pub ack_peer_port: Signal<Out, Bits<16>>,
    /// ACK read port: rate hint.
    pub ack_rate: Signal<Out, Bits<32>>,
    /// ACK read port: credit.
    pub ack_credit: Signal<Out, Bits<32>>,
    /// ACK read port: the local IP.
    pub ack_local_ip: Signal<Out, Bits<128>>,
    /// Counter select (a [`Verdict`] code).
    pub cnt_sel: Signal<In, Bits<5>>,
    /// The selected counter, one cycle after `cnt_sel`.
    pub cnt_val: Signal<Out, Bits<32>>,
}

/// Depth of the data FIFO in beats: two capped frames plus slack, rounded
/// up to a power of two.
pub const fn data_fifo_depth(bytes_per_beat: usize) -> usize {
    (2 * (CAP_BYTES.div_ceil(bytes_per_beat) + 4)).next_power_of_two()
}

/// Depth of the verdict FIFO: the verdicts of the small frames that arrive
/// while a long write leaves (at 64 bits, a 4 KiB write takes 512 cycles;
/// 5-beat PROBEs arrive meanwhile). 32 gave 291 refused beats in 5.1 M
/// cycles of the bench's mix at 64 bits; 64 gives none.
const VERDICTS: usize = 64;

impl<const W: usize, const B: usize> Logic for RxPlace<W, B> {
    /// No rust-hdl model: the block is verified under Verilator only.
    fn update(&mut self) {}

    fn connect(&mut self) {
        assert_eq!(W, 8 * B, "RxPlace: W must be 8 * B");
        self.s_tready.connect();
        self.can_accept.connect();
        self.m_dma_first.connect();
        self.m_dma_addr.connect();
        self.m_dma_len.connect();
        self.m_dma_tdata.connect();
        self.m_dma_tkeep.connect();
        self.m_dma_tvalid.connect();
        self.m_dma_tlast.connect();
        self.m_ev_valid.connect();
        self.m_ev_code.connect();
        for s in [
            &mut self.m_ev_track,
            &mut self.m_ev_qhit,
            &mut self.m_ev_ce,
            &mut self.m_ev_live,
        ] {
            s.connect();
        }
        self.m_ev_conn_cum.connect();
        self.m_ev_version.connect();
        self.m_ev_opcode.connect();
        self.m_ev_flags.connect();
        self.m_ev_dst_qpn.connect();
        self.m_ev_path.connect();
        self.m_ev_path_psn.connect();
        self.m_ev_timestamp.connect();
        self.m_ev_src_port.connect();
        self.m_ev_msn.connect();
        self.m_ev_recv_idx.connect();
        self.m_ev_imm.connect();
        self.m_ev_stream.connect();
        self.m_ev_conn_psn.connect();
        self.m_ev_offset.connect();
        self.m_ev_msg_len.connect();
        self.m_ev_len.connect();
        self.trk_rd_addr.connect();
        self.ack_qpn.connect();
        self.ack_peer_qpn.connect();
        self.ack_peer_ip.connect();
        self.ack_peer_port.connect();
        self.ack_rate.connect();
        self.ack_credit.connect();
        self.ack_local_ip.connect();
        self.cnt_val.connect();
    }

    fn hdl(&self) -> Verilog {
        let depth = data_fifo_depth(B);
        let dbits = depth.trailing_zeros();
        let cap_beats = CAP_BYTES.div_ceil(B);
        let vbits = VERDICTS.trailing_zeros();
        hand_written(format!(
            include_str!("rx_place.v.in"),
            B = B,
            WM1 = W - 1,
            BM1 = B - 1,
            DEPTH = depth,
            DBITS = dbits,
            DBM1 = dbits - 1,
            CAP_BEATS = cap_beats,
            VDEPTH = VERDICTS,
            VBITS = vbits,
            VBM1 = vbits - 1,
            QPS = QPS,
            MRS = MRS,
            NCODES = 32,
            RQS = RQ_STREAMS,
            SB = RQ_STREAMS.trailing_zeros(),
            SBM1 = RQ_STREAMS.trailing_zeros() - 1,
            HS = MSN_STREAMS,
            HBM1 = MSN_STREAMS.trailing_zeros() - 1,
            CW = CONN_WINDOW,
            LEAD_ONES = crate::helpers::LEAD_ONES_FN,
        ))
    }
}

//! RX placement: QP and MR tables, the receive checks of WRITE, SEND and
//! READ-response packets, and direct placement as DMA write commands.
//!
//! [`RxPlace`] sits behind [`crate::RxParser`] (see [`crate::RxCore`]). For
//! every frame the parser reports (`meta_*`, one pulse after the frame's
//! last beat) it looks the QP up (S0), then its outstanding READ and its MR
//! (S1), runs the checks that read no connection state (S2, which also
//! addresses the path tracker [`crate::RxPathTable`] with `trk_rd_addr`),
//! and decides in the cycle after (S3, with the tracker's `trk_cum`), in
//! the engine's order
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
//! The verdict event (`m_ev_*`, the cycle after S3) carries what the path
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
//! verdict (in a bypass register, the table a cycle later) so
//! back-to-back packets of one QP see each other; at 64 bits, where a
//! packet whose verdict reads the window is 5 beats or more, the update is
//! split over S2, S3 and S4 instead, with no bypass ([`ConnAccept::new`],
//! [`PlaceConn::new`]).
//!
//! # Counters
//! One 32-bit counter per verdict code, counted a cycle after the verdict
//! (the event's cycle: the code is registered first, so the verdict logic
//! does not reach the counters' adders); `cnt_sel` selects one, `cnt_val`
//! shows it a cycle later. Codes 24–31 never occur and read 0.
//!
//! # ACK read port
//! `ack_qp` selects a QP entry; `ack_*` show its QPNs, peer address and
//! UDP port, rate hint and credit, and the local IP (combinational).
//!
//! # Structure
//! Native rust-hdl. The QP, MR and outstanding-READ tables are arrays of
//! registers, looked up by loop-and-compare (small CAMs); the receive rings
//! and MSN heads are rust-hdl `RAM`s (registered reads in S0). Four
//! stages: S0 the QP lookup, the RAM reads, the payload's length and end
//! offset; S1 the QP's outstanding-READ entries and their match
//! ([`PlaceReads`]) beside the MR lookup ([`PlaceMr`]: every MR's key against
//! all four candidate keys, the READ match and the opcode choosing the
//! hits, the MR registered one-hot) and the sums S2 compares
//! ([`PlaceSums`]: the local address, the MR check's start and end, the
//! ring's checks; each MR's end is summed when the firmware writes its
//! base or length), registered; S2 the checks that read no connection
//! state ([`PlaceCheck`], with [`PlaceMr`]'s PD and bounds compares of
//! every MR, picked by the one-hot index; registered);
//! S3 the verdict ([`PlaceDecide`]) and the connection window's update
//! ([`ConnAccept`]), each computed only with a datagram in its stage; the
//! verdict's connection-window tests are made in S2 against the window S3
//! will see and registered ([`ConnAhead`]), so no subtraction is in the
//! verdict's loop.
//!
//! Forwarding between the stages: S1's lookups see the table write of their
//! own cycle (write-through: a firmware write to the datagram's QP's READ
//! words, in S0 or S1, or to an MR's key or valid bit lands in S1's
//! result; S2 reads the MR's other fields from the table, which holds S1's
//! write by then); S2 reads the QP entry's
//! peer, PD and streams from the registers (writes up to S1). The QP state
//! and connection window (cumulative PSN, bitmap) are loaded in S2 into
//! S3's registers (the bypass): S3's own result when S3 holds a datagram
//! of the same QP, else the table, with this cycle's firmware write (so
//! one in S2 is seen). S3's result goes into the table at S3's edge (the
//! bitmaps are a distributed RAM addressed by S3's QP register), a
//! firmware write of the next cycle winning over it, so
//! the verdict's loop has no table selection or write decode in it. The data
//! FIFO and the output side are [`PlaceOut`]; the data FIFO is in
//! [`BlockRam`](crate::helpers::BlockRam)s (block RAM, read a cycle ahead), the verdict FIFO
//! ([`PlaceVerdicts`]) in a [`LutRam`](crate::helpers::LutRam)
//! (asynchronous read).
//!
//! Sub-blocks, one concern each: the QP entries' firmware-written fields
//! and their lookups ([`PlaceQps`]), the global registers
//! ([`PlaceGlobals`]), the connection state with its table write and bypass
//! ([`PlaceConn`]), S2's connection-window tests ([`ConnAhead`]), the ring and MSN-head RAMs ([`PlaceRings`]), the
//! outstanding READs ([`PlaceReads`]), the MRs ([`PlaceMr`] over one
//! [`MrEntry`] each), S1's sums, S2's checks ([`PlaceCheck`]: [`CheckHead`],
//! [`CheckLen`], [`CheckTail`]), S3's verdict and window, the header
//! fields of S1, S2 and S3 ([`PlaceHdr`], three joined in a row) and the
//! fields only the checks read ([`PlaceStage`], S1 and S2), the event
//! ([`PlaceEvent`]), the counters ([`CodeCounters`](crate::code_counters::CodeCounters)), the verdict FIFO
//! and the data side. Two of them only group others: [`PlaceLookup`] (the
//! tables, S0's to S2's lookups, sums and checks, the ACK read port) and
//! [`PlaceBack`] (S3, the event, the counters, both FIFOs and the output
//! side); this kernel wires them to the ports and the S1 and S2 stages.
//! Every port is cycle for cycle what it was before the split. rust-hdl's
//! own simulator runs the
//! block (`tests.rs`); it is verified under Verilator
//! (`metaroce-sim-tb`, the `rx_core` bench and the benches above it)
//! against the engine.

use rust_hdl::prelude::*;

use crate::bus::{AxisIn, CfgIn, CounterPort, DmaWriteOut, VerdictOut};

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
// The kernels and the map are written for these sizes (slot, stream
// and entry indices, the QP words 9–14, the ring addresses).
const _: () = assert!(RQ_SLOTS == 8 && RQ_STREAMS == 4 && READS == 2 && MSN_STREAMS == 16);

mod accept;
mod ahead;
mod back;
pub mod cfg;
mod check;
mod check_head;
mod check_len;
mod check_tail;
mod conn;
mod decide;
mod event;
mod globals;
mod hdr;
mod links;
mod lookup;
mod mr;
mod mr_entry;
mod out;
mod qps;
mod read;
mod rings;
mod stage;
mod sums;
#[cfg(test)]
mod tests;
mod verdict;
mod verdicts;

pub use accept::{AccBits, AccPost, AccPre, ConnAccept};
pub use ahead::ConnAhead;
pub use back::PlaceBack;
pub use check::PlaceCheck;
pub use check_head::CheckHead;
pub use check_len::CheckLen;
pub use check_tail::CheckTail;
pub use conn::PlaceConn;
pub use decide::PlaceDecide;
pub use event::PlaceEvent;
pub use globals::PlaceGlobals;
pub use hdr::PlaceHdr;
pub use lookup::PlaceLookup;
pub use mr::PlaceMr;
pub use mr_entry::MrEntry;
pub use out::PlaceOut;
pub use qps::PlaceQps;
pub use read::PlaceReads;
pub use rings::PlaceRings;
pub use stage::PlaceStage;
pub use sums::PlaceSums;
pub use verdict::Verdict;
pub use verdicts::PlaceVerdicts;
use verdicts::VERDICTS;

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
    /// S2: path tracker entry to read (`qp << 6 | path`).
    pub trk_rd_addr: Signal<Out, Bits<8>>,
    /// S3: that entry's cumulative path PSN (from [`crate::RxPathTable`]).
    pub trk_cum: Signal<In, Bits<32>>,
    /// Parser payload beats (headers stripped, ICRC still at the end);
    /// `tready`: the data FIFO has room.
    pub s_axis: AxisIn<W, B>,
    /// Both FIFOs have room for what an upstream frame in flight can add:
    /// the parent takes input only while this is high.
    pub can_accept: Signal<Out, Bit>,
    /// Table write port ([`cfg::addr`], [`cfg::ring`]).
    pub cfg: CfgIn<9>,
    /// DMA writes of placed payload: `first` marks a write's first beat,
    /// with `addr` and `len` valid; data packed from lane 0.
    pub m_dma: DmaWriteOut<W, B>,
    /// Verdict events: one `valid` pulse per frame with its [`Verdict`]
    /// code and header fields.
    pub m_ev: VerdictOut,
    /// The engine path-tracks this packet (feeds the path tracker).
    pub m_ev_track: Signal<Out, Bit>,
    /// The QP was found: `m_ev_conn_cum` is valid.
    pub m_ev_qhit: Signal<Out, Bit>,
    /// The QP's connection cumulative PSN after this verdict.
    pub m_ev_conn_cum: Signal<Out, Bits<32>>,
    /// Event: IP ECN CE mark.
    pub m_ev_ce: Signal<Out, Bit>,
    /// Event: the QP is still receiving (RTR or RTS) after this verdict.
    pub m_ev_live: Signal<Out, Bit>,
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
    /// Counter read port: `sel` a [`Verdict`] code, `val` its counter a
    /// cycle later.
    pub cnt: CounterPort<5>,
    /// S2: a datagram is here: the tracker reads `trk_rd_addr` and
    /// computes its forwarding for the next cycle only then.
    pub trk_rd_en: Signal<Out, Bit>,
    // ---- S1 and S2: the header fields (`hdr1`, `hdr2`), the fields only
    // the checks read and the QP entry (`s1`, `s2`), registered ----
    hdr1: PlaceHdr,
    s1: PlaceStage,
    hdr2: PlaceHdr,
    s2: PlaceStage,
    // ---- the tables, S0's to S2's lookups, sums and checks ----
    lookup: PlaceLookup,
    // ---- S3 and the output side: the verdict, the connection window, the
    // event, the counters, the verdict and data FIFOs ----
    back: PlaceBack<W, B>,
    // S0: the payload bytes (length - 68), summed with the offset for
    // S1's range ends.
    pl0: Signal<Local, Bits<16>>,
}

/// Depth of the data FIFO in beats: two capped frames plus slack, rounded
/// up to a power of two.
pub const fn data_fifo_depth(bytes_per_beat: usize) -> usize {
    (2 * (CAP_BYTES.div_ceil(bytes_per_beat) + 4)).next_power_of_two()
}

/// Address bits of the data FIFO's memories (the deepest FIFO, at 64 bits:
/// 2,048 beats).
const DATA_ABITS: usize = 11;
const _: () = assert!(data_fifo_depth(8) <= 1 << DATA_ABITS && VERDICTS == 64);

impl<const W: usize, const B: usize> Logic for RxPlace<W, B> {
    #[hdl_gen]
    fn update(&mut self) {
        // ---- S0: the QP lookup and the RAM reads (`lookup`), the
        // metadata into S1's registers ----
        self.lookup.clock.next = self.clock.val();
        self.lookup.rst.next = self.rst.val();
        CfgIn::<9>::link(&mut self.cfg, &mut self.lookup.cfg);
        self.lookup.en0.next = self.meta_valid.val();
        self.lookup.dst_qpn0.next = self.meta_dst_qpn.val();
        self.lookup.stream0.next = self.meta_stream.val().get_bits::<4>(0);
        self.lookup.slot0.next = self.meta_recv_idx.val().get_bits::<3>(0);
        self.lookup.remote_va0.next = self.meta_remote_va.val();
        self.lookup.rkey0.next = self.meta_rkey.val();
        self.hdr1.clock.next = self.clock.val();
        self.hdr1.en.next = self.meta_valid.val();
        self.hdr1.d.qhit.next = self.lookup.hit0.val();
        self.hdr1.d.is_msg.next = self.meta_is_msg.val();
        self.hdr1.d.version.next = self.meta_version.val();
        self.hdr1.d.opcode.next = self.meta_opcode.val();
        self.hdr1.d.flags.next = self.meta_flags.val();
        self.hdr1.d.dst_qpn.next = self.meta_dst_qpn.val();
        self.hdr1.d.src_port.next = self.meta_src_port.val();
        self.hdr1.d.ce.next = self.meta_ce.val();
        self.hdr1.d.stream.next = self.meta_stream.val();
        self.hdr1.d.path.next = self.meta_path.val();
        self.hdr1.d.conn_psn.next = self.meta_conn_psn.val();
        self.hdr1.d.path_psn.next = self.meta_path_psn.val();
        self.hdr1.d.timestamp.next = self.meta_timestamp.val();
        self.hdr1.d.msn.next = self.meta_msn.val();
        self.hdr1.d.recv_idx.next = self.meta_recv_idx.val();
        self.hdr1.d.msg_len.next = self.meta_msg_len.val();
        self.hdr1.d.offset.next = self.meta_offset.val();
        self.hdr1.d.imm.next = self.meta_imm.val();
        self.s1.clock.next = self.clock.val();
        self.s1.rst.next = self.rst.val();
        self.s1.qi.next = self.lookup.qi0.val();
        self.s1.d.valid.next = self.meta_valid.val();
        self.s1.d.drop.next = self.meta_drop.val();
        self.s1.d.reason.next = self.meta_reason.val();
        self.s1.d.len.next = self.meta_len.val();
        self.s1.d.src_qpn.next = self.meta_src_qpn.val();
        self.s1.d.src_ip.next = self.meta_src_ip.val();
        self.s1.d.va_low.next = self.meta_remote_va.val().get_bits::<3>(0);
        self.pl0.next = self.meta_len.val() - 68;
        self.s1.d.pl.next = self.pl0.val();
        self.s1.d.end_off.next =
            bit_cast::<33, 32>(self.meta_offset.val()) + bit_cast::<33, 16>(self.pl0.val());

        // ---- S1: the READ match, the MR key lookup and the sums; the
        // metadata on to S2 ----
        self.lookup.en1.next = self.s1.m.valid.val();
        self.lookup.qi1.next = self.s1.m_qi.val();
        self.lookup.opcode1.next = self.hdr1.m.opcode.val();
        self.lookup.stream1.next = self.hdr1.m.stream.val();
        self.lookup.msn1.next = self.hdr1.m.msn.val();
        self.lookup.offset1.next = self.hdr1.m.offset.val();
        self.lookup.msg_len1.next = self.hdr1.m.msg_len.val();
        self.lookup.recv_idx1.next = self.hdr1.m.recv_idx.val();
        self.lookup.pl1.next = self.s1.m.pl.val();
        self.lookup.end_off1.next = self.s1.m.end_off.val();
        self.hdr2.clock.next = self.clock.val();
        self.hdr2.en.next = self.s1.m.valid.val();
        links::HdrOut::join(&mut self.hdr1.m, &mut self.hdr2.d);
        self.s2.clock.next = self.clock.val();
        self.s2.rst.next = self.rst.val();
        self.s2.qi.next = self.s1.m_qi.val();
        links::MetaOut::join(&mut self.s1.m, &mut self.s2.d);

        // ---- S2: the tracker's read, the state-free checks (registered in
        // `lookup`) ----
        self.trk_rd_addr.next = (bit_cast::<8, 2>(self.s2.m_qi.val()) << 6)
            | bit_cast::<8, 6>(self.hdr2.m.path.val().get_bits::<6>(0));
        self.trk_rd_en.next = self.s2.m.valid.val();
        links::MetaOut::join(&mut self.s2.m, &mut self.lookup.m2);
        self.lookup.qi2.next = self.s2.m_qi.val();
        self.lookup.qhit2.next = self.hdr2.m.qhit.val();
        self.lookup.is_msg2.next = self.hdr2.m.is_msg.val();
        self.lookup.opcode2.next = self.hdr2.m.opcode.val();
        self.lookup.stream2.next = self.hdr2.m.stream.val();
        self.lookup.path2.next = self.hdr2.m.path.val();
        self.lookup.msn2.next = self.hdr2.m.msn.val();
        self.lookup.msg_len2.next = self.hdr2.m.msg_len.val();
        self.lookup.offset2.next = self.hdr2.m.offset.val();

        // ---- S3 and the output side (`back`) ----
        self.back.clock.next = self.clock.val();
        self.back.rst.next = self.rst.val();
        self.back.cfg.we.next = self.cfg.we.val();
        self.back.cfg.addr.next = self.cfg.addr.val();
        self.back.cfg.data.next = self.cfg.data.val().get_bits::<32>(0);
        self.back.x_valid.next = self.s2.m.valid.val();
        self.back.x_qi.next = self.s2.m_qi.val();
        links::HdrOut::join(&mut self.hdr2.m, &mut self.back.s_hdr);
        links::ChecksOut::join(&mut self.lookup.v, &mut self.back.chk);
        self.back.plen.next = self.lookup.plen.val();
        self.back.has_beats.next = self.lookup.has_beats.val();
        self.back.dest.next = self.lookup.dest.val();
        self.back.trk_cum.next = self.trk_cum.val();
        AxisIn::<W, B>::link(&mut self.s_axis, &mut self.back.s_axis);
        self.can_accept.next = self.back.can_accept.val();
        DmaWriteOut::<W, B>::link(&mut self.m_dma, &mut self.back.m_dma);
        VerdictOut::link(&mut self.m_ev, &mut self.back.m_ev);
        self.m_ev_track.next = self.back.m_ev_track.val();
        self.m_ev_qhit.next = self.back.m_ev_qhit.val();
        self.m_ev_conn_cum.next = self.back.m_ev_conn_cum.val();
        self.m_ev_live.next = self.back.m_ev_live.val();
        self.m_ev_ce.next = self.back.m_ev_ce.val();
        CounterPort::<5>::link(&mut self.cnt, &mut self.back.cnt);

        // ---- the ACK generator's read port ----
        self.lookup.ack_qp.next = self.ack_qp.val();
        self.ack_qpn.next = self.lookup.ack_qpn.val();
        self.ack_peer_qpn.next = self.lookup.ack_peer_qpn.val();
        self.ack_peer_ip.next = self.lookup.ack_peer_ip.val();
        self.ack_peer_port.next = self.lookup.ack_peer_port.val();
        self.ack_rate.next = self.lookup.ack_rate.val();
        self.ack_credit.next = self.lookup.ack_credit.val();
        self.ack_local_ip.next = self.lookup.ack_local_ip.val();
    }
}

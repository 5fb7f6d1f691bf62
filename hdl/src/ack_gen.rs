//! ACK generator: builds the ACK datagram for each entry of the path
//! tracker's pending-ACK queue ([`crate::RxPathTable`]), as the engine's
//! `Rx::poll_ack` and `Qp::poll_transmit` do, and streams it out.
//!
//! The datagram is the 32-byte base header (opcode ACK, flags `ECE` when a
//! CE mark arrived on the path since its last ACK, destination QPN = the
//! peer's, source QPN = the QP's, stream 0, the path, connection and path
//! PSN 0, timestamp = `now` when the ACK was taken from the queue), the
//! 64-byte ACK extension (`conn_cum`, `path_cum`, SACK, `echo_ts`,
//! `ce_count`, `rate_hint`, `credit`, `rx_count`) and the ICRC over the
//! pseudo-header (local IP, path's reply port, peer IP, peer UDP port, UDP
//! length) and those 96 bytes, computed with the functions of [`crate::icrc`].
//!
//! Coalescing is the engine's: a path is queued once however many packets
//! arrive before its ACK is taken, and the ACK carries its state at that
//! moment. An entry whose QP was no longer receiving at its last event
//! (`ak_live` low: a READ response failed the QP, as the engine's
//! `Qp::fail`) is dropped in cycle 1, as the engine's failed QP sends no
//! ACK. One ACK at a time: pop (cycle 0), build and ICRC (cycle 1,
//! registered), then the beats from cycle 2 (13 beats at 64 bits, 2 at
//! 512); the next pop is the cycle after the last beat is taken.
//!
//! **ACKs after the data.** An ACK acknowledges every packet the tracker
//! holds when the generator reads it (cycle 1: the events up to the pop
//! cycle), and its peer may complete a WRITE as soon as it arrives, so its
//! first beat waits until the DMA port has finished the writes of all those
//! packets. The block counts placed packets with a payload (`placed`, one
//! pulse per verdict event that starts a DMA write) and finished DMA writes
//! (`dma_done`, one pulse per last beat taken), both modulo 2^32; at the
//! pop it notes the placed count including that cycle's event, and shows
//! the ACK (`m_ack_tvalid`) once the finished count has reached it. The
//! placement FIFO writes in verdict order, so the wait is at most the DMA
//! of the packets ahead of it.
//!
//! Ports: `now` (64, the NIC clock in ns), the tracker's ACK port
//! (`aq_valid`, `aq_pop`, `ak_*`), the QP's table fields (`qpn`,
//! `peer_qpn`, `peer_ip`, `peer_port`, `rate`, `credit`, `local_ip`, from
//! `RxPlace`'s ACK read port, selected by `ak_qp`), and the output: an
//! AXI-Stream of the UDP payload (`m_ack_t*`, packed `tkeep`) with, held for
//! the frame, the addressing fields `m_ack_dst_ip`, `m_ack_src_port`,
//! `m_ack_dst_port` and `m_ack_ece`.

use rust_hdl::prelude::*;

use crate::helpers::hand_written;

use crate::icrc::crc_fn;

/// Bytes of an ACK datagram: base header, ACK extension, ICRC.
pub const ACK_LEN: usize = 32 + 64 + 4;
/// Wire version the ACKs carry (`metaroce_proto::VERSION`).
const ACK_VERSION: u8 = 1;
/// Opcode of an ACK (`metaroce_proto::Opcode::Ack`).
const ACK_OPCODE: u8 = 0x10;

/// `tkeep` of `n` packed bytes, in hex digits.
fn keep_hex(n: usize) -> String {
    let top = n % 4;
    let lead = (top != 0).then(|| format!("{:x}", (1u8 << top) - 1));
    lead.unwrap_or_default() + &"f".repeat(n / 4)
}

/// The ACK generator at `W`-bit beats (`B = W / 8` lanes).
#[derive(LogicBlock, Default)]
pub struct AckGen<const W: usize, const B: usize> {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub rst: Signal<In, Bit>,
    /// The NIC clock (ns): the ACK's timestamp.
    pub now: Signal<In, Bits<64>>,
    /// The tracker has an entry waiting.
    pub aq_valid: Signal<In, Bit>,
    /// Take it.
    pub aq_pop: Signal<Out, Bit>,
    /// A verdict event placed a packet with a payload this cycle (its DMA
    /// write is still to come).
    pub placed: Signal<In, Bit>,
    /// The DMA port finished a write this cycle (its last beat was taken).
    pub dma_done: Signal<In, Bit>,
    /// Its path.
    pub ak_path: Signal<In, Bits<6>>,
    /// Its QP still receives: send the ACK (else drop the entry).
    pub ak_live: Signal<In, Bit>,
    /// Cumulative path PSN.
    pub ak_cum: Signal<In, Bits<32>>,
    /// SACK bitmap.
    pub ak_sack: Signal<In, Bits<256>>,
    /// Packets received on the path.
    pub ak_rx: Signal<In, Bits<32>>,
    /// CE-marked packets received on the path.
    pub ak_ce: Signal<In, Bits<32>>,
    /// Echo timestamp.
    pub ak_ts: Signal<In, Bits<64>>,
    /// Reply port (the ACK's UDP source port).
    pub ak_port: Signal<In, Bits<16>>,
    /// ECE flag.
    pub ak_ece: Signal<In, Bit>,
    /// Connection cumulative PSN.
    pub ak_conn_cum: Signal<In, Bits<32>>,
    /// The QP's QPN.
    pub qpn: Signal<In, Bits<32>>,
    /// The peer's QPN.
    pub peer_qpn: Signal<In, Bits<32>>,
    /// The peer's IP (IPv4 mapped into IPv6).
    pub peer_ip: Signal<In, Bits<128>>,
    /// The peer's UDP port.
    pub peer_port: Signal<In, Bits<16>>,
    /// Rate hint (Mbit/s).
    pub rate: Signal<In, Bits<32>>,
    /// Credit (packets).
    pub credit: Signal<In, Bits<32>>,
    /// The local IP.
    pub local_ip: Signal<In, Bits<128>>,
    /// ACK datagram beats, lane order.
    pub m_ack_tdata: Signal<Out, Bits<W>>,
    /// Byte enables (packed).
    pub m_ack_tkeep: Signal<Out, Bits<B>>,
    /// Beat valid.
    pub m_ack_tvalid: Signal<Out, Bit>,
    /// The consumer takes the beat.
    pub m_ack_tready: Signal<In, Bit>,
    /// Last beat of the datagram.
    pub m_ack_tlast: Signal<Out, Bit>,
    /// Destination IP (the peer).
    pub m_ack_dst_ip: Signal<Out, Bits<128>>,
    /// UDP source port (the acknowledged path's reply port).
    pub m_ack_src_port: Signal<Out, Bits<16>>,
    /// UDP destination port (the peer's).
    pub m_ack_dst_port: Signal<Out, Bits<16>>,
    /// The ACK carries ECE.
    pub m_ack_ece: Signal<Out, Bit>,
}

impl<const W: usize, const B: usize> Logic for AckGen<W, B> {
    /// No rust-hdl model: verified under Verilator only.
    fn update(&mut self) {}

    fn connect(&mut self) {
        assert_eq!(W, 8 * B, "AckGen: W must be 8 * B");
        self.aq_pop.connect();
        self.m_ack_tdata.connect();
        self.m_ack_tkeep.connect();
        self.m_ack_tvalid.connect();
        self.m_ack_tlast.connect();
        self.m_ack_dst_ip.connect();
        self.m_ack_src_port.connect();
        self.m_ack_dst_port.connect();
        self.m_ack_ece.connect();
    }

    fn hdl(&self) -> Verilog {
        let beats = ACK_LEN.div_ceil(B);
        let last_bytes = ACK_LEN - (beats - 1) * B;
        hand_written(format!(
            include_str!("ack_gen.v.in"),
            // The pseudo-header (40 bytes) and the datagram before its ICRC.
            CRC_FN = crc_fn("ack_icrc", 40 + ACK_LEN - 4),
            W = W,
            B = B,
            FBITS = beats * W,
            FPAD = beats * W - 8 * ACK_LEN,
            NBM1 = beats - 1,
            LASTKEEP = keep_hex(last_bytes),
            VERSION = ACK_VERSION,
            OPCODE = ACK_OPCODE,
            UDP_LEN = 8 + ACK_LEN,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keep_of_the_last_beat() {
        assert_eq!(keep_hex(4), "f");
        assert_eq!(keep_hex(36), "fffffffff");
        assert_eq!(keep_hex(6), "3f");
    }
}

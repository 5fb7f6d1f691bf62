//! The parsed meaning of a datagram and its emission.

use zerocopy::IntoBytes;

use crate::header::{AckHeader, BaseHeader, CmHeader, MsgHeader, MultiAckHeader, NackHeader};
use crate::icrc::PseudoHeader;
use crate::{BASE_LEN, Error, Flags, ICRC_LEN, NackReason, Opcode, Packet, Result, Sack, VERSION};

/// Parsed message extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MsgRepr {
    /// Message sequence number within the stream.
    pub msn: u32,
    /// Index of the posted receive this message consumes.
    pub recv_idx: u32,
    /// Total message length.
    pub msg_len: u32,
    /// Offset of this packet's payload in the message.
    pub offset: u32,
    /// Receiver address of this packet's first byte (WRITE), or read start (READ_REQ).
    pub remote_va: u64,
    /// Remote key.
    pub rkey: u32,
    /// Immediate data (WRITE_IMM, SEND_IMM); a READ_REQ's `resp_psn`: the
    /// requester's receive `conn_cum`, where a responder that has not sent yet
    /// starts (spec §3.4, §9.1).
    pub imm: u32,
}

/// Parsed ACK extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AckRepr {
    /// Next connection PSN not yet accepted.
    pub conn_cum: u32,
    /// Next path PSN not yet received on the acknowledged path.
    pub path_cum: u32,
    /// Received path PSNs above `path_cum`.
    pub sack: Sack,
    /// Echoed timestamp.
    pub echo_ts: u64,
    /// CE-marked packets received on the path (wrapping).
    pub ce_count: u32,
    /// Fair-share rate hint in Mbit/s (0: none).
    pub rate_hint: u32,
    /// Packets allowed beyond `conn_cum`.
    pub credit: u32,
    /// Packets received on the path (wrapping).
    pub rx_count: u32,
}

/// Parsed MULTI_ACK extension: the connection part shared by its path
/// entries (spec §3.11; the entries are read with [`crate::ack_entries`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MultiAckRepr {
    /// Next connection PSN not yet accepted.
    pub conn_cum: u32,
    /// Packets allowed beyond `conn_cum`.
    pub credit: u32,
    /// Fair-share rate hint in Mbit/s (0: none).
    pub rate_hint: u32,
    /// Number of path entries, 1..=64.
    pub count: u8,
}

/// Parsed NACK extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NackRepr {
    /// Why the packet was rejected.
    pub reason: NackReason,
    /// Connection PSN of the rejected packet.
    pub conn_psn: u32,
    /// Message of the rejected packet.
    pub msn: u32,
    /// Reason-specific detail (RNR: delay in µs).
    pub detail: u32,
}

/// Parsed connection-management extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CmRepr {
    /// Initial connection PSN.
    pub initial_psn: u32,
    /// Paths the sender will use.
    pub paths: u16,
    /// Streams.
    pub streams: u16,
    /// Largest payload per packet.
    pub mtu: u32,
    /// Receive window in packets.
    pub credit: u32,
    /// Line rate in Mbit/s.
    pub rate_mbps: u32,
}

/// The opcode-specific part of a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ext {
    /// PROBE carries no extension.
    None,
    /// Data and READ opcodes.
    Msg(MsgRepr),
    /// ACK.
    Ack(AckRepr),
    /// MULTI_ACK (its connection part).
    MultiAck(MultiAckRepr),
    /// NACK.
    Nack(NackRepr),
    /// CONNECT, CONNECT_ACK, DISCONNECT.
    Cm(CmRepr),
}

/// A packet's headers, parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repr {
    /// What the packet is.
    pub opcode: Opcode,
    /// Flag bits.
    pub flags: Flags,
    /// Destination QP number.
    pub dst_qpn: u32,
    /// Source QP number.
    pub src_qpn: u32,
    /// Stream id.
    pub stream: u16,
    /// Path index (acknowledged path on an ACK).
    pub path: u16,
    /// Connection PSN.
    pub conn_psn: u32,
    /// Path PSN.
    pub path_psn: u32,
    /// Send timestamp, ns.
    pub timestamp: u64,
    /// Opcode-specific extension.
    pub ext: Ext,
}

impl Repr {
    /// Parses the headers of a packet that passed [`Packet::check_len`].
    pub fn parse<T: AsRef<[u8]>>(packet: &Packet<T>) -> Result<Repr> {
        packet.check_len()?;
        let base = packet.base();
        let opcode = packet.opcode()?;
        let ext = match opcode {
            Opcode::Probe => Ext::None,
            Opcode::Ack => Ext::Ack(parse_ack(packet.ack().ok_or(Error::BadField("ACK"))?)),
            Opcode::Nack => Ext::Nack(parse_nack(packet.nack().ok_or(Error::BadField("NACK"))?)?),
            Opcode::MultiAck => {
                let head = parse_multi_ack(packet.multi_ack().ok_or(Error::BadField("MULTI_ACK"))?);
                crate::multi_ack::check_entries(packet.payload(), head.count)?;
                Ext::MultiAck(head)
            }
            Opcode::Connect | Opcode::ConnectAck | Opcode::Disconnect => {
                Ext::Cm(parse_cm(packet.cm().ok_or(Error::BadField("CM"))?))
            }
            _ => Ext::Msg(parse_msg(packet.msg().ok_or(Error::BadField("MSG"))?)),
        };
        Ok(Repr {
            opcode,
            flags: Flags::from_bits_truncate(base.flags.get()),
            dst_qpn: base.dst_qpn.get(),
            src_qpn: base.src_qpn.get(),
            stream: base.stream.get(),
            path: base.path.get(),
            conn_psn: base.conn_psn.get(),
            path_psn: base.path_psn.get(),
            timestamp: base.timestamp.get(),
            ext,
        })
    }

    /// Length of the base header plus extension.
    pub fn header_len(&self) -> usize {
        BASE_LEN + self.opcode.ext_len()
    }

    /// Datagram length for a payload of `payload_len` bytes (headers, payload
    /// or a MULTI_ACK's entries, ICRC).
    pub fn buffer_len(&self, payload_len: usize) -> usize {
        self.header_len() + payload_len + ICRC_LEN
    }

    /// Writes the headers into the start of `buf` for a payload of
    /// `payload_len` bytes and returns the datagram length. The payload area
    /// (`header_len()..header_len() + payload_len`) is left for the caller to
    /// fill, then [`Packet::fill_icrc`] seals the datagram.
    pub fn emit(&self, buf: &mut [u8], payload_len: usize) -> Result<usize> {
        if payload_len > 0 && !self.opcode.has_payload() && !self.opcode.has_entries() {
            return Err(Error::UnexpectedPayload(self.opcode as u8, payload_len));
        }
        let need = self.buffer_len(payload_len);
        if buf.len() < need {
            return Err(Error::BufferTooSmall {
                len: buf.len(),
                need,
            });
        }
        let base = BaseHeader {
            version: VERSION,
            opcode: self.opcode as u8,
            flags: self.flags.bits().into(),
            dst_qpn: self.dst_qpn.into(),
            src_qpn: self.src_qpn.into(),
            stream: self.stream.into(),
            path: self.path.into(),
            conn_psn: self.conn_psn.into(),
            path_psn: self.path_psn.into(),
            timestamp: self.timestamp.into(),
        };
        base.write_to_prefix(buf)
            .map_err(|_| Error::BadField("base"))?;
        let ext = &mut buf[BASE_LEN..BASE_LEN + self.opcode.ext_len()];
        let written = match (self.opcode, &self.ext) {
            (Opcode::Probe, Ext::None) => true,
            (Opcode::Ack, Ext::Ack(a)) => emit_ack(a).write_to(ext).is_ok(),
            (Opcode::Nack, Ext::Nack(n)) => emit_nack(n).write_to(ext).is_ok(),
            (Opcode::MultiAck, Ext::MultiAck(m)) => emit_multi_ack(m).write_to(ext).is_ok(),
            (Opcode::Connect | Opcode::ConnectAck | Opcode::Disconnect, Ext::Cm(c)) => {
                emit_cm(c).write_to(ext).is_ok()
            }
            (op, Ext::Msg(m)) if op.has_msg_ext() => emit_msg(m).write_to(ext).is_ok(),
            _ => false,
        };
        if !written {
            return Err(Error::BadField("extension does not match opcode"));
        }
        Ok(need)
    }

    /// The message extension, if any.
    pub fn msg(&self) -> Option<&MsgRepr> {
        match &self.ext {
            Ext::Msg(m) => Some(m),
            _ => None,
        }
    }
}

/// Checks and parses an untrusted datagram: lengths, version, opcode, ICRC,
/// then the headers. Returns the headers and the payload.
pub fn parse_datagram<'a>(datagram: &'a [u8], pseudo: &PseudoHeader) -> Result<(Repr, &'a [u8])> {
    let packet = Packet::new_checked(datagram)?;
    packet.verify_icrc(pseudo)?;
    let repr = Repr::parse(&packet)?;
    let range = packet.payload_range();
    Ok((repr, &datagram[range]))
}

fn parse_msg(h: &MsgHeader) -> MsgRepr {
    MsgRepr {
        msn: h.msn.get(),
        recv_idx: h.recv_idx.get(),
        msg_len: h.msg_len.get(),
        offset: h.offset.get(),
        remote_va: h.remote_va.get(),
        rkey: h.rkey.get(),
        imm: h.imm.get(),
    }
}

fn emit_msg(m: &MsgRepr) -> MsgHeader {
    MsgHeader {
        msn: m.msn.into(),
        recv_idx: m.recv_idx.into(),
        msg_len: m.msg_len.into(),
        offset: m.offset.into(),
        remote_va: m.remote_va.into(),
        rkey: m.rkey.into(),
        imm: m.imm.into(),
    }
}

fn parse_ack(h: &AckHeader) -> AckRepr {
    AckRepr {
        conn_cum: h.conn_cum.get(),
        path_cum: h.path_cum.get(),
        sack: Sack::from_bytes(&h.sack),
        echo_ts: h.echo_ts.get(),
        ce_count: h.ce_count.get(),
        rate_hint: h.rate_hint.get(),
        credit: h.credit.get(),
        rx_count: h.rx_count.get(),
    }
}

fn emit_ack(a: &AckRepr) -> AckHeader {
    AckHeader {
        conn_cum: a.conn_cum.into(),
        path_cum: a.path_cum.into(),
        sack: a.sack.to_bytes(),
        echo_ts: a.echo_ts.into(),
        ce_count: a.ce_count.into(),
        rate_hint: a.rate_hint.into(),
        credit: a.credit.into(),
        rx_count: a.rx_count.into(),
    }
}

fn parse_multi_ack(h: &MultiAckHeader) -> MultiAckRepr {
    MultiAckRepr {
        conn_cum: h.conn_cum.get(),
        credit: h.credit.get(),
        rate_hint: h.rate_hint.get(),
        count: h.count,
    }
}

fn emit_multi_ack(m: &MultiAckRepr) -> MultiAckHeader {
    MultiAckHeader {
        conn_cum: m.conn_cum.into(),
        credit: m.credit.into(),
        rate_hint: m.rate_hint.into(),
        count: m.count,
        reserved: [0; 3],
    }
}

fn parse_nack(h: &NackHeader) -> Result<NackRepr> {
    Ok(NackRepr {
        reason: NackReason::try_from(h.reason)?,
        conn_psn: h.conn_psn.get(),
        msn: h.msn.get(),
        detail: h.detail.get(),
    })
}

fn emit_nack(n: &NackRepr) -> NackHeader {
    NackHeader {
        reason: n.reason as u8,
        reserved: [0; 3],
        conn_psn: n.conn_psn.into(),
        msn: n.msn.into(),
        detail: n.detail.into(),
    }
}

fn parse_cm(h: &CmHeader) -> CmRepr {
    CmRepr {
        initial_psn: h.initial_psn.get(),
        paths: h.paths.get(),
        streams: h.streams.get(),
        mtu: h.mtu.get(),
        credit: h.credit.get(),
        rate_mbps: h.rate_mbps.get(),
    }
}

fn emit_cm(c: &CmRepr) -> CmHeader {
    CmHeader {
        initial_psn: c.initial_psn.into(),
        paths: c.paths.into(),
        streams: c.streams.into(),
        mtu: c.mtu.into(),
        credit: c.credit.into(),
        rate_mbps: c.rate_mbps.into(),
        reserved: [0; 12],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::net::{IpAddr, Ipv4Addr};
    use proptest::prelude::*;

    fn pseudo() -> PseudoHeader {
        PseudoHeader::new(
            IpAddr::V4(Ipv4Addr::new(192, 0, 2, 1)),
            49152,
            IpAddr::V4(Ipv4Addr::new(192, 0, 2, 2)),
            crate::DEFAULT_UDP_PORT,
        )
    }

    /// A 4-byte WRITE: stream 1, path 3, conn PSN 0x100, path PSN 7,
    /// to 0x1000_0000 with rkey 0xabcd, payload "RDMA".
    static WRITE_BYTES: [u8; 72] = [
        0x01, 0x01, 0x00, 0x03, 0x00, 0x00, 0x00, 0x11, 0x00, 0x00, 0x00, 0x22, 0x00, 0x01, 0x00,
        0x03, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x03, 0xe8, // timestamp 1000
        0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0xab, 0xcd, 0x00, 0x00,
        0x00, 0x00, // msg ext
        b'R', b'D', b'M', b'A', 0, 0, 0, 0, // payload + ICRC placeholder
    ];

    fn write_repr() -> Repr {
        Repr {
            opcode: Opcode::Write,
            flags: Flags::FIRST | Flags::LAST,
            dst_qpn: 0x11,
            src_qpn: 0x22,
            stream: 1,
            path: 3,
            conn_psn: 0x100,
            path_psn: 7,
            timestamp: 1000,
            ext: Ext::Msg(MsgRepr {
                msn: 5,
                msg_len: 4,
                remote_va: 0x1000_0000,
                rkey: 0xabcd,
                ..MsgRepr::default()
            }),
        }
    }

    #[test]
    fn parses_a_write_from_bytes() {
        let mut bytes = WRITE_BYTES;
        Packet::new_unchecked(&mut bytes[..]).fill_icrc(&pseudo());
        let (repr, payload) = parse_datagram(&bytes, &pseudo()).unwrap();
        assert_eq!(repr, write_repr());
        assert_eq!(payload, b"RDMA");
    }

    #[test]
    fn emits_the_same_bytes() {
        let mut buf = [0u8; 72];
        let len = write_repr().emit(&mut buf, 4).unwrap();
        assert_eq!(len, 72);
        buf[64..68].copy_from_slice(b"RDMA");
        assert_eq!(buf[..68], WRITE_BYTES[..68]);
    }

    #[test]
    fn a_flipped_bit_or_a_rewritten_source_port_fails_the_icrc() {
        let mut bytes = WRITE_BYTES;
        Packet::new_unchecked(&mut bytes[..]).fill_icrc(&pseudo());
        let mut moved = pseudo();
        moved.src_port += 1;
        assert!(matches!(
            parse_datagram(&bytes, &moved),
            Err(Error::BadIcrc { .. })
        ));
        bytes[66] ^= 0x10;
        assert!(matches!(
            parse_datagram(&bytes, &pseudo()),
            Err(Error::BadIcrc { .. })
        ));
    }

    #[test]
    fn hostile_lengths_versions_and_opcodes_are_refused() {
        let p = pseudo();
        assert!(matches!(
            parse_datagram(&WRITE_BYTES[..35], &p),
            Err(Error::Truncated { .. })
        ));
        assert!(matches!(
            parse_datagram(&WRITE_BYTES[..60], &p),
            Err(Error::Truncated { .. })
        ));
        let mut v = WRITE_BYTES;
        v[0] = 2;
        assert_eq!(parse_datagram(&v, &p).unwrap_err(), Error::BadVersion(2));
        v[0] = 1;
        v[1] = 0x7f;
        assert_eq!(parse_datagram(&v, &p).unwrap_err(), Error::BadOpcode(0x7f));
        v[1] = Opcode::Probe as u8;
        assert!(matches!(
            parse_datagram(&v, &p),
            Err(Error::UnexpectedPayload(0x12, _))
        ));
    }

    #[test]
    fn emit_refuses_mismatched_extensions_and_small_buffers() {
        let mut r = write_repr();
        let mut buf = [0u8; 200];
        r.ext = Ext::None;
        assert!(matches!(r.emit(&mut buf, 4), Err(Error::BadField(_))));
        let r = write_repr();
        assert!(matches!(
            r.emit(&mut buf[..50], 4),
            Err(Error::BufferTooSmall { .. })
        ));
        let mut probe = write_repr();
        probe.opcode = Opcode::Probe;
        probe.ext = Ext::None;
        assert!(matches!(
            probe.emit(&mut buf, 1),
            Err(Error::UnexpectedPayload(..))
        ));
    }

    fn arb_ext(op: Opcode) -> BoxedStrategy<Ext> {
        match op {
            Opcode::Probe => Just(Ext::None).boxed(),
            Opcode::Ack => (any::<[u32; 7]>(), any::<u64>(), any::<[u8; 32]>())
                .prop_map(|(w, ts, sack)| {
                    Ext::Ack(AckRepr {
                        conn_cum: w[0],
                        path_cum: w[1],
                        sack: Sack::from_bytes(&sack),
                        echo_ts: ts,
                        ce_count: w[2],
                        rate_hint: w[3],
                        credit: w[4],
                        rx_count: w[5] ^ w[6],
                    })
                })
                .boxed(),
            // One entry (written by the round-trip test), as the payload.
            Opcode::MultiAck => any::<[u32; 3]>()
                .prop_map(|w| {
                    Ext::MultiAck(MultiAckRepr {
                        conn_cum: w[0],
                        credit: w[1],
                        rate_hint: w[2],
                        count: 1,
                    })
                })
                .boxed(),
            Opcode::Nack => (1u8..=4, any::<[u32; 3]>())
                .prop_map(|(r, w)| {
                    Ext::Nack(NackRepr {
                        reason: NackReason::try_from(r).unwrap(),
                        conn_psn: w[0],
                        msn: w[1],
                        detail: w[2],
                    })
                })
                .boxed(),
            Opcode::Connect | Opcode::ConnectAck | Opcode::Disconnect => {
                (any::<[u32; 4]>(), any::<[u16; 2]>())
                    .prop_map(|(w, h)| {
                        Ext::Cm(CmRepr {
                            initial_psn: w[0],
                            paths: h[0],
                            streams: h[1],
                            mtu: w[1],
                            credit: w[2],
                            rate_mbps: w[3],
                        })
                    })
                    .boxed()
            }
            _ => (any::<[u32; 6]>(), any::<u64>())
                .prop_map(|(w, va)| {
                    Ext::Msg(MsgRepr {
                        msn: w[0],
                        recv_idx: w[1],
                        msg_len: w[2],
                        offset: w[3],
                        remote_va: va,
                        rkey: w[4],
                        imm: w[5],
                    })
                })
                .boxed(),
        }
    }

    fn arb_repr() -> impl Strategy<Value = (Repr, usize)> {
        proptest::sample::select(&Opcode::ALL[..]).prop_flat_map(|op| {
            let payload = if op.has_payload() {
                0usize..300
            } else if op.has_entries() {
                crate::ENTRY_FIXED_LEN..crate::ENTRY_FIXED_LEN + 1
            } else {
                0usize..1
            };
            (
                arb_ext(op),
                any::<(u16, u32, u32, u16, u16, u32, u32, u64)>(),
                payload,
            )
                .prop_map(move |(ext, b, payload)| {
                    let repr = Repr {
                        opcode: op,
                        flags: Flags::from_bits_truncate(b.0),
                        dst_qpn: b.1,
                        src_qpn: b.2,
                        stream: b.3,
                        path: b.4,
                        conn_psn: b.5,
                        path_psn: b.6,
                        timestamp: b.7,
                        ext,
                    };
                    (repr, payload)
                })
        })
    }

    proptest! {
        #[test]
        fn emit_then_parse_round_trips_every_opcode((repr, payload_len) in arb_repr(), fill in any::<u8>()) {
            let mut buf = [0u8; 512];
            let len = repr.emit(&mut buf, payload_len).unwrap();
            let hdr = repr.header_len();
            buf[hdr..hdr + payload_len].fill(fill);
            if repr.opcode.has_entries() {
                let entry = crate::AckEntry { path: u16::from(fill % 64), ..Default::default() };
                entry.emit(&mut buf[hdr..]).unwrap();
            }
            let mut packet = Packet::new_unchecked(&mut buf[..len]);
            packet.fill_icrc(&pseudo());
            let (parsed, payload) = parse_datagram(&buf[..len], &pseudo()).unwrap();
            prop_assert_eq!(parsed, repr);
            prop_assert_eq!(payload.len(), payload_len);
            prop_assert!(repr.opcode.has_entries() || payload.iter().all(|&b| b == fill));
        }

        #[test]
        fn parse_never_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = parse_datagram(&bytes, &pseudo());
            if let Ok(packet) = Packet::new_checked(&bytes[..]) {
                let _ = Repr::parse(&packet);
                let _ = packet.payload();
            }
        }

        #[test]
        fn parse_never_panics_on_mutated_valid_packets((repr, payload_len) in arb_repr(), flips in proptest::collection::vec((0usize..400, any::<u8>()), 1..6), cut in 0usize..400) {
            let mut buf = [0u8; 512];
            let len = repr.emit(&mut buf, payload_len).unwrap();
            for (at, x) in flips { buf[at % len] ^= x; }
            let _ = parse_datagram(&buf[..len.min(cut.max(1))], &pseudo());
            let _ = parse_datagram(&buf[..len], &pseudo());
        }
    }
}

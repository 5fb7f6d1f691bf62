//! The RTL's ACKs against the engine's: fields, bytes, addressing and,
//! for the NIC top, the Ethernet/IP/UDP headers against `etherparse`.

use metaroce_firmware::Transmit;
use metaroce_proto::{Ext, Flags, Packet, Repr};

use crate::frame::ip_of;
use crate::rx_core::AckOut;
use crate::tx_build::Addresses;
use crate::tx_check::{ack_headers, field_at};

/// A big-endian field of an ACK's bytes (0 where it is short).
pub(super) fn be_field(bytes: &[u8], at: usize, len: usize) -> u64 {
    bytes
        .get(at..at + len)
        .map_or(0, |b| b.iter().fold(0, |v, &x| v << 8 | u64::from(x)))
}

/// An ACK's header and extension fields, by name, in wire order.
pub(super) fn ack_fields(bytes: &[u8]) -> Result<Vec<(&'static str, String)>, String> {
    let p = Packet::new_checked(bytes).map_err(|e| format!("{e:?}"))?;
    let r = Repr::parse(&p).map_err(|e| format!("{e:?}"))?;
    let Ext::Ack(a) = r.ext else {
        return Err(format!("not an ACK: {:?}", r.opcode));
    };
    Ok(vec![
        ("opcode", format!("{:?}", r.opcode)),
        ("flags", format!("{:?}", r.flags)),
        ("dst_qpn", format!("{:#x}", r.dst_qpn)),
        ("src_qpn", format!("{:#x}", r.src_qpn)),
        ("stream", r.stream.to_string()),
        ("path", r.path.to_string()),
        ("conn_psn", r.conn_psn.to_string()),
        ("path_psn", r.path_psn.to_string()),
        ("timestamp", r.timestamp.to_string()),
        ("conn_cum", a.conn_cum.to_string()),
        ("path_cum", a.path_cum.to_string()),
        ("sack", format!("{:?}", a.sack)),
        ("echo_ts", a.echo_ts.to_string()),
        ("ce_count", a.ce_count.to_string()),
        ("rate_hint", a.rate_hint.to_string()),
        ("credit", a.credit.to_string()),
        ("rx_count", a.rx_count.to_string()),
    ])
}

/// The first difference between the RTL's ACK and the engine's (`want`,
/// sent as `t`): a field, the bytes (the ICRC), the addressing, or, with
/// `frame` (the top's addresses; its local address must be of the ACK's
/// family), the frame's Ethernet/IP/UDP headers against `etherparse`'s
/// (IPv4 or IPv6 by the engine's destination; on IPv6 with the UDP
/// checksum, which is also recomputed by `etherparse` over the RTL's own
/// frame).
pub(super) fn ack_diff(
    rtl: &AckOut,
    t: &Transmit,
    want: &[u8],
    frame: Option<&Addresses>,
) -> Option<String> {
    let got = match ack_fields(&rtl.bytes) {
        Ok(f) => f,
        Err(e) => return Some(format!("RTL ACK unparsable ({e}): {:02x?}", rtl.bytes)),
    };
    let want_fields = ack_fields(want).expect("the engine's ACK parses");
    if let Some(((name, g), (_, w))) = got.iter().zip(&want_fields).find(|(a, b)| a != b) {
        return Some(format!("{name}: rtl {g}, engine {w}"));
    }
    if rtl.bytes != want {
        let at = rtl.bytes.iter().zip(want).position(|(a, b)| a != b);
        return Some(format!(
            "bytes: rtl {} B, engine {} B, first difference at {at:?} (ICRC at 96)",
            rtl.bytes.len(),
            want.len()
        ));
    }
    if let Some(a) = frame {
        let to = Addresses {
            peer_ip: t.dst_ip,
            dst_port: t.dst_port,
            ..*a
        };
        let ipv6 = t.dst_ip.is_ipv6();
        if ipv6 && let Some(d) = udp6_checksum_diff(rtl) {
            return Some(d);
        }
        let reference = ack_headers(&to, t.src_port, want, t.ecn_capable);
        if rtl.headers != reference {
            let at = rtl
                .headers
                .iter()
                .zip(&reference)
                .position(|(a, b)| a != b)
                .unwrap_or(rtl.headers.len().min(reference.len()));
            return Some(format!(
                "frame header byte {at} ({}): rtl {:02x?}, etherparse {:02x?}",
                field_at(at, ipv6, want.len(), 0),
                rtl.headers.get(at),
                reference.get(at)
            ));
        }
    }
    let ece = Flags::from_bits_truncate(be_field(want, 2, 2) as u16).contains(Flags::ECE);
    [
        (
            "dst_ip",
            ip_of(&rtl.dst_ip).to_string(),
            t.dst_ip.to_string(),
        ),
        ("src_port", rtl.src_port.to_string(), t.src_port.to_string()),
        ("dst_port", rtl.dst_port.to_string(), t.dst_port.to_string()),
        ("ece", rtl.ece.to_string(), ece.to_string()),
    ]
    .into_iter()
    .find(|(_, g, w)| g != w)
    .map(|(name, g, w)| format!("{name}: rtl {g}, engine {w}"))
}

/// The RTL's IPv6 ACK frame (`rtl.headers` + `rtl.bytes`) parsed by
/// `etherparse`, its UDP checksum field against the one `etherparse`
/// computes over the frame's own addresses, lengths, ports and payload:
/// `None` when they agree.
fn udp6_checksum_diff(rtl: &AckOut) -> Option<String> {
    let frame = [&rtl.headers[..], &rtl.bytes[..]].concat();
    let p = match etherparse::SlicedPacket::from_ethernet(&frame) {
        Ok(p) => p,
        Err(e) => return Some(format!("RTL ACK frame unparsable by etherparse: {e}")),
    };
    let (Some(etherparse::NetSlice::Ipv6(ip)), Some(etherparse::TransportSlice::Udp(udp))) =
        (&p.net, &p.transport)
    else {
        return Some("RTL ACK frame is not IPv6 + UDP".to_string());
    };
    let got = udp.checksum();
    match udp.to_header().calc_checksum_ipv6_raw(
        ip.header().source(),
        ip.header().destination(),
        udp.payload(),
    ) {
        Ok(want) if want == got => None,
        Ok(want) => Some(format!(
            "udp checksum: rtl {got:#06x}, etherparse over the RTL frame {want:#06x}"
        )),
        Err(e) => Some(format!("udp checksum: {e}")),
    }
}

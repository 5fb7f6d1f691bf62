//! Fuzzes the datagram parser (MULTI_ACK entries included): any byte string
//! must parse or fail cleanly, and whatever parses must emit back to the same
//! headers.
#![no_main]

use core::net::{IpAddr, Ipv6Addr};
use libfuzzer_sys::fuzz_target;
use metaroce_proto::{Packet, PseudoHeader, Repr, parse_datagram};

fuzz_target!(|data: &[u8]| {
    let pseudo = PseudoHeader::new(IpAddr::V6(Ipv6Addr::LOCALHOST), 49152, IpAddr::V6(Ipv6Addr::LOCALHOST), 4798);
    let _ = parse_datagram(data, &pseudo);
    if let Ok(packet) = Packet::new_checked(data) {
        if let Ok(repr) = Repr::parse(&packet) {
            let payload_len = packet.payload().len();
            let mut out = vec![0u8; repr.buffer_len(payload_len)];
            let len = repr.emit(&mut out, payload_len).expect("a parsed packet re-emits");
            // The payload (a MULTI_ACK's entries, which parsing checks) goes back as it was.
            let hdr = repr.header_len();
            out[hdr..hdr + payload_len].copy_from_slice(packet.payload());
            let reparsed = Repr::parse(&Packet::new_checked(&out[..len]).expect("re-emitted packet checks"));
            assert_eq!(reparsed, Ok(repr));
        }
    }
});

//! A multi-plane NIC tells the engine which ports can take a packet: data
//! goes only on paths whose entropy value maps to a ready port, and a QP whose
//! data is all for busy ports keeps its turn (spec §5.3).

mod support;

use metaroce_firmware::PortsReady;
use support::{Channel, Pair, write_wr};

#[test]
fn data_goes_only_to_ready_ports_and_waits_when_none_is() {
    let mut p = Pair::new(7, 8, Channel::default());
    // More than the paths on one port can carry at once.
    let wr = write_wr(&p, 1, support::MEM_BASE, 4 << 20);
    p.a.nic.post_send(p.a.qpn, wr).unwrap();
    let mut buf = vec![0u8; 8192];
    let now = p.now;
    // Four ports, only port 2 ready: every data packet leaves from it.
    let only_2 = PortsReady::new(4, 0b0100).unwrap();
    let mut sent = 0;
    while let Some(t) =
        p.a.nic
            .poll_transmit_on(now, &mut buf, &mut p.a.mem, only_2)
    {
        assert_eq!(
            t.src_port % 4,
            2,
            "a packet for busy port {}",
            t.src_port % 4
        );
        sent += 1;
    }
    assert!(sent > 0, "nothing went to the ready port");
    // No port ready: nothing goes, and the QP is not forgotten.
    let none = PortsReady::new(4, 0).unwrap();
    assert!(
        p.a.nic
            .poll_transmit_on(now, &mut buf, &mut p.a.mem, none)
            .is_none()
    );
    let others = PortsReady::new(4, 0b1011).unwrap();
    let t =
        p.a.nic
            .poll_transmit_on(now, &mut buf, &mut p.a.mem, others);
    let t = t.expect("the QP lost its turn while its ports were busy");
    assert_ne!(t.src_port % 4, 2);
}

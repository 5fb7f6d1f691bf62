//! The MAC ports: frames into MAC RX a beat a cycle (each kept until the
//! front end has decided on it, to check what the RTL hands up later), and
//! frames out of MAC TX collected whole.

use metaroce_firmware::RxMeta;

use super::{HwNic, LANES};
use crate::frame;

/// A frame the RTL is deciding on, kept to check what the RTL hands up:
/// its UDP payload and metadata (`None`: not a UDP datagram).
pub(super) type Held = Option<(Vec<u8>, RxMeta)>;

/// The UDP payload and metadata of an Ethernet frame, if it is one.
fn datagram_of(f: &[u8]) -> Held {
    frame::parse(f).map(|d| (d.payload.to_vec(), d.meta()))
}

impl HwNic {
    /// MAC RX: the next beat of the first waiting frame (in `beat`).
    pub(super) fn drive_mac_rx(&mut self, beat: &mut [u8; LANES]) {
        match self.rx_in.front() {
            Some(f) => {
                let n = (f.len() - self.rx_off).min(LANES);
                beat[..n].copy_from_slice(&f[self.rx_off..self.rx_off + n]);
                let last = self.rx_off + n == f.len();
                self.p.rx.offer(&mut self.sim, beat, n, last);
            }
            None => self.p.rx.idle(&mut self.sim),
        }
    }

    /// MAC RX's beat taken, the front end's decision on a frame (an
    /// accepted one is held for its verdict event), and MAC TX's beat
    /// (a finished frame pushed to `out`).
    pub(super) fn observe_mac(&mut self, out: &mut Vec<Vec<u8>>) {
        if let Some(f) = self.rx_in.front() {
            if self.p.rx.ready(&mut self.sim) {
                let n = (f.len() - self.rx_off).min(LANES);
                self.rx_off += n;
                if self.rx_off == f.len() {
                    let f = self.rx_in.pop_front().expect("frame");
                    self.rx_entered.push_back(f);
                    self.rx_off = 0;
                    self.counters.mac_rx_frames += 1;
                }
            }
        }
        if self.sim.get(self.p.eth_ev_valid) == 1 {
            let f = self.rx_entered.pop_front();
            if self.sim.get(self.p.eth_ev_reason) == 0 {
                self.held.push_back(f.as_deref().and_then(datagram_of));
            }
        }
        if self.p.tx.take(&mut self.sim, &mut self.tx_frame) == Some(true) {
            out.push(std::mem::take(&mut self.tx_frame));
            self.counters.mac_tx_frames += 1;
        }
    }
}

//! PARITY packets (spec §5.6, revision v0.1.5): after the last packet of
//! each group at the end of a WRITE or WRITE_IMM message, one packet whose
//! payload is the XOR of the group's payloads, so that the receiver
//! rebuilds one lost packet of the group as soon as the PARITY arrives,
//! instead of waiting a round trip for its loss to be found and resent.

use alloc::collections::VecDeque;

use metaroce_proto::Opcode;

use crate::counters::Stats;
use crate::ports::PortsReady;

use super::{DataPlan, Tx};

/// A group of consecutive packets of one message that a PARITY covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ParityGroup {
    /// The message's key.
    pub msg: u32,
    /// Conn PSN of the group's first packet.
    pub conn_psn: u32,
    /// Offset of the group's first packet in the message.
    pub offset: u32,
    /// Packets in the group, 2..=64.
    pub count: u16,
}

/// Largest number of packets one PARITY covers (spec §3.12).
pub const MAX_PARITY_GROUP: u16 = 64;

/// The sender's PARITY state.
#[derive(Debug, Default)]
pub(super) struct ParityQueue {
    /// The peer's latest ACK carried PARITY_OK.
    pub peer_ok: bool,
    /// Groups whose last packet went out, waiting for their PARITY.
    groups: VecDeque<ParityGroup>,
}

/// The group that the packet `index` of a message of `pkts` packets ends,
/// if a PARITY follows it: groups of `group` packets counted back from the
/// message's last packet, the last `groups` of them, each of at least two
/// packets. Returns (index of the group's first packet, packets in it).
pub(super) fn group_ending_at(
    index: u32,
    pkts: u32,
    group: u16,
    groups: u16,
) -> Option<(u32, u16)> {
    let group = u32::from(group.min(MAX_PARITY_GROUP));
    if group < 2 || index >= pkts {
        return None;
    }
    let span = pkts.min(group * u32::from(groups));
    let from_end = pkts - 1 - index;
    if from_end >= span || from_end % group != 0 {
        return None;
    }
    let count = (span - from_end).min(group);
    (count >= 2).then(|| (index + 1 - count, count as u16))
}

impl Tx {
    /// Notes whether the peer rebuilds from PARITY packets (the PARITY_OK
    /// flag of its latest ACK or MULTI_ACK).
    pub fn note_peer_parity(&mut self, ok: bool) {
        self.parity.peer_ok = ok;
    }

    /// After packet `psn` (at `offset` of message `key`) was cut for the
    /// first time: queues the PARITY of the group it ends, if any is due
    /// (the QP and its peer use PARITY, the fabric loses packets lately,
    /// no path is marked by ECN, the message is a WRITE or WRITE_IMM of at
    /// most `parity_group × parity_groups` packets, the engine builds its
    /// packets). Under ECN marks the losses are a congested queue's drops,
    /// and a PARITY would add to that queue.
    pub(super) fn after_cut(&mut self, key: u32, psn: u32, offset: u32) {
        if self.cfg.parity_group == 0
            || !self.parity.peer_ok
            || self.hardware_table
            || !self.loss.copies_wanted()
            || self.paths.any_marked()
        {
            return;
        }
        let m = self.store.msg(key);
        let pkts = m.msg_len().div_ceil(self.mtu).max(1);
        // Only messages the groups cover whole: a longer one's tail is a
        // small part of its time (and a bulk sender's next message reveals
        // the tail's losses in time).
        let span = u32::from(self.cfg.parity_group) * u32::from(self.cfg.parity_groups);
        if !matches!(m.opcode, Opcode::Write | Opcode::WriteImm) || pkts > span {
            return;
        }
        let index = offset / self.mtu;
        let Some((first, count)) =
            group_ending_at(index, pkts, self.cfg.parity_group, self.cfg.parity_groups)
        else {
            return;
        };
        self.parity.groups.push_back(ParityGroup {
            msg: key,
            conn_psn: psn.wrapping_sub(index - first),
            offset: first * self.mtu,
            count,
        });
    }

    /// The next PARITY, on a path that can take a packet of its length:
    /// sent after retransmissions and before new data. It takes a path PSN
    /// (acknowledged like a PROBE's: its loss resends nothing) and no conn
    /// PSN. A group whose packets the peer has all accepted is skipped.
    pub(super) fn poll_parity(
        &mut self,
        now: u64,
        stats: &mut Stats,
        ports: PortsReady,
    ) -> Option<DataPlan> {
        while let Some(&g) = self.parity.groups.front() {
            let last = g.conn_psn.wrapping_add(u32::from(g.count) - 1);
            if last.wrapping_sub(self.psns.peer_conn_cum) >= 1 << 31 {
                self.parity.groups.pop_front();
                continue;
            }
            let path = self.paths.choose(self.mtu, None, ports)?;
            self.parity.groups.pop_front();
            let rto = self.rto(path);
            let path_psn = self.paths[path].on_send_untracked(now, rto);
            self.paths.refresh(path);
            stats.parity_sent += 1;
            return Some(DataPlan {
                msg: g.msg,
                conn_psn: g.conn_psn,
                path: path as u16,
                path_psn,
                entropy: self.paths[path].entropy(),
                offset: g.offset,
                len: self.mtu,
                first: false,
                last: false,
                retransmission: false,
                parity: g.count,
            });
        }
        None
    }

    /// Forgets the PARITY packets not yet sent.
    pub(super) fn clear_parity(&mut self) {
        self.parity.groups.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn groups_are_counted_back_from_the_last_packet() {
        // 64 packets, groups of 32, two groups: PARITY after packets 31 and 63.
        assert_eq!(group_ending_at(63, 64, 32, 2), Some((32, 32)));
        assert_eq!(group_ending_at(31, 64, 32, 2), Some((0, 32)));
        assert_eq!(group_ending_at(30, 64, 32, 2), None);
        // 40 packets: the earlier group is cut short at the message start.
        assert_eq!(group_ending_at(39, 40, 32, 2), Some((8, 32)));
        assert_eq!(group_ending_at(7, 40, 32, 2), Some((0, 8)));
        // One group only: nothing before the last 32 packets.
        assert_eq!(group_ending_at(31, 64, 32, 1), None);
        // A one-packet message, or a group of one packet, gets none.
        assert_eq!(group_ending_at(0, 1, 32, 2), None);
        assert_eq!(group_ending_at(0, 33, 32, 2), None);
        assert_eq!(group_ending_at(5, 64, 1, 2), None);
    }

    proptest! {
        #[test]
        fn groups_tile_the_covered_tail(pkts in 1u32..300, group in 0u16..80, groups in 0u16..5) {
            let mut covered = 0u32;
            let mut next_first = None;
            for index in (0..pkts).rev() {
                if let Some((first, count)) = group_ending_at(index, pkts, group, groups) {
                    prop_assert!((2..=MAX_PARITY_GROUP).contains(&count));
                    prop_assert_eq!(first + u32::from(count) - 1, index);
                    // Groups do not overlap and follow each other.
                    if let Some(n) = next_first {
                        prop_assert_eq!(index + 1, n);
                    }
                    next_first = Some(first);
                    covered += u32::from(count);
                }
            }
            let g = u32::from(group.min(MAX_PARITY_GROUP));
            prop_assert!(covered <= pkts.min(g * u32::from(groups)));
        }
    }
}

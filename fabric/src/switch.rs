//! ECMP switch: forwards each packet to one of the equal-cost next hops
//! towards its destination host, chosen by a seeded hash of the 5-tuple
//! (source/destination IP, UDP source/destination port, protocol 17).
//!
//! The hash is a real 64-bit mix, so distinct source ports collide on the
//! same next hop with the birthday probability of a real fabric, and one
//! 5-tuple always maps to the same next hop (no reordering within a flow).

use crate::event::ComponentId;
use crate::packet::Packet;

/// IANA protocol number of UDP.
pub const IP_PROTOCOL_UDP: u8 = 17;

const PRIME_1: u64 = 0x9E37_79B1_85EB_CA87;
const PRIME_2: u64 = 0xC2B2_AE3D_27D4_EB4F;

/// Final avalanche of xxHash64.
fn avalanche(mut hash: u64) -> u64 {
    hash ^= hash >> 33;
    hash = hash.wrapping_mul(PRIME_2);
    hash ^= hash >> 29;
    hash = hash.wrapping_mul(0x1656_67B1_9E37_79F9);
    hash ^ (hash >> 32)
}

/// Seeded 64-bit hash of a UDP/IPv4 5-tuple (an xxHash64-style mix).
pub fn ecmp_hash(seed: u64, src_ip: u32, dst_ip: u32, src_port: u16, dst_port: u16) -> u64 {
    let addresses = (u64::from(src_ip) << 32) | u64::from(dst_ip);
    let ports =
        (u64::from(src_port) << 24) | (u64::from(dst_port) << 8) | u64::from(IP_PROTOCOL_UDP);
    let mut hash = seed.wrapping_add(PRIME_1);
    for lane in [addresses, ports] {
        hash ^= lane
            .wrapping_mul(PRIME_2)
            .rotate_left(31)
            .wrapping_mul(PRIME_1);
        hash = hash
            .rotate_left(27)
            .wrapping_mul(PRIME_1)
            .wrapping_add(PRIME_2);
    }
    avalanche(hash)
}

/// Maps a hash onto `0..choices` without modulo bias towards low indices.
pub fn pick_index(hash: u64, choices: usize) -> usize {
    ((u128::from(hash) * choices as u128) >> 64) as usize
}

/// A switch with a per-destination table of equal-cost next hops.
#[derive(Clone, Debug)]
pub struct EcmpSwitch {
    hash_seed: u64,
    /// For destination host `h`: `next_hops[route_start[h]..route_start[h+1]]`.
    route_start: Vec<u32>,
    next_hops: Vec<ComponentId>,
    unroutable: u64,
}

impl EcmpSwitch {
    /// A switch whose hash uses `hash_seed`; `routes[h]` lists the output
    /// queues of equal-cost next hops towards host `h`.
    pub fn new(hash_seed: u64, routes: &[Vec<ComponentId>]) -> Self {
        let mut route_start = Vec::with_capacity(routes.len() + 1);
        let mut next_hops = Vec::new();
        route_start.push(0);
        for hops in routes {
            next_hops.extend_from_slice(hops);
            route_start.push(next_hops.len() as u32);
        }
        Self {
            hash_seed,
            route_start,
            next_hops,
            unroutable: 0,
        }
    }

    /// Equal-cost next hops towards host index `dst`.
    pub fn next_hops(&self, dst: usize) -> &[ComponentId] {
        match (self.route_start.get(dst), self.route_start.get(dst + 1)) {
            (Some(&start), Some(&end)) => &self.next_hops[start as usize..end as usize],
            _ => &[],
        }
    }

    /// The next hop for `packet`, or `None` if its destination is unreachable.
    pub fn route(&mut self, packet: &Packet) -> Option<ComponentId> {
        let hops = self.next_hops(packet.dst.0 as usize);
        let choice = match hops.len() {
            0 => None,
            1 => Some(hops[0]),
            count => {
                let hash = ecmp_hash(
                    self.hash_seed,
                    packet.src.ipv4(),
                    packet.dst.ipv4(),
                    packet.src_port,
                    packet.dst_port,
                );
                Some(hops[pick_index(hash, count)])
            }
        };
        if choice.is_none() {
            self.unroutable += 1;
        }
        choice
    }

    /// Packets that had no route.
    pub fn unroutable(&self) -> u64 {
        self.unroutable
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_depends_on_every_field_and_seed() {
        let base = ecmp_hash(1, 10, 20, 49152, 4791);
        assert_ne!(base, ecmp_hash(2, 10, 20, 49152, 4791));
        assert_ne!(base, ecmp_hash(1, 11, 20, 49152, 4791));
        assert_ne!(base, ecmp_hash(1, 10, 21, 49152, 4791));
        assert_ne!(base, ecmp_hash(1, 10, 20, 49153, 4791));
        assert_ne!(base, ecmp_hash(1, 10, 20, 49152, 4792));
    }

    #[test]
    fn pick_index_stays_in_range() {
        for hash in [0, 1, u64::MAX / 3, u64::MAX] {
            assert!(pick_index(hash, 8) < 8);
        }
        assert_eq!(pick_index(u64::MAX, 8), 7);
    }
}

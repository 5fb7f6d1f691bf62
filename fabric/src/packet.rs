//! Packets and the packet pool.
//!
//! A [`Packet`] carries the metadata the fabric needs (hosts, UDP ports for
//! ECMP, ECN bits, wire size) plus either real bytes (`payload`, for the
//! sans-IO engine) or a small typed header (`header`, for the baselines).
//! Packets live in a [`PacketPool`] and are referred to by [`PacketId`];
//! a released slot keeps its byte buffer, so steady-state runs allocate
//! nothing per packet, and a transport writes its datagram straight into
//! the buffer ([`Packet::payload_buffer`]) instead of copying it there.
//! Which buffer a slot holds is the pool's business: it hands the buffers
//! a host just read through to the next packets written (see
//! [`PacketPool::release_read`]), so that a sender writes its datagram into
//! cached memory; packet handles and bytes stay as they would be.

/// Index of a host in the simulated network.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HostId(pub u32);

/// First IPv4 address handed to hosts (10.0.0.1 for host 0).
const HOST_IPV4_BASE: u32 = 0x0A00_0001;

impl HostId {
    /// The IPv4 address of this host: 10.0.0.1 + index.
    pub fn ipv4(self) -> u32 {
        HOST_IPV4_BASE.wrapping_add(self.0)
    }

    /// The host owning an IPv4 address handed out by [`HostId::ipv4`].
    pub fn from_ipv4(address: u32) -> Option<HostId> {
        address.checked_sub(HOST_IPV4_BASE).map(HostId)
    }
}

/// The two ECN bits of the IP header.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Ecn {
    /// Not ECN-capable transport (00).
    #[default]
    NotEct,
    /// ECN-capable transport, codepoint 0 (10).
    Ect0,
    /// ECN-capable transport, codepoint 1 (01).
    Ect1,
    /// Congestion experienced (11).
    Ce,
}

impl Ecn {
    /// Whether a switch may mark this packet CE instead of dropping it.
    pub fn is_capable(self) -> bool {
        self != Ecn::NotEct
    }
}

/// Operation carried by a baseline transport packet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum RdmaOpcode {
    /// RDMA WRITE data packet (`psn` is the data PSN).
    #[default]
    Write,
    /// Cumulative acknowledgement: every PSN below `ack_psn` was received.
    Ack,
    /// Go-back-N sequence-error NAK: resend from `ack_psn`.
    Nak,
    /// IRN selective NACK: cumulative `ack_psn` plus the out-of-order `psn`
    /// that triggered it.
    SelectiveNack,
    /// DCQCN congestion notification packet.
    Cnp,
}

/// Small typed header used by the baseline transports instead of bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct RdmaHeader {
    /// What the packet is.
    pub opcode: RdmaOpcode,
    /// Queue pair (connection) number, unique across the simulation.
    pub qpn: u32,
    /// Data PSN (WRITE) or selectively acknowledged PSN (SelectiveNack).
    pub psn: u32,
    /// Cumulative acknowledgement / NAK point (ACK, NAK, SelectiveNack).
    pub ack_psn: u32,
    /// Last packet of a message (WRITE only).
    pub last_of_message: bool,
}

/// One simulated packet (one cache line in the pool).
#[derive(Clone, Debug, Default)]
#[repr(align(64))]
pub struct Packet {
    /// Sending host.
    pub src: HostId,
    /// Destination host.
    pub dst: HostId,
    /// UDP source port: the ECMP entropy.
    pub src_port: u16,
    /// UDP destination port.
    pub dst_port: u16,
    /// IP ECN bits; switches may set them to CE.
    pub ecn: Ecn,
    /// Bytes on the wire, including headers, FCS, preamble and inter-frame gap.
    pub wire_bytes: u32,
    /// Typed header used by the baseline transports.
    pub header: RdmaHeader,
    /// Buffer of the real packet bytes (UDP payload) of byte-level
    /// transports, of which the first `payload_len` are the packet's; kept,
    /// with its stale bytes, across pool reuse. Empty for the baselines.
    buffer: Vec<u8>,
    /// Length of the payload in `buffer`.
    payload_len: u32,
    /// Background cross-traffic: discarded after crossing its hot link.
    pub is_background: bool,
}

impl Packet {
    /// Resets all metadata and empties the payload, keeping its buffer.
    fn reset(&mut self) {
        let buffer = std::mem::take(&mut self.buffer);
        *self = Packet {
            buffer,
            ..Packet::default()
        };
    }

    /// The real packet bytes (UDP payload); empty for the baselines.
    pub fn payload(&self) -> &[u8] {
        &self.buffer[..self.payload_len as usize]
    }

    /// The packet's byte buffer, at least `len` bytes, for a transport to
    /// write its datagram into; then [`Packet::set_payload_len`] says how
    /// many bytes it wrote. Bytes not written are stale: whatever an earlier
    /// packet left there (zero when the buffer grows).
    pub fn payload_buffer(&mut self, len: usize) -> &mut [u8] {
        if self.buffer.len() < len {
            self.buffer.resize(len, 0);
        }
        &mut self.buffer
    }

    /// Sets the payload to the first `len` bytes of the buffer (at most its
    /// length).
    pub fn set_payload_len(&mut self, len: usize) {
        let len = len.min(self.buffer.len());
        self.payload_len = u32::try_from(len).expect("a payload shorter than 4 GiB");
    }
}

/// Handle of a packet in a [`PacketPool`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PacketId(pub u32);

/// Payloads at least this long were read through by the host that
/// received them ([`PacketPool::release_read`]): their buffers are in the
/// CPU's cache.
const WARM_MIN_BYTES: u32 = 1024;

/// Warm buffers kept at most; older ones have left the cache anyway.
const WARM_BUFFERS: usize = 4;

/// A free-list pool of packets.
///
/// Besides the slots' own buffers it keeps spare byte buffers: *warm* ones,
/// whose bytes a host has just read (a received datagram, checked and
/// placed), and others. A fresh packet gets the warmest buffer, and gives
/// it back when its transport wrote only a short datagram (an ACK), so the
/// next long one (data, whose payload fills the buffer) is written into
/// memory in the CPU's cache instead of a buffer last touched a round trip
/// ago. Only which buffer holds a packet's bytes changes: packet handles
/// (and so the event trace) and the bytes themselves are the same.
#[derive(Debug, Default)]
pub struct PacketPool {
    slots: Vec<Packet>,
    free: Vec<PacketId>,
    allocated_total: u64,
    /// Warm buffers, the warmest last (at most [`WARM_BUFFERS`]).
    warm: Vec<Vec<u8>>,
    /// Other spare buffers.
    spare: Vec<Vec<u8>>,
    /// The packet holding a warm buffer since the last `alloc`, until it is
    /// written ([`PacketPool::written`]) or released.
    lent: Option<PacketId>,
}

impl PacketPool {
    /// Creates an empty pool.
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes a fresh packet with default metadata and an empty payload (in
    /// the warmest spare buffer, if there is one).
    pub fn alloc(&mut self) -> PacketId {
        self.allocated_total += 1;
        let id = match self.free.pop() {
            Some(id) => {
                self.slots[id.0 as usize].reset();
                id
            }
            None => {
                self.slots.push(Packet::default());
                PacketId((self.slots.len() - 1) as u32)
            }
        };
        self.lent = None;
        if let Some(warm) = self.warm.pop() {
            let slot = &mut self.slots[id.0 as usize];
            self.spare.push(std::mem::replace(&mut slot.buffer, warm));
            self.lent = Some(id);
        }
        id
    }

    /// After a transport wrote the packet `id` just allocated: a short
    /// datagram moves to a spare buffer and gives its warm one back for a
    /// long datagram to come.
    pub fn written(&mut self, id: PacketId) {
        let index = id.0 as usize;
        if self.lent.take() == Some(id) && self.slots[index].payload_len < WARM_MIN_BYTES {
            self.give_back_warm(index);
        }
    }

    /// Moves the short payload of slot `index` from its warm buffer into a
    /// spare one (when there is one), and keeps the warm buffer.
    fn give_back_warm(&mut self, index: usize) {
        let Some(mut other) = self.spare.pop() else {
            return;
        };
        let slot = &mut self.slots[index];
        let len = slot.payload_len as usize;
        if other.len() < len {
            other.resize(slot.buffer.len(), 0);
        }
        other[..len].copy_from_slice(&slot.buffer[..len]);
        let warm = std::mem::replace(&mut slot.buffer, other);
        self.push_warm(warm);
    }

    /// Returns a packet to the pool.
    pub fn release(&mut self, id: PacketId) {
        self.release_warm_if(id, false);
    }

    /// Returns a packet whose bytes were just read through (a datagram a
    /// host received) to the pool: a long payload's buffer is in the CPU's
    /// cache, so it becomes the next packet's.
    pub fn release_read(&mut self, id: PacketId) {
        let read_long = self.slots[id.0 as usize].payload_len >= WARM_MIN_BYTES;
        self.release_warm_if(id, read_long);
    }

    /// Frees `id`; its buffer goes to the warm ones when `warm` or when it
    /// is a warm buffer lent to a packet released unwritten (once, either
    /// way).
    fn release_warm_if(&mut self, id: PacketId, warm: bool) {
        self.free.push(id);
        let lent = self.lent == Some(id);
        if lent {
            self.lent = None;
        }
        if warm || lent {
            self.keep_warm(id);
        }
    }

    /// Moves the buffer of the free packet `id` to the warm ones, giving the
    /// packet a spare buffer instead.
    fn keep_warm(&mut self, id: PacketId) {
        let spare = self.spare.pop().unwrap_or_default();
        let slot = &mut self.slots[id.0 as usize];
        let warm = std::mem::replace(&mut slot.buffer, spare);
        self.push_warm(warm);
    }

    /// Adds the warmest buffer; the coldest becomes a plain spare when there
    /// are more than [`WARM_BUFFERS`].
    fn push_warm(&mut self, buffer: Vec<u8>) {
        self.warm.push(buffer);
        if self.warm.len() > WARM_BUFFERS {
            let coldest = self.warm.remove(0);
            self.spare.push(coldest);
        }
    }

    /// Reads a live packet.
    pub fn get(&self, id: PacketId) -> &Packet {
        &self.slots[id.0 as usize]
    }

    /// Modifies a live packet.
    pub fn get_mut(&mut self, id: PacketId) -> &mut Packet {
        &mut self.slots[id.0 as usize]
    }

    /// Asks the CPU to start loading packet `id`'s metadata into the cache,
    /// for an event due soon: a packet was last touched many events ago, so
    /// its first read would otherwise wait for memory. Changes nothing.
    pub fn prefetch(&self, id: PacketId) {
        if let Some(slot) = self.slots.get(id.0 as usize) {
            prefetch_line(std::ptr::from_ref(slot).cast());
        }
    }

    /// Asks the CPU to start loading the first bytes of packet `id` (a
    /// datagram's headers), for the next event. It reads the packet's
    /// metadata: best after a [`PacketPool::prefetch`] of it. Changes
    /// nothing.
    pub fn prefetch_bytes(&self, id: PacketId) {
        if let Some(slot) = self.slots.get(id.0 as usize) {
            prefetch_line(slot.buffer.as_ptr());
        }
    }

    /// Packets currently handed out.
    pub fn live(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    /// Slots ever created: the pool's high-water mark.
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// Number of `alloc` calls so far.
    pub fn allocated_total(&self) -> u64 {
        self.allocated_total
    }
}

/// Prefetches the cache line holding `address` (a hint: no effect on the
/// program's results, and none on targets without the instruction).
#[inline(always)]
fn prefetch_line(address: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: PREFETCHT0 is part of SSE, which every x86-64 CPU has; a
    // prefetch reads nothing the program sees and never faults, whatever the
    // address.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(address.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = address;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pool_reuses_slots_and_keeps_capacity() {
        let mut pool = PacketPool::new();
        let first = pool.alloc();
        pool.get_mut(first).payload_buffer(3)[..2].copy_from_slice(&[1, 2]);
        pool.get_mut(first).set_payload_len(2);
        assert_eq!(pool.get(first).payload(), &[1, 2]);
        pool.get_mut(first).wire_bytes = 99;
        pool.release(first);
        let second = pool.alloc();
        assert_eq!(first, second);
        assert!(pool.get(second).payload().is_empty());
        // The buffer is kept with its stale bytes.
        assert_eq!(pool.get_mut(second).payload_buffer(1), &[1, 2, 0]);
        assert_eq!(pool.get(second).wire_bytes, 0);
        assert_eq!(pool.capacity(), 1);
        assert_eq!(pool.live(), 1);
    }

    #[test]
    fn a_read_buffer_goes_to_the_next_packet_and_short_payloads_move_out() {
        let mut pool = PacketPool::new();
        let long = pool.alloc();
        pool.get_mut(long).payload_buffer(2000).fill(7);
        pool.get_mut(long).set_payload_len(2000);
        pool.written(long);
        let short = pool.alloc();
        pool.get_mut(short).payload_buffer(2000)[..3].copy_from_slice(&[1, 2, 3]);
        pool.get_mut(short).set_payload_len(3);
        pool.written(short);
        let read = pool.get(long).buffer.as_ptr();
        pool.release_read(long);
        // The next packet is the one released last, in the buffer just read.
        let next = pool.alloc();
        assert_eq!(next, long);
        assert_eq!(pool.get(next).buffer.as_ptr(), read);
        assert!(pool.get(next).payload().is_empty());
        // A short datagram written into it moves to another buffer, bytes
        // and length kept, and the read buffer goes to the packet after.
        pool.get_mut(next).payload_buffer(2000)[..2].copy_from_slice(&[9, 8]);
        pool.get_mut(next).set_payload_len(2);
        pool.written(next);
        assert_eq!(pool.get(next).payload(), &[9, 8]);
        assert_ne!(pool.get(next).buffer.as_ptr(), read);
        let after = pool.alloc();
        assert_eq!(pool.get(after).buffer.as_ptr(), read);
        // Released unwritten, it keeps the read buffer for the next one.
        pool.release(after);
        let again = pool.alloc();
        assert_eq!(again, after);
        assert_eq!(pool.get(again).buffer.as_ptr(), read);
        // Untouched: the short packet still in flight.
        assert_eq!(pool.get(short).payload(), &[1, 2, 3]);
        assert_eq!(pool.live(), 3);
    }

    #[test]
    fn host_addresses_round_trip() {
        let host = HostId(41);
        assert_eq!(HostId::from_ipv4(host.ipv4()), Some(host));
        assert_eq!(HostId::from_ipv4(1), None);
    }
}

//! The host side shared by the baselines: QP tables, control-packet queue,
//! per-QP pacing and DCQCN, round-robin among sending QPs. The reliability
//! logic is plugged in through [`Protocol`].

use std::collections::VecDeque;

use crate::baseline::dcqcn::{Dcqcn, DcqcnConfig};
use crate::baseline::{
    FlowSpec, Gate, MessageLayout, ROCE_UDP_PORT, ack_wire_bytes, cnp_wire_bytes, data_wire_bytes,
};
use crate::link::serialization_time;
use crate::packet::{Ecn, HostId, Packet, RdmaHeader, RdmaOpcode};
use crate::time::SimTime;
use crate::transport::{Transport, TransportStats};

/// What a responder sends back for a data packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reply {
    /// Cumulative ACK: every PSN below this was received.
    Ack(u32),
    /// Go-back-N NAK: resend from this PSN.
    Nak(u32),
    /// Selective NACK: cumulative ACK plus the out-of-order PSN received.
    SelectiveNack {
        /// Every PSN below this was received.
        cumulative: u32,
        /// The out-of-order PSN that triggered the NACK.
        psn: u32,
    },
}

/// Requester-side reliability of one QP.
pub trait SenderLogic {
    /// Whether a packet (new or retransmission) may go out now, window and
    /// recovery state permitting (pacing is handled by the NIC).
    fn can_send(&self) -> bool;
    /// Takes the next PSN to send; `true` if it is a retransmission.
    fn next_to_send(&mut self, now: SimTime) -> Option<(u32, bool)>;
    /// An ACK / NAK / selective NACK for this QP arrived.
    fn on_feedback(&mut self, now: SimTime, header: &RdmaHeader, stats: &mut TransportStats);
    /// Every PSN below this is acknowledged.
    fn cumulative_ack(&self) -> u32;
    /// Retransmission timer deadline.
    fn timer(&self) -> Option<SimTime>;
    /// The retransmission timer expired.
    fn on_timer(&mut self, now: SimTime, stats: &mut TransportStats);
    /// New (never sent) PSNs must stay below `limit`; retransmissions are
    /// not limited. Starts at `u32::MAX`.
    fn set_new_psn_limit(&mut self, limit: u32);
}

/// Responder-side reliability of one QP.
pub trait ReceiverLogic {
    /// A data packet arrived; returns the reply to send, if any.
    fn on_data(&mut self, psn: u32, last_of_message: bool) -> Option<Reply>;
    /// Every PSN below this has been received.
    fn delivered_psns(&self) -> u32;
}

/// A reliability protocol: makes the per-QP sender and receiver state.
pub trait Protocol {
    /// Requester state.
    type Sender: SenderLogic;
    /// Responder state.
    type Receiver: ReceiverLogic;
    /// Fresh requester state.
    fn new_sender(&self) -> Self::Sender;
    /// Fresh responder state.
    fn new_receiver(&self) -> Self::Receiver;
    /// Whether every data packet carries a RETH (IRN), or only the first of
    /// a message (RoCEv2).
    fn reth_on_every_packet(&self) -> bool;
}

/// Settings shared by both baselines.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NicConfig {
    /// Largest payload per packet.
    pub mtu_bytes: u32,
    /// NIC line rate: the pacing rate without congestion control.
    pub line_rate_bps: u64,
    /// DCQCN, or `None` for no congestion control.
    pub dcqcn: Option<DcqcnConfig>,
}

/// Timeouts in a row without progress after which a QP fails, as the
/// largest Verbs `retry_cnt` (7) allows.
pub const RETRY_CNT: u32 = 7;

struct SenderSlot<S> {
    flow: FlowSpec,
    layout: MessageLayout,
    logic: S,
    dcqcn: Option<Dcqcn>,
    next_send_at: SimTime,
    completed_messages: u64,
    /// When the first packet of each started, uncompleted message left.
    first_sent: VecDeque<SimTime>,
    /// Timeouts since the cumulative ACK last advanced.
    timeouts_in_a_row: u32,
    /// The QP exhausted its retries (Verbs: moved to ERR); it sends nothing.
    failed: bool,
}

struct ReceiverSlot<R> {
    peer: HostId,
    src_port: u16,
    layout: MessageLayout,
    logic: R,
    last_cnp_at: Option<SimTime>,
    delivered_messages: u64,
    flow_qpn: u32,
    /// Delivery time of every message (limited flows only).
    delivered_at: Option<Vec<SimTime>>,
}

#[derive(Clone, Copy, Debug)]
struct ControlPacket {
    dst: HostId,
    src_port: u16,
    header: RdmaHeader,
}

/// A baseline NIC on one host: all QPs it sends or receives on.
pub struct BaselineNic<P: Protocol> {
    protocol: P,
    config: NicConfig,
    senders: Vec<SenderSlot<P::Sender>>,
    sender_by_qpn: Vec<Option<u32>>,
    receivers: Vec<Option<ReceiverSlot<P::Receiver>>>,
    control: VecDeque<ControlPacket>,
    round_robin: usize,
    stats: TransportStats,
    latencies: Vec<SimTime>,
}

impl<P: Protocol> BaselineNic<P> {
    /// The NIC of `host`, owning the send side of every flow from `host`
    /// and the receive side of every flow to it.
    pub fn new(host: HostId, protocol: P, config: NicConfig, flows: &[FlowSpec]) -> Self {
        let table_len = flows.iter().map(|f| f.qpn as usize + 1).max().unwrap_or(0);
        let mut sender_by_qpn = vec![None; table_len];
        let mut receivers: Vec<Option<ReceiverSlot<P::Receiver>>> =
            (0..table_len).map(|_| None).collect();
        let mut senders = Vec::new();
        for flow in flows {
            if flow.src == host {
                sender_by_qpn[flow.qpn as usize] = Some(senders.len() as u32);
                let layout = MessageLayout::new(flow.message_bytes, config.mtu_bytes);
                let mut logic = protocol.new_sender();
                logic.set_new_psn_limit(layout.psns_of(flow.messages_allowed(0)));
                senders.push(SenderSlot {
                    flow: *flow,
                    layout,
                    logic,
                    dcqcn: config.dcqcn.map(Dcqcn::new),
                    next_send_at: flow.start,
                    completed_messages: 0,
                    first_sent: VecDeque::new(),
                    timeouts_in_a_row: 0,
                    failed: false,
                });
            }
            if flow.dst == host {
                receivers[flow.qpn as usize] = Some(ReceiverSlot {
                    peer: flow.src,
                    src_port: flow.src_port,
                    layout: MessageLayout::new(flow.message_bytes, config.mtu_bytes),
                    logic: protocol.new_receiver(),
                    last_cnp_at: None,
                    delivered_messages: 0,
                    flow_qpn: flow.qpn,
                    delivered_at: flow.message_limit.map(|_| Vec::new()),
                });
            }
        }
        Self {
            protocol,
            config,
            senders,
            sender_by_qpn,
            receivers,
            control: VecDeque::new(),
            round_robin: 0,
            stats: TransportStats::default(),
            latencies: Vec::new(),
        }
    }

    /// Current DCQCN rate of each sending QP (line rate without CC).
    pub fn sender_rates_bps(&self) -> Vec<u64> {
        self.senders
            .iter()
            .map(|slot| {
                slot.dcqcn
                    .as_ref()
                    .map_or(self.config.line_rate_bps, Dcqcn::rate_bps)
            })
            .collect()
    }

    fn on_data(&mut self, now: SimTime, packet: &Packet) {
        let header = packet.header;
        let Some(Some(slot)) = self.receivers.get_mut(header.qpn as usize) else {
            return;
        };
        if packet.ecn == Ecn::Ce
            && let Some(dcqcn) = self.config.dcqcn
            && slot
                .last_cnp_at
                .is_none_or(|last| now >= last + dcqcn.cnp_interval)
        {
            slot.last_cnp_at = Some(now);
            self.control.push_back(ControlPacket {
                dst: slot.peer,
                src_port: slot.src_port,
                header: RdmaHeader {
                    opcode: RdmaOpcode::Cnp,
                    qpn: header.qpn,
                    ..RdmaHeader::default()
                },
            });
        }
        let reply = slot.logic.on_data(header.psn, header.last_of_message);
        let (peer, src_port) = (slot.peer, slot.src_port);
        let delivered = slot.layout.messages_below(slot.logic.delivered_psns());
        if delivered > slot.delivered_messages {
            self.stats.delivered_messages += delivered - slot.delivered_messages;
            self.stats.last_delivery_at = now;
            if let Some(times) = slot.delivered_at.as_mut() {
                times.extend((slot.delivered_messages..delivered).map(|_| now));
            }
            slot.delivered_messages = delivered;
            let fewest_delivered = || {
                self.receivers
                    .iter()
                    .flatten()
                    .map(|slot| slot.delivered_messages)
                    .min()
                    .unwrap_or(0)
            };
            let mut fewest = None;
            for sender in &mut self.senders {
                let gate_delivered = match sender.flow.gate {
                    Some(Gate::AllInbound) => *fewest.get_or_insert_with(fewest_delivered),
                    Some(gate) if gate.flow() == Some(header.qpn) => delivered,
                    _ => continue,
                };
                let allowed = sender.flow.messages_allowed(gate_delivered);
                sender
                    .logic
                    .set_new_psn_limit(sender.layout.psns_of(allowed));
            }
        }
        let Some(reply) = reply else {
            return;
        };
        let (opcode, ack_psn, psn) = match reply {
            Reply::Ack(cumulative) => (RdmaOpcode::Ack, cumulative, 0),
            Reply::Nak(from) => (RdmaOpcode::Nak, from, 0),
            Reply::SelectiveNack { cumulative, psn } => {
                (RdmaOpcode::SelectiveNack, cumulative, psn)
            }
        };
        self.control.push_back(ControlPacket {
            dst: peer,
            src_port,
            header: RdmaHeader {
                opcode,
                qpn: header.qpn,
                psn,
                ack_psn,
                last_of_message: false,
            },
        });
    }

    fn sender_mut(&mut self, qpn: u32) -> Option<&mut SenderSlot<P::Sender>> {
        let index = (*self.sender_by_qpn.get(qpn as usize)?)?;
        self.senders.get_mut(index as usize)
    }
}

impl<P: Protocol> Transport for BaselineNic<P> {
    fn handle_packet(&mut self, now: SimTime, packet: &Packet) {
        let header = packet.header;
        match header.opcode {
            RdmaOpcode::Write => self.on_data(now, packet),
            RdmaOpcode::Cnp => {
                if let Some(slot) = self.sender_mut(header.qpn)
                    && let Some(dcqcn) = slot.dcqcn.as_mut()
                {
                    dcqcn.on_cnp(now);
                    self.stats.cnps_received += 1;
                }
            }
            RdmaOpcode::Ack | RdmaOpcode::Nak | RdmaOpcode::SelectiveNack => {
                let mut stats = self.stats;
                let latencies = &mut self.latencies;
                let index = self
                    .sender_by_qpn
                    .get(header.qpn as usize)
                    .copied()
                    .flatten();
                if let Some(slot) = index.and_then(|i| self.senders.get_mut(i as usize))
                    && !slot.failed
                {
                    let before = slot.logic.cumulative_ack();
                    slot.logic.on_feedback(now, &header, &mut stats);
                    if slot.logic.cumulative_ack() > before {
                        slot.timeouts_in_a_row = 0;
                    }
                    let completed = slot.layout.messages_below(slot.logic.cumulative_ack());
                    if completed > slot.completed_messages {
                        let newly = completed - slot.completed_messages;
                        slot.completed_messages = completed;
                        stats.completed_messages += newly;
                        stats.completed_bytes += newly * slot.layout.message_bytes();
                        for _ in 0..newly {
                            if let Some(sent) = slot.first_sent.pop_front() {
                                latencies.push(now - sent);
                            }
                        }
                    }
                }
                self.stats = stats;
            }
        }
    }

    fn poll_transmit(&mut self, now: SimTime, packet: &mut Packet) -> bool {
        if let Some(control) = self.control.pop_front() {
            packet.dst = control.dst;
            packet.src_port = control.src_port;
            packet.dst_port = ROCE_UDP_PORT;
            packet.ecn = Ecn::NotEct;
            packet.header = control.header;
            packet.wire_bytes = if control.header.opcode == RdmaOpcode::Cnp {
                cnp_wire_bytes()
            } else {
                ack_wire_bytes()
            };
            self.stats.control_packets_sent += 1;
            return true;
        }
        let count = self.senders.len();
        for step in 0..count {
            let index = (self.round_robin + step) % count;
            let slot = &mut self.senders[index];
            if slot.failed || now < slot.next_send_at || !slot.logic.can_send() {
                continue;
            }
            let Some((psn, retransmission)) = slot.logic.next_to_send(now) else {
                continue;
            };
            let payload = slot.layout.payload(psn);
            let with_reth = self.protocol.reth_on_every_packet() || slot.layout.is_first(psn);
            let wire_bytes = data_wire_bytes(payload, with_reth);
            packet.dst = slot.flow.dst;
            packet.src_port = slot.flow.src_port;
            packet.dst_port = ROCE_UDP_PORT;
            packet.ecn = Ecn::Ect0;
            packet.wire_bytes = wire_bytes;
            packet.header = RdmaHeader {
                opcode: RdmaOpcode::Write,
                qpn: slot.flow.qpn,
                psn,
                ack_psn: 0,
                last_of_message: slot.layout.is_last(psn),
            };
            let rate = match slot.dcqcn.as_mut() {
                Some(dcqcn) => {
                    dcqcn.on_sent(u64::from(wire_bytes));
                    dcqcn.rate_bps()
                }
                None => self.config.line_rate_bps,
            };
            slot.next_send_at = now + serialization_time(wire_bytes, rate);
            self.stats.data_packets_sent += 1;
            if retransmission {
                self.stats.retransmitted_packets += 1;
            } else if slot.layout.is_first(psn) {
                slot.first_sent.push_back(now);
            }
            self.round_robin = index + 1;
            return true;
        }
        false
    }

    fn poll_timeout(&mut self) -> Option<SimTime> {
        let mut earliest: Option<SimTime> = None;
        let mut consider = |time: Option<SimTime>| {
            if let Some(time) = time {
                earliest = Some(earliest.map_or(time, |e| e.min(time)));
            }
        };
        for slot in self.senders.iter().filter(|slot| !slot.failed) {
            if slot.logic.can_send() {
                consider(Some(slot.next_send_at));
            }
            consider(slot.logic.timer());
            consider(slot.dcqcn.as_ref().and_then(Dcqcn::next_timer));
        }
        earliest
    }

    fn handle_timeout(&mut self, now: SimTime) {
        let mut stats = self.stats;
        for slot in self.senders.iter_mut().filter(|slot| !slot.failed) {
            if slot.logic.timer().is_some_and(|due| due <= now) {
                let before = stats.timeouts;
                slot.logic.on_timer(now, &mut stats);
                if stats.timeouts > before {
                    slot.timeouts_in_a_row += 1;
                    if slot.timeouts_in_a_row > RETRY_CNT {
                        slot.failed = true;
                        stats.qp_errors += 1;
                    }
                }
            }
            if let Some(dcqcn) = slot.dcqcn.as_mut()
                && dcqcn.next_timer().is_some_and(|due| due <= now)
            {
                dcqcn.on_timers(now);
            }
        }
        self.stats = stats;
    }

    fn stats(&self) -> TransportStats {
        TransportStats {
            packets_acked: self
                .senders
                .iter()
                .map(|slot| u64::from(slot.logic.cumulative_ack()))
                .sum(),
            ..self.stats
        }
    }

    fn message_latencies(&self) -> &[SimTime] {
        &self.latencies
    }

    fn flow_delivery_times(&self) -> Vec<(u32, Vec<SimTime>)> {
        self.receivers
            .iter()
            .flatten()
            .filter_map(|slot| Some((slot.flow_qpn, slot.delivered_at.clone()?)))
            .collect()
    }

    fn flow_acked_packets(&self) -> Vec<(u32, u64)> {
        self.senders
            .iter()
            .map(|slot| (slot.flow.qpn, u64::from(slot.logic.cumulative_ack())))
            .collect()
    }
}

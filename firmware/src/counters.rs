//! NIC-wide counters: every drop has a reason, and every reason a counter.

use metaroce_proto::Error as WireError;

macro_rules! counters {
    ($(#[$m:meta])* $name:ident { $($(#[$fm:meta])* $field:ident),* $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
        pub struct $name {
            $($(#[$fm])* pub $field: u64,)*
        }
        impl $name {
            /// Every counter with its name, in declaration order.
            pub fn iter(&self) -> impl Iterator<Item = (&'static str, u64)> {
                [$((stringify!($field), self.$field)),*].into_iter()
            }
            /// Sum of all counters.
            pub fn total(&self) -> u64 {
                0 $(+ self.$field)*
            }
            /// What each counter grew by since `earlier` (a snapshot of the same counters).
            pub fn since(&self, earlier: &Self) -> Self {
                $name { $($field: self.$field.wrapping_sub(earlier.$field)),* }
            }
        }
    };
}

counters! {
    /// Received packets dropped, by reason. Nothing dropped is ever placed.
    Drops {
        /// Shorter than its headers.
        truncated,
        /// Unknown wire version.
        bad_version,
        /// Unknown opcode.
        bad_opcode,
        /// Payload on an opcode that has none, or an invalid field.
        bad_format,
        /// ICRC mismatch.
        bad_icrc,
        /// No QP with the destination QPN (or a destroyed, lingering QP: anything but a
        /// retransmission it re-acknowledges).
        unknown_qp,
        /// QP not in a state that receives (or a packet type the QP does not expect).
        qp_state,
        /// Source QPN, address or port is not the connected peer.
        wrong_peer,
        /// Path id beyond the supported paths.
        bad_path,
        /// Path PSN outside the 256-packet receive window.
        path_window,
        /// Connection PSN outside the receive window.
        conn_window,
        /// Payload longer than the MTU, or beyond the message length.
        bad_length,
        /// Bad rkey, address outside the region, or access not permitted (NACKed).
        remote_access,
        /// Invalid request, e.g. message longer than the receive buffer (NACKed).
        invalid_request,
        /// No posted receive (NACKed RNR).
        receiver_not_ready,
        /// Stream id beyond the QP's streams.
        bad_stream,
        /// READ response for no outstanding READ, or one that does not fit it.
        unexpected_response,
        /// ACK that cannot be true: it reports path PSNs never sent, a
        /// `conn_cum` beyond what was sent, or more new CE marks than new
        /// packets (spec §5.5 step 0).
        bad_ack,
        /// MSN too far ahead of the stream's oldest incomplete message.
        msn_window,
        /// DISCONNECT without the connection's current PSNs (spec §9.4).
        bad_disconnect,
        /// Authenticated QP: no auth trailer, or a wrong tag (spec §11.2).
        bad_tag,
        /// Authenticated QP: a sequence number already seen or too old.
        replayed,
    }
}

counters! {
    /// Transport events of a NIC, summed over its connections.
    Stats {
        /// Data packets sent (first transmissions).
        data_sent,
        /// Retransmissions sent.
        retransmits,
        /// Tail copies sent: second copies of a message's newest
        /// unacknowledged packets, sent while the sender had nothing else
        /// to send (spec §5.6); not counted in `retransmits`.
        tail_copies,
        /// PARITY packets sent (spec §5.6); not counted in `data_sent`.
        parity_sent,
        /// Lost packets rebuilt from a PARITY packet and the rest of its
        /// group, without waiting for a retransmission.
        parity_rebuilt,
        /// PARITY packets received that rebuilt nothing (their group was
        /// whole, or missed more than one packet).
        parity_unused,
        /// Packets declared lost from a SACK gap (queued for retransmission;
        /// one later found delivered is not re-sent).
        sack_losses,
        /// Packets declared lost by a path timeout.
        timeout_losses,
        /// Packets forced back into the retransmission queue by the
        /// connection timer (the packet holding up the peer's cumulative
        /// point, spec §5.12).
        conn_timeout_losses,
        /// Packets declared lost by time-based (RACK) detection: a later
        /// packet was delivered and this one is overdue.
        rack_losses,
        /// ACKs sent.
        acks_sent,
        /// NACKs sent.
        nacks_sent,
        /// PROBEs sent.
        probes_sent,
        /// Data packets received and accepted.
        data_accepted,
        /// Duplicate data packets received (not placed again).
        duplicates,
        /// CE-marked packets received.
        ce_received,
        /// Paths moved to a new entropy value.
        repaths,
        /// Paths quarantined after a timeout.
        quarantines,
        /// Path RTO expiries spared because the whole connection was
        /// silent (spec §5.7): a PROBE on the same route, nothing declared
        /// lost, no quarantine; not counted in `quarantines`.
        spared_expiries,
        /// Bytes placed into memory (by the engine, or by the RTL on the
        /// hardware data path).
        bytes_placed,
        /// Hardware data path: verdict events the engine's own rules
        /// disagreed with (a packet the RTL placed that the engine would
        /// not have accepted, or the other way round).
        hw_disagreements,
    }
}

impl Drops {
    /// Counts a parse failure under its reason.
    pub fn count_wire_error(&mut self, e: &WireError) {
        match e {
            WireError::Truncated { .. } => self.truncated += 1,
            WireError::BadVersion(_) => self.bad_version += 1,
            WireError::BadOpcode(_) => self.bad_opcode += 1,
            WireError::BadIcrc { .. } => self.bad_icrc += 1,
            WireError::UnexpectedPayload(..)
            | WireError::BadField(_)
            | WireError::BufferTooSmall { .. } => self.bad_format += 1,
        }
    }
}

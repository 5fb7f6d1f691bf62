//! The cases of the suite, each citing the spec section it checks.

pub mod hostile;
pub mod rx;
pub mod tx;

use crate::Case;
use crate::vectors;

macro_rules! case {
    ($module:ident :: $f:ident, $spec:expr, $title:expr) => {
        Case {
            name: stringify!($f),
            spec: $spec,
            title: $title,
            run: $module::$f,
        }
    };
}

/// Every case, in report order.
pub fn all() -> Vec<Case> {
    vec![
        // Framing, ICRC and validation order (§2.6, §4, §6.2).
        case!(
            hostile::bad_icrc_dropped,
            "4, 6.2 step 6",
            "a flipped ICRC bit: dropped silently"
        ),
        case!(
            hostile::icrc_covers_source_port,
            "4",
            "the UDP source port is covered by the ICRC"
        ),
        case!(
            hostile::icrc_without_pseudo_header_refused,
            "4",
            "an ICRC without the pseudo-header is wrong"
        ),
        case!(
            hostile::corrupted_payload_dropped,
            "4, 8",
            "a corrupted payload byte: dropped as loss"
        ),
        case!(
            hostile::truncated_below_base_header,
            "2.6, 6.2 step 1",
            "35-byte datagram: truncated"
        ),
        case!(
            hostile::truncated_extension,
            "2.6, 6.2 step 4",
            "extension cut short: truncated"
        ),
        case!(
            hostile::unknown_version_dropped,
            "1.4, 6.2 step 2",
            "version 2: dropped, no reply"
        ),
        case!(
            hostile::unknown_opcode_dropped,
            "3.3, 6.2 step 3",
            "opcode 0x07: dropped"
        ),
        case!(
            hostile::payload_on_probe_dropped,
            "2.6, 6.2 step 5",
            "PROBE with payload: bad_format"
        ),
        case!(
            hostile::payload_on_read_request_dropped,
            "2.6, 6.2 step 5",
            "READ_REQ with payload: bad_format"
        ),
        case!(
            hostile::nack_with_unknown_reason_dropped,
            "3.6, 6.2 step 7",
            "NACK reason 9: dropped"
        ),
        case!(
            hostile::unknown_qp_dropped,
            "6.2 step 8",
            "unknown dst_qpn: dropped"
        ),
        case!(
            hostile::wrong_peer_qpn_dropped,
            "6.2 step 10",
            "wrong src_qpn: dropped"
        ),
        case!(
            hostile::wrong_peer_address_dropped,
            "6.2 step 10, 11",
            "right QPNs from another address: dropped"
        ),
        case!(hostile::path_64_dropped, "6.2 step 11", "path 64: dropped"),
        case!(
            hostile::bad_stream_dropped,
            "6.2 step 13",
            "stream beyond the QP's streams: dropped"
        ),
        case!(
            hostile::conn_psn_beyond_window_dropped,
            "6.2 step 14, 6.5",
            "conn PSN at conn_cum + W: dropped, not marked"
        ),
        case!(
            hostile::conn_psn_far_future_dropped,
            "6.2 step 14",
            "conn PSN 2^31-1 ahead: dropped, not marked"
        ),
        case!(
            hostile::stale_conn_psn_not_placed,
            "6.2 step 18, 6.5",
            "stale conn PSN: acknowledged, not placed"
        ),
        case!(
            hostile::payload_over_mtu_dropped,
            "2.6, 6.2 step 15",
            "oversized packet (payload > mtu): dropped"
        ),
        case!(
            hostile::payload_beyond_msg_len_dropped,
            "6.2 step 15",
            "offset + payload > msg_len: dropped"
        ),
        case!(
            hostile::offset_overflow_dropped,
            "6.2 step 15, 11",
            "offset + payload overflowing 32 bits: dropped"
        ),
        case!(
            hostile::read_request_with_offset_dropped,
            "6.2 step 15",
            "READ_REQ with offset != 0: dropped"
        ),
        case!(
            hostile::inconsistent_message_dropped,
            "6.2 step 16",
            "msg_len differing within a message: dropped"
        ),
        case!(
            hostile::retired_msn_dropped,
            "6.2 step 16",
            "a new packet of a retired MSN: dropped"
        ),
        case!(
            hostile::path_psn_far_future_dropped,
            "6.2 step 17, 6.3",
            "path PSN 2^30 ahead: dropped"
        ),
        case!(
            hostile::path_psn_at_window_edge_accepted,
            "6.3",
            "path PSN 2^30-1 ahead: accepted, window slides"
        ),
        case!(
            hostile::malformed_parity_dropped,
            "3.12, 6.10",
            "PARITY of one packet, or past its message: dropped, not marked"
        ),
        case!(
            hostile::no_reply_to_control_packets,
            "6.4, 9.4",
            "no reply to ACK, NACK, or a DISCONNECT from another address"
        ),
        // The receiver (§3.5, §6).
        case!(
            rx::write_placed_and_accepted,
            "6.6",
            "WRITE placed at remote_va and accepted"
        ),
        case!(rx::ack_fields, "3.5, 6.4", "every field of an ACK"),
        case!(
            rx::ack_source_port_follows_latest_packet,
            "2.3",
            "ACK source port = latest packet's source port"
        ),
        case!(
            rx::replies_go_to_configured_port,
            "2.2, 2.3",
            "any source port accepted; replies to the configured port"
        ),
        case!(
            rx::sack_bitmap_exact,
            "3.5, 6.3",
            "the exact SACK bitmap of the spec example"
        ),
        case!(
            rx::path_cum_advances_over_marked,
            "6.3",
            "path_cum advances over marked PSNs"
        ),
        case!(
            rx::paths_are_tracked_independently,
            "1.2, 6.1",
            "per-path PSNs tracked independently"
        ),
        case!(
            rx::out_of_order_cross_path_message,
            "6.5, 6.6",
            "out-of-order, cross-path message placed"
        ),
        case!(
            rx::duplicate_not_placed_twice,
            "6.3, 6.5",
            "duplicates acknowledged, placed once"
        ),
        case!(
            rx::conn_cum_stops_at_gap,
            "6.5",
            "conn_cum stops at the first gap"
        ),
        case!(
            rx::echo_ts_is_the_largest,
            "3.5, 6.3",
            "echo_ts is the largest timestamp marked"
        ),
        case!(
            rx::ecn_echo,
            "2.4, 4, 6.3",
            "CE counted, ECE echoed once, CE packet accepted"
        ),
        case!(
            rx::probe_is_marked_and_acked,
            "3.7, 6.3",
            "PROBE marked and acknowledged"
        ),
        case!(
            rx::probe_without_conn_psn_ignored,
            "3.7, 6.3",
            "PROBE without the connection's PSN ignored, slides nothing"
        ),
        case!(
            rx::path_window_slides,
            "6.3",
            "PSN 300 ahead slides the path window"
        ),
        case!(
            rx::stale_path_psn_is_reacknowledged,
            "6.3",
            "stale path PSN re-acknowledged"
        ),
        case!(
            rx::credit_is_receive_window,
            "3.5, 6.5, 1.3",
            "credit = receive window; conn PSNs wrap"
        ),
        case!(
            rx::rate_hint_fair_share,
            "6.9 (Policy)",
            "rate hint = line rate / active senders"
        ),
        case!(
            rx::send_matches_recv_idx,
            "6.7, 6.8",
            "SEND lands in the receive named by recv_idx"
        ),
        case!(
            rx::write_imm_consumes_receive,
            "6.6, 6.8",
            "WRITE_IMM completes RECV_RDMA_WITH_IMM"
        ),
        case!(
            rx::zero_byte_send_completes,
            "3.2, 6.8",
            "0-byte solicited SEND completes"
        ),
        case!(
            rx::rnr_nack,
            "6.7, 3.6",
            "no receive: NACK RNR with the QP's delay"
        ),
        case!(
            rx::rnr_then_retry_accepted,
            "6.7, 6.2",
            "after RNR the retried SEND is accepted"
        ),
        case!(
            rx::forged_rkey_refused,
            "6.2 step 20, 3.6",
            "forged rkey: NACK REMOTE_ACCESS"
        ),
        case!(
            rx::out_of_bounds_write_refused,
            "6.2 step 20",
            "WRITE past the region: NACK REMOTE_ACCESS"
        ),
        case!(
            rx::address_below_region_refused,
            "6.2 step 20",
            "WRITE before the region: NACK REMOTE_ACCESS"
        ),
        case!(
            rx::overflowing_address_refused,
            "6.2 step 20, 11",
            "64-bit address overflow: NACK REMOTE_ACCESS"
        ),
        case!(
            rx::write_without_permission_refused,
            "6.2 step 20",
            "region without REMOTE_WRITE: NACK"
        ),
        case!(
            rx::read_with_forged_rkey_refused,
            "6.2 step 20",
            "READ with forged rkey: NACK, no response"
        ),
        case!(
            rx::send_longer_than_receive_refused,
            "6.2 step 21",
            "SEND longer than the receive: INVALID_REQUEST"
        ),
        case!(
            rx::send_into_deregistered_receive_refused,
            "6.2 step 22",
            "SEND into a deregistered receive buffer: REMOTE_OPERATIONAL"
        ),
        case!(
            rx::write_imm_rnr_before_rkey,
            "6.7",
            "WRITE_IMM: receive check before rkey check"
        ),
        case!(
            rx::read_request_executed,
            "6.8, 3.4",
            "READ executed: READ_RESP fields and data"
        ),
        case!(
            rx::read_answered_in_rtr,
            "9.1, 3.4",
            "READ answered in RTR from the request's resp_psn"
        ),
        case!(
            rx::atomic_executed_once,
            "6.8, 3.3",
            "FETCH_ADD: executed once, ATOMIC_RESP with the value found"
        ),
        case!(
            rx::zero_byte_read_answered,
            "6.8",
            "0-byte READ: one empty READ_RESP"
        ),
        case!(
            rx::disconnect_received,
            "9.4",
            "DISCONNECT: QP to ERR, receives flushed"
        ),
        case!(
            rx::disconnect_without_psns_ignored,
            "9.4",
            "DISCONNECT without the connection's PSNs ignored"
        ),
        case!(
            rx::connect_opcodes_dropped,
            "9.3",
            "CONNECT / CONNECT_ACK dropped"
        ),
        case!(
            rx::parity_rebuilds_lost_packet,
            "3.2, 3.12, 6.10",
            "PARITY_OK announced; one lost packet rebuilt from a PARITY, two not"
        ),
        case!(
            tx::unexpected_read_response_dropped,
            "6.2 step 16a",
            "unmatched READ_RESP: dropped, conn PSN not taken"
        ),
        // The sender (§5, §9.4).
        case!(
            tx::tx_write_packets,
            "3.1, 3.4, 5.2",
            "multi-packet WRITE: every header field"
        ),
        case!(
            tx::tx_completion_needs_conn_cum,
            "5.10",
            "completion only when conn_cum passes"
        ),
        case!(
            tx::tx_send_numbering,
            "3.4, 5.2",
            "MSN, recv_idx and immediates of SEND/WRITE_IMM"
        ),
        case!(
            tx::tx_retransmit_on_sack_gap,
            "5.5, 5.6",
            "SACK gap: exactly the lost packet resent"
        ),
        case!(
            tx::tx_retransmit_after_timeout_and_probe,
            "5.7, 3.7",
            "RTO: resend with RETX, PROBE the path"
        ),
        case!(
            tx::tx_path_window_respected,
            "5.8",
            "never 256 path PSNs unresolved"
        ),
        case!(
            tx::tx_credit_respected,
            "5.4",
            "new packets below conn_cum + credit"
        ),
        case!(
            tx::tx_rnr_retry_waits,
            "5.11",
            "RNR: resend after detail µs"
        ),
        case!(
            tx::tx_remote_access_nack_is_fatal,
            "5.11, 5.12",
            "NACK REMOTE_ACCESS: REM_ACCESS_ERR, ERR"
        ),
        case!(
            tx::tx_invalid_request_nack_is_fatal,
            "5.11",
            "NACK INVALID_REQUEST: REM_INV_REQ_ERR"
        ),
        case!(
            tx::tx_remote_operational_nack_is_fatal,
            "5.11",
            "NACK REMOTE_OPERATIONAL: REM_OP_ERR"
        ),
        case!(
            tx::tx_forged_nack_ignored,
            "5.11",
            "NACK for a conn PSN never sent: ignored"
        ),
        case!(
            tx::tx_forged_ack_ignored,
            "5.5 step 7, 11",
            "forged ACK beyond next_conn_psn: ignored"
        ),
        case!(
            tx::tx_ack_for_unsent_path_psns_refused,
            "5.5 step 0",
            "ACK for path PSNs never sent: refused"
        ),
        case!(
            tx::tx_ack_for_unknown_path_ignored,
            "5.5",
            "ACK for a path the sender lacks: ignored"
        ),
        case!(
            tx::tx_multi_ack_accepted,
            "3.11, 6.4",
            "MULTI_ACK taken when offered; malformed one dropped"
        ),
        case!(
            tx::tx_parity_sent_when_due,
            "3.12, 5.6",
            "PARITY only after PARITY_OK and a resend; its group and XOR"
        ),
        case!(
            tx::tx_disconnect_sent_once,
            "9.4",
            "disconnect: one DISCONNECT with the PSNs, QP in ERR"
        ),
        case!(
            tx::tx_read_round_trip,
            "3.4, 5.10, 6.8",
            "READ: request fields, completion on responses"
        ),
        case!(
            vectors::pinned_vectors_self_check,
            "3.10, 4",
            "the suite's own codec against the pinned vectors"
        ),
    ]
}

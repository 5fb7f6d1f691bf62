//! The target as a receiver: placement, acknowledgement, path and connection
//! tracking, send matching, NACKs (spec §3, §6).

mod access;
mod acks;
mod connect;
mod parity;
mod placement;
mod read;
mod recv;

pub use access::{
    address_below_region_refused, forged_rkey_refused, out_of_bounds_write_refused,
    overflowing_address_refused, read_with_forged_rkey_refused, write_without_permission_refused,
};
pub use acks::{
    ack_fields, ack_source_port_follows_latest_packet, credit_is_receive_window,
    echo_ts_is_the_largest, ecn_echo, path_cum_advances_over_marked, path_window_slides,
    paths_are_tracked_independently, probe_is_marked_and_acked, probe_without_conn_psn_ignored,
    rate_hint_fair_share, replies_go_to_configured_port, sack_bitmap_exact,
    stale_path_psn_is_reacknowledged,
};
pub use connect::{connect_opcodes_dropped, disconnect_received, disconnect_without_psns_ignored};
pub use parity::parity_rebuilds_lost_packet;
pub use placement::{
    conn_cum_stops_at_gap, duplicate_not_placed_twice, out_of_order_cross_path_message,
    write_placed_and_accepted,
};
pub use read::{
    atomic_executed_once, read_answered_in_rtr, read_request_executed, zero_byte_read_answered,
};
pub use recv::{
    rnr_nack, rnr_then_retry_accepted, send_into_deregistered_receive_refused,
    send_longer_than_receive_refused, send_matches_recv_idx, write_imm_consumes_receive,
    write_imm_rnr_before_rkey, zero_byte_send_completes,
};

/// A deterministic payload of `n` bytes.
pub(super) fn pattern(n: usize, seed: u8) -> Vec<u8> {
    (0..n).map(|i| (i as u8).wrapping_mul(31) ^ seed).collect()
}

//! The Verbs API test suite of `metaroce-driver`, written once and run on every kind
//! of NIC.
//!
//! Each case ([`cases`]) is a function of a [`CaseKinds`]: the kind of NIC on side A and on
//! side B ([`NicKind`]: a soft NIC, the simulated board, a real board...). A case
//! starts its NICs through the kinds, so the same body runs soft NIC ↔ soft NIC (the
//! tests of `metaroce-driver`) and board ↔ soft NIC or board ↔ board (the tests of
//! `metaroce-sim-tb`, which owns the device process). [`verbs_suite!`] expands to one
//! `#[test]` per case for a pair, so every pair runs the whole suite.
//!
//! A kind states its [`Limits`] (the hardware's table sizes, what it cannot do, how
//! much data a case should move on it); a case scales to them, or skips and says why
//! on the test's standard error, uncaptured ([`CaseKinds::skip`]) — never silently.

pub mod cases;
mod kinds;
mod side;

pub use kinds::{Family, Limits, NicKind, Soft};
pub use side::{
    CaseKinds, DEADLINE, Side, SideOpts, connect_direct, pattern, wait_until, wait_wcs,
    write_all_pieces,
};

/// One `#[test]` per case of the suite for the pair of kinds `$a` (side A) and `$b`
/// (side B), expressions evaluated afresh in each test. With a third expression, each
/// test evaluates it first and holds its value to the end (e.g. a lock, so that tests
/// that each run device processes run one at a time).
#[macro_export]
macro_rules! verbs_suite {
    ($a:expr, $b:expr) => {
        $crate::verbs_suite!($a, $b, ());
    };
    ($a:expr, $b:expr, $hold:expr) => {
        $crate::verbs_suite!(@cases $a, $b, $hold;
            write_send_read_ipv4 => |p: &$crate::CaseKinds<'_>| $crate::cases::verbs::write_send_read(p, $crate::Family::V4, false),
            write_send_read_busy_polling => |p: &$crate::CaseKinds<'_>| $crate::cases::verbs::write_send_read(p, $crate::Family::V4, true),
            write_send_read_ipv6 => |p: &$crate::CaseKinds<'_>| $crate::cases::verbs::write_send_read(p, $crate::Family::V6, false),
            reads_answered_from_rtr => $crate::cases::verbs::reads_answered_from_rtr,
            completion_channel_fires_once_armed => $crate::cases::verbs::completion_channel_fires_once_armed,
            gather_and_scatter_lists_over_two_regions => $crate::cases::verbs::gather_and_scatter_lists_over_two_regions,
            atomics_fetch_add_and_compare_swap => $crate::cases::verbs::atomics_fetch_add_and_compare_swap,
            shared_receive_queue_feeds_two_qps => $crate::cases::verbs::shared_receive_queue_feeds_two_qps,
            posting_in_wrong_state_is_einval => $crate::cases::misuse::posting_in_wrong_state_is_einval,
            unregistered_memory_completes_with_local_protection_error => $crate::cases::misuse::unregistered_memory_completes_with_local_protection_error,
            bad_remote_key_completes_with_remote_access_error => $crate::cases::misuse::bad_remote_key_completes_with_remote_access_error,
            oversized_and_invalid_requests_are_refused => $crate::cases::misuse::oversized_and_invalid_requests_are_refused,
            zero_length_write_is_legal_as_in_ibverbs => $crate::cases::misuse::zero_length_write_is_legal_as_in_ibverbs,
            full_send_queue_is_enomem => $crate::cases::misuse::full_send_queue_is_enomem,
            dropping_regions_mid_transfer_never_touches_freed_memory => $crate::cases::misuse::dropping_regions_mid_transfer_never_touches_freed_memory,
            a_destroyed_qp_answers_the_retransmission_of_its_last_receive => $crate::cases::linger::a_destroyed_qp_answers_the_retransmission_of_its_last_receive,
            closing_the_device_right_after_the_last_receive_still_answers_the_sender => $crate::cases::linger::closing_the_device_right_after_the_last_receive_still_answers_the_sender,
            authenticated_pair_moves_verified_data_and_drops_forgeries => $crate::cases::auth::authenticated_pair_moves_verified_data_and_drops_forgeries,
            a_peer_with_another_key_gets_nothing_through => $crate::cases::auth::a_peer_with_another_key_gets_nothing_through,
            integrity_under_loss_reordering_and_duplication_ipv4 => |p: &$crate::CaseKinds<'_>| $crate::cases::relay::integrity(p, $crate::Family::V4),
            integrity_under_loss_reordering_and_duplication_ipv6 => |p: &$crate::CaseKinds<'_>| $crate::cases::relay::integrity(p, $crate::Family::V6),
            malformed_datagrams_are_dropped_and_counted => $crate::cases::relay::malformed_datagrams_are_dropped_and_counted,
            vanished_peer_ends_in_retry_exceeded => $crate::cases::relay::vanished_peer_ends_in_retry_exceeded,
        );
    };
    (@cases $a:expr, $b:expr, $hold:expr; $($name:ident => $body:expr),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                let _held = $hold;
                let (a, b) = ($a, $b);
                let pair = $crate::CaseKinds::new(&a, &b, stringify!($name));
                ($body)(&pair);
            }
        )*
    };
}

//! The kernel's part that answers BAR reads of the read-only registers,
//! from a table: for each source the register map names (`Access::Ro`,
//! in address order, [`ro_sources`](super::super::reg_file::ro_sources)),
//! the signal that feeds it. `ro_select!` numbers the entries in order and
//! compares entry `i`'s place `k_ro[i]` with the place the register file
//! decoded from the read's address, `ro_rd_sel` (only while a read of a
//! read-only register is answered); [`RO_NAMES`] lets the block check, when
//! it is made, that the table lists the map's sources in the map's order.

use rust_hdl::prelude::*;

use super::super::kernel::Part;
use super::HostIf;

/// Part 8 of `HostIf`'s kernel from the table `#[hdl_gen] self; name:
/// [value], ...` (the attribute and `self` passed in, so that the values,
/// the kernel and the functions the attribute writes agree on `self`):
/// entry `i` is numbered by a loop of one step, `for i in i..i + 1`, its
/// bounds built as `0 + 1 + ...` (rust-hdl unrolls a loop with the bounds'
/// values when it writes the Verilog: `k_ro$i`).
macro_rules! ro_select {
    // The next entry: compared with the place at its number.
    (($($a:tt)*) $s:tt [$($acc:tt)*] [$($names:tt)*] [$($i:tt)*] $name:ident: [$($value:tt)*], $($rest:tt)*) => {
        ro_select! {
            ($($a)*) $s
            [
                $($acc)*
                for i in ($($i)*)..($($i)* + 1) {
                    if $s.ro_rd_sel.val() == $s.k_ro[i].val() {
                        $s.ro_rd_data.next = $($value)*;
                    }
                }
            ]
            [$($names)* stringify!($name),]
            [$($i)* + 1]
            $($rest)*
        }
    };
    // Every entry numbered: the part.
    (($($a:tt)*) $s:tt [$($acc:tt)*] [$($names:tt)*] [$($i:tt)*]) => {
        /// The sources of the read-only registers in the table's order.
        pub(super) const RO_NAMES: &[&str] = &[$($names)*];

        /// The read-only registers: the one a BAR read asks for.
        // The entries' numbers, `0 + 1 + ...`, as one-step loops.
        #[allow(clippy::identity_op, clippy::needless_range_loop)]
        impl<const W: usize, const B: usize> Part<8> for HostIf<W, B> {
            $($a)*
            fn update(&mut $s) {
                $s.rd_flags.next = 0.into();
                $s.rd_flags.next = $s.rd_flags.val().replace_bit(0, $s.c_rd.rtt_valid.val());
                $s.rd_flags.next = $s.rd_flags.val().replace_bit(1, $s.c_rd.quarantined.val());
                $s.rd_flags.next =
                    $s.rd_flags.val() | (bit_cast::<32, 4>($s.c_rd.backoff.val()) << 2);
                $s.rd_flags.next = $s.rd_flags.val().replace_bit(6, $s.c_rd.can_send.val());
                $s.ro_rd_data.next = 0.into();
                if $s.ro_rd_valid.val() {
                    $($acc)*
                }
            }
        }
    };
    ($pound:tt $attr:tt $s:tt; $($table:tt)*) => {
        ro_select! { ($pound $attr) $s [] [] [0] $($table)* }
    };
}

ro_select! {
    #[hdl_gen]
    self;
    cnt_bar_bad: [self.cnt_bar_bad.val()],
    cnt_cfg_writes: [self.cnt.cfg_writes.val()],
    c_cnt_val: [self.c_cnt.val.val()],
    c_eth_cnt_val: [self.c_eth_cnt.val.val()],
    c_ack_cnt_frames: [self.c_ack_cnt_frames.val()],
    c_ack_cnt_ece: [self.c_ack_cnt_ece.val()],
    c_ack_cnt_v6: [self.c_ack_cnt_v6.val()],
    c_ackrx_cnt_applied: [self.c_ackrx_cnt.applied.val()],
    c_ackrx_cnt_unmapped: [self.c_ackrx_cnt.unmapped.val()],
    c_ackrx_cnt_overflow: [self.c_ackrx_cnt.overflow.val()],
    c_ackrx_cnt_pair_err: [self.c_ackrx_cnt.pair_err.val()],
    c_fw_cnt_up: [self.c_fw_cnt_up.val()],
    c_fw_cnt_trunc: [self.c_fw_cnt_trunc.val()],
    c_fwtx_cnt_frames: [self.c_fwtx_cnt_frames.val()],
    tx_err: [bit_cast::<32, 1>(self.c_m_err.val().into())],
    cnt_eth_frames: [self.cnt.eth_frames.val()],
    cnt_eth_drops: [self.cnt.eth_drops.val()],
    cnt_rx_hold: [self.rxh.held.val()],
    cnt_ev_lost: [self.cnt_ev_lost.val()],
    cnt_txq_bad: [self.txq.bad.val()],
    cnt_ftq_bad: [self.cnt_ftq_bad.val()],
    cnt_bad_tag: [self.cnt.bad_tag.val()],
    cnt_txq_ops: [self.op.ops.val()],
    c_ackrx_cnt_refused: [self.c_ackrx_cnt.refused.val()],
    op_status: [bit_cast::<32, 3>(self.op.status.val())],
    op_res_psn: [self.op.last_psn.val()],
    op_res_pkts: [self.op.last_pkts.val()],
    op_res_bytes: [self.op.last_bytes.val()],
    rd_entropy: [bit_cast::<32, 16>(self.c_rd.entropy.val())],
    c_rd_next_psn: [self.c_rd.next_psn.val()],
    c_rd_una: [self.c_rd.una.val()],
    c_rd_inflight: [self.c_rd.inflight.val()],
    c_rd_window: [self.c_rd.window.val()],
    c_rd_srtt: [self.c_rd.srtt.val()],
    c_rd_rttvar: [self.c_rd.rttvar.val()],
    c_rd_ecn_ewma: [self.c_rd.ecn_ewma.val()],
    c_rd_loss_ewma: [self.c_rd.loss_ewma.val()],
    c_rd_samples: [self.c_rd.samples.val()],
    c_rd_sent: [self.c_rd.sent.val()],
    c_rd_retransmitted: [self.c_rd.retransmitted.val()],
    c_rd_acked: [self.c_rd.acked.val()],
    c_rd_lost: [self.c_rd.lost.val()],
    c_rd_ce_marked: [self.c_rd.ce_marked.val()],
    c_rd_repaths: [self.c_rd.repaths.val()],
    c_rd_timeouts: [self.c_rd.timeouts.val()],
    rd_flags: [self.rd_flags.val()],
    txq_cons: [self.txq.cons.val()],
    ftq_cons: [self.ftq_cons.val()],
    evq_prod: [self.evq_prod.val()],
    frq_prod: [self.frq_prod.val()],
    irq_count0: [self.irq_count0.val()],
    irq_count1: [self.irq_count1.val()],
    irq_count2: [self.irq_count2.val()],
}

//! The run's per-cycle loop: MAC RX frames flow, the host posts, consumes
//! and frees, until everything is through (or the cycle budget is spent).

use super::DeviceRun;
use super::consume::Consumer;
use super::post::Poster;
use super::tb::DeviceTb;

/// Cycles after set-up before the host stops reading the event ring.
const STALL_AFTER: u64 = 2_000;
/// The cycle budget of the run.
const MAX_CYCLES: u64 = 3_000_000;
/// Quiet cycles after the last thing came through: long enough for the last
/// interrupts (hold-off) to fire.
const QUIET: u64 = 2_500;

/// Runs the device cycle by cycle, the host posting with `post` and reading
/// with `cons`, ignoring the event ring for `stall` cycles early on.
pub(super) fn drive(
    tb: &mut DeviceTb,
    post: &mut Poster,
    cons: &mut Consumer,
    run: &mut DeviceRun,
    stall: u64,
) {
    tb.rx_on = true;
    let stall_from = tb.cycle + STALL_AFTER;
    let stall_to = stall_from + stall;
    let max_cycles = tb.cycle + MAX_CYCLES;
    let mut quiet_since = None::<u64>;
    loop {
        tb.step();
        let now = tb.cycle;
        post.tx_queue(tb, run, now);
        post.fw_queue(tb, now);
        // Event ring: read entries by their phase bit (not while stalled).
        let stalled = now >= stall_from && now < stall_to;
        if !stalled {
            cons.event_ring(tb, run);
        }
        cons.fw_ring(tb);

        if finished(tb, post, cons) {
            let since = *quiet_since.get_or_insert(now);
            if now - since > QUIET {
                break;
            }
        }
        if now > max_cycles {
            tb.errors.push(timeout(tb, post, cons));
            break;
        }
    }
}

/// Done: everything in, every event out, every frame out.
fn finished(tb: &DeviceTb, post: &Poster, cons: &Consumer) -> bool {
    let rx_total = tb.rx_wire.len();
    tb.rx_next == rx_total
        && cons.verdicts.len() == rx_total
        && post.all_posted()
        && tb.tx_data as usize >= post.items.len() + post.fw_want.len()
        && cons.fates.len() == 2
        && cons.results.len() == post.qops.len()
}

/// What was still missing when the cycle budget ran out.
fn timeout(tb: &DeviceTb, post: &Poster, cons: &Consumer) -> String {
    format!(
        "timeout: {} of {} frames in, {} verdict events, {} of {} items posted, \
         {} data frames out, {} fates, {} table results",
        tb.rx_next,
        tb.rx_wire.len(),
        cons.verdicts.len(),
        post.next_item,
        post.items.len(),
        tb.tx_data,
        cons.fates.len(),
        cons.results.len()
    )
}

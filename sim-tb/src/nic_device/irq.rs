//! Interrupts: the moderation the bench programs per vector, and the
//! check of every interrupt against its vector's rule (entry count or
//! hold-off time reached; never late).

use super::DeviceRun;
use super::regs;
use super::tb::DeviceTb;

/// Interrupt moderation the bench programs: (coalesce, hold-off cycles)
/// per vector.
const MODERATION: [(u32, u32); 3] = [(8, 400), (0, 300), (16, 2000)];

/// Programs and enables [`MODERATION`] on the three vectors.
pub(super) fn program(tb: &mut DeviceTb) {
    let irq = regs::irq::TYPE;
    for (v, (coalesce, holdoff)) in MODERATION.iter().enumerate() {
        let o = 0x10 * v as u16;
        tb.bar_write(tb.reg(irq, regs::irq::COALESCE0 + o), *coalesce);
        tb.bar_write(tb.reg(irq, regs::irq::HOLDOFF0 + o), *holdoff);
        tb.bar_write(tb.reg(irq, regs::irq::CTRL0 + o), 1);
    }
}

/// Counts each vector's interrupts and entries into `run`, checks them
/// against `IRQ.COUNTn`, and times the event and firmware receive
/// vectors' interrupts against their entries.
pub(super) fn check(tb: &mut DeviceTb, run: &mut DeviceRun) {
    let m = &mut run.mismatches;
    // Vector 2's entries (queue entries consumed) are not visible outside
    // the device: its interrupts are counted, not timed.
    let entries: [Vec<u64>; 2] = [tb.evq_done.clone(), tb.frq_done.clone()];
    for (v, moderation) in MODERATION.iter().enumerate() {
        let irqs: Vec<u64> = tb
            .irqs
            .iter()
            .filter(|&&(_, x)| x == v)
            .map(|&(c, _)| c)
            .collect();
        run.irqs[v] = irqs.len() as u64;
        run.irq_entries[v] = entries.get(v).map_or(0, |e| e.len() as u64);
        let count = tb.bar_read(tb.reg(regs::irq::TYPE, regs::irq::COUNT0 + 0x10 * v as u16));
        if u64::from(count) != run.irqs[v] {
            m.push(format!(
                "IRQ.COUNT{v} {count}, interrupts seen {}",
                run.irqs[v]
            ));
        }
        match entries.get(v) {
            Some(e) => m.extend(check_moderation(v, &irqs, e, *moderation, &tb.irqs)),
            None if irqs.is_empty() => m.push(format!("vector {v}: no interrupt")),
            None => {}
        }
    }
}

/// Checks vector `v`'s interrupts at `irqs` against the entries completed
/// at `done` under (coalesce, hold-off): each interrupt covers the entries
/// completed at least 2 cycles before it (the device counts an entry the
/// cycle after its write); it must be due (as many entries as `coalesce`,
/// or the oldest waiting `holdoff` cycles) and must not be late (a cycle
/// later for each interrupt of a lower-numbered vector, which goes first,
/// in between; `all` is every interrupt as (cycle, vector)).
fn check_moderation(
    v: usize,
    irqs: &[u64],
    done: &[u64],
    (coalesce, holdoff): (u32, u32),
    all: &[(u64, usize)],
) -> Vec<String> {
    let mut m = Vec::new();
    if done.is_empty() {
        return m;
    }
    let mut next = 0usize; // first entry not covered yet
    for &t in irqs {
        let covered = done[next..].iter().take_while(|&&c| c + 2 <= t).count();
        if covered == 0 {
            m.push(format!(
                "vector {v}: interrupt at cycle {t} covers no entry"
            ));
            continue;
        }
        let oldest = done[next];
        let due =
            (coalesce > 0 && covered >= coalesce as usize) || t >= oldest + 2 + u64::from(holdoff);
        if !due {
            m.push(format!(
                "vector {v}: interrupt at cycle {t} early: {covered} entries, oldest from cycle {oldest}"
            ));
        }
        let due_at = if coalesce > 0 && covered >= coalesce as usize {
            (oldest + 2 + u64::from(holdoff)).min(done[next + coalesce as usize - 1] + 2)
        } else {
            oldest + 2 + u64::from(holdoff)
        };
        let waived = all
            .iter()
            .filter(|&&(c, x)| x < v && c >= due_at && c < t)
            .count() as u64;
        let late = t > due_at + waived;
        if late {
            m.push(format!(
                "vector {v}: interrupt at cycle {t} late: {covered} entries, oldest from cycle {oldest}"
            ));
        }
        next += covered;
    }
    if next != done.len() {
        m.push(format!(
            "vector {v}: {} entries never covered by an interrupt",
            done.len() - next
        ));
    }
    m
}

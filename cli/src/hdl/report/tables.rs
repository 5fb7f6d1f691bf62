//! The human-readable tables of `metaroce hdl report`.

use clap::ValueEnum;

use super::{NicCoreCheck, Report};
use crate::report;

/// The report's tables, in the order they are printed.
pub(super) fn tables(r: &Report) -> Vec<comfy_table::Table> {
    let [core_widths, front_ends] = width_tables(r);
    let mut tx_table = report::table(["TX table operations vs engine TxPath", "mismatches"]);
    tx_table.add_row(vec![
        r.tx_path_table.checked.to_string(),
        r.tx_path_table.mismatches.to_string(),
    ]);
    let mut out = vec![
        core_widths,
        front_ends,
        tx_table,
        nic_core_table(&r.nic_core),
        census_table(r),
    ];
    if r.yosys.is_some() {
        out.push(synthesis_table(r));
    }
    let mut waivers = report::table(["lint waiver", "why"]);
    for w in &r.lint_waivers {
        waivers.add_row(vec![w.flag, w.why]);
    }
    out.push(waivers);
    out
}

/// One row per width: the receive core's checks, then the front ends'
/// and the TX builder's.
fn width_tables(r: &Report) -> [comfy_table::Table; 2] {
    let mut t = report::table([
        "width",
        "packets vs engine",
        "hostile",
        "placed SEND / READ_RESP",
        "ACKs vs engine",
        "mismatches",
        "hostile writes outside MR",
        "bubbles",
        "RxCore M cycles/s",
        "lint warnings",
    ]);
    let mut b = report::table([
        "width",
        "parser packets vs proto",
        "parser mismatches",
        "Ethernet frames vs etherparse",
        "Ethernet mismatches",
        "TX frames vs engine",
        "TX mismatches",
        "TX cycles per 4 KiB packet",
    ]);
    for w in &r.widths {
        t.add_row(vec![
            w.width.to_string(),
            w.packets_checked.to_string(),
            w.hostile_packets.to_string(),
            format!("{} / {}", w.placed_send, w.placed_read_resp),
            w.acks_checked.to_string(),
            w.mismatches.to_string(),
            w.hostile_writes_outside_mr.to_string(),
            w.bubbles.to_string(),
            format!("{:.2}", w.cycles_per_second / 1e6),
            w.lint_warnings.to_string(),
        ]);
        b.add_row(vec![
            w.width.to_string(),
            w.parser.packets_checked.to_string(),
            w.parser.mismatches.to_string(),
            w.eth_front_end.checked.to_string(),
            w.eth_front_end.mismatches.to_string(),
            w.tx_build.frames_checked.to_string(),
            w.tx_build.mismatches.to_string(),
            format!("{:.1}", w.tx_build.line_rate_cycles_per_packet),
        ]);
    }
    [t, b]
}

/// The whole NicCore's run.
fn nic_core_table(n: &NicCoreCheck) -> comfy_table::Table {
    let mut c = report::table([
        "NicCore width",
        "frames in",
        "ACK frames vs engine",
        "data frames vs engine",
        "ACKs applied to TX table vs engine",
        "mismatches",
        "writes outside MR",
        "RX bubbles",
        "MAC TX utilisation",
        "whole NIC M cycles/s",
    ]);
    c.add_row(vec![
        n.width.to_string(),
        n.datagrams_in.to_string(),
        n.acks_checked.to_string(),
        n.data_frames_checked.to_string(),
        n.acks_applied_checked.to_string(),
        n.mismatches.to_string(),
        n.hostile_writes_outside_mr.to_string(),
        n.bubbles.to_string(),
        format!("{:.1} %", 100.0 * n.mac_tx_utilisation),
        format!("{:.2}", n.cycles_per_second / 1e6),
    ]);
    c
}

/// The census of the 64-bit device's Verilog.
fn census_table(r: &Report) -> comfy_table::Table {
    let mut h = report::table([
        "64-bit device",
        "rust-hdl modules",
        "hand-written modules",
        "rust-hdl lines",
        "hand-written lines",
        "hand-written share",
    ]);
    h.add_row(vec![
        "NicDevice".to_string(),
        r.rust_hdl_blocks.to_string(),
        r.custom_blocks.to_string(),
        r.rust_hdl_verilog_lines.to_string(),
        r.custom_verilog_lines.to_string(),
        format!("{:.1} %", 100.0 * r.custom_verilog_fraction),
    ]);
    h
}

/// yosys's figures per width.
fn synthesis_table(r: &Report) -> comfy_table::Table {
    let mut s = report::table([
        "synthesised",
        "width",
        "cells",
        "LUT4",
        "FF",
        "carry",
        "wide mux",
        "DP16KD",
        "DPR16X4",
        "MULT18X18D",
        "yosys s",
    ]);
    let top = r
        .synthesised
        .to_possible_value()
        .map_or_else(String::new, |v| v.get_name().to_string());
    for w in &r.widths {
        if let Some(y) = &w.synthesis {
            s.add_row(vec![
                top.clone(),
                w.width.to_string(),
                y.cells.to_string(),
                y.luts.to_string(),
                y.ffs.to_string(),
                y.carry_cells.to_string(),
                y.mux_cells.to_string(),
                y.ebr.to_string(),
                y.lut_ram.to_string(),
                y.dsp.to_string(),
                format!("{:.0}", y.seconds),
            ]);
        }
    }
    s
}

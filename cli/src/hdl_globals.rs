//! Clock enables on the ECP5's global networks: a netlist pass of
//! `metaroce hdl bitstream` between yosys and nextpnr.
//!
//! The NIC top loads wide registers (the ACK frame's 1,520-bit output
//! buffer, the 1,008-bit TX header) under one enable each, so a handful of
//! nets reach a thousand flip-flops' CE pins. In general routing such a net
//! is a tree over much of the die and among the most overused nets in
//! router2's heat map (`docs/bitstreams.md`). nextpnr-ecp5 promotes only
//! clocks to the global networks by itself, but any net a `DCCA` drives is
//! routed on one, and a global reaches every slice's CE mux. The pass puts
//! a `DCCA` in front of the CE pins of the nets with the most of them (the
//! net's other loads stay on it), as many as there are free global networks
//! that may drive the fabric.

use anyhow::{Context, bail};
use serde_json::{Value, json};

/// Global networks whose loads may be other than clock pins: nextpnr-ecp5
/// routes a `DCCA` that drives the fabric only on globals 0–7
/// (`route_globals` in its `globals.cc`).
pub const FABRIC_GLOBALS: usize = 8;

/// Fewer CE loads than this and a net stays in general routing.
pub const MIN_LOADS: usize = 256;

/// One net put on a global network.
#[derive(Debug, PartialEq, Eq, serde::Serialize)]
pub struct Promoted {
    /// The net's name in the netlist.
    pub net: String,
    /// CE pins moved onto the global.
    pub loads: usize,
}

/// Puts the clock enables of module `top` of a yosys JSON netlist with the
/// most loads (at least [`MIN_LOADS`]) on global networks, at most `limit`
/// of them and never more than the free fabric globals: [`FABRIC_GLOBALS`]
/// less the `DCCA`s already in the netlist and less the clock nets nextpnr
/// will promote (it numbers those first, so they may take fabric globals).
pub fn promote_clock_enables(netlist: &mut Value, limit: usize) -> anyhow::Result<Vec<Promoted>> {
    let top = netlist
        .pointer_mut("/modules/top")
        .context("the netlist has no module `top`")?;
    let cells = top
        .get("cells")
        .and_then(Value::as_object)
        .context("module `top` has no cells")?;

    let mut ce_loads = std::collections::HashMap::<u64, usize>::new();
    let mut clocks = std::collections::HashSet::<u64>::new();
    // Nets a DCCA drives (its CLKO) are on a global already.
    let mut on_global = std::collections::HashSet::<u64>::new();
    let mut dccas = 0;
    let mut highest = 1;
    for cell in cells.values() {
        let kind = cell["type"].as_str().unwrap_or_default();
        if kind == "DCCA" {
            dccas += 1;
            on_global.extend(cell.pointer("/connections/CLKO/0").and_then(Value::as_u64));
        }
        for (port, bits) in cell["connections"].as_object().into_iter().flatten() {
            let Some(bits) = bits.as_array() else {
                continue;
            };
            for bit in bits.iter().filter_map(Value::as_u64) {
                highest = highest.max(bit);
                match (kind, port.as_str()) {
                    ("TRELLIS_FF", "CE") => *ce_loads.entry(bit).or_default() += 1,
                    (_, "CLK" | "WCK" | "SCLK" | "CLKA" | "CLKB") => {
                        clocks.insert(bit);
                    }
                    _ => {}
                }
            }
        }
    }
    let clock_nets = clocks.difference(&on_global).count();
    let free = FABRIC_GLOBALS.saturating_sub(dccas + clock_nets);

    let mut candidates: Vec<(u64, usize)> = ce_loads
        .into_iter()
        .filter(|&(bit, n)| n >= MIN_LOADS && !on_global.contains(&bit) && !clocks.contains(&bit))
        .collect();
    // Most loads first; the bit number breaks ties so the choice is stable.
    candidates.sort_by_key(|&(bit, n)| (std::cmp::Reverse(n), bit));
    candidates.truncate(limit.min(free));
    if candidates.is_empty() {
        return Ok(Vec::new());
    }

    let names = net_names(top)?;
    // New nets take the bits after the netlist's highest.
    let first_free = 1 + names.keys().max().map_or(highest, |&b| b.max(highest));
    let global_of: std::collections::HashMap<u64, u64> = candidates
        .iter()
        .map(|&(bit, _)| bit)
        .zip(first_free..)
        .collect();
    let cells = top["cells"].as_object_mut().context("cells")?;
    // One pass moves every promoted enable's CE pins onto its global.
    for cell in cells.values_mut().filter(|c| c["type"] == "TRELLIS_FF") {
        let ce = cell.pointer("/connections/CE/0").and_then(Value::as_u64);
        if let Some(&global) = ce.and_then(|bit| global_of.get(&bit)) {
            cell["connections"]["CE"] = json!([global]);
        }
    }
    let mut promoted = Vec::new();
    for ((bit, loads), global) in candidates.into_iter().zip(first_free..) {
        let cells = top["cells"].as_object_mut().context("cells")?;
        let net = names
            .get(&bit)
            .cloned()
            .unwrap_or_else(|| format!("bit {bit}"));
        cells.insert(
            format!("$metaroce$global_ce${global}"),
            json!({
                "hide_name": 1,
                "type": "DCCA",
                "parameters": {},
                "attributes": {},
                "port_directions": {"CLKI": "input", "CE": "input", "CLKO": "output"},
                "connections": {"CLKI": [bit], "CE": ["1"], "CLKO": [global]},
            }),
        );
        let netnames = top["netnames"].as_object_mut().context("netnames")?;
        netnames.insert(
            format!("{net}$global"),
            json!({"hide_name": 0, "bits": [global], "attributes": {}}),
        );
        promoted.push(Promoted { net, loads });
    }
    Ok(promoted)
}

/// Every net bit of `top` with a name: a visible one where the netlist
/// has it, the bit's index appended for a bus.
fn net_names(top: &Value) -> anyhow::Result<std::collections::BTreeMap<u64, String>> {
    let netnames = top
        .get("netnames")
        .and_then(Value::as_object)
        .context("module `top` has no netnames")?;
    let mut names = std::collections::BTreeMap::new();
    for (name, net) in netnames {
        let Some(bits) = net["bits"].as_array() else {
            bail!("net {name} has no bits")
        };
        let hidden = net["hide_name"].as_u64() == Some(1);
        for (i, bit) in bits.iter().enumerate() {
            let Some(bit) = bit.as_u64() else { continue };
            let full = if bits.len() == 1 {
                name.clone()
            } else {
                format!("{name}[{i}]")
            };
            match names.get(&bit) {
                Some(_) if hidden => {}
                _ => {
                    names.insert(bit, full);
                }
            }
        }
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A netlist of `ffs` flip-flops whose CE pins are net 10 (and 11 for
    /// the first `other` of them), all clocked by net 2, plus `dccas` DCCAs.
    fn netlist(ffs: usize, other: usize, dccas: usize) -> Value {
        let mut cells = serde_json::Map::new();
        for i in 0..ffs {
            let ce = if i < other { 11 } else { 10 };
            cells.insert(
                format!("ff{i}"),
                json!({"type": "TRELLIS_FF", "port_directions": {},
                       "connections": {"CLK": [2], "CE": [ce], "DI": [3], "Q": [100 + i]}}),
            );
        }
        for i in 0..dccas {
            cells.insert(
                format!("dcc{i}"),
                json!({"type": "DCCA", "connections": {"CLKI": [4], "CE": ["1"], "CLKO": [50 + i]}}),
            );
        }
        cells.insert(
            "lut".into(),
            json!({"type": "LUT4", "connections": {"A": [10], "Z": [3]}}),
        );
        json!({"modules": {"top": {"cells": cells, "netnames": {
            "clk": {"hide_name": 0, "bits": [2]},
            "en": {"hide_name": 0, "bits": [10]},
            "$abc$en": {"hide_name": 1, "bits": [10]},
            "bus": {"hide_name": 0, "bits": [11, 12]},
        }}}})
    }

    fn one(net: &str, loads: usize) -> Vec<Promoted> {
        vec![Promoted {
            net: net.into(),
            loads,
        }]
    }

    fn ce_of(n: &Value, cell: &str) -> Value {
        n["modules"]["top"]["cells"][cell]["connections"]["CE"][0].clone()
    }

    #[test]
    fn moves_the_ce_pins_of_the_widest_enable_onto_a_dcca() {
        let mut n = netlist(600, 350, 0);
        assert_eq!(
            promote_clock_enables(&mut n, 1).unwrap(),
            one("bus[0]", 350)
        );
        let global = ce_of(&n, "ff0");
        assert_ne!(global, json!(11));
        assert_eq!(ce_of(&n, "ff599"), json!(10));
        let dcca = &n["modules"]["top"]["cells"][format!("$metaroce$global_ce${global}")];
        assert_eq!(dcca["type"], "DCCA");
        assert_eq!(dcca["connections"]["CLKI"], json!([11]));
        assert_eq!(dcca["connections"]["CLKO"], json!([global]));
        assert_eq!(
            n["modules"]["top"]["netnames"]["bus[0]$global"]["bits"],
            json!([global])
        );
    }

    #[test]
    fn keeps_the_other_loads_and_takes_the_visible_name() {
        let mut n = netlist(400, 0, 0);
        assert_eq!(promote_clock_enables(&mut n, 8).unwrap(), one("en", 400));
        // The LUT's input stays on the enable itself.
        assert_eq!(
            n["modules"]["top"]["cells"]["lut"]["connections"]["A"],
            json!([10])
        );
    }

    #[test]
    fn small_enables_and_full_globals_leave_the_netlist_alone() {
        let mut n = netlist(MIN_LOADS - 1, 0, 0);
        assert!(promote_clock_enables(&mut n, 8).unwrap().is_empty());
        assert_eq!(n, netlist(MIN_LOADS - 1, 0, 0));
        // One clock net and seven DCCAs fill the eight fabric globals.
        let mut n = netlist(600, 0, 7);
        assert!(promote_clock_enables(&mut n, 8).unwrap().is_empty());
        let mut n = netlist(600, 0, 6);
        assert_eq!(promote_clock_enables(&mut n, 8).unwrap().len(), 1);
    }

    #[test]
    fn a_netlist_without_top_is_an_error() {
        let mut n = json!({"modules": {}});
        let err = promote_clock_enables(&mut n, 1).unwrap_err();
        assert!(err.to_string().contains("no module `top`"), "{err}");
    }
}

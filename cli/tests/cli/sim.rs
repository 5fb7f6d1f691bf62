//! `metaroce sim`: every scenario's JSON, and the congestion controllers side by side.

use super::*;

#[test]
fn sim_json_for_each_scenario() {
    let one = ["--json", "--transport", "metaroce"];
    let runs: [(&str, &[&str], &[&str]); 8] = [
        (
            "loss",
            &["--loss", "0.01", "--seeds", "1", "--duration-ms", "1"],
            &[],
        ),
        (
            "failover",
            &["--qps", "2", "--duration-ms", "1", "--event-at-us", "300"],
            &["duration_ms", "event_at_us"],
        ),
        (
            "hotlink",
            &["--qps", "2", "--duration-ms", "1", "--event-at-us", "300"],
            &["background_load", "event_at_us"],
        ),
        (
            "incast",
            &["--senders", "2", "--duration-ms", "1"],
            &["duration_ms"],
        ),
        (
            "allreduce",
            &["--hosts", "8", "--planes", "1", "--data-mib", "1"],
            &[],
        ),
        (
            "scale-across",
            &["--rtt-ms", "1", "--loss", "0.01", "--rtts", "4"],
            &["connections", "long_links", "rtts_per_run"],
        ),
        (
            "kv-incast",
            &["--senders", "2", "--object-kib", "16", "--jobs", "3"],
            &["buffer_kb", "op"],
        ),
        (
            "scale",
            &[
                "--connections",
                "16",
                "--hosts",
                "4",
                "--duration-ms",
                "1",
                "--warmup-ms",
                "0.5",
            ],
            &["paths", "message_kib", "warmup_ms"],
        ),
    ];
    for (scenario, args, keys) in runs {
        let mut a = vec!["sim", scenario];
        a.extend(one);
        a.extend(args);
        let d = json(&a);
        has_keys(&d, &["scenario", "results"], scenario);
        has_keys(&d, keys, scenario);
        let results = d["results"].as_array().expect("results");
        assert!(!results.is_empty(), "{scenario}: no result");
    }
}
#[test]
fn sim_runs_each_congestion_controller_side_by_side() {
    let d = json(&[
        "sim",
        "incast",
        "--json",
        "--senders",
        "2",
        "--duration-ms",
        "0.5",
        "--cc",
        "ecn-aimd,swift",
    ]);
    assert_eq!(d["metaroce_rate_hint"], true);
    let rows: Vec<(String, Value)> = d["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| {
            (
                r["transport"].as_str().unwrap().to_string(),
                r["cc"].clone(),
            )
        })
        .collect();
    let expected = [
        ("metaroce", Value::from("ecn-aimd")),
        ("metaroce", Value::from("swift")),
        ("rocev2", Value::Null),
        ("irn", Value::Null),
    ];
    assert_eq!(rows.len(), expected.len(), "{rows:?}");
    for ((transport, cc), (want_transport, want_cc)) in rows.iter().zip(&expected) {
        assert_eq!((transport.as_str(), cc), (*want_transport, want_cc));
    }
    let d = json(&[
        "sim",
        "hotlink",
        "--json",
        "--transport",
        "metaroce",
        "--qps",
        "1",
        "--duration-ms",
        "0.5",
        "--event-at-us",
        "200",
        "--cc",
        "swift",
        "--no-rate-hint",
    ]);
    assert_eq!(d["metaroce_rate_hint"], false);
    assert_eq!(d["results"][0]["cc"], "swift");
    fails_with(&["sim", "incast", "--cc", "bogus"], "invalid value 'bogus'");
}

//! Reader for `proto/vectors/vectors.txt`, the pinned MetaRoCE datagrams.
//!
//! Shared by the `proto` tests and the compliance suite (included with
//! `#[path]`), so the file has one reader. Needs `std`.

use std::collections::BTreeMap;
use std::net::SocketAddr;

/// One pinned datagram with its expected meaning.
#[derive(Debug, Clone)]
pub struct Vector {
    /// Section name, unique in the file.
    pub name: String,
    /// Spec sections the vector illustrates.
    pub spec: String,
    /// `ok`, or the first validation check the datagram fails.
    pub expect: String,
    /// UDP source (address and port) the ICRC was computed for.
    pub src: SocketAddr,
    /// UDP destination the ICRC was computed for.
    pub dst: SocketAddr,
    /// Header field values by name, as written in the file.
    pub fields: BTreeMap<String, String>,
    /// The whole UDP payload, ICRC included.
    pub bytes: Vec<u8>,
}

impl Vector {
    /// An integer field (decimal or `0x` hex), if present.
    pub fn int(&self, name: &str) -> Option<u64> {
        let v = self.fields.get(name)?;
        match v.strip_prefix("0x") {
            Some(hex) => u64::from_str_radix(hex, 16).ok(),
            None => v.parse().ok(),
        }
    }

    /// An integer field, 0 when absent.
    pub fn int_or0(&self, name: &str) -> u64 {
        self.int(name).unwrap_or(0)
    }
}

/// The committed vector file.
pub const VECTORS_TXT: &str = include_str!("vectors.txt");

/// Parses the vector file; panics on a malformed file (it is committed test data).
pub fn load() -> Vec<Vector> {
    let mut out = Vec::new();
    let mut cur: Option<(String, BTreeMap<String, String>)> = None;
    let finish = |name: String, mut f: BTreeMap<String, String>, out: &mut Vec<Vector>| {
        let mut take = |k: &str| f.remove(k).unwrap_or_else(|| panic!("{name}: no {k}"));
        let bytes = take("udp_payload")
            .split_whitespace()
            .map(|h| u8::from_str_radix(h, 16).expect("hex byte"))
            .collect();
        let v = Vector {
            spec: take("spec"),
            expect: take("expect"),
            src: take("src").parse().expect("src address"),
            dst: take("dst").parse().expect("dst address"),
            name,
            fields: f,
            bytes,
        };
        out.push(v);
    };
    for line in VECTORS_TXT.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            if let Some((n, f)) = cur.take() {
                finish(n, f, &mut out);
            }
            cur = Some((name.to_string(), BTreeMap::new()));
            continue;
        }
        let (k, v) = line.split_once(" = ").expect("key = value");
        let (_, fields) = cur.as_mut().expect("a field before the first section");
        fields.insert(k.to_string(), v.to_string());
    }
    if let Some((n, f)) = cur.take() {
        finish(n, f, &mut out);
    }
    out
}

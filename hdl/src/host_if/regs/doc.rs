//! `docs/regmap.md` generated from the register table, and the hash of
//! its text the ID block's `MAP_HASH` carries.

use std::fmt::Write as _;

use super::{Access, BAR_BYTES, BLOCKS, HDR_NEXT, MAP_VERSION, all_regs, header_value};

/// The register map as Markdown (`docs/regmap.md`), without the hash line.
fn regmap_body() -> String {
    let mut s = String::new();
    for b in BLOCKS {
        writeln!(
            s,
            "## {} at `0x{:04X}`: type `0x{:08X}`, version {}\n\n{}.\n",
            b.name,
            b.base,
            b.type_id,
            b.version,
            capitalise(b.doc)
        )
        .unwrap();
        writeln!(s, "| offset | name | access | bits | reset | description |").unwrap();
        writeln!(s, "|---|---|---|---|---|---|").unwrap();
        for (addr, bb, r) in all_regs() {
            if bb.base != b.base {
                continue;
            }
            let (acc, bits, reset) = match r.access {
                Access::Id if r.offset <= HDR_NEXT => (
                    "RO".to_string(),
                    "32".to_string(),
                    format!("`0x{:X}`", header_value(b, r.offset)),
                ),
                Access::Id | Access::Ro(_) => ("RO".into(), "32".into(), "—".into()),
                Access::Rw { bits, reset } => ("RW".into(), bits.to_string(), format!("{reset}")),
                Access::Wo => ("WO".into(), "32".into(), "—".into()),
            };
            writeln!(
                s,
                "| `0x{addr:04X}` (+0x{:02X}) | `{}` | {acc} | {bits} | {reset} | {} |",
                r.offset,
                r.name,
                r.doc.replace('|', "\\|")
            )
            .unwrap();
        }
        s.push('\n');
    }
    s
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// FNV-1a (32 bits) of the register map's text: the ID block's `MAP_HASH`.
pub fn map_hash() -> u32 {
    regmap_body().bytes().fold(0x811C_9DC5u32, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

/// `docs/regmap.md`: generated from [`BLOCKS`] (`metaroce hdl regmap`
/// prints it; a test checks the committed file equals it).
pub fn regmap_markdown() -> String {
    format!(
        "# MetaRoCE NIC BAR0 register map\n\n\
         Generated from `metaroce_hdl::host_if::regs` (`metaroce hdl regmap > docs/regmap.md`); \
         do not edit by hand: `cargo test -p metaroce-hdl` fails when this file and the table differ. \
         The host interface itself is described in `docs/hardware.md` §18.\n\n\
         Registers are 32 bits, accessed as whole 4-byte aligned words; 64-bit values are two \
         registers (`_LO`, `_HI`). BAR0 decodes {} KiB. An access to an offset with no register \
         (or a write to a read-only one) is ignored, reads 0 and counts in `ID.BAR_BAD`. \
         Every block starts with `TYPE` (+0x00), `VERSION` (+0x04) and `NEXT` (+0x08, the BAR \
         offset of the next block, 0 for the last); the list starts at offset 0. \
         Map version {MAP_VERSION}, `MAP_HASH` = `0x{:08X}`.\n\n{}",
        BAR_BYTES >> 10,
        map_hash(),
        regmap_body()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The committed `docs/regmap.md` is the generated text: regenerate it
    /// with `metaroce hdl regmap > docs/regmap.md` (or
    /// `METAROCE_BLESS=1 cargo test -p metaroce-hdl regmap`).
    #[test]
    fn regmap_doc_is_generated_from_the_table() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/regmap.md");
        let want = regmap_markdown();
        if std::env::var_os("METAROCE_BLESS").is_some() {
            std::fs::write(path, &want).expect("write docs/regmap.md");
        }
        let got = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            got == want,
            "docs/regmap.md differs from the register table: run `metaroce hdl regmap > docs/regmap.md`"
        );
    }
}

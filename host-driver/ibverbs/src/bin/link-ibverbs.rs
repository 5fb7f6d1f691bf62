//! Links the `metaroce-ibverbs` static library into `libibverbs.so.1` with real symbol
//! versions.
//!
//! ```text
//! link-ibverbs <libmetaroce_ibverbs.a> <output dir>
//! ```
//!
//! Writes `<output dir>/libibverbs.map` (the version script, generated from the
//! committed listing `abi/libibverbs-44.symbols`), `<output dir>/libibverbs.so.1`, and
//! the symlink `<output dir>/libibverbs.so`. A `cdylib` cannot do this: rustc passes
//! its own version script, and the symbols come out unversioned. The linking is
//! `metaroce_cabi::link`, shared with `link-rdmacm`.

use std::path::Path;
use std::process::ExitCode;

use metaroce_cabi::link::{LIBIBVERBS, link};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [staticlib, out_dir] = args.as_slice() else {
        eprintln!("usage: link-ibverbs <libmetaroce_ibverbs.a> <output dir>");
        return ExitCode::from(2);
    };
    match link(&LIBIBVERBS, Path::new(staticlib), Path::new(out_dir)) {
        Ok(so) => {
            println!("{}", so.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("link-ibverbs: {e}");
            ExitCode::FAILURE
        }
    }
}

//! Links the `metaroce-rdmacm` static library into `librdmacm.so.1` with real symbol
//! versions, against the `libibverbs.so.1` already in the output directory.
//!
//! ```text
//! link-rdmacm <libmetaroce_rdmacm.a> <output dir>
//! ```
//!
//! Writes `<output dir>/librdmacm.map` (the version script, generated from the committed
//! listing `abi/librdmacm-44.symbols`), `<output dir>/librdmacm.so.1`, and the symlink
//! `<output dir>/librdmacm.so`.

use std::path::Path;
use std::process::ExitCode;

use metaroce_cabi::link::{LIBRDMACM, link};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [staticlib, out_dir] = args.as_slice() else {
        eprintln!("usage: link-rdmacm <libmetaroce_rdmacm.a> <output dir>");
        return ExitCode::from(2);
    };
    match link(&LIBRDMACM, Path::new(staticlib), Path::new(out_dir)) {
        Ok(so) => {
            println!("{}", so.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("link-rdmacm: {e}");
            ExitCode::FAILURE
        }
    }
}

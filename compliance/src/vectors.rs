//! The pinned vectors of `proto/vectors/vectors.txt`, used to check the suite's own
//! codec before it judges anyone else's.

#[allow(dead_code)]
#[path = "../../proto/vectors/parse.rs"]
mod parse;

use metaroce_proto::{PseudoHeader, parse_datagram};

use crate::{Ctx, Verdict, check};

/// §3.10, §4: every pinned valid datagram parses with a correct ICRC under the
/// suite's codec, and every invalid one is refused. A failure here means the
/// suite itself (its `metaroce-proto`) is broken, not the target.
pub fn pinned_vectors_self_check(_ctx: &mut Ctx) -> Verdict {
    let vs = parse::load();
    check!(vs.len() >= 20, "only {} pinned vectors", vs.len());
    for v in &vs {
        let pseudo = PseudoHeader::new(v.src.ip(), v.src.port(), v.dst.ip(), v.dst.port());
        let r = parse_datagram(&v.bytes, &pseudo);
        check!(
            r.is_ok() == (v.expect == "ok"),
            "vector {}: expected {}, got {:?}",
            v.name,
            v.expect,
            r.err()
        );
    }
    Ok(())
}

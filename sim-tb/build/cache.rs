//! The build script's content-addressed cache of built models (see the
//! "Model cache" section of `build.rs`'s doc).
//!
//! An entry is a directory `<name>-<key>`: `key` is 128 bits of the SHA-256
//! of the recipe (everything but the model's own source that shapes what is
//! built) and the entry's content (the model's Verilog). It is filled in a
//! temporary directory `tmp-<name>-<pid>` and renamed into place, so an
//! interrupted build never leaves a partial entry, and two builds filling
//! the same entry at once both end with a whole one.

use sha2::{Digest, Sha256};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// Entries kept per name (model, runtime, lint): the newest by last use.
const KEEP: usize = 3;
/// A temporary directory this old is a killed build's: removed.
const STALE_TMP: Duration = Duration::from_secs(24 * 3600);
/// File in an entry whose modification time is the entry's last use.
const USED: &str = "last-used";

/// The cache: its directory and the recipe's digest.
pub struct Cache {
    dir: PathBuf,
    recipe: Vec<u8>,
}

impl Cache {
    /// The cache at `$METAROCE_VERILATOR_CACHE`, else at
    /// `<target>/metaroce-verilator-cache` (`out` is
    /// `<target>/<profile>/build/<package>-<hash>/out`, so every profile and
    /// every cargo command of the target dir share it), for builds whose
    /// recipe is the concatenation of `parts`.
    pub fn new(out: &Path, parts: &[Vec<u8>]) -> Cache {
        let dir = std::env::var_os("METAROCE_VERILATOR_CACHE").map_or_else(
            || {
                let target = out
                    .ancestors()
                    .nth(4)
                    .filter(|_| out.ancestors().nth(2).is_some_and(|b| b.ends_with("build")))
                    .unwrap_or(out);
                target.join("metaroce-verilator-cache")
            },
            PathBuf::from,
        );
        fs::create_dir_all(&dir).expect("create the Verilator model cache");
        Cache {
            dir,
            recipe: digest(&parts.iter().map(Vec::as_slice).collect::<Vec<_>>()),
        }
    }

    /// The entry `name` for `content`: on a miss, `fill` builds it in an
    /// empty temporary directory first. Reports hit or miss on the build
    /// script's output (`target/<profile>/build/metaroce-sim-tb-*/output`).
    pub fn get_or_fill(&self, name: &str, content: &[u8], fill: impl FnOnce(&Path)) -> PathBuf {
        let key = digest(&[&self.recipe, name.as_bytes(), &[0], content]);
        let hex: String = key[..16].iter().map(|b| format!("{b:02x}")).collect();
        let entry = self.dir.join(format!("{name}-{hex}"));
        if entry.is_dir() {
            println!("verilator cache: {name} hit ({})", entry.display());
        } else {
            let tmp = self.dir.join(format!("tmp-{name}-{}", std::process::id()));
            let _ = fs::remove_dir_all(&tmp);
            fs::create_dir_all(&tmp).expect("create a cache temporary directory");
            fill(&tmp);
            // Another build may have filled it meanwhile: keep either copy.
            if fs::rename(&tmp, &entry).is_err() {
                assert!(
                    entry.is_dir(),
                    "cannot rename {} into the cache",
                    tmp.display()
                );
                let _ = fs::remove_dir_all(&tmp);
            }
            println!("verilator cache: {name} built ({})", entry.display());
        }
        fs::write(entry.join(USED), b"").expect("mark a cache entry used");
        entry
    }

    /// Removes all but the [`KEEP`] most recently used entries of each name,
    /// and temporary directories of builds killed long ago.
    pub fn prune(&self) {
        let mut entries: Vec<(String, SystemTime, PathBuf)> = Vec::new();
        for e in fs::read_dir(&self.dir).expect("read the cache").flatten() {
            let path = e.path();
            let file = e.file_name().to_string_lossy().into_owned();
            if file.starts_with("tmp-") {
                let age = e.metadata().and_then(|m| m.modified()).ok();
                if age
                    .and_then(|t| t.elapsed().ok())
                    .is_some_and(|a| a > STALE_TMP)
                {
                    let _ = fs::remove_dir_all(&path);
                }
            } else if let Some((name, _)) = file.rsplit_once('-') {
                let used = fs::metadata(path.join(USED))
                    .and_then(|m| m.modified())
                    .unwrap_or(SystemTime::UNIX_EPOCH);
                entries.push((name.to_string(), used, path));
            }
        }
        // Newest first within each name.
        entries.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        let mut kept = 0;
        for (i, (name, _, path)) in entries.iter().enumerate() {
            kept = if i > 0 && entries[i - 1].0 == *name {
                kept + 1
            } else {
                1
            };
            if kept > KEEP {
                let _ = fs::remove_dir_all(path);
            }
        }
    }
}

/// The object files in `dir`, sorted.
pub fn objects_in(dir: &Path) -> Vec<PathBuf> {
    let mut objects: Vec<_> = fs::read_dir(dir)
        .expect("read a cache entry")
        .map(|e| e.expect("cache entry file").path())
        .filter(|p| p.extension().is_some_and(|e| e == "o"))
        .collect();
    objects.sort();
    objects
}

/// SHA-256 of `parts`, each prefixed by its length (so no two lists of parts
/// hash the same text).
fn digest(parts: &[&[u8]]) -> Vec<u8> {
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p);
    }
    h.finalize().to_vec()
}

//! Compiled kernels kept on disk across processes: cutile's content-addressed cubin cache.
//!
//! cutile keys each cubin by its Tile IR bytecode, the GPU, the options and the `tileiras`
//! version, so a later process that launches the same specialization skips `tileiras` (its
//! front end still lowers the kernel to bytecode). Where the cache lives:
//! `TILEBRIDGE_CACHE_DIR`, `off` for none; by default cutile's own per-user folder
//! (`~/.cache/cutile/kernels`, shared with native cutile programs). `tilebridge cache list|clear`
//! shows and empties it.

use std::sync::{Arc, Once};

use cutile::jit_cache::{self, FileSystemJitStore};

/// The environment variable that places (or, set to `off`, disables) the cache.
pub const CACHE_DIR_ENV: &str = "TILEBRIDGE_CACHE_DIR";

/// Turns the disk cache on for this extension's copy of cutile, once per process. A cache that
/// cannot be opened is left off: compiling without it is slower, never wrong.
pub fn enable_once() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| match std::env::var_os(CACHE_DIR_ENV) {
        Some(dir) if dir == "off" => {}
        Some(dir) if !dir.is_empty() => {
            if let Ok(store) = FileSystemJitStore::new(dir) {
                jit_cache::enable(Arc::new(store));
            }
        }
        _ => {
            let _ = jit_cache::enable_default();
        }
    });
}

//! The tests use the engine's own loopback bench.
pub use metaroce_firmware::loopback::*;

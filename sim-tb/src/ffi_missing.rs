//! Stand-in for `ffi.rs` when the crate was built without Verilator: no
//! model can be created, so every [`Handle`] method is unreachable.

use std::convert::Infallible;
use std::path::Path;

use crate::{Model, SimError};

/// Never constructed: [`Handle::new`] always fails.
pub(crate) struct Handle(Infallible);

/// Words of 32 bits that carry a `bits`-wide port (Verilator's layout).
pub(crate) fn words_for(bits: usize) -> usize {
    bits.div_ceil(32).max(1)
}

impl Handle {
    pub(crate) fn new(_model: Model) -> Result<Self, SimError> {
        Err(SimError::VerilatorMissing)
    }

    pub(crate) fn ports(&self) -> &'static [(&'static str, usize)] {
        match self.0 {}
    }

    pub(crate) fn eval(&mut self) {
        match self.0 {}
    }

    pub(crate) fn tick(&mut self, _settled: bool) {
        match self.0 {}
    }

    pub(crate) fn set_u64(&mut self, _id: usize, _value: u64) {
        match self.0 {}
    }

    pub(crate) fn get_u64(&self, _id: usize) -> u64 {
        match self.0 {}
    }

    pub(crate) fn set_words(&mut self, _id: usize, _words: &[u32]) {
        match self.0 {}
    }

    pub(crate) fn get_words(&self, _id: usize, _words: &mut [u32]) {
        match self.0 {}
    }

    pub(crate) fn trace_open(&mut self, _path: &Path) -> Result<(), SimError> {
        match self.0 {}
    }
}

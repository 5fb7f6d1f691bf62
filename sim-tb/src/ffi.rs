//! The C ABI of the Verilator shim (`csrc/vshim.h`): the crate's only
//! `unsafe` code. [`Handle`] owns one model instance.

use std::ffi::{CString, c_char, c_int, c_void};
use std::path::Path;
use std::ptr::NonNull;

use crate::{Model, SimError};

include!(concat!(env!("OUT_DIR"), "/ports.rs"));

/// Entry points of one model's shim.
pub(crate) struct ModelFns {
    new: unsafe extern "C" fn() -> *mut c_void,
    free: unsafe extern "C" fn(*mut c_void),
    eval: unsafe extern "C" fn(*mut c_void),
    tick: unsafe extern "C" fn(*mut c_void, c_int),
    port: unsafe extern "C" fn(*mut c_void, u32, *mut u32) -> *mut c_void,
    trace_open: unsafe extern "C" fn(*mut c_void, *const c_char) -> c_int,
    /// (name, bits) per port; the index is the port id of `port`.
    pub(crate) ports: &'static [(&'static str, usize)],
}

/// Declares one model's shim entry points and its [`ModelFns`] table.
macro_rules! model {
    ($table:ident, $ports:ident, $new:ident, $free:ident, $eval:ident, $tick:ident,
     $port:ident, $trace:ident) => {
        unsafe extern "C" {
            fn $new() -> *mut c_void;
            fn $free(h: *mut c_void);
            fn $eval(h: *mut c_void);
            fn $tick(h: *mut c_void, settled: c_int);
            fn $port(h: *mut c_void, port: u32, bytes: *mut u32) -> *mut c_void;
            fn $trace(h: *mut c_void, path: *const c_char) -> c_int;
        }

        static $table: ModelFns = ModelFns {
            new: $new,
            free: $free,
            eval: $eval,
            tick: $tick,
            port: $port,
            trace_open: $trace,
            ports: $ports,
        };
    };
}

model!(
    RX_PARSER_64,
    RX_PARSER_64_PORTS,
    rx_parser_64_new,
    rx_parser_64_free,
    rx_parser_64_eval,
    rx_parser_64_tick,
    rx_parser_64_port,
    rx_parser_64_trace_open
);
model!(
    RX_PARSER_512,
    RX_PARSER_512_PORTS,
    rx_parser_512_new,
    rx_parser_512_free,
    rx_parser_512_eval,
    rx_parser_512_tick,
    rx_parser_512_port,
    rx_parser_512_trace_open
);
model!(
    RX_CORE_64,
    RX_CORE_64_PORTS,
    rx_core_64_new,
    rx_core_64_free,
    rx_core_64_eval,
    rx_core_64_tick,
    rx_core_64_port,
    rx_core_64_trace_open
);
model!(
    RX_CORE_512,
    RX_CORE_512_PORTS,
    rx_core_512_new,
    rx_core_512_free,
    rx_core_512_eval,
    rx_core_512_tick,
    rx_core_512_port,
    rx_core_512_trace_open
);

model!(
    RX_PATH_8,
    RX_PATH_8_PORTS,
    rx_path_8_new,
    rx_path_8_free,
    rx_path_8_eval,
    rx_path_8_tick,
    rx_path_8_port,
    rx_path_8_trace_open
);
model!(
    TX_PATH_16,
    TX_PATH_16_PORTS,
    tx_path_16_new,
    tx_path_16_free,
    tx_path_16_eval,
    tx_path_16_tick,
    tx_path_16_port,
    tx_path_16_trace_open
);
model!(
    RX_ETH_64,
    RX_ETH_64_PORTS,
    rx_eth_64_new,
    rx_eth_64_free,
    rx_eth_64_eval,
    rx_eth_64_tick,
    rx_eth_64_port,
    rx_eth_64_trace_open
);
model!(
    RX_ETH_512,
    RX_ETH_512_PORTS,
    rx_eth_512_new,
    rx_eth_512_free,
    rx_eth_512_eval,
    rx_eth_512_tick,
    rx_eth_512_port,
    rx_eth_512_trace_open
);
model!(
    NIC_RX_64,
    NIC_RX_64_PORTS,
    nic_rx_64_new,
    nic_rx_64_free,
    nic_rx_64_eval,
    nic_rx_64_tick,
    nic_rx_64_port,
    nic_rx_64_trace_open
);
model!(
    TX_BUILD_64,
    TX_BUILD_64_PORTS,
    tx_build_64_new,
    tx_build_64_free,
    tx_build_64_eval,
    tx_build_64_tick,
    tx_build_64_port,
    tx_build_64_trace_open
);
model!(
    TX_BUILD_512,
    TX_BUILD_512_PORTS,
    tx_build_512_new,
    tx_build_512_free,
    tx_build_512_eval,
    tx_build_512_tick,
    tx_build_512_port,
    tx_build_512_trace_open
);
model!(
    NIC_CORE_64,
    NIC_CORE_64_PORTS,
    nic_core_64_new,
    nic_core_64_free,
    nic_core_64_eval,
    nic_core_64_tick,
    nic_core_64_port,
    nic_core_64_trace_open
);
model!(
    NIC_DEVICE_64,
    NIC_DEVICE_64_PORTS,
    nic_device_64_new,
    nic_device_64_free,
    nic_device_64_eval,
    nic_device_64_tick,
    nic_device_64_port,
    nic_device_64_trace_open
);

/// Words of 32 bits that carry a `bits`-wide port (Verilator's layout).
pub(crate) fn words_for(bits: usize) -> usize {
    bits.div_ceil(32).max(1)
}

/// Bytes of the member Verilator keeps a `bits`-wide port in: `CData`,
/// `SData`, `IData`, `QData`, or 32-bit words.
fn storage_bytes(bits: usize) -> usize {
    match bits {
        0..=8 => 1,
        9..=16 => 2,
        17..=32 => 4,
        33..=64 => 8,
        _ => 4 * words_for(bits),
    }
}

/// One live Verilated model; freed on drop.
pub(crate) struct Handle {
    ptr: NonNull<c_void>,
    fns: &'static ModelFns,
    /// Per port id: its member in the model and that member's size in
    /// bytes ([`storage_bytes`]).
    slots: Vec<(NonNull<u8>, usize)>,
}

impl Handle {
    /// A fresh model instance.
    pub(crate) fn new(model: Model) -> Result<Self, SimError> {
        let fns = match model {
            Model::RxParser64 => &RX_PARSER_64,
            Model::RxParser512 => &RX_PARSER_512,
            Model::RxCore64 => &RX_CORE_64,
            Model::RxCore512 => &RX_CORE_512,
            Model::RxPath8 => &RX_PATH_8,
            Model::TxPath16 => &TX_PATH_16,
            Model::RxEth64 => &RX_ETH_64,
            Model::RxEth512 => &RX_ETH_512,
            Model::NicRx64 => &NIC_RX_64,
            Model::TxBuild64 => &TX_BUILD_64,
            Model::TxBuild512 => &TX_BUILD_512,
            Model::NicCore64 => &NIC_CORE_64,
            Model::NicDevice64 => &NIC_DEVICE_64,
        };
        // SAFETY: `new` takes no arguments and returns a heap object it owns
        // over to us, or null for a model `METAROCE_SIM_ONLY` left out (C++
        // `new` throws rather than returning null).
        let raw = unsafe { (fns.new)() };
        let ptr = NonNull::new(raw).ok_or(SimError::NotBuilt(model))?;
        let slots = fns
            .ports
            .iter()
            .enumerate()
            .map(|(id, &(name, bits))| {
                let mut bytes = 0u32;
                // SAFETY: `ptr` is the live model `new` returned; `port` only
                // takes a member's address and size, written to `bytes`.
                let slot = unsafe { (fns.port)(ptr.as_ptr(), id as u32, &mut bytes) };
                assert_eq!(
                    bytes as usize,
                    storage_bytes(bits),
                    "port {name}: the model's member is not {bits} bits"
                );
                let slot = NonNull::new(slot.cast::<u8>()).expect("port address");
                (slot, storage_bytes(bits))
            })
            .collect();
        Ok(Self { ptr, fns, slots })
    }

    pub(crate) fn ports(&self) -> &'static [(&'static str, usize)] {
        self.fns.ports
    }

    pub(crate) fn eval(&mut self) {
        // SAFETY: `ptr` came from this model's `new` and is live until drop.
        unsafe { (self.fns.eval)(self.ptr.as_ptr()) }
    }

    /// One clock cycle; `settled`: no input was written since the last
    /// [`Handle::eval`] (the shim then skips re-evaluating the
    /// input-driven logic at the edge).
    pub(crate) fn tick(&mut self, settled: bool) {
        // SAFETY: as in `eval`.
        unsafe { (self.fns.tick)(self.ptr.as_ptr(), settled.into()) }
    }

    /// Writes port `id`, at most 64 bits wide, to `value` (which fits it).
    #[inline]
    pub(crate) fn set_u64(&mut self, id: usize, value: u64) {
        let (slot, bytes) = self.slots[id];
        // SAFETY: `slot` is port `id`'s member of the live model, aligned
        // and as many bytes as `storage_bytes` (checked in `new`) says; the
        // widths below are those sizes, and nothing else accesses the model
        // during the write (`&mut self`).
        unsafe {
            match bytes {
                1 => slot.write(value as u8),
                2 => slot.cast::<u16>().write(value as u16),
                4 => slot.cast::<u32>().write(value as u32),
                8 => slot.cast::<u64>().write(value),
                n => panic!("port {id} is {n} bytes wide, not a u64"),
            }
        }
    }

    /// Reads port `id`, at most 64 bits wide.
    #[inline]
    pub(crate) fn get_u64(&self, id: usize) -> u64 {
        let (slot, bytes) = self.slots[id];
        // SAFETY: as in `set_u64`, reading; the model only changes inside
        // `eval`/`tick`, which take `&mut self`.
        unsafe {
            match bytes {
                1 => slot.read().into(),
                2 => slot.cast::<u16>().read().into(),
                4 => slot.cast::<u32>().read().into(),
                8 => slot.cast::<u64>().read(),
                n => panic!("port {id} is {n} bytes wide, not a u64"),
            }
        }
    }

    /// Writes a port wider than 64 bits from `words` (little-endian 32-bit
    /// words, at least as many as it has).
    pub(crate) fn set_words(&mut self, id: usize, words: &[u32]) {
        let n = self.wide_words(id);
        assert!(words.len() >= n, "too few words for port {id}");
        // SAFETY: as in `set_u64`; the member is `n` aligned 32-bit words
        // and `words` has at least `n`.
        unsafe {
            std::ptr::copy_nonoverlapping(
                words.as_ptr(),
                self.slots[id].0.cast::<u32>().as_ptr(),
                n,
            )
        }
    }

    /// Reads a port wider than 64 bits into `words` (at least as many as it
    /// has).
    pub(crate) fn get_words(&self, id: usize, words: &mut [u32]) {
        let n = self.wide_words(id);
        assert!(words.len() >= n, "too few words for port {id}");
        // SAFETY: as in `get_u64`; `words` has room for the `n` words.
        unsafe {
            std::ptr::copy_nonoverlapping(
                self.slots[id].0.cast::<u32>().as_ptr(),
                words.as_mut_ptr(),
                n,
            )
        }
    }

    /// Words of port `id`, which must be wider than 64 bits.
    fn wide_words(&self, id: usize) -> usize {
        let bits = self.fns.ports[id].1;
        assert!(bits > 64, "port {id} is {bits} bits: use the u64 accessors");
        words_for(bits)
    }

    /// Starts a VCD dump to `path`; every later `tick` is recorded.
    pub(crate) fn trace_open(&mut self, path: &Path) -> Result<(), SimError> {
        let c = CString::new(path.as_os_str().as_encoded_bytes())
            .map_err(|_| SimError::Trace(path.to_owned()))?;
        // SAFETY: `ptr` is live; `c` is a NUL-terminated string that outlives
        // the call (the shim copies the file name when opening).
        let rc = unsafe { (self.fns.trace_open)(self.ptr.as_ptr(), c.as_ptr()) };
        if rc == 0 {
            Ok(())
        } else {
            Err(SimError::Trace(path.to_owned()))
        }
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        // SAFETY: `ptr` came from `new` and is freed exactly once, here.
        unsafe { (self.fns.free)(self.ptr.as_ptr()) }
    }
}

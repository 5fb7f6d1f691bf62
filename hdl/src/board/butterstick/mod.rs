//! The ButterStick r1.0 (Lattice LFE5UM5G-85F-8BG381C, a 30 MHz oscillator,
//! a Microchip KSZ9031 Gigabit PHY on RGMII): [`NicBoard`], the NIC with
//! its management path over a UART, and [`EthEcho`], a top that sends back
//! every good frame it receives, to bring up the MAC and the PHY; the
//! width converters between the MAC's bytes and the NIC's beats
//! ([`beats`]).

pub mod beats;
mod echo;
mod nic;

pub use echo::EthEcho;
pub use nic::NicBoard;

/// The board's FPGA, as nextpnr-ecp5 names it.
pub const DEVICE: &str = "um5g-85k";
/// Its package.
pub const PACKAGE: &str = "CABGA381";
/// Its speed grade.
pub const SPEED: u32 = 8;
/// The oscillator, MHz.
pub const OSCILLATOR_MHZ: u32 = 30;
/// The GMII clock, MHz.
pub const GMII_MHZ: u32 = 125;

/// The NIC's core clock, MHz: below the slowest block's routed Fmax inside
/// `NicCore` (the path receive tracker, 24.0 MHz at -6 in
/// `docs/bitstreams.md`), and a divider of a VCO (500 MHz) that also gives
/// [`GMII_MHZ`].
pub const CORE_MHZ: u32 = 20;
/// The management UART's rate, bit/s.
pub const UART_BAUD: u32 = 115_200;

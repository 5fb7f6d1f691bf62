//! Board tops: the vendor primitives a board needs ([`ecp5`]), the RGMII
//! pins ([`RgmiiIo`]), the Ethernet echo top of the ButterStick
//! ([`butterstick`]), and the pieces of the management path from a host
//! (`docs/hardware.md` §19): a UART ([`uart`]), block RAM as the NIC's
//! local memory ([`local_mem`]), the engine between them and BAR0
//! ([`mgmt`]), and all of it wired as one block ([`mgmt_port`]).

pub mod butterstick;
pub mod ecp5;
pub mod local_mem;
pub mod mgmt;
pub mod mgmt_port;
mod rgmii;
pub mod uart;

pub use rgmii::RgmiiIo;

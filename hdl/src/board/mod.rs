//! Board tops: the vendor primitives a board needs ([`ecp5`]), the RGMII
//! pins ([`RgmiiIo`]) and the Ethernet echo top of the ButterStick
//! ([`butterstick`]).

pub mod butterstick;
pub mod ecp5;
mod rgmii;

pub use rgmii::RgmiiIo;

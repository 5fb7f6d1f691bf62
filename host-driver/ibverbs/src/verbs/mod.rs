//! The exported verbs, by area.

pub mod datapath;
pub mod device;
pub mod misc;
pub mod qp_ex;
pub mod resources;
pub mod srq;

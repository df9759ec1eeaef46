//! End hosts: the NIC between a host's transports and its link.

pub mod config;
mod nic;
mod paced;

pub use nic::{Nic, WAKE};

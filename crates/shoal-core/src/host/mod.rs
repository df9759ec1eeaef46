//! End hosts: the NIC between a host's transports and its link.

mod nic;

pub use nic::Nic;

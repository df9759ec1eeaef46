//! End-host transports: the TCP machinery (sender, receiver), its congestion-control
//! trait with NewReno, ECN* and DCTCP, and constant-rate UDP.

pub mod cc;
pub mod sack;
mod tcp;
mod udp;

pub use cc::CongestionControl;
pub use tcp::{IdleConnection, TcpConfig, TcpReceiver, TcpSender};
pub use udp::UdpSource;

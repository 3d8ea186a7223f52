//! The sans-I/O media engine shared by simulated and real calls.
//!
//! - [`payload`]: the synthetic codec's 24-byte payload header (frame id, packet index and count,
//!   key flag, capture instant), so a receiver rebuilds frames from RTP alone.

pub mod payload;

//! Braid's link emulator: the simulator's link model applied to real IP
//! packets in real time, between network namespaces joined through TUN
//! devices. See `docs/emulator.md`.

pub mod emulator;
pub mod engine;
pub mod link;
pub mod netns;
pub mod packet;
pub mod plan;
pub mod pool;
pub mod signals;
pub mod tun;

pub use emulator::{Config, Emulator, LinkReport, Report};

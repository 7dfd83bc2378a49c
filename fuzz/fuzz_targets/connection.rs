//! A client and a server driven by arbitrary bytes (the network's choices,
//! the clock, the applications' calls, forged and bit-flipped packets):
//! nothing panics and the oracle of `common/drive.rs` holds.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../crates/braid-proto/tests/common/drive.rs"]
mod drive;

fuzz_target!(|data: &[u8]| {
    drive::drive(data);
});

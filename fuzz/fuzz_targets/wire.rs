//! The wire parser on arbitrary bytes: it never panics, and whatever it
//! accepts encodes to bytes that decode to the same packet.
#![no_main]

use braid_proto::wire;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(header) = wire::Header::new_checked(data) {
        let _ = (header.cid(), header.subflow());
    }
    let Ok(packet) = wire::decode(data) else { return };
    let mut bytes = Vec::new();
    wire::encode(&packet, &mut bytes);
    assert_eq!(bytes.len(), wire::encoded_len(&packet), "encoded_len disagrees with encode");
    assert_eq!(wire::decode(&bytes).as_ref(), Ok(&packet), "decode(encode(p)) != p");
});

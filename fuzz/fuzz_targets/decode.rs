//! Request decoding and validation of the shared wire types: any bytes either decode or fail
//! with a 400/422 `ApiError`, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|body: &[u8]| {
    if let Err(e) = roastery_adapters_http::fuzzing::decode_wire(body) {
        assert!(matches!(e.status.as_u16(), 400 | 422), "{} {}", e.status, e.code);
    }
});

//! The one hash kaas places things by: FNV-1a 32 (offset basis 0x811c9dc5, prime 0x01000193,
//! wrapping multiply), over a transactional id for its slot file and, taken modulo the brokers,
//! for its coordinator (kaas-internals §1, §3). Its own module because the slot store, the
//! cluster's routing and its partition leadership all use it, and none of them owns it.

/// FNV-1a, 32 bits.
pub fn fnv1a32(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5u32, |h, b| {
        (h ^ u32::from(*b)).wrapping_mul(0x0100_0193)
    })
}

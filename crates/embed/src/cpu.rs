//! What the CPU this process runs on can do, checked at run time: one place for the
//! checks that decide which build of a kernel runs (the int8 linear layers in
//! `bert/quant.rs`, the arena's int8 pass in `arena.rs`).

/// Whether the CPU runs code compiled for AVX-512 VNNI (`vpdpbusd`) with the AVX-512 F
/// and BW instructions around it.
#[cfg(target_arch = "x86_64")]
pub(crate) fn avx512_vnni() -> bool {
    std::arch::is_x86_feature_detected!("avx512vnni")
        && std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512bw")
}

#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| gitloom_fuzz::store_path(data));

//! With the `prost` feature: Rust messages for all of Perfetto's trace protos
//! (the vendored merged file), compiled by protox, so no protoc is needed.

fn main() {
    #[cfg(feature = "prost")]
    {
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../crates/cupmon-pftrace/proto"
        );
        println!("cargo:rerun-if-changed={dir}/perfetto_trace.proto");
        let fds = protox::compile(["perfetto_trace.proto"], [dir]).expect("perfetto_trace.proto");
        prost_build::Config::new()
            .compile_fds(fds)
            .expect("prost code for perfetto_trace.proto");
    }
}

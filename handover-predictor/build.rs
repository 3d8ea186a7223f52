//! Generates the prost messages and the tonic client/server for the dish's gRPC API from the
//! minimal schema in `proto/` (see `proto/spacex_api/device/device.proto` and `src/dish/proto.rs`).
//!
//! protoc comes from the `protoc-bin-vendored` crate, so building needs no system protoc. It is
//! handed to prost through `Config::protoc_executable` rather than by setting the `PROTOC`
//! environment variable: `std::env::set_var` is `unsafe` in edition 2024 and the workspace
//! forbids unsafe code. A `PROTOC` set by the caller still wins, for platforms the vendored
//! crate does not cover.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    #[cfg(feature = "dish")]
    compile_dish_protos()?;
    Ok(())
}

/// Only with the `dish` feature: without it nothing here is needed.
#[cfg(feature = "dish")]
fn compile_dish_protos() -> Result<(), Box<dyn std::error::Error>> {
    use std::path::PathBuf;

    let protos = [
        "proto/spacex_api/device/device.proto",
        "proto/spacex_api/status/status.proto",
    ];
    for proto in protos {
        println!("cargo:rerun-if-changed={proto}");
    }
    println!("cargo:rerun-if-env-changed=PROTOC");

    let protoc = match std::env::var_os("PROTOC") {
        Some(path) => PathBuf::from(path),
        None => protoc_bin_vendored::protoc_bin_path()?,
    };
    let mut config = tonic_prost_build::Config::new();
    config.protoc_executable(protoc);

    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .compile_with_config(config, &protos, &["proto"])?;
    Ok(())
}

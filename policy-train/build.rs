//! Records libtorch's library directories as the run path of everything this package links
//! (the binary, its tests and benches), so `policy-train` starts without `LD_LIBRARY_PATH`.
//!
//! `LIBTORCH` is the torch directory the project's set-up script installs
//! (`scripts/setup-libtorch.sh`, a pip wheel): its `lib/` holds `libtorch_cpu.so` and friends,
//! and the CUDA runtime they were built against sits in the same site-packages under
//! `nvidia/cu13/lib` (the DEVELOPERS' libtorch facts). Without `LIBTORCH` (a system libtorch
//! found by torch-sys some other way) nothing is added.

use std::path::Path;

fn main() {
    println!("cargo:rerun-if-env-changed=LIBTORCH");
    let unix_like = matches!(
        std::env::var("CARGO_CFG_TARGET_OS").as_deref(),
        Ok("linux") | Ok("macos")
    );
    let Ok(torch) = std::env::var("LIBTORCH") else {
        return;
    };
    if !unix_like {
        return;
    }
    let torch = Path::new(&torch);
    for dir in [torch.join("lib"), torch.join("../nvidia/cu13/lib")] {
        if let Ok(dir) = dir.canonicalize() {
            println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir.display());
        }
    }
}

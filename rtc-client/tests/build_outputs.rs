//! A test binary reads its fixtures (scenarios, traces, models) through the compile-time
//! `CARGO_MANIFEST_DIR`. One compiled in another checkout and reused here would read that
//! checkout's files, and a clean clone could pass on another tree's data; `scripts/test.sh`
//! keys its target directory by the checkout's path so that this cannot happen, and this test
//! fails if it does.

use std::path::{Path, PathBuf};

fn canonical(path: &Path) -> PathBuf {
    path.canonicalize()
        .unwrap_or_else(|e| panic!("{} cannot be resolved: {e}", path.display()))
}

#[test]
fn this_test_binary_was_built_from_the_checkout_it_runs_in() {
    // cargo runs a package's tests from the package's root.
    let running = canonical(&std::env::current_dir().expect("a current directory"));
    let built = canonical(Path::new(env!("CARGO_MANIFEST_DIR")));
    assert_eq!(
        built,
        running,
        "this test binary was compiled in {} but runs in {}: a build output crossed checkouts \
         (give each checkout its own CARGO_TARGET_DIR, as scripts/test.sh does)",
        built.display(),
        running.display()
    );
    // A fixture only this checkout has is found through the compile-time path.
    let marker = built.join("tests").join("build_outputs.rs");
    assert!(marker.is_file(), "{} is missing", marker.display());
}

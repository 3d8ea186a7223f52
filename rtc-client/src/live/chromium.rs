//! Headless Chromium as a far peer: found, started at a page with a fresh profile, and killed
//! with its profile removed when dropped (so on success, on error and on Ctrl-C alike, as the
//! driver drops it on every path).
//!
//! The flags: `--headless=new` without a sandbox or GPU (containers and CI), no background
//! networking, first-run or component updates (the machine's network is closed; Chromium's
//! attempts would only fail), fake camera and permission prompt (`--use-fake-device-for-media-
//! stream`, `--use-fake-ui-for-media-stream`), autoplay without a gesture, loopback ICE
//! candidates (`--allow-loopback-in-peer-connection`; without it Chromium gathers none on `lo`),
//! and no mDNS-obfuscated `.local` candidates (`WebRtcHideLocalIpsWithMdns` off): every address
//! in the call is 127.0.0.1.

use super::LiveError;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The field trials that make Chromium offer and accept FlexFEC-03 (`video/flexfec-03` with
/// `a=ssrc-group:FEC-FR`) and run its FlexFEC receiver and sender: libwebrtc keeps FlexFEC behind
/// `WebRTC-FlexFEC-03-Advertised` (SDP) and `WebRTC-FlexFEC-03` (the streams).
pub const FLEXFEC_TRIALS: &str =
    "--force-fieldtrials=WebRTC-FlexFEC-03-Advertised/Enabled/WebRTC-FlexFEC-03/Enabled/";

/// An environment variable whose whitespace-separated flags are added to Chromium's command
/// line, for debugging (its own logs go to the run's `chromium.log`).
pub const EXTRA_FLAGS_VAR: &str = "LEOPACE_CHROMIUM_FLAGS";

/// The binaries tried, in order, when `$CHROMIUM` is not set (Debian's `chromium` first).
pub const CANDIDATES: [&str; 4] = [
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
];

/// The Chromium binary: `$CHROMIUM` if set, else the first of [`CANDIDATES`] on `PATH`.
///
/// # Errors
///
/// [`LiveError::Config`] naming `scripts/setup-browser.sh` when there is none.
pub fn find() -> Result<PathBuf, LiveError> {
    if let Some(path) = std::env::var_os("CHROMIUM") {
        let path = PathBuf::from(path);
        return if path.is_file() {
            Ok(path)
        } else {
            Err(LiveError::Config(format!(
                "$CHROMIUM is {} but that is not a file",
                path.display()
            )))
        };
    }
    let dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    CANDIDATES
        .iter()
        .flat_map(|name| dirs.iter().map(move |d| d.join(name)))
        .find(|p| p.is_file())
        .ok_or_else(|| {
            LiveError::Config(format!(
                "no Chromium found (tried {} on PATH, and $CHROMIUM is not set): run \
                 scripts/setup-browser.sh to install Debian's chromium",
                CANDIDATES.join(", ")
            ))
        })
}

/// A running headless Chromium; dropping it kills it and removes its profile directory.
pub struct Chromium {
    child: Child,
    profile: PathBuf,
}

impl Chromium {
    /// Starts `binary` headless at `url` with a fresh profile under the system's temporary
    /// directory, with `extra` flags after the usual ones (e.g. [`FLEXFEC_TRIALS`]); its output
    /// goes to `log` (or nowhere).
    ///
    /// # Errors
    ///
    /// [`LiveError::Io`] if the profile cannot be made or the binary cannot be started.
    pub fn launch(
        binary: &Path,
        url: &str,
        log: Option<&Path>,
        extra: &[&str],
    ) -> Result<Self, LiveError> {
        let profile = std::env::temp_dir().join(format!(
            "leopace-chromium-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
        ));
        std::fs::create_dir_all(&profile).map_err(LiveError::io(format!(
            "cannot make the browser profile {}",
            profile.display()
        )))?;
        // More flags for a look inside (e.g. `--enable-logging=stderr --vmodule=*/webrtc/*=2`).
        let extra_from_env = std::env::var(EXTRA_FLAGS_VAR).unwrap_or_default();
        let output = || -> Result<Stdio, LiveError> {
            Ok(match log {
                Some(path) => Stdio::from(
                    std::fs::OpenOptions::new()
                        .create(true)
                        .append(true)
                        .open(path)
                        .map_err(LiveError::io(format!(
                            "cannot open the browser log {}",
                            path.display()
                        )))?,
                ),
                None => Stdio::null(),
            })
        };
        let child = Command::new(binary)
            .args([
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                "--no-default-browser-check",
                "--use-fake-device-for-media-stream",
                "--use-fake-ui-for-media-stream",
                "--autoplay-policy=no-user-gesture-required",
                "--allow-loopback-in-peer-connection",
                "--disable-features=WebRtcHideLocalIpsWithMdns",
                "--window-size=800,700",
            ])
            .args(extra)
            .args(extra_from_env.split_whitespace())
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg(url)
            .stdin(Stdio::null())
            .stdout(output()?)
            .stderr(output()?)
            .spawn();
        match child {
            Ok(child) => Ok(Self { child, profile }),
            Err(e) => {
                let _ = std::fs::remove_dir_all(&profile);
                Err(LiveError::Io {
                    context: format!("cannot start {}", binary.display()),
                    source: e,
                })
            }
        }
    }

    /// Whether it is still running.
    pub fn running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

impl Drop for Chromium {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

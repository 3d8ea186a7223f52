//! `rtc-client`: calls over emulated LEO links (in progress).

#![forbid(unsafe_code)]

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}

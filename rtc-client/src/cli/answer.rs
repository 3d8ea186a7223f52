//! `rtc-client answer`: answer real calls and report what the receiver sees.

use anyhow::{Context, Result};
use clap::Args;
use rtc_client::live::answer::{AnswerConfig, AnswerEvent, AnswerServer};
use rtc_client::live::auth::{Token, token_required};
use rtc_client::live::status::process_cpu_time;
use rtc_client::live::tls::ServerTls;
use rtc_client::live::web::WebConfig;
use std::collections::HashMap;
use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// Where `answer` listens when --listen is not given: loopback only.
const DEFAULT_LISTEN: &str = "127.0.0.1:8443";

/// `rtc-client answer` arguments.
#[derive(Debug, Args)]
pub struct AnswerArgs {
    /// Signalling address. Loopback by default; a non-loopback address is served only when
    /// given here, and then every request needs the bearer token (printed at start, or
    /// --token-file) [default: 127.0.0.1:8443].
    #[arg(long, value_name = "ADDR:PORT")]
    listen: Option<SocketAddr>,
    /// Require `Authorization: Bearer TOKEN` on every request (at least 22 characters of
    /// URL-safe base64 or hex). Beyond loopback one is generated when none is given. Visible to
    /// other users in the process list: prefer --token-file.
    #[arg(long, value_name = "TOKEN", conflicts_with = "token_file")]
    token: Option<String>,
    /// Like --token, read from FILE (its only content).
    #[arg(long, value_name = "FILE")]
    token_file: Option<PathBuf>,
    /// Serve HTTPS with this PEM certificate chain (rustls, TLS 1.3); needs --tls-key.
    #[arg(long, value_name = "PEM", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// The PEM private key of --tls-cert (PKCS#8, PKCS#1 or SEC1).
    #[arg(long, value_name = "PEM", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Exit when the first call ends (for scripts).
    #[arg(long)]
    once: bool,
    /// Refuse FlexFEC-03: offers that carry it are answered without it and the call runs
    /// without FEC (as with an answerer that does not support it).
    #[arg(long)]
    no_fec: bool,
    /// Also serve the browser peer at http://ADDR/: /?mode=receive answers
    /// `rtc-client call --video vp8 --fec off --peer http://ADDR/web` in the browser,
    /// /?mode=send sends the browser's camera to this answerer. (`rtc-client browser` runs both
    /// ends with headless Chromium.)
    #[arg(long)]
    web: bool,
    /// With --web: append the browser's getStats() samples to FILE, one JSON line a second.
    #[arg(long, value_name = "FILE", requires = "web")]
    browser_stats: Option<std::path::PathBuf>,
}

/// Runs `rtc-client answer` until Ctrl-C (or, with --once, the end of the first call).
pub fn run(args: AnswerArgs) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(serve(args))
}

/// Who may call: the token (given, generated beyond loopback, or none) and whether it was
/// generated here (then printed once), and the TLS identity.
fn access(
    args: &AnswerArgs,
    listen: SocketAddr,
) -> Result<(Option<Token>, bool, Option<ServerTls>)> {
    let given = super::args::given_token(args.token.as_deref(), args.token_file.as_deref())?;
    let (token, generated) = match given {
        Some(token) => (Some(token), false),
        None if token_required(listen.ip()) => (
            Some(Token::generate().context("cannot generate a token")?),
            true,
        ),
        None => (None, false),
    };
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => Some(ServerTls::from_pem_files(cert, key)?),
        _ => None,
    };
    Ok((token, generated, tls))
}

/// The lines that tell the user where to call, with what.
fn announce(args: &AnswerArgs, addr: SocketAddr, token: Option<&Token>, generated: bool) {
    let scheme = if args.tls_cert.is_some() {
        "https"
    } else {
        "http"
    };
    let needs = if token.is_some() {
        ", every request with Authorization: Bearer TOKEN"
    } else {
        ""
    };
    println!("answering on {scheme}://{addr} (POST /calls{needs}); Ctrl-C to stop");
    // Printed once, here: the only copy outside this process.
    let fragment = match token {
        Some(t) if generated => {
            println!("token: {}", t.expose());
            println!(
                "  (callers: put it in a file and pass `call --peer {scheme}://{addr} \
                 --token-file FILE`)"
            );
            format!("#token={}", t.expose())
        }
        Some(_) => "#token=TOKEN".to_owned(),
        None => String::new(),
    };
    if token.is_some() && scheme == "http" && token_required(addr.ip()) {
        eprintln!(
            "warning: without --tls-cert the token crosses the network in clear text; serve \
             HTTPS beyond a trusted network"
        );
    }
    if args.web {
        println!(
            "browser peer on {scheme}://{addr}/?mode=receive{fragment} (answers `call --peer \
             {scheme}://{addr}/web`) and {scheme}://{addr}/?mode=send{fragment}"
        );
    }
}

async fn serve(args: AnswerArgs) -> Result<()> {
    let explicit = args.listen.is_some();
    let listen = match args.listen {
        Some(addr) => addr,
        None => DEFAULT_LISTEN.parse().context("default address")?,
    };
    let (token, generated, tls) = access(&args, listen)?;
    let ended = Arc::new(Notify::new());
    let on_end = Arc::clone(&ended);
    // CPU time and wall clock at each call's start, for its CPU share at the end.
    let cpu_marks: Mutex<HashMap<String, (Option<Duration>, Instant)>> = Mutex::default();
    let server = AnswerServer::start(
        AnswerConfig {
            listen,
            allow_non_loopback: explicit,
            fec: !args.no_fec,
            web: args.web.then(|| WebConfig {
                stats_out: args.browser_stats.clone(),
                ..WebConfig::default()
            }),
            token: token.clone(),
            tls,
            receiver_raise: None,
        },
        move |event| {
            let mut out = std::io::stdout().lock();
            let _ = match &event {
                AnswerEvent::Started { call_id, label } => {
                    if let Ok(mut marks) = cpu_marks.lock() {
                        marks.insert(call_id.clone(), (process_cpu_time(), Instant::now()));
                    }
                    writeln!(
                        out,
                        "call {call_id}: answered{}",
                        label.as_ref().map_or(String::new(), |l| format!(" ({l})"))
                    )
                }
                AnswerEvent::Second { call_id, line } => writeln!(out, "call {call_id} {line}"),
                AnswerEvent::Ended { call_id, summary } => {
                    on_end.notify_one();
                    let mark = cpu_marks.lock().ok().and_then(|mut m| m.remove(call_id));
                    let cpu = match (mark, process_cpu_time()) {
                        (Some((Some(before), at)), Some(now)) => format!(
                            "; cpu {:.1} % of a core (this process, over the call)",
                            100.0 * now.saturating_sub(before).as_secs_f64()
                                / at.elapsed().as_secs_f64().max(1e-9)
                        ),
                        _ => String::new(),
                    };
                    writeln!(out, "call {call_id}: ended: {summary}{cpu}")
                }
            };
            let _ = out.flush();
        },
    )
    .await?;
    announce(&args, server.local_addr(), token.as_ref(), generated);
    tokio::select! {
        signal = tokio::signal::ctrl_c() => signal.context("cannot wait for Ctrl-C")?,
        () = ended.notified(), if args.once => {}
    }
    server.shutdown().await;
    Ok(())
}

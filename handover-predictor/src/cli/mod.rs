//! The command line: argument parsing, logging, and one module per subcommand.

mod common;
mod detect;
mod dish_sim;
mod eval;
mod forecast;
mod mapfile;
mod plot;
mod render_map;
mod tle_gen;

use clap::{ArgAction, Parser, Subcommand};
use std::process::ExitCode;
use tracing_subscriber::EnvFilter;

/// Starlink handover forecasting, detection and simulation.
///
/// Logs go to stderr (more with -v, less with -q, or set RUST_LOG); results go to stdout, as
/// text or, with --json, as JSON.
#[derive(Debug, Parser)]
#[command(name = "handover-predictor", version, propagate_version = true)]
struct Cli {
    /// More log output on stderr (-v: debug, -vv: trace).
    #[arg(short, long, global = true, action = ArgAction::Count, display_order = 100)]
    verbose: u8,
    /// Less log output on stderr (-q: warnings and errors only, -qq: errors only).
    #[arg(
        short,
        long,
        global = true,
        action = ArgAction::Count,
        conflicts_with = "verbose",
        display_order = 101
    )]
    quiet: u8,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Forecast the handovers of the next 120 s (the pacer's 120-step forecast) from TLE orbits.
    ///
    /// Prints the 120 one-second handover steps, their count, and the serving-satellite
    /// timeline behind them. TLEs go stale within days: the default instant is the catalogue's
    /// newest epoch, and an --at more than a few days away from it is warned about.
    #[command(after_help = "Examples:\n  \
        handover-predictor forecast --tle traces/tle/starlink-gen1.tle --lat 50.67 --lon 4.61 \
        --at 2025-05-12T12:00:00Z --plot forecast.png\n  \
        handover-predictor forecast --tle traces/tle/sparse-80.tle --lat 50.67 --lon 4.61 \
        --policy delay --min-elevation 10 --json\n  \
        handover-predictor forecast --source hybrid --dish 127.0.0.1:9200 \
        --tle traces/tle/starlink-gen1.tle")]
    Forecast(forecast::ForecastArgs),
    /// Detect handovers live from a dish's obstruction map (a real dish or `dish-sim`).
    ///
    /// Polls the map once per dish second, clears it at every 15-s slot boundary, and prints one
    /// line per slot verdict (handover or same satellite) with the dish time.
    #[command(after_help = "Examples:\n  \
        handover-predictor detect --dish 192.168.100.1:9200 --duration 10m --out detections.jsonl\n  \
        handover-predictor detect --dish 127.0.0.1:9200 --time-scale 20 --duration 10m --json")]
    Detect(detect::DetectArgs),
    /// Run a simulated dish whose serving satellite comes from SGP4 orbits.
    ///
    /// Serves the dish gRPC API (status, obstruction map, map clear, location) on loopback until
    /// Ctrl-C or --duration, painting the serving satellite's track into the obstruction map.
    #[command(after_help = "Examples:\n  \
        handover-predictor dish-sim --tle traces/tle/starlink-gen1.tle --lat 50.67 --lon 4.61\n  \
        handover-predictor dish-sim --listen 127.0.0.1:0 --tle traces/tle/starlink-gen1.tle \
        --lat -27.47 --lon 153.03 --time-scale 20 --duration 12m --truth-out truth.jsonl --json\n  \
        handover-predictor dish-sim --offline --duration 2h --switch-rate brisbane --seed 1 \
        --tle traces/tle/starlink-gen1.tle --lat -27.47 --lon 153.03 --truth-csv brisbane.csv")]
    DishSim(dish_sim::DishSimArgs),
    /// Generate a Walker-constellation TLE catalogue (Starlink generation 1, sparse 80 or 100).
    #[command(after_help = "Examples:\n  \
        handover-predictor tle-gen --constellation sparse-80 --out sparse-80.tle\n  \
        handover-predictor tle-gen --constellation starlink-gen1 --epoch 2025-06-01T00:00:00Z\n  \
        handover-predictor tle-gen --all --dir traces/tle")]
    TleGen(tle_gen::TleGenArgs),
    /// Evaluate the predictors against the orbital truth over many 120-s windows, or (--truth)
    /// against a per-second serving-satellite log.
    #[command(after_help = "Examples:\n  \
        handover-predictor eval --plot eval.png\n  \
        handover-predictor eval --tle traces/tle/starlink-gen1.tle --locations louvain:50.67,4.61 \
        --windows 10 --perturb-km 2 --json\n  \
        handover-predictor eval --truth brisbane.csv --lat -27.47 --lon 153.03 \
        --tle traces/tle/starlink-gen1.tle --plot eval-brisbane.png")]
    Eval(eval::EvalArgs),
    /// Render an obstruction map (from a dish or a saved JSON file) as a PNG or SVG picture.
    #[command(after_help = "Examples:\n  \
        handover-predictor render-map --dish 192.168.100.1:9200 --out map.png --save-map map.json\n  \
        handover-predictor render-map --dish 127.0.0.1:9200 --time-scale 20 --track --seconds 60 \
        --out track.png\n  \
        handover-predictor render-map --map map.json --out map.svg")]
    RenderMap(render_map::RenderMapArgs),
}

/// Parses the arguments, sets up logging, runs the subcommand; reports errors on stderr.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging(cli.verbose, cli.quiet);
    let result = match cli.command {
        Command::Forecast(args) => forecast::run(args),
        Command::Detect(args) => detect::run(args),
        Command::DishSim(args) => dish_sim::run(args),
        Command::TleGen(args) => tle_gen::run(args),
        Command::Eval(args) => eval::run(args),
        Command::RenderMap(args) => render_map::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) if common::is_broken_pipe(&error) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {}", common::error_message(&error));
            ExitCode::FAILURE
        }
    }
}

fn init_logging(verbose: u8, quiet: u8) {
    let level = match (verbose, quiet) {
        (0, 0) => "info",
        (1, _) => "debug",
        (v, _) if v >= 2 => "trace",
        (_, 1) => "warn",
        _ => "error",
    };
    // RUST_LOG wins when set; otherwise the -v/-q level for this binary, warnings for the rest.
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new(format!("warn,handover_predictor={level}")));
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(ansi)
        .with_target(false)
        .compact()
        .init();
}

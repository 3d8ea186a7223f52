//! Batch-1 inference of the learned policy: tract running the exported ONNX file
//! ([`OnnxPolicy::logits`], what the pacer runs) beside the same model's forward pass in tch
//! ([`logits_of`] on a [`PolicyNet`] rebuilt from the file's own weights, as `verify` does), in
//! the same run, on one core (`tch::set_num_threads(1)`; tract is single-threaded).
//!
//! The model: a randomly initialised network (seeded, 5 actions, the shipped architecture;
//! inference cost does not depend on what the weights learned) exported with
//! [`export::onnx_bytes`] and written with a card (golden vectors from tch) to a temporary
//! directory, then loaded with [`OnnxPolicy::load`] with every check the pacer makes. The input
//! is the Starlink-like golden pattern (8 handovers on 15-s slots).
//!
//! After criterion's figures, [`BLOCKS`] blocks of [`RUNS`] timed inferences per engine (after
//! [`WARM_UP`] untimed ones) print the min, p50, p99 and max per inference of each block and the
//! medians over blocks: the goal is a p99 under 1 ms on one core, judged on the median
//! block. Within a block the two engines alternate call by call, so that the preemptions and slow
//! phases of a shared virtual machine fall on both alike and the tract/tch ratio stays
//! meaningful when the absolute figures move. Under `cargo test --benches` (no `--bench`
//! argument) criterion runs each benchmark once and the loop is cut to a few runs.

use criterion::Criterion;
use pacer::OnnxPolicy;
use pacer::card::{
    CARD_SCHEMA, CrossValidation, Golden, INPUT_NAME, ModelCard, OPSET, OUTPUT_NAME, TensorSpec,
    Training,
};
use pacer::forecast::{CUMULATIVE_NORM, HORIZON_STEPS};
use policy_train::export::{self, Weight};
use policy_train::model::PolicyNet;
use policy_train::train::logits_of;
use policy_train::{card, logs};
use std::collections::HashMap;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Instant;
use tch::{Device, Tensor, nn};

/// Actions of the benchmarked model (the paper's K = 5).
const ACTIONS: [u64; 5] = [500, 600, 900, 2000, 4000];
/// Timed inferences per engine in each block of the percentile loop.
const RUNS: usize = 2000;
/// Blocks of the percentile loop.
const BLOCKS: usize = 5;
/// Untimed inferences before it.
const WARM_UP: usize = 200;

/// The exported model, loaded both ways.
struct Models {
    tract: OnnxPolicy,
    tch: PolicyNet,
    _vs: nn::VarStore,
    dir: PathBuf,
}

impl Drop for Models {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A seeded random network exported to `dir` (policy.onnx and policy.json), loaded with tract
/// and rebuilt in tch from the file's weights.
fn models(dir: &Path) -> Models {
    tch::manual_seed(1);
    let vs = nn::VarStore::new(Device::Cpu);
    let net = PolicyNet::new(&vs.root(), ACTIONS.len(), 0.0);
    let weights: HashMap<String, Weight> = net
        .named_weights()
        .into_iter()
        .map(|(name, t)| {
            let shape = t.size();
            let values = Vec::<f32>::try_from(t.flatten(0, -1)).expect("float weights");
            (name, Weight { shape, values })
        })
        .collect();
    let bytes = export::onnx_bytes(&weights, ACTIONS.len()).expect("export");
    std::fs::create_dir_all(dir).expect("create the model directory");
    std::fs::write(dir.join("policy.onnx"), &bytes).expect("write policy.onnx");
    let card = ModelCard {
        schema: CARD_SCHEMA.into(),
        input: TensorSpec {
            name: INPUT_NAME.into(),
            shape: vec![1, HORIZON_STEPS, 2],
            dtype: "float32".into(),
        },
        telemetry_input: None,
        output: TensorSpec {
            name: OUTPUT_NAME.into(),
            shape: vec![1, ACTIONS.len()],
            dtype: "float32".into(),
        },
        horizon_s: HORIZON_STEPS as u32,
        cumulative_norm: CUMULATIVE_NORM,
        actions_ms: ACTIONS.to_vec(),
        quiet_ms: None,
        profiles: None,
        controls: None,
        measure: None,
        opset: OPSET,
        onnx_file: "policy.onnx".into(),
        onnx_sha256: logs::hex_sha256(&bytes),
        training: Training {
            logs: Vec::new(),
            intervals: 0,
            clusters: Vec::new(),
            hyperparameters: serde_json::json!({ "note": "random weights for the benchmark" }),
        },
        cv: CrossValidation {
            folds: 0,
            accuracy_mean: 0.0,
            accuracy_std: 0.0,
        },
        golden: card::golden_inputs(1)
            .into_iter()
            .map(|(name, input)| Golden {
                logits: logits_of(&net, &input),
                telemetry: None,
                name,
                input,
            })
            .collect(),
        evaluation: None,
    };
    std::fs::write(
        dir.join("policy.json"),
        serde_json::to_string_pretty(&card).expect("JSON"),
    )
    .expect("write policy.json");
    let tract = OnnxPolicy::load(dir.join("policy.json")).expect("the policy loads");

    // tch, from the file's own weights (as `verify` rebuilds it).
    let file = export::weights_of(&std::fs::read(dir.join("policy.onnx")).expect("read"))
        .expect("weights");
    let tensors: HashMap<String, Tensor> = file
        .iter()
        .map(|(n, w)| {
            (
                n.clone(),
                Tensor::from_slice(&w.values).view(w.shape.as_slice()),
            )
        })
        .collect();
    let rebuilt_vs = nn::VarStore::new(Device::Cpu);
    let mut rebuilt = PolicyNet::new(&rebuilt_vs.root(), ACTIONS.len(), 0.0);
    let missing = rebuilt.load_named(&tensors);
    assert!(missing.is_empty(), "the file lacks {missing:?}");
    Models {
        tract,
        tch: rebuilt,
        _vs: rebuilt_vs,
        dir: dir.to_path_buf(),
    }
}

/// The Starlink-like golden input.
fn input() -> Vec<f32> {
    card::golden_inputs(1)
        .into_iter()
        .find(|(name, _)| name == "starlink-like")
        .map(|(_, input)| input)
        .expect("a starlink-like golden vector")
}

/// min, p50, p99 and max of timings in microseconds.
type Spread = (f64, f64, f64, f64);

fn spread(mut us: Vec<f64>) -> Spread {
    us.sort_by(f64::total_cmp);
    let at = |q: f64| us[((us.len() as f64 * q).ceil() as usize).clamp(1, us.len()) - 1];
    (us[0], at(0.50), at(0.99), us[us.len() - 1])
}

/// The spread of `runs` timed calls of `f`, after `warm_up` untimed ones.
fn percentiles(runs: usize, warm_up: usize, mut f: impl FnMut()) -> Spread {
    for _ in 0..warm_up {
        f();
    }
    spread(
        (0..runs)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed().as_secs_f64() * 1e6
            })
            .collect(),
    )
}

/// The spreads of `runs` timed calls each of `a` and `b`, alternating call by call.
fn interleaved(runs: usize, mut a: impl FnMut(), mut b: impl FnMut()) -> (Spread, Spread) {
    let time = |f: &mut dyn FnMut()| {
        let t = Instant::now();
        f();
        t.elapsed().as_secs_f64() * 1e6
    };
    let mut ta = Vec::with_capacity(runs);
    let mut tb = Vec::with_capacity(runs);
    for _ in 0..runs {
        ta.push(time(&mut a));
        tb.push(time(&mut b));
    }
    (spread(ta), spread(tb))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    tch::set_num_threads(1);
    let dir = std::env::temp_dir().join(format!("policy-train-bench-{}", std::process::id()));
    let m = models(&dir);
    let x = input();
    let a = m.tract.logits(&x).expect("tract runs");
    let b = logits_of(&m.tch, &x);
    let diff = a
        .iter()
        .zip(&b)
        .map(|(p, q)| (p - q).abs())
        .fold(0f32, f32::max);
    assert!(diff < 1e-4, "tract and tch differ by {diff}");

    let mut c = Criterion::default().configure_from_args();
    {
        let mut group = c.benchmark_group("inference");
        group.bench_function("tract OnnxPolicy::logits [1,120,2]", |bench| {
            bench.iter(|| black_box(m.tract.logits(black_box(&x)).expect("tract runs")))
        });
        group.bench_function("tch PolicyNet forward [1,120,2]", |bench| {
            bench.iter(|| black_box(logits_of(&m.tch, black_box(&x))))
        });
        group.finish();
    }
    c.final_summary();

    let full = std::env::args().any(|a| a == "--bench");
    let (runs, warm_up, blocks) = if full {
        (RUNS, WARM_UP, BLOCKS)
    } else {
        (20, 2, 2)
    };
    let tract_call = || {
        black_box(m.tract.logits(black_box(&x)).expect("tract runs"));
    };
    let tch_call = || {
        black_box(logits_of(&m.tch, black_box(&x)));
    };
    for _ in 0..warm_up {
        tract_call();
        tch_call();
    }
    println!(
        "\nbatch-1 inference, one core, {blocks} blocks of {runs} runs per engine, the engines \
         alternating call by call, after {warm_up} warm-up (|tract - tch| = {diff:.1e}):"
    );
    println!("  block engine    min us    p50 us    p99 us    max us");
    let mut results: Vec<(Spread, Spread)> = Vec::with_capacity(blocks);
    for block in 1..=blocks {
        let (tract, tch) = interleaved(runs, tract_call, tch_call);
        for (name, (min, p50, p99, max)) in [("tract", tract), ("tch", tch)] {
            println!("  {block:>5} {name:<6} {min:>9.1} {p50:>9.1} {p99:>9.1} {max:>9.1}");
        }
        results.push((tract, tch));
    }
    let med = |f: fn(&(Spread, Spread)) -> f64| median(results.iter().map(f).collect());
    let (tract_p50, tract_p99) = (med(|r| r.0.1), med(|r| r.0.2));
    let (tch_p50, tch_p99) = (med(|r| r.1.1), med(|r| r.1.2));
    println!(
        "  median over blocks: tract p50 {tract_p50:.1} us, p99 {tract_p99:.1} us; \
         tch p50 {tch_p50:.1} us, p99 {tch_p99:.1} us"
    );
    println!(
        "  tract / tch (median of the blocks' ratios): p50 {:.2}, p99 {:.2}",
        med(|r| r.0.1 / r.1.1),
        med(|r| r.0.2 / r.1.2)
    );
    println!(
        "  goal: p99 under 1000 us with tract (median block): {}",
        if tract_p99 < 1000.0 { "met" } else { "NOT met" }
    );
    let bytes = std::fs::read(m.dir.join("policy.onnx")).expect("read policy.onnx");
    profile(&bytes, &x, if full { 500 } else { 2 });
}

/// Where tract's time goes: the optimised graph run `runs` times with every node timed; per node
/// the fastest of its runs (robust to the preemptions of a shared machine), summed per op kind.
fn profile(bytes: &[u8], x: &[f32], runs: usize) {
    use tract_onnx::prelude::*;
    use tract_onnx::tract_core::plan::eval;
    let model = tract_onnx::onnx()
        .model_for_read(&mut std::io::Cursor::new(bytes))
        .and_then(|m| m.with_input_fact(0, f32::fact([1, HORIZON_STEPS, 2]).into()))
        .and_then(|m| m.into_optimized())
        .expect("the model optimises");
    let plan = model.into_runnable().expect("a plan");
    let mut state = plan.spawn().expect("a state");
    let nodes = plan.model().nodes().len();
    let mut per_node = vec![f64::INFINITY; nodes];
    let mut total = f64::INFINITY;
    for _ in 0..runs {
        let input = Tensor::from_shape(&[1, HORIZON_STEPS, 2], x).expect("input");
        let t = Instant::now();
        state
            .run_plan_with_eval(tvec!(input.into_tvalue()), |ctx, st, node, inputs| {
                let t = Instant::now();
                let r = eval(ctx, st, node, inputs);
                per_node[node.id] = per_node[node.id].min(t.elapsed().as_secs_f64() * 1e6);
                r
            })
            .expect("tract runs");
        total = total.min(t.elapsed().as_secs_f64() * 1e6);
    }
    // What reusing one run state saves: tract's `plan.run` builds a fresh state per call
    // (what OnnxPolicy did before), `state.run` reuses one (what it does now).
    let input = || {
        tvec!(
            Tensor::from_shape(&[1, HORIZON_STEPS, 2], x)
                .expect("input")
                .into_tvalue()
        )
    };
    let fresh = percentiles(runs, runs / 10, || {
        black_box(plan.run(input()).expect("tract runs"));
    });
    let reused = percentiles(runs, runs / 10, || {
        black_box(state.run(input()).expect("tract runs"));
    });
    println!(
        "\ntract run state, {runs} runs each: fresh per call (plan.run) p50 {:.1} us, \
         reused (state.run) p50 {:.1} us",
        fresh.1, reused.1
    );
    let mut by_op: std::collections::BTreeMap<String, (f64, usize)> = Default::default();
    for node in plan.model().nodes() {
        let e = by_op.entry(node.op().name().to_string()).or_default();
        e.0 += per_node[node.id];
        e.1 += 1;
    }
    let mut by_op: Vec<_> = by_op.into_iter().collect();
    by_op.sort_by(|a, b| b.1.0.total_cmp(&a.1.0));
    println!(
        "\ntract per-op profile ({nodes} nodes after optimisation, fastest of {runs} runs per node; \
         fastest whole run {total:.1} us):"
    );
    for (op, (us, count)) in &by_op {
        println!("  {op:<28} {count:>3} nodes {us:>9.1} us");
    }
    if std::env::var_os("POLICY_BENCH_NODES").is_some() {
        let mut order: Vec<usize> = (0..nodes).collect();
        order.sort_by(|&a, &b| per_node[b].total_cmp(&per_node[a]));
        for id in order.into_iter().take(40) {
            let node = plan.model().node(id);
            println!(
                "  {:>8.1} us  {} {:?}",
                per_node[id],
                node,
                node.outputs.first().map(|o| &o.fact)
            );
        }
    }
}

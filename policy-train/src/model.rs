//! The policy network (paper section III-C), in tch.
//!
//! Each of the 120 forecast steps `[handover, cumulative]` is embedded to [`D_MODEL`] dimensions
//! by a two-layer MLP (2 -> 64 -> 64, ReLU between) and given a learned positional embedding;
//! [`LAYERS`] post-norm transformer encoder layers follow (self-attention with [`HEADS`] head of
//! 64 dimensions, then a feed-forward block 64 -> [`FF_WIDTH`] -> 64 with ReLU, each with a
//! residual connection, dropout and LayerNorm); the 120 outputs are mean-pooled and a linear head
//! gives one logit per deployed action. 79 k parameters for 5 actions.
//!
//! A joint network ([`PolicyNet::with_telemetry`]) also reads the call's own measurements
//! (`pacer::policy::CallFeedback::features`, `F` values): they are appended to every step's input, so the
//! first embedding layer takes `2 + F` values per step. Every position, and so the attention
//! between them, then sees whether this path's boundaries lose packets beside when they come;
//! the export splits that layer's weight in two, so the ONNX graph takes the measurements as a
//! second input `[1, F]` without any new operator (docs/architecture.md, "The model and its
//! card").
//!
//! Why one head: the paper does not give a head count, and the count sets the inference cost
//! without changing the parameter count. With 4 heads of 16 dimensions the pacer's tract run took
//! 935 us at best and 1.0 to 1.5 ms at the median on one core of the development machine
//! (`cargo bench -p policy-train --bench inference`, 2026-11-30), against the 1-ms p99 goal: a
//! Softmax over every head's 120 x 128 scores cost 126 us per layer and the 16-wide attention
//! products ran at low efficiency. One head took 580 us at best and 600 to 720 us at the median
//! in the same session, and fits the training set as well (5-fold accuracy 0.998 with either
//! count on the 60-hour set; `models/training.json`).

use pacer::forecast::HORIZON_STEPS;
use tch::nn::{self, Module};
use tch::{Kind, Tensor};

/// Width of the token embedding and of the encoder.
pub const D_MODEL: i64 = 64;
/// Attention heads (64 dimensions each; see the module documentation for why one).
pub const HEADS: i64 = 1;
/// Feed-forward width.
pub const FF_WIDTH: i64 = 128;
/// Encoder layers.
pub const LAYERS: usize = 2;
/// LayerNorm epsilon (PyTorch's default, and ONNX LayerNormalization's).
pub const LN_EPS: f64 = 1e-5;
const HEAD_DIM: i64 = D_MODEL / HEADS;
const STEPS: i64 = HORIZON_STEPS as i64;

struct EncoderLayer {
    q: nn::Linear,
    k: nn::Linear,
    v: nn::Linear,
    o: nn::Linear,
    ln1: nn::LayerNorm,
    ff1: nn::Linear,
    ff2: nn::Linear,
    ln2: nn::LayerNorm,
}

/// The network (see the module documentation).
pub struct PolicyNet {
    tok1: nn::Linear,
    tok2: nn::Linear,
    pos: Tensor,
    layers: Vec<EncoderLayer>,
    head: nn::Linear,
    actions: i64,
    telemetry: i64,
    dropout: f64,
}

impl PolicyNet {
    /// A freshly initialised network with `actions` outputs, its variables under `path`.
    pub fn new(path: &nn::Path, actions: usize, dropout: f64) -> Self {
        Self::with_telemetry(path, actions, dropout, 0)
    }

    /// A joint network: [`Self::new`] whose steps also carry `telemetry` measurement values.
    pub fn with_telemetry(path: &nn::Path, actions: usize, dropout: f64, telemetry: usize) -> Self {
        let ln = || nn::LayerNormConfig {
            eps: LN_EPS,
            ..Default::default()
        };
        let linear = |name: &str, i: i64, o: i64| nn::linear(path / name, i, o, Default::default());
        let layers = (0..LAYERS)
            .map(|l| {
                let p = path / format!("layer{l}");
                let lin =
                    |name: &str, i: i64, o: i64| nn::linear(&p / name, i, o, Default::default());
                EncoderLayer {
                    q: lin("q", D_MODEL, D_MODEL),
                    k: lin("k", D_MODEL, D_MODEL),
                    v: lin("v", D_MODEL, D_MODEL),
                    o: lin("o", D_MODEL, D_MODEL),
                    ln1: nn::layer_norm(&p / "ln1", vec![D_MODEL], ln()),
                    ff1: lin("ff1", D_MODEL, FF_WIDTH),
                    ff2: lin("ff2", FF_WIDTH, D_MODEL),
                    ln2: nn::layer_norm(&p / "ln2", vec![D_MODEL], ln()),
                }
            })
            .collect();
        Self {
            tok1: linear("tok1", 2 + telemetry as i64, D_MODEL),
            tok2: linear("tok2", D_MODEL, D_MODEL),
            pos: path.var(
                "pos",
                &[STEPS, D_MODEL],
                nn::Init::Randn {
                    mean: 0.0,
                    stdev: 0.02,
                },
            ),
            layers,
            head: linear("head", D_MODEL, actions as i64),
            actions: actions as i64,
            telemetry: telemetry as i64,
            dropout,
        }
    }

    /// Output count.
    pub fn actions(&self) -> usize {
        self.actions as usize
    }

    /// The measurement values each step carries beside the forecast (0: a queue-limit network).
    pub fn telemetry(&self) -> usize {
        self.telemetry as usize
    }

    /// Logits `[B, K]` for inputs `[B, 120, 2 + F]`; dropout only when `train`.
    pub fn forward(&self, x: &Tensor, train: bool) -> Tensor {
        let b = x.size()[0];
        let mut h = self.tok2.forward(&self.tok1.forward(x).relu()) + &self.pos;
        for layer in &self.layers {
            let split = |t: Tensor| t.view([b, STEPS, HEADS, HEAD_DIM]).permute([0, 2, 1, 3]);
            let q = split(layer.q.forward(&h));
            let k = split(layer.k.forward(&h));
            let v = split(layer.v.forward(&h));
            let scores = (q.matmul(&k.transpose(-2, -1)) / (HEAD_DIM as f64).sqrt())
                .softmax(-1, Kind::Float);
            let context = scores
                .matmul(&v)
                .permute([0, 2, 1, 3])
                .contiguous()
                .view([b, STEPS, D_MODEL]);
            let attention = layer.o.forward(&context).dropout(self.dropout, train);
            h = layer.ln1.forward(&(h + attention));
            let ff = layer
                .ff2
                .forward(&layer.ff1.forward(&h).relu().dropout(self.dropout, train))
                .dropout(self.dropout, train);
            h = layer.ln2.forward(&(h + ff));
        }
        let pooled = h.mean_dim(1, false, Kind::Float);
        self.head.forward(&pooled)
    }

    /// Every weight with its export name, in a fixed order. Linear weights are `[out, in]` as
    /// tch keeps them.
    pub fn named_weights(&self) -> Vec<(String, Tensor)> {
        let mut out = Vec::new();
        let mut linear = |name: &str, l: &nn::Linear| {
            out.push((format!("{name}.weight"), l.ws.shallow_clone()));
            if let Some(bs) = &l.bs {
                out.push((format!("{name}.bias"), bs.shallow_clone()));
            }
        };
        linear("tok1", &self.tok1);
        linear("tok2", &self.tok2);
        for (i, l) in self.layers.iter().enumerate() {
            for (n, lin) in [
                ("q", &l.q),
                ("k", &l.k),
                ("v", &l.v),
                ("o", &l.o),
                ("ff1", &l.ff1),
                ("ff2", &l.ff2),
            ] {
                linear(&format!("layer{i}.{n}"), lin);
            }
        }
        linear("head", &self.head);
        out.push(("pos".into(), self.pos.shallow_clone()));
        for (i, l) in self.layers.iter().enumerate() {
            for (n, ln) in [("ln1", &l.ln1), ("ln2", &l.ln2)] {
                if let Some(ws) = &ln.ws {
                    out.push((format!("layer{i}.{n}.weight"), ws.shallow_clone()));
                }
                if let Some(bs) = &ln.bs {
                    out.push((format!("layer{i}.{n}.bias"), bs.shallow_clone()));
                }
            }
        }
        out
    }

    /// Copies weights by export name (as [`PolicyNet::named_weights`] names them) into this
    /// network; returns the names it did not find in `weights`.
    pub fn load_named(
        &mut self,
        weights: &std::collections::HashMap<String, Tensor>,
    ) -> Vec<String> {
        let mut missing = Vec::new();
        tch::no_grad(|| {
            for (name, mut t) in self.named_weights() {
                match weights.get(&name) {
                    Some(w) if w.size() == t.size() => {
                        t.copy_(w);
                    }
                    _ => missing.push(name),
                }
            }
        });
        missing
    }
}

/// The number of trainable parameters.
pub fn parameter_count(vs: &nn::VarStore) -> i64 {
    vs.trainable_variables()
        .iter()
        .map(Tensor::numel)
        .map(|n| n as i64)
        .sum()
}

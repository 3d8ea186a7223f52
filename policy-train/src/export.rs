//! Writing the trained network as ONNX with tract's prost types (`tract_onnx::pb`).
//!
//! The graph is explicit, one ONNX op per step of [`crate::model::PolicyNet::forward`] in eval
//! mode (no dropout): MatMul, Add, Relu, Reshape, Transpose, Div, Softmax, LayerNormalization,
//! ReduceMean, plus Pad for one deviation that changes no output: the attention's keys and
//! values are padded from 120 to 128 positions, the padded keys masked out, because tract's
//! Softmax is about 3x faster on rows of 128 than of 120 (see [`KEY_BLOCK`]). Facts this relies on (reference onnx-export-with-tract.md): opset 17 with IR
//! version 8; every attribute's `type` set (tract rejects an unset one, and is lenient about much
//! else, so the files are also checked with the `onnx` checker and onnxruntime); ReduceMean's
//! `axes` is an attribute at opset 17 (an input from 18 on); weights as little-endian float32
//! `raw_data`; a tch Linear weight `[out, in]` transposed to `[in, out]` for MatMul. The encoding
//! is deterministic: the same weights give the same bytes.

use crate::model::{D_MODEL, FF_WIDTH, HEADS, LAYERS, LN_EPS};
use pacer::card::{INPUT_NAME, OPSET, OUTPUT_NAME, TELEMETRY_INPUT_NAME};
use pacer::forecast::HORIZON_STEPS;
use prost::Message;
use std::collections::HashMap;
use tract_onnx::pb;
use tract_onnx::pb::attribute_proto::AttributeType;
use tract_onnx::pb::tensor_proto::DataType;

/// The ONNX IR version written (IR 8 goes with opset 17).
pub const IR_VERSION: i64 = 8;

/// The attention's key axis is padded to a multiple of this many positions.
///
/// tract (0.23) runs Softmax row by row with 64-lane AVX-512 kernels that want each row 64-byte
/// aligned and a multiple of 64 long; anything else goes through a per-row copy into a scratch
/// buffer. With 120 keys (480-byte rows) every row takes that path: measured on its own, Softmax
/// over `[1, 4, 120, 120]` took 414 us where `[1, 4, 120, 128]` took 131 us, and the two
/// attention Softmax nodes were about half of the whole forward pass. So the exporter appends
/// zero keys and zero values up to 128 and adds [`KEY_MASK`] to their scores: their softmax
/// weights are exactly 0 (every runtime's exp underflows to 0 that far below the row maximum),
/// so the output is the unpadded attention's, up to the order of float sums.
pub const KEY_BLOCK: i64 = 64;

/// What the scores of padded keys get added (finite, so no runtime meets `-inf - -inf`).
pub const KEY_MASK: f32 = -1e9;

/// Prefix of the initializers that are graph constants rather than trained weights
/// ([`weights_of`] leaves them out).
pub const CONST_PREFIX: &str = "const.";

/// The padded key count for `steps` keys: the next multiple of [`KEY_BLOCK`].
pub fn padded_keys(steps: i64) -> i64 {
    (steps + KEY_BLOCK - 1) / KEY_BLOCK * KEY_BLOCK
}

/// Why a graph could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// A weight the graph needs is missing or has the wrong shape.
    #[error("weight {name}: {problem}")]
    Weight {
        /// Its export name.
        name: String,
        /// What is wrong.
        problem: String,
    },
}

/// A weight: shape and row-major values.
#[derive(Debug, Clone, PartialEq)]
pub struct Weight {
    /// Shape.
    pub shape: Vec<i64>,
    /// Values, row-major.
    pub values: Vec<f32>,
}

struct Graph {
    nodes: Vec<pb::NodeProto>,
    initializers: Vec<pb::TensorProto>,
    counter: usize,
}

fn attr_ints(name: &str, ints: Vec<i64>) -> pb::AttributeProto {
    pb::AttributeProto {
        name: name.into(),
        r#type: AttributeType::Ints as i32,
        ints,
        ..Default::default()
    }
}

fn attr_int(name: &str, i: i64) -> pb::AttributeProto {
    pb::AttributeProto {
        name: name.into(),
        r#type: AttributeType::Int as i32,
        i,
        ..Default::default()
    }
}

fn attr_float(name: &str, f: f32) -> pb::AttributeProto {
    pb::AttributeProto {
        name: name.into(),
        r#type: AttributeType::Float as i32,
        f,
        ..Default::default()
    }
}

fn value_info(name: &str, dims: &[i64]) -> pb::ValueInfoProto {
    use pb::tensor_shape_proto::{Dimension, dimension};
    pb::ValueInfoProto {
        name: name.into(),
        r#type: Some(pb::TypeProto {
            value: Some(pb::type_proto::Value::TensorType(pb::type_proto::Tensor {
                elem_type: DataType::Float as i32,
                shape: Some(pb::TensorShapeProto {
                    dim: dims
                        .iter()
                        .map(|&d| Dimension {
                            value: Some(dimension::Value::DimValue(d)),
                            ..Default::default()
                        })
                        .collect(),
                }),
            })),
            ..Default::default()
        }),
        ..Default::default()
    }
}

impl Graph {
    fn op(&mut self, op: &str, inputs: &[&str], attributes: Vec<pb::AttributeProto>) -> String {
        self.counter += 1;
        let output = format!("{}_{}", op.to_lowercase(), self.counter);
        self.nodes.push(pb::NodeProto {
            input: inputs.iter().map(|s| s.to_string()).collect(),
            output: vec![output.clone()],
            name: format!("{op}_{}", self.counter),
            op_type: op.into(),
            attribute: attributes,
            ..Default::default()
        });
        output
    }

    fn float(&mut self, name: &str, shape: &[i64], values: &[f32]) -> String {
        self.initializers.push(pb::TensorProto {
            name: name.into(),
            dims: shape.to_vec(),
            data_type: DataType::Float as i32,
            raw_data: values.iter().flat_map(|v| v.to_le_bytes()).collect(),
            ..Default::default()
        });
        name.into()
    }

    fn int64(&mut self, name: &str, values: &[i64]) -> String {
        self.initializers.push(pb::TensorProto {
            name: name.into(),
            dims: vec![values.len() as i64],
            data_type: DataType::Int64 as i32,
            raw_data: values.iter().flat_map(|v| v.to_le_bytes()).collect(),
            ..Default::default()
        });
        name.into()
    }
}

/// Weights by export name, with shape checks.
struct Weights<'a>(&'a HashMap<String, Weight>);

impl Weights<'_> {
    fn get(&self, name: &str, shape: &[i64]) -> Result<&Weight, ExportError> {
        let w = self.0.get(name).ok_or_else(|| ExportError::Weight {
            name: name.into(),
            problem: "missing".into(),
        })?;
        if w.shape != shape || w.values.len() as i64 != shape.iter().product::<i64>() {
            return Err(ExportError::Weight {
                name: name.into(),
                problem: format!("shape {:?}, expected {shape:?}", w.shape),
            });
        }
        Ok(w)
    }
}

/// `[out, in]` row-major to `[in, out]` row-major.
fn transpose(w: &Weight) -> Vec<f32> {
    let (rows, cols) = (w.shape[0] as usize, w.shape[1] as usize);
    let mut t = vec![0f32; rows * cols];
    for r in 0..rows {
        for c in 0..cols {
            t[c * rows + r] = w.values[r * cols + c];
        }
    }
    t
}

/// Every weight of `net` by export name ([`crate::model::PolicyNet::named_weights`]), as
/// [`onnx_bytes_with`] takes them.
pub fn weights_of_net(
    net: &crate::model::PolicyNet,
) -> Result<HashMap<String, Weight>, tch::TchError> {
    net.named_weights()
        .into_iter()
        .map(|(name, t)| {
            let shape = t.size();
            let values = Vec::<f32>::try_from(t.flatten(0, -1))?;
            Ok((name, Weight { shape, values }))
        })
        .collect()
}

/// The ONNX bytes of the network whose weights are `weights` (export names of
/// [`crate::model::PolicyNet::named_weights`]) with `actions` outputs.
pub fn onnx_bytes(
    weights: &HashMap<String, Weight>,
    actions: usize,
) -> Result<Vec<u8>, ExportError> {
    onnx_bytes_with(weights, actions, 0)
}

/// [`onnx_bytes`] for a joint network whose steps carry `telemetry` measurement values
/// ([`crate::model::PolicyNet::with_telemetry`]): the graph gets a second input
/// `telemetry [1, F]`, and the first embedding layer's weight `[64, 2 + F]` is split into its
/// forecast columns (applied to each step) and its measurement columns (applied once to the
/// `[1, F]` input and broadcast over the steps), which is the same function as appending the
/// measurements to every step, with MatMul and Add only.
pub fn onnx_bytes_with(
    weights: &HashMap<String, Weight>,
    actions: usize,
    telemetry: usize,
) -> Result<Vec<u8>, ExportError> {
    let w = Weights(weights);
    let tw = telemetry as i64;
    let k = actions as i64;
    let steps = HORIZON_STEPS as i64;
    let head_dim = D_MODEL / HEADS;
    let mut g = Graph {
        nodes: Vec::new(),
        initializers: Vec::new(),
        counter: 0,
    };
    let linear = |g: &mut Graph, x: &str, name: &str, i: i64, o: i64| {
        let weight = w.get(&format!("{name}.weight"), &[o, i])?;
        let bias = w.get(&format!("{name}.bias"), &[o])?;
        let wt = g.float(&format!("{name}.weight_t"), &[i, o], &transpose(weight));
        let b = g.float(&format!("{name}.bias"), &[o], &bias.values);
        let mm = g.op("MatMul", &[x, &wt], vec![]);
        Ok::<String, ExportError>(g.op("Add", &[&mm, &b], vec![]))
    };

    let t1 = if tw == 0 {
        linear(&mut g, INPUT_NAME, "tok1", 2, D_MODEL)?
    } else {
        let weight = w.get("tok1.weight", &[D_MODEL, 2 + tw])?;
        let bias = w.get("tok1.bias", &[D_MODEL])?;
        // [2 + F, 64] row-major: the forecast's two rows, then the measurements'.
        let wt = transpose(weight);
        let split = (2 * D_MODEL) as usize;
        let forecast_w = g.float("tok1.weight_t", &[2, D_MODEL], &wt[..split]);
        let telemetry_w = g.float("tok1.telemetry_weight_t", &[tw, D_MODEL], &wt[split..]);
        let b = g.float("tok1.bias", &[D_MODEL], &bias.values);
        let per_step = g.op("MatMul", &[INPUT_NAME, &forecast_w], vec![]);
        let measured = g.op("MatMul", &[TELEMETRY_INPUT_NAME, &telemetry_w], vec![]);
        let sum = g.op("Add", &[&per_step, &measured], vec![]);
        g.op("Add", &[&sum, &b], vec![])
    };
    let r1 = g.op("Relu", &[&t1], vec![]);
    let t2 = linear(&mut g, &r1, "tok2", D_MODEL, D_MODEL)?;
    let pos = w.get("pos", &[steps, D_MODEL])?;
    let pos = g.float("pos", &[steps, D_MODEL], &pos.values);
    let mut h = g.op("Add", &[&t2, &pos], vec![]);

    let split_shape = g.int64("shape_split", &[1, steps, HEADS, head_dim]);
    let merge_shape = g.int64("shape_merge", &[1, steps, D_MODEL]);
    let scale = g.float("attention_scale", &[], &[(head_dim as f32).sqrt()]);
    // Keys and values padded to a whole number of softmax blocks, with the padded keys masked
    // (see [`KEY_BLOCK`]).
    let keys = padded_keys(steps);
    let pad = keys - steps;
    let padding = (pad > 0).then(|| {
        // Pad's `pads` for the [1, steps, D_MODEL] key and value projections: begins of the 3
        // axes, then ends. Padding before the head split keeps the head transposes foldable
        // into the attention MatMuls.
        let pads = g.int64("pads_keys", &[0, 0, 0, 0, pad, 0]);
        let split = g.int64("shape_split_keys", &[1, keys, HEADS, head_dim]);
        let mask: Vec<f32> = (0..keys)
            .map(|j| if j < steps { 0.0 } else { KEY_MASK })
            .collect();
        let key_mask = g.float(&format!("{CONST_PREFIX}key_mask"), &[keys], &mask);
        (pads, split, key_mask)
    });
    for l in 0..LAYERS {
        let p = format!("layer{l}");
        let heads = |g: &mut Graph, x: &str, shape: &str, perm: Vec<i64>| {
            let r = g.op("Reshape", &[x, shape], vec![]);
            g.op("Transpose", &[&r], vec![attr_ints("perm", perm)])
        };
        let q = linear(&mut g, &h, &format!("{p}.q"), D_MODEL, D_MODEL)?;
        let mut kk = linear(&mut g, &h, &format!("{p}.k"), D_MODEL, D_MODEL)?;
        let mut v = linear(&mut g, &h, &format!("{p}.v"), D_MODEL, D_MODEL)?;
        let mut key_split = split_shape.clone();
        if let Some((pads, split, _)) = &padding {
            kk = g.op("Pad", &[&kk, pads], vec![]);
            v = g.op("Pad", &[&v, pads], vec![]);
            key_split = split.clone();
        }
        let q = heads(&mut g, &q, &split_shape, vec![0, 2, 1, 3]);
        let kt = heads(&mut g, &kk, &key_split, vec![0, 2, 3, 1]);
        let v = heads(&mut g, &v, &key_split, vec![0, 2, 1, 3]);
        let scores = g.op("MatMul", &[&q, &kt], vec![]);
        let mut scaled = g.op("Div", &[&scores, &scale], vec![]);
        if let Some((_, _, key_mask)) = &padding {
            scaled = g.op("Add", &[&scaled, key_mask], vec![]);
        }
        let attention = g.op("Softmax", &[&scaled], vec![attr_int("axis", -1)]);
        let context = g.op("MatMul", &[&attention, &v], vec![]);
        let context = g.op(
            "Transpose",
            &[&context],
            vec![attr_ints("perm", vec![0, 2, 1, 3])],
        );
        let context = g.op("Reshape", &[&context, &merge_shape], vec![]);
        let out = linear(&mut g, &context, &format!("{p}.o"), D_MODEL, D_MODEL)?;
        let residual = g.op("Add", &[&h, &out], vec![]);
        h = layer_norm(&mut g, &w, &residual, &format!("{p}.ln1"))?;
        let f1 = linear(&mut g, &h, &format!("{p}.ff1"), D_MODEL, FF_WIDTH)?;
        let f1 = g.op("Relu", &[&f1], vec![]);
        let f2 = linear(&mut g, &f1, &format!("{p}.ff2"), FF_WIDTH, D_MODEL)?;
        let residual = g.op("Add", &[&h, &f2], vec![]);
        h = layer_norm(&mut g, &w, &residual, &format!("{p}.ln2"))?;
    }
    let pooled = g.op(
        "ReduceMean",
        &[&h],
        vec![attr_ints("axes", vec![1]), attr_int("keepdims", 0)],
    );
    let logits = linear(&mut g, &pooled, "head", D_MODEL, k)?;
    // Name the final output as the contract says.
    if let Some(last) = g.nodes.last_mut() {
        last.output = vec![OUTPUT_NAME.into()];
    }
    let _ = logits;

    let model = pb::ModelProto {
        ir_version: IR_VERSION,
        opset_import: vec![pb::OperatorSetIdProto {
            domain: String::new(),
            version: OPSET,
        }],
        producer_name: "leopace policy-train".into(),
        producer_version: env!("CARGO_PKG_VERSION").into(),
        graph: Some(pb::GraphProto {
            name: "leopace_policy".into(),
            node: g.nodes,
            initializer: g.initializers,
            input: std::iter::once(value_info(INPUT_NAME, &[1, steps, 2]))
                .chain((tw > 0).then(|| value_info(TELEMETRY_INPUT_NAME, &[1, tw])))
                .collect(),
            output: vec![value_info(OUTPUT_NAME, &[1, k])],
            ..Default::default()
        }),
        ..Default::default()
    };
    Ok(model.encode_to_vec())
}

fn layer_norm(g: &mut Graph, w: &Weights<'_>, x: &str, name: &str) -> Result<String, ExportError> {
    let scale = w.get(&format!("{name}.weight"), &[D_MODEL])?;
    let bias = w.get(&format!("{name}.bias"), &[D_MODEL])?;
    let s = g.float(&format!("{name}.weight"), &[D_MODEL], &scale.values);
    let b = g.float(&format!("{name}.bias"), &[D_MODEL], &bias.values);
    Ok(g.op(
        "LayerNormalization",
        &[x, &s, &b],
        vec![attr_int("axis", -1), attr_float("epsilon", LN_EPS as f32)],
    ))
}

/// The weights stored in an ONNX file this module wrote, by export name (transposed back to
/// tch's `[out, in]`), so a tch network can be rebuilt from a shipped model.
pub fn weights_of(bytes: &[u8]) -> Result<HashMap<String, Weight>, prost::DecodeError> {
    let model = pb::ModelProto::decode(bytes)?;
    let mut out = HashMap::new();
    for t in model.graph.map(|g| g.initializer).unwrap_or_default() {
        if t.data_type != DataType::Float as i32
            || t.dims.is_empty()
            || t.name.starts_with(CONST_PREFIX)
        {
            continue;
        }
        let values: Vec<f32> = t
            .raw_data
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        if let Some(base) = t.name.strip_suffix(".weight_t") {
            let w = Weight {
                shape: vec![t.dims[1], t.dims[0]],
                values: transpose(&Weight {
                    shape: t.dims.clone(),
                    values,
                }),
            };
            out.insert(format!("{base}.weight"), w);
        } else {
            out.insert(
                t.name.clone(),
                Weight {
                    shape: t.dims.clone(),
                    values,
                },
            );
        }
    }
    // A joint network's first layer was split into its forecast and measurement columns
    // ([`onnx_bytes_with`]): join them back into the `[64, 2 + F]` weight the network keeps.
    if let (Some(measured_t), Some(forecast)) = (
        out.remove("tok1.telemetry_weight_t"),
        out.get("tok1.weight").cloned(),
    ) {
        let measured = Weight {
            shape: vec![measured_t.shape[1], measured_t.shape[0]],
            values: transpose(&measured_t),
        };
        let rows = forecast.shape[0] as usize;
        let (a, b) = (forecast.shape[1] as usize, measured.shape[1] as usize);
        let values = (0..rows)
            .flat_map(|r| {
                forecast.values[r * a..(r + 1) * a]
                    .iter()
                    .chain(&measured.values[r * b..(r + 1) * b])
                    .copied()
                    .collect::<Vec<_>>()
            })
            .collect();
        out.insert(
            "tok1.weight".into(),
            Weight {
                shape: vec![forecast.shape[0], (a + b) as i64],
                values,
            },
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::PolicyNet;
    use std::collections::BTreeSet;

    /// The ops [`onnx_bytes`] may use (the module documentation's list).
    const OPS: [&str; 10] = [
        "MatMul",
        "Pad",
        "Add",
        "Relu",
        "Reshape",
        "Transpose",
        "Div",
        "Softmax",
        "LayerNormalization",
        "ReduceMean",
    ];

    /// A randomly initialised network's weights by export name.
    fn random_weights(actions: usize, seed: i64) -> HashMap<String, Weight> {
        tch::manual_seed(seed);
        let vs = tch::nn::VarStore::new(tch::Device::Cpu);
        let net = PolicyNet::new(&vs.root(), actions, 0.0);
        net.named_weights()
            .into_iter()
            .map(|(name, t)| {
                let shape = t.size();
                let values = Vec::<f32>::try_from(t.flatten(0, -1)).expect("float weights");
                (name, Weight { shape, values })
            })
            .collect()
    }

    fn model_of(bytes: &[u8]) -> pb::ModelProto {
        pb::ModelProto::decode(bytes).expect("a model")
    }

    #[test]
    fn weights_read_back_from_the_bytes_are_the_weights_written() {
        let weights = random_weights(5, 11);
        let bytes = onnx_bytes(&weights, 5).expect("exported");
        let back = weights_of(&bytes).expect("decoded");
        let mut names: Vec<&String> = weights.keys().collect();
        names.sort();
        let mut back_names: Vec<&String> = back.keys().collect();
        back_names.sort();
        assert_eq!(names, back_names);
        for (name, w) in &weights {
            assert_eq!(&back[name], w, "{name}");
        }
    }

    #[test]
    fn the_same_weights_give_the_same_bytes() {
        let weights = random_weights(4, 3);
        assert_eq!(
            onnx_bytes(&weights, 4).expect("exported"),
            onnx_bytes(&weights, 4).expect("exported")
        );
        let other = random_weights(4, 4);
        assert_ne!(
            onnx_bytes(&weights, 4).expect("exported"),
            onnx_bytes(&other, 4).expect("exported")
        );
    }

    #[test]
    fn the_graph_uses_only_the_pinned_opset_and_the_listed_ops() {
        let model = model_of(&onnx_bytes(&random_weights(3, 1), 3).expect("exported"));
        assert_eq!(model.ir_version, IR_VERSION);
        assert_eq!(model.opset_import.len(), 1);
        assert_eq!(model.opset_import[0].domain, "");
        assert_eq!(model.opset_import[0].version, OPSET);
        let graph = model.graph.expect("a graph");
        let used: BTreeSet<&str> = graph.node.iter().map(|n| n.op_type.as_str()).collect();
        let allowed: BTreeSet<&str> = OPS.into_iter().collect();
        assert!(used.is_subset(&allowed), "{used:?}");
        // Every op of the list but Div is needed more than once; all of them appear.
        assert_eq!(used, allowed);
        for node in &graph.node {
            assert!(
                node.domain.is_empty(),
                "{} in domain {}",
                node.name,
                node.domain
            );
            for a in &node.attribute {
                assert_ne!(a.r#type, 0, "{}.{} has no type", node.name, a.name);
            }
        }
        let reduce = graph
            .node
            .iter()
            .find(|n| n.op_type == "ReduceMean")
            .expect("pooling");
        assert_eq!(reduce.input.len(), 1, "axes is an attribute at opset 17");
        assert_eq!(
            graph.node.last().expect("nodes").output,
            vec![OUTPUT_NAME.to_owned()]
        );
    }

    #[test]
    fn the_graph_has_the_contract_s_input_and_output() {
        let model = model_of(&onnx_bytes(&random_weights(6, 2), 6).expect("exported"));
        let graph = model.graph.expect("a graph");
        let dims = |v: &pb::ValueInfoProto| -> (String, Vec<i64>) {
            let Some(pb::type_proto::Value::TensorType(t)) =
                v.r#type.as_ref().and_then(|t| t.value.clone())
            else {
                panic!("{} is not a tensor", v.name)
            };
            assert_eq!(t.elem_type, DataType::Float as i32);
            let shape = t.shape.expect("a shape").dim;
            let dims = shape
                .iter()
                .map(|d| match d.value {
                    Some(pb::tensor_shape_proto::dimension::Value::DimValue(v)) => v,
                    ref other => panic!("a symbolic dimension {other:?}"),
                })
                .collect();
            (v.name.clone(), dims)
        };
        assert_eq!(graph.input.len(), 1);
        assert_eq!(
            dims(&graph.input[0]),
            (INPUT_NAME.to_owned(), vec![1, HORIZON_STEPS as i64, 2])
        );
        assert_eq!(graph.output.len(), 1);
        assert_eq!(dims(&graph.output[0]), (OUTPUT_NAME.to_owned(), vec![1, 6]));
    }

    #[test]
    fn a_missing_or_misshapen_weight_is_named() {
        let mut weights = random_weights(3, 5);
        weights.remove("layer1.ff2.bias");
        let err = onnx_bytes(&weights, 3).expect_err("a weight is missing");
        assert_eq!(err.to_string(), "weight layer1.ff2.bias: missing");

        let weights = random_weights(3, 5);
        let err = onnx_bytes(&weights, 4).expect_err("the head has 3 outputs");
        assert_eq!(
            err.to_string(),
            "weight head.weight: shape [3, 64], expected [4, 64]"
        );
    }

    #[test]
    fn the_padded_keys_are_masked_and_tract_matches_tch() {
        use tract_onnx::prelude::*;
        let weights = random_weights(5, 8);
        let bytes = onnx_bytes(&weights, 5).expect("exported");
        let graph = model_of(&bytes).graph.expect("a graph");
        let mask = graph
            .initializer
            .iter()
            .find(|t| t.name == format!("{CONST_PREFIX}key_mask"))
            .expect("a key mask");
        let keys = padded_keys(HORIZON_STEPS as i64);
        assert_eq!(keys % KEY_BLOCK, 0);
        assert_eq!(mask.dims, vec![keys]);
        let masked = mask
            .raw_data
            .chunks_exact(4)
            .filter(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]) == KEY_MASK)
            .count();
        assert_eq!(masked as i64, keys - HORIZON_STEPS as i64);

        let plan = tract_onnx::onnx()
            .model_for_read(&mut std::io::Cursor::new(&bytes))
            .and_then(|m| m.with_input_fact(0, f32::fact([1, HORIZON_STEPS, 2]).into()))
            .and_then(|m| m.into_optimized())
            .and_then(|m| m.into_runnable())
            .expect("tract runs the graph");
        let vs = tch::nn::VarStore::new(tch::Device::Cpu);
        let mut net = PolicyNet::new(&vs.root(), 5, 0.0);
        let tensors: HashMap<String, tch::Tensor> = weights
            .iter()
            .map(|(n, w)| {
                (
                    n.clone(),
                    tch::Tensor::from_slice(&w.values).view(w.shape.as_slice()),
                )
            })
            .collect();
        assert!(net.load_named(&tensors).is_empty());
        for (name, input) in crate::card::golden_inputs(3) {
            let tensor = Tensor::from_shape(&[1, HORIZON_STEPS, 2], &input).expect("input");
            let out = plan.run(tvec!(tensor.into_tvalue())).expect("runs");
            let got: Vec<f32> = out[0]
                .to_plain_array_view::<f32>()
                .expect("f32")
                .iter()
                .copied()
                .collect();
            let expected = crate::train::logits_of(&net, &input);
            let diff = got
                .iter()
                .zip(&expected)
                .map(|(a, b)| (a - b).abs())
                .fold(0f32, f32::max);
            assert!(diff < 1e-5, "{name}: |tract - tch| = {diff:e}");
        }
    }

    #[test]
    fn bytes_that_are_not_a_model_do_not_decode() {
        assert!(weights_of(b"\xff\xff\xff\xff not protobuf").is_err());
    }
}

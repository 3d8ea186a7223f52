"""Validates an exported policy with the ONNX ecosystem's reference tools.

Usage: python check_onnx.py CARD_JSON

Runs onnx.checker.check_model(full_check=True) on the card's ONNX file, then onnxruntime on every
golden vector (a joint card's golden vectors also feed its `telemetry` input), and prints one
JSON object: {"checker": "ok", "onnxruntime_max_difference": d}.
Exits with status 1 (and the reason on stderr) if the checker rejects the file or onnxruntime's
logits differ from the card's by more than 1e-4.
"""
import json
import os
import sys

import numpy as np
import onnx
import onnxruntime


def main() -> int:
    card_path = sys.argv[1]
    with open(card_path, encoding="utf-8") as f:
        card = json.load(f)
    onnx_path = os.path.join(os.path.dirname(card_path) or ".", card.get("onnx_file", "policy.onnx"))
    model = onnx.load(onnx_path)
    try:
        onnx.checker.check_model(model, full_check=True)
    except Exception as e:  # the checker raises several exception types
        print(f"onnx checker rejects {onnx_path}: {e}", file=sys.stderr)
        return 1
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    session = onnxruntime.InferenceSession(onnx_path, options, providers=["CPUExecutionProvider"])
    worst = 0.0
    for golden in card["golden"]:
        feeds = {"forecast": np.asarray(golden["input"], dtype=np.float32).reshape(1, 120, 2)}
        if golden.get("telemetry") is not None:
            feeds["telemetry"] = np.asarray(golden["telemetry"], dtype=np.float32).reshape(1, -1)
        (logits,) = session.run(["logits"], feeds)
        worst = max(worst, float(np.max(np.abs(logits.reshape(-1) - np.asarray(golden["logits"], dtype=np.float32)))))
    print(json.dumps({"checker": "ok", "opset": model.opset_import[0].version, "ir_version": model.ir_version,
                      "onnxruntime_max_difference": worst}))
    if worst > 1e-4:
        print(f"onnxruntime differs from the card's golden logits by {worst}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Writes the scenarios the Hugging Face checks read: every matrix written out, so the check
needs no generator of attention-lens's defaults. Run once; the files are committed."""

import json
import random
from pathlib import Path

HERE = Path(__file__).parent
SENTENCE = "the animal did not cross the street because it was tired"


def rows(rng, n, m, half=1.0):
    return [[round(rng.uniform(-half, half), 4) for _ in range(m)] for _ in range(n)]


def scenario(name, seed, d_model, n_heads, n_kv, causal, rope, window=None, block=None):
    rng = random.Random(seed)
    d_k = d_model // n_heads
    seq_len = len(SENTENCE.split())
    s = {
        "version": 4,
        "title": name,
        "sentence": SENTENCE,
        "d_model": d_model,
        "n_heads": n_heads,
        "causal": causal,
        "embeddings": rows(rng, seq_len, d_model),
        "w_q": rows(rng, d_model, d_model),
        "w_k": rows(rng, d_model, n_kv * d_k),
        "w_v": rows(rng, d_model, n_kv * d_k),
        "w_o": rows(rng, d_model, d_model),
        "n_kv_heads": n_kv,
    }
    if rope:
        s["rope"] = rope
    if window:
        s["window"] = window
    if block:
        d_ff = block
        s["block"] = {
            "norm": "pre",
            "norm_type": "rmsnorm",
            "activation": "swiglu",
            "d_ff": d_ff,
            "w_gate": rows(rng, d_model, d_ff),
            "w_1": rows(rng, d_model, d_ff),
            "b_1": [0.0] * d_ff,
            "w_2": rows(rng, d_ff, d_model),
            "b_2": [0.0] * d_model,
            "ln_1_gamma": [round(1 + rng.uniform(-0.5, 0.5), 4) for _ in range(d_model)],
            "ln_2_gamma": [round(1 + rng.uniform(-0.5, 0.5), 4) for _ in range(d_model)],
        }
    (HERE / "scenarios" / f"{name}.json").write_text(json.dumps(s, indent=2) + "\n")


scenario("gqa_rope_causal", 1, 8, 4, 2, True, {"theta": 10000, "pairing": "half"})
scenario("mqa_window", 2, 8, 4, 1, True, {"theta": 100, "pairing": "half"}, window=3)
scenario("llama_block", 3, 8, 2, 1, True, {"theta": 10000, "pairing": "half"}, block=12)
scenario("llama_block_window", 4, 12, 3, 3, True, {"theta": 500, "pairing": "half"}, window=4, block=16)
scenario("interleaved", 5, 8, 2, 2, True, {"theta": 500, "pairing": "interleaved"})
scenario("gqa_no_rope_open", 6, 6, 3, 1, False, None)

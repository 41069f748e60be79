#!/usr/bin/env python3
"""A NumPy reference for attention-lens, kept apart from the Rust core on purpose.

It reads a scenario (the versioned JSON format of ``src/formats/scenario/``), rebuilds every
missing input with the documented generators, runs multi-head attention stage by stage (self-
attention, or cross-attention to a source sentence from version 2 on), optionally inside a
post-norm or pre-norm transformer block, and writes every intermediate matrix as JSON.
``tests/golden.rs`` compares the Rust trace with these files.

Usage:
    python3 tests/reference/reference.py            # rewrite expected/ from scenarios/
    python3 tests/reference/reference.py --check    # fail if expected/ is out of date
    python3 tests/reference/reference.py FILE.json  # print one scenario's stages
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SCENARIOS = HERE / "scenarios"
EXPECTED = HERE / "expected"

U64 = (1 << 64) - 1

DEFAULTS = {
    "d_model": 4,
    "n_heads": 2,
    "causal": False,
    "positional_encoding": False,
    "scale": "sqrt_head_dim",
    "temperature": 1.0,
}
KNOWN_KEYS = set(DEFAULTS) | {
    "version",
    "title",
    "caption",
    "sentence",
    "embeddings",
    "w_q",
    "w_k",
    "w_v",
    "w_o",
}
# Fields that only version 2 reads.
V2_KEYS = {"source", "source_embeddings", "block"}
BLOCK_DEFAULTS = {"norm": "post", "activation": "relu"}
BLOCK_KEYS = set(BLOCK_DEFAULTS) | {
    "d_ff",
    "w_1",
    "b_1",
    "w_2",
    "b_2",
    "ln_1_gamma",
    "ln_1_beta",
    "ln_2_gamma",
    "ln_2_beta",
}
# The seeds of the default projection matrices.
DEFAULT_SEEDS = {"w_q": 11, "w_k": 23, "w_v": 37, "w_o": 41}
# Half the range of the default values: queries and keys are drawn from [-2, 2).
DEFAULT_HALF_WIDTH = {"w_q": 2.0, "w_k": 2.0, "w_v": 1.0, "w_o": 1.0}
# The seeds and half-widths of the default feed-forward weights and biases.
BLOCK_SEEDS = {"w_1": 53, "b_1": 59, "w_2": 61, "b_2": 67}
BLOCK_HALF_WIDTH = {"w_1": 1.0, "b_1": 0.5, "w_2": 1.0, "b_2": 0.5}
# Added to the variance in LayerNorm so that a constant row divides by a positive number.
LN_EPSILON = 1e-5
# ASCII white space as Rust's char::is_whitespace sees it (Python's str.isspace also accepts
# the separators 0x1c..0x1f, which Rust does not).
WHITESPACE = set(" \t\n\x0b\x0c\r")


# ---------------------------------------------------------------------------------------------
# Generators: FNV-1a, SplitMix64 and the rounding used by the toy values.


def fnv1a_64(data: bytes) -> int:
    """64-bit FNV-1a hash."""
    h = 0xCBF29CE484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001B3) & U64
    return h


def splitmix64(seed: int):
    """Yields the SplitMix64 sequence started from ``seed``."""
    state = seed & U64
    while True:
        state = (state + 0x9E3779B97F4A7C15) & U64
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & U64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & U64
        yield z ^ (z >> 31)


def round_half_away(values: np.ndarray, decimals: int) -> np.ndarray:
    """Rounds to ``decimals`` places with ties away from zero, folding -0 to 0.

    np.round rounds ties to even, so the rounding is spelled out: the magnitude is floored and
    bumped up when its fractional part is at least one half (exact for these small values).
    """
    scaled = values * (10.0**decimals)
    magnitude = np.abs(scaled)
    whole = np.floor(magnitude)
    whole = np.where(magnitude - whole >= 0.5, whole + 1.0, whole)
    result = np.copysign(whole, scaled) / (10.0**decimals)
    return np.where(result == 0.0, 0.0, result)


def signed_draws(seed: int, count: int, decimals: int, half_width: float = 1.0) -> np.ndarray:
    """``count`` values uniform in [-half_width, half_width), from the top 53 bits of each
    draw, rounded."""
    stream = splitmix64(seed)
    top_bits = [next(stream) >> 11 for _ in range(count)]
    unit = np.array(top_bits, dtype=np.float64) / float(1 << 53)
    return round_half_away(half_width * (2.0 * unit - 1.0), decimals)


def toy_embeddings(tokens: list[str], d_model: int) -> np.ndarray:
    """One row per token, seeded by the hash of its UTF-8 bytes. (seq_len, d_model)"""
    rows = [signed_draws(fnv1a_64(t.encode("utf-8")), d_model, 2) for t in tokens]
    return np.stack(rows)


def default_weight(name: str, d_model: int) -> np.ndarray:
    """The default projection: row-major draws with one decimal. (d_model, d_model)"""
    draws = signed_draws(DEFAULT_SEEDS[name], d_model * d_model, 1, DEFAULT_HALF_WIDTH[name])
    return draws.reshape(d_model, d_model)


def block_shapes(d_model: int, d_ff: int) -> dict[str, tuple[int, ...]]:
    """The shapes of the feed-forward weights and biases."""
    return {"w_1": (d_model, d_ff), "b_1": (d_ff,), "w_2": (d_ff, d_model), "b_2": (d_model,)}


def default_block_param(name: str, d_model: int, d_ff: int) -> np.ndarray:
    """A default feed-forward weight or bias, row-major draws with one decimal:
    w_1 (d_model, d_ff), b_1 (d_ff,), w_2 (d_ff, d_model), b_2 (d_model,)."""
    shape = block_shapes(d_model, d_ff)[name]
    draws = signed_draws(BLOCK_SEEDS[name], math.prod(shape), 1, BLOCK_HALF_WIDTH[name])
    return draws.reshape(shape)


def positional_encoding(seq_len: int, d_model: int) -> np.ndarray:
    """Sinusoidal encoding; even columns sine, odd columns cosine. (seq_len, d_model)"""
    pos = np.arange(seq_len, dtype=np.float64)[:, None]
    col = np.arange(d_model)
    even = (col - col % 2).astype(np.float64)
    angle = pos / np.power(10000.0, even / d_model)
    return np.where(col % 2 == 0, np.sin(angle), np.cos(angle))


# ---------------------------------------------------------------------------------------------
# Tokenizer, restricted to ASCII where the rule is simple.


def tokenize(sentence: str) -> list[str]:
    """White space separates; letter/digit runs are words (an apostrophe followed by a letter
    stays inside a word); any other character stands alone."""
    bad = [c for c in sentence if not (c in WHITESPACE or " " <= c <= "~")]
    if bad:
        raise ValueError(f"the reference tokenizer handles printable ASCII only, got {bad!r}")
    tokens: list[str] = []
    in_word = False
    for i, c in enumerate(sentence):
        nxt = sentence[i + 1] if i + 1 < len(sentence) else ""
        if c in WHITESPACE:
            in_word = False
        elif c.isalnum():
            if in_word:
                tokens[-1] += c
            else:
                tokens.append(c)
                in_word = True
        elif c == "'" and in_word and nxt.isalpha():
            tokens[-1] += c
        else:
            tokens.append(c)
            in_word = False
    return tokens


# ---------------------------------------------------------------------------------------------
# Attention.


def softmax_rows(z: np.ndarray) -> np.ndarray:
    """Softmax over the last axis, shifted by the row maximum.

    A row of only -inf has nothing to attend to and becomes zeros; a row holding +inf gives its
    infinite entries equal shares.
    """
    top = z.max(axis=-1, keepdims=True)
    shift = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(invalid="ignore", over="ignore"):
        e = np.exp(z - shift)
        total = e.sum(axis=-1, keepdims=True)
        weights = np.divide(e, total, out=np.zeros_like(e), where=total > 0)
        infinite = z == np.inf
        shares = infinite / np.maximum(infinite.sum(axis=-1, keepdims=True), 1)
    return np.where(top == np.inf, shares, np.where(top == -np.inf, 0.0, weights))


def load_matrix(
    scenario: dict, key: str, shape: tuple[int, ...], parent: str = ""
) -> np.ndarray | None:
    """The array at ``key`` if present, checked against ``shape``: a plain array for a
    one-dimensional shape, rows otherwise. ``parent`` names the enclosing object in errors."""
    if key not in scenario:
        return None
    m = np.array(scenario[key], dtype=np.float64)
    if m.shape != shape:
        raise ValueError(f"{parent}{key} has shape {m.shape}, expected {shape}")
    return m


def whole_number(value: object) -> bool:
    """True for a JSON integer (Python's bool is an int, a JSON boolean is not)."""
    return isinstance(value, int) and not isinstance(value, bool)


def read_config(scenario: dict) -> dict:
    """The checked settings of a scenario, with defaults filled in."""
    unknown = set(scenario) - KNOWN_KEYS - V2_KEYS
    if unknown:
        raise ValueError(f"unknown scenario fields {sorted(unknown)}")
    version = scenario.get("version")
    if not whole_number(version) or version not in (1, 2):
        raise ValueError("only scenario versions 1 and 2 are understood")
    newer = sorted(V2_KEYS & set(scenario))
    if version == 1 and newer:
        raise ValueError(f"fields {newer} need scenario version 2")
    cfg = {**DEFAULTS, **{k: scenario[k] for k in DEFAULTS if k in scenario}}
    d_model, n_heads = cfg["d_model"], cfg["n_heads"]
    if not (2 <= d_model <= 16 and 1 <= n_heads <= 8 and d_model % n_heads == 0):
        raise ValueError(f"unsupported shape d_model={d_model}, n_heads={n_heads}")
    if not 0.01 <= cfg["temperature"] <= 100:
        raise ValueError("temperature out of range")
    if "source_embeddings" in scenario and "source" not in scenario:
        raise ValueError("source_embeddings needs a source")
    if cfg["causal"] and "source" in scenario:
        # A query may look at every source token: no order links the two sentences.
        raise ValueError("causal and source cannot be combined: the mask is for self-attention")
    return cfg


def read_tokens(scenario: dict, key: str) -> list[str]:
    """The tokens of the sentence at ``key``, 1 to 32 of them."""
    text = scenario[key]
    if not isinstance(text, str):
        raise ValueError(f"{key} must be a string")
    tokens = tokenize(text)
    if not 1 <= len(tokens) <= 32:
        raise ValueError(f"{key} has {len(tokens)} tokens; 1 to 32 are supported")
    return tokens


def read_block(spec: object, d_model: int) -> dict:
    """The block's settings and parameters, defaults filled in: ``norm``, ``activation``,
    ``d_ff``, w_1 (d_model, d_ff), b_1 (d_ff,), w_2 (d_ff, d_model), b_2 (d_model,) and the
    LayerNorm ``ln_*_gamma``, ``ln_*_beta`` (d_model,)."""
    if not isinstance(spec, dict):
        raise ValueError("block must be an object")
    unknown = set(spec) - BLOCK_KEYS
    if unknown:
        raise ValueError(f"unknown block fields {sorted(unknown)}")
    block = {**BLOCK_DEFAULTS, **{k: spec[k] for k in BLOCK_DEFAULTS if k in spec}}
    if block["norm"] not in ("post", "pre"):
        raise ValueError(f"block.norm must be post or pre, got {block['norm']!r}")
    if block["activation"] not in ("relu", "gelu"):
        raise ValueError(f"block.activation must be relu or gelu, got {block['activation']!r}")
    d_ff = spec.get("d_ff", 4 * d_model)
    if not whole_number(d_ff) or not 2 <= d_ff <= 64:
        raise ValueError(f"block.d_ff must be a whole number from 2 to 64, got {d_ff!r}")
    block["d_ff"] = d_ff
    for name, shape in block_shapes(d_model, d_ff).items():
        given = load_matrix(spec, name, shape, "block.")
        block[name] = default_block_param(name, d_model, d_ff) if given is None else given
    for name, fill in (("gamma", 1.0), ("beta", 0.0)):
        for i in (1, 2):
            key = f"ln_{i}_{name}"
            given = load_matrix(spec, key, (d_model,), "block.")
            block[key] = np.full(d_model, fill) if given is None else given
    return block


def attention(a_in: np.ndarray, kv_in: np.ndarray, w: dict, cfg: dict) -> dict:
    """Multi-head attention of the rows of ``a_in`` (seq_len, d_model) to the rows of ``kv_in``
    (kv_len, d_model): ``kv_in`` is ``a_in`` itself for self-attention and the source for
    cross-attention. Returns q, k, v, the per-head stages, concat and output."""
    d_model, n_heads = cfg["d_model"], cfg["n_heads"]
    head_dim = d_model // n_heads
    seq_len, kv_len = a_in.shape[0], kv_in.shape[0]
    q = a_in @ w["w_q"]  # (seq_len, d_model)
    k, v = kv_in @ w["w_k"], kv_in @ w["w_v"]  # (kv_len, d_model) each

    def by_head(m: np.ndarray) -> np.ndarray:
        # (rows, d_model) -> (n_heads, rows, head_dim): head h owns columns h*head_dim..
        return m.reshape(m.shape[0], n_heads, head_dim).transpose(1, 0, 2)

    qh, kh, vh = by_head(q), by_head(k), by_head(v)
    scores = qh @ kh.transpose(0, 2, 1)  # (n_heads, seq_len, kv_len)
    divisor = {
        "sqrt_head_dim": math.sqrt(head_dim),
        "sqrt_seq_len": math.sqrt(kv_len),  # the number of keys each query is compared with
        "none": 1.0,
    }[cfg["scale"]]
    scaled = scores / divisor
    future = np.triu(np.ones((seq_len, kv_len), dtype=bool), k=1)
    masked = np.where(future, -np.inf, scaled) if cfg["causal"] else scaled.copy()
    weights = softmax_rows(masked / cfg["temperature"])
    context = weights @ vh  # (n_heads, seq_len, head_dim)
    concat = context.transpose(1, 0, 2).reshape(seq_len, d_model)
    output = concat @ w["w_o"]  # (seq_len, d_model)

    heads = [
        {
            "q": qh[h],
            "k": kh[h],
            "v": vh[h],
            "scores": scores[h],
            "scaled": scaled[h],
            "masked": masked[h],
            "weights": weights[h],
            "context": context[h],
        }
        for h in range(n_heads)
    ]
    return {"q": q, "k": k, "v": v, "heads": heads, "concat": concat, "output": output}


# ---------------------------------------------------------------------------------------------
# The transformer block around attention.


def layer_norm(m: np.ndarray, gamma: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """Each row centred, divided by sqrt(biased variance + 1e-5), then scaled by ``gamma`` and
    shifted by ``beta`` (d_model,). (rows, d_model)"""
    mean = m.mean(axis=-1, keepdims=True)
    var = ((m - mean) ** 2).mean(axis=-1, keepdims=True)
    return (m - mean) / np.sqrt(var + LN_EPSILON) * gamma + beta


def activate(h: np.ndarray, activation: str) -> np.ndarray:
    """ReLU max(h, 0), or GELU in its tanh form, cell by cell. (rows, d_ff)"""
    if activation == "relu":
        return np.maximum(h, 0.0)
    return 0.5 * h * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (h + 0.044715 * h**3)))


def feed_forward(n: np.ndarray, block: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """hidden = n·w_1 + b_1 (rows, d_ff), activated, and ffn = activated·w_2 + b_2
    (rows, d_model)."""
    hidden = n @ block["w_1"] + block["b_1"]
    activated = activate(hidden, block["activation"])
    return hidden, activated, activated @ block["w_2"] + block["b_2"]


def attention_input(x: np.ndarray, block: dict | None) -> np.ndarray:
    """What the queries (and, in self-attention, the keys and values) are computed from: x, or
    LN₁(x) in a pre-norm block. (seq_len, d_model)"""
    if block is not None and block["norm"] == "pre":
        return layer_norm(x, block["ln_1_gamma"], block["ln_1_beta"])
    return x


def block_stages(attention_input, sum_1, norm_1, network, sum_2, norm_2, out) -> dict:
    """The block's matrices under the names of the expected files, in their order."""
    hidden, activated, ffn = network
    return {
        "attention_input": attention_input,
        "sum_1": sum_1,
        "norm_1": norm_1,
        "hidden": hidden,
        "activated": activated,
        "ffn": ffn,
        "sum_2": sum_2,
        "norm_2": norm_2,
        "out": out,
    }


def post_norm_block(x: np.ndarray, y: np.ndarray, block: dict) -> dict:
    """Add & norm after each sub-layer: N₁ = LN₁(x + y), N₂ = LN₂(N₁ + FFN(N₁)); out = N₂.
    Every stage (seq_len, d_model), but hidden and activated (seq_len, d_ff)."""
    sum_1 = x + y
    norm_1 = layer_norm(sum_1, block["ln_1_gamma"], block["ln_1_beta"])
    hidden, activated, ffn = feed_forward(norm_1, block)
    sum_2 = norm_1 + ffn
    norm_2 = layer_norm(sum_2, block["ln_2_gamma"], block["ln_2_beta"])
    return block_stages(x, sum_1, norm_1, (hidden, activated, ffn), sum_2, norm_2, out=norm_2)


def pre_norm_block(x: np.ndarray, y: np.ndarray, block: dict) -> dict:
    """Norm before each sub-layer, residuals untouched: y came from N₁ = LN₁(x);
    R₁ = x + y, N₂ = LN₂(R₁), R₂ = R₁ + FFN(N₂); out = R₂.
    Every stage (seq_len, d_model), but hidden and activated (seq_len, d_ff)."""
    norm_1 = attention_input(x, block)
    sum_1 = x + y
    norm_2 = layer_norm(sum_1, block["ln_2_gamma"], block["ln_2_beta"])
    hidden, activated, ffn = feed_forward(norm_2, block)
    sum_2 = sum_1 + ffn
    return block_stages(norm_1, sum_1, norm_1, (hidden, activated, ffn), sum_2, norm_2, out=sum_2)


# ---------------------------------------------------------------------------------------------
# A whole scenario.


def embed(scenario: dict, tokens: list[str], key: str, cfg: dict) -> np.ndarray:
    """E (+ P): the embeddings at ``key`` or the toy ones, plus positions from 0 when
    positional encoding is on. (len(tokens), d_model)"""
    shape = (len(tokens), cfg["d_model"])
    e = load_matrix(scenario, key, shape)
    if e is None:
        e = toy_embeddings(tokens, cfg["d_model"])
    return e + positional_encoding(*shape) if cfg["positional_encoding"] else e


def run(scenario: dict) -> dict:
    """Every stage of a scenario: tokens, the source's tokens and x when it has one, x, the
    attention stages and, with a block, the block's stages."""
    cfg = read_config(scenario)
    d_model = cfg["d_model"]
    tokens = read_tokens(scenario, "sentence")
    x = embed(scenario, tokens, "embeddings", cfg)
    w = {}
    for name in DEFAULT_SEEDS:
        given = load_matrix(scenario, name, (d_model, d_model))
        w[name] = default_weight(name, d_model) if given is None else given
    block = read_block(scenario["block"], d_model) if "block" in scenario else None

    result: dict = {"tokens": tokens}
    a_in = attention_input(x, block)
    if "source" in scenario:
        source_tokens = read_tokens(scenario, "source")
        # The source is never normalised: only the queries' side passes through LN₁.
        source_x = embed(scenario, source_tokens, "source_embeddings", cfg)
        result |= {"source_tokens": source_tokens, "source_x": source_x}
        kv_in = source_x
    else:
        kv_in = a_in
    result["x"] = x
    result |= attention(a_in, kv_in, w, cfg)
    if block is not None:
        stages = post_norm_block if block["norm"] == "post" else pre_norm_block
        result["block"] = stages(x, result["output"], block)
    return result


# ---------------------------------------------------------------------------------------------
# Output: one matrix row per line, every float in full (repr) precision, -inf as null.


def number(value: float) -> str:
    if value == -math.inf:
        return "null"
    if not math.isfinite(value):
        raise ValueError(f"unexpected non-finite value {value}")
    return repr(float(value))


def matrix_text(m: np.ndarray, indent: str) -> str:
    rows = ["[" + ", ".join(number(v) for v in row) + "]" for row in m.tolist()]
    inner = (",\n" + indent + "  ").join(rows)
    return "[\n" + indent + "  " + inner + "\n" + indent + "]"


def to_json(result: dict) -> str:
    lines = ["{", '  "tokens": ' + json.dumps(result["tokens"], ensure_ascii=False) + ","]
    if "source_tokens" in result:
        source_tokens = json.dumps(result["source_tokens"], ensure_ascii=False)
        lines.append('  "source_tokens": ' + source_tokens + ",")
        lines.append('  "source_x": ' + matrix_text(result["source_x"], "  ") + ",")
    for key in ("x", "q", "k", "v"):
        lines.append(f'  "{key}": ' + matrix_text(result[key], "  ") + ",")
    heads = []
    for head in result["heads"]:
        fields = [f'      "{k}": ' + matrix_text(m, "      ") for k, m in head.items()]
        heads.append("    {\n" + ",\n".join(fields) + "\n    }")
    lines.append('  "heads": [\n' + ",\n".join(heads) + "\n  ],")
    lines.append('  "concat": ' + matrix_text(result["concat"], "  ") + ",")
    output = '  "output": ' + matrix_text(result["output"], "  ")
    if "block" in result:
        fields = [f'    "{k}": ' + matrix_text(m, "    ") for k, m in result["block"].items()]
        lines.append(output + ",")
        lines.append('  "block": {\n' + ",\n".join(fields) + "\n  }")
    else:
        lines.append(output)
    lines.append("}")
    return "\n".join(lines) + "\n"


def expected_text(scenario_path: Path) -> str:
    scenario = json.loads(scenario_path.read_text(encoding="utf-8"))
    text = to_json(run(scenario))
    json.loads(text)  # the writer must produce valid JSON
    return text


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("scenario", nargs="?", type=Path, help="print this scenario's stages")
    parser.add_argument("--check", action="store_true", help="compare with expected/, write nothing")
    args = parser.parse_args()

    if args.scenario is not None:
        sys.stdout.write(expected_text(args.scenario))
        return 0

    paths = sorted(SCENARIOS.glob("*.json"))
    if not paths:
        print(f"no scenarios in {SCENARIOS}", file=sys.stderr)
        return 1
    EXPECTED.mkdir(exist_ok=True)
    stale = []
    for path in paths:
        target = EXPECTED / path.name
        text = expected_text(path)
        if args.check:
            if not target.exists() or target.read_text(encoding="utf-8") != text:
                stale.append(path.name)
        else:
            target.write_text(text, encoding="utf-8")
    orphans = sorted({p.name for p in EXPECTED.glob("*.json")} - {p.name for p in paths})
    if args.check:
        for name in stale:
            print(f"out of date: expected/{name}", file=sys.stderr)
        for name in orphans:
            print(f"no scenario for expected/{name}", file=sys.stderr)
        if stale or orphans:
            return 1
        print(f"{len(paths)} expected files are up to date (numpy {np.__version__})")
    else:
        for name in orphans:
            (EXPECTED / name).unlink()
        print(f"wrote {len(paths)} expected files (numpy {np.__version__})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

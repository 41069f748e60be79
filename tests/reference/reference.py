#!/usr/bin/env python3
"""A NumPy reference for attention-lens, kept apart from the Rust core on purpose.

It reads a scenario (the versioned JSON format of ``src/scenario.rs``), rebuilds every missing
input with the documented generators, runs multi-head self-attention stage by stage and writes
every intermediate matrix as JSON. ``tests/golden.rs`` compares the Rust trace with these files.

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
# The seeds of the default projection matrices.
DEFAULT_SEEDS = {"w_q": 11, "w_k": 23, "w_v": 37, "w_o": 41}
# Half the range of the default values: queries and keys are drawn from [-2, 2).
DEFAULT_HALF_WIDTH = {"w_q": 2.0, "w_k": 2.0, "w_v": 1.0, "w_o": 1.0}
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


def load_matrix(scenario: dict, key: str, shape: tuple[int, int]) -> np.ndarray | None:
    if key not in scenario:
        return None
    m = np.array(scenario[key], dtype=np.float64)
    if m.shape != shape:
        raise ValueError(f"{key} has shape {m.shape}, expected {shape}")
    return m


def run(scenario: dict) -> dict:
    unknown = set(scenario) - KNOWN_KEYS
    if unknown:
        raise ValueError(f"unknown scenario fields {sorted(unknown)}")
    if scenario.get("version") != 1:
        raise ValueError("only scenario version 1 is understood")
    cfg = {**DEFAULTS, **{k: scenario[k] for k in DEFAULTS if k in scenario}}
    d_model, n_heads = cfg["d_model"], cfg["n_heads"]
    if not (2 <= d_model <= 16 and 1 <= n_heads <= 8 and d_model % n_heads == 0):
        raise ValueError(f"unsupported shape d_model={d_model}, n_heads={n_heads}")
    if not 0.01 <= cfg["temperature"] <= 100:
        raise ValueError("temperature out of range")
    head_dim = d_model // n_heads

    tokens = tokenize(scenario["sentence"])
    seq_len = len(tokens)
    if not 1 <= seq_len <= 32:
        raise ValueError(f"{seq_len} tokens; 1 to 32 are supported")

    e = load_matrix(scenario, "embeddings", (seq_len, d_model))
    if e is None:
        e = toy_embeddings(tokens, d_model)
    w = {}
    for name in DEFAULT_SEEDS:
        given = load_matrix(scenario, name, (d_model, d_model))
        w[name] = default_weight(name, d_model) if given is None else given

    x = e + positional_encoding(seq_len, d_model) if cfg["positional_encoding"] else e
    q, k, v = x @ w["w_q"], x @ w["w_k"], x @ w["w_v"]  # (seq_len, d_model) each

    def by_head(m: np.ndarray) -> np.ndarray:
        # (seq_len, d_model) -> (n_heads, seq_len, head_dim): head h owns columns h*head_dim..
        return m.reshape(seq_len, n_heads, head_dim).transpose(1, 0, 2)

    qh, kh, vh = by_head(q), by_head(k), by_head(v)
    scores = qh @ kh.transpose(0, 2, 1)  # (n_heads, seq_len, seq_len)
    divisor = {
        "sqrt_head_dim": math.sqrt(head_dim),
        "sqrt_seq_len": math.sqrt(seq_len),
        "none": 1.0,
    }[cfg["scale"]]
    scaled = scores / divisor
    future = np.triu(np.ones((seq_len, seq_len), dtype=bool), k=1)
    masked = np.where(future, -np.inf, scaled) if cfg["causal"] else scaled.copy()
    weights = softmax_rows(masked / cfg["temperature"])
    context = weights @ vh  # (n_heads, seq_len, head_dim)
    concat = context.transpose(1, 0, 2).reshape(seq_len, d_model)
    output = concat @ w["w_o"]

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
    return {
        "tokens": tokens,
        "x": x,
        "q": q,
        "k": k,
        "v": v,
        "heads": heads,
        "concat": concat,
        "output": output,
    }


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
    for key in ("x", "q", "k", "v"):
        lines.append(f'  "{key}": ' + matrix_text(result[key], "  ") + ",")
    heads = []
    for head in result["heads"]:
        fields = [f'      "{k}": ' + matrix_text(m, "      ") for k, m in head.items()]
        heads.append("    {\n" + ",\n".join(fields) + "\n    }")
    lines.append('  "heads": [\n' + ",\n".join(heads) + "\n  ],")
    lines.append('  "concat": ' + matrix_text(result["concat"], "  ") + ",")
    lines.append('  "output": ' + matrix_text(result["output"], "  "))
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

"""Hugging Face reference for the attention of today's models.

For every scenario in scenarios/, runs the same numbers through Hugging Face transformers'
own Llama code in float64 and writes expected/<name>.json, which tests/golden_hf.rs compares
with the Rust trace:

- rotary positions: transformers' `apply_rotary_pos_emb` (the "half" pairing, `rotate_half`)
  with cos and sin laid out as `LlamaRotaryEmbedding` lays them out, computed in float64 (its
  own tables are float32, whatever the model's dtype; their largest difference from the float64
  ones is written as `rope_table_float32_error`). The "interleaved" pairing is Meta's original
  Llama formula: pairs (2i, 2i + 1) as complex numbers times e^(i·p·ω), in complex128.
- grouped-query attention and the masks: `LlamaAttention` with SDPA attention
  (`sdpa_attention_forward`, which keeps float64), its mask from `masking_utils.sdpa_mask` with
  `causal_mask_function` or `sliding_window_causal_mask_function` (Mistral's window); the
  weights from `eager_attention_forward` (`repeat_kv`), the one path that returns them, whose
  softmax is float32 whatever the dtype.
- the block: `LlamaDecoderLayer` (input_layernorm, self_attn, post_attention_layernorm, the
  SwiGLU `LlamaMLP`). `LlamaRMSNorm` computes in float32 whatever its input's dtype, so the
  layer's output agrees to about 1e-6 only; N₁ is also written from torch's own float64
  `rms_norm`, which agrees to rounding.
- decoding: `LlamaAttention` fed one token at a time with a `DynamicCache`, after a prefill.

    python tests/reference/hf/hf.py            # rewrite every expected/*.json
    python tests/reference/hf/hf.py --check    # exit 1 if any is out of date

Needs torch and transformers (requirements.txt); not run by the test command.
"""

import json
import sys
from pathlib import Path

import torch
from transformers import LlamaConfig
from transformers.masking_utils import (
    bidirectional_mask_function,
    causal_mask_function,
    eager_mask,
    sdpa_mask,
    sliding_window_causal_mask_function,
)
from transformers.cache_utils import DynamicCache
from transformers.integrations.sdpa_attention import sdpa_attention_forward
from transformers.models.llama import modeling_llama as llama

HERE = Path(__file__).parent
torch.set_default_dtype(torch.float64)
PREFILL = 3


def tensor(rows):
    return torch.tensor(rows, dtype=torch.float64)


def config_of(s):
    d, h = s["d_model"], s["n_heads"]
    block = s.get("block") or {}
    rope = s.get("rope") or {"theta": 10000.0}
    config = LlamaConfig(
        hidden_size=d,
        intermediate_size=block.get("d_ff", 4 * d),
        num_attention_heads=h,
        num_key_value_heads=s.get("n_kv_heads", h),
        head_dim=d // h,
        rms_norm_eps=1e-5,
        hidden_act="silu",
        attention_bias=False,
        mlp_bias=False,
        max_position_embeddings=64,
        rope_parameters={"rope_type": "default", "rope_theta": float(rope["theta"])},
    )
    config._attn_implementation = "eager"
    return config


def rope_tables(s, positions):
    """cos and sin as LlamaRotaryEmbedding lays them out ((freqs, freqs) concatenated), in
    float64; and the largest difference from its own float32 tables."""
    d_k = s["d_model"] // s["n_heads"]
    if not s.get("rope"):
        ones = torch.ones(1, len(positions), d_k)
        return (ones, torch.zeros_like(ones)), 0.0
    theta = float(s["rope"]["theta"])
    inv_freq = 1.0 / (theta ** (torch.arange(0, d_k, 2, dtype=torch.float64) / d_k))
    freqs = torch.tensor(positions, dtype=torch.float64)[:, None] * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)[None]
    cos, sin = emb.cos(), emb.sin()
    theirs = llama.LlamaRotaryEmbedding(config_of(s))
    pos = torch.tensor([positions])
    cos32, sin32 = theirs(torch.zeros(1, len(positions), d_k), pos)
    error = max((cos32 - cos).abs().max().item(), (sin32 - sin).abs().max().item())
    return (cos, sin), error


def meta_rotate(x, s, first):
    """Meta's Llama: pairs (2i, 2i + 1) of each head as complex numbers, times e^(i·p·ω)."""
    d_k = x.shape[-1]
    theta = float(s["rope"]["theta"])
    freqs = 1.0 / (theta ** (torch.arange(0, d_k, 2, dtype=torch.float64)[: d_k // 2] / d_k))
    t = torch.arange(first, first + x.shape[-2], dtype=torch.float64)
    cis = torch.polar(torch.ones(len(t), d_k // 2), torch.outer(t, freqs))
    pairs = torch.view_as_complex(x.reshape(*x.shape[:-1], -1, 2).contiguous())
    return torch.view_as_real(pairs * cis).flatten(-2)


def mask_of(s, q_length, kv_length, q_offset=0, sdpa=False):
    """The mask transformers builds for the eager path (0 or the lowest float, added to the
    scores) or for SDPA (booleans, always written out so SDPA never guesses causality)."""
    fn = bidirectional_mask_function
    if s["causal"]:
        fn = causal_mask_function
        if s.get("window"):
            fn = sliding_window_causal_mask_function(s["window"])
    if sdpa:
        return sdpa_mask(
            batch_size=1,
            q_length=q_length,
            kv_length=kv_length,
            q_offset=q_offset,
            mask_function=fn,
            allow_is_causal_skip=False,
            allow_is_bidirectional_skip=False,
        )
    if not s["causal"]:
        return None
    return eager_mask(
        batch_size=1,
        q_length=q_length,
        kv_length=kv_length,
        q_offset=q_offset,
        mask_function=fn,
        dtype=torch.float64,
    )


def attention(s, config):
    # SDPA keeps float64 throughout; the eager path takes its softmax in float32.
    config._attn_implementation = "sdpa"
    a = llama.LlamaAttention(config, layer_idx=0).to(torch.float64)
    with torch.no_grad():
        a.q_proj.weight.copy_(tensor(s["w_q"]).T)
        a.k_proj.weight.copy_(tensor(s["w_k"]).T)
        a.v_proj.weight.copy_(tensor(s["w_v"]).T)
        a.o_proj.weight.copy_(tensor(s["w_o"]).T)
    return a.eval()


def rows(t):
    return t.reshape(-1, t.shape[-1]).tolist()


def heads_of(s, a, x, tables):
    """Each head's turned Q and K and its weights, through the module's own pieces, and Y
    through SDPA. The eager path, the only one that returns the weights, takes its softmax in
    float32, so the weights agree to about 1e-7 only."""
    T, d_k = x.shape[1], s["d_model"] // s["n_heads"]
    q = a.q_proj(x).view(1, T, -1, d_k).transpose(1, 2)
    k = a.k_proj(x).view(1, T, -1, d_k).transpose(1, 2)
    v = a.v_proj(x).view(1, T, -1, d_k).transpose(1, 2)
    pairing = (s.get("rope") or {}).get("pairing", "half")
    if s.get("rope") and pairing == "interleaved":
        q, k = meta_rotate(q, s, 0), meta_rotate(k, s, 0)
    else:
        q, k = llama.apply_rotary_pos_emb(q, k, *tables)
    _, weights = llama.eager_attention_forward(a, q, k, v, mask_of(s, T, T), a.scaling)
    out, _ = sdpa_attention_forward(
        a, q, k, v, mask_of(s, T, T, sdpa=True), scaling=a.scaling
    )
    y = a.o_proj(out.reshape(1, T, -1))
    kv = a.num_key_value_groups
    heads = [
        {
            "kv_head": h // kv,
            "q_rope": rows(q[0, h]),
            "k_rope": rows(k[0, h // kv]),
            "weights": rows(weights[0, h]),
        }
        for h in range(s["n_heads"])
    ]
    return heads, y


def decode_of(s, a, x, tables):
    """The module fed the prefill at once, then one token at a time from its cache."""
    cos, sin = tables
    T = x.shape[1]
    cache = DynamicCache()
    first = (cos[:, :PREFILL], sin[:, :PREFILL])
    a(x[:, :PREFILL], first, mask_of(s, PREFILL, PREFILL, sdpa=True), cache)
    out = []
    for i in range(PREFILL, T):
        at = (cos[:, i : i + 1], sin[:, i : i + 1])
        y, _ = a(x[:, i : i + 1], at, mask_of(s, 1, i + 1, i, sdpa=True), cache)
        out.append(rows(y)[0])
    return {"prefill": PREFILL, "outputs": out}


@torch.no_grad()
def expected(s):
    config = config_of(s)
    x = tensor(s["embeddings"])[None]
    T = x.shape[1]
    tables, table_error = rope_tables(s, list(range(T)))
    a = attention(s, config)
    result = {"rope_table_float32_error": table_error}
    block = s.get("block")
    attention_input = x
    if block:
        gamma_1 = tensor(block["ln_1_gamma"])
        attention_input = torch.nn.functional.rms_norm(x, (s["d_model"],), gamma_1, eps=1e-5)
        result["attention_input"] = rows(attention_input)
    heads, y = heads_of(s, a, attention_input, tables)
    # The module's own forward, which must agree with its pieces (it knows the half pairing
    # only).
    if (s.get("rope") or {}).get("pairing", "half") == "half":
        y_module, _ = a(attention_input, tables, mask_of(s, T, T, sdpa=True))
        assert (y - y_module).abs().max() < 1e-12, (s["title"], (y - y_module).abs().max())
    result["heads"] = heads
    result["output"] = rows(y)
    if block:
        layer = llama.LlamaDecoderLayer(config, layer_idx=0).to(torch.float64).eval()
        layer.self_attn = a
        layer.input_layernorm.weight.copy_(tensor(block["ln_1_gamma"]))
        layer.post_attention_layernorm.weight.copy_(tensor(block["ln_2_gamma"]))
        layer.mlp.gate_proj.weight.copy_(tensor(block["w_gate"]).T)
        layer.mlp.up_proj.weight.copy_(tensor(block["w_1"]).T)
        layer.mlp.down_proj.weight.copy_(tensor(block["w_2"]).T)
        out = layer(x, attention_mask=mask_of(s, T, T, sdpa=True), position_embeddings=tables)
        result["block_out"] = rows(out)
    if s["causal"] and (s.get("rope") or {}).get("pairing", "half") == "half":
        result["decode"] = decode_of(s, a, attention_input, tables)
    return result


def main():
    check = "--check" in sys.argv[1:]
    stale = []
    for path in sorted((HERE / "scenarios").glob("*.json")):
        s = json.loads(path.read_text())
        text = json.dumps(expected(s), indent=1) + "\n"
        target = HERE / "expected" / path.name
        if check:
            if not target.exists() or target.read_text() != text:
                stale.append(path.name)
        else:
            target.write_text(text)
    if stale:
        print("out of date:", ", ".join(stale))
        sys.exit(1)


if __name__ == "__main__":
    main()

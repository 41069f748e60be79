//! What a learner reads about two ways of running attention shown after the stages that compute
//! the same numbers whole: decoding one token at a time from a KV cache, and FlashAttention's
//! tiled softmax.

use super::backward::divisor_symbol;
use super::matrices::token_label;
use super::number::{format_value, scientific};
use super::stages::EQUATION_SEPARATOR;
use crate::attention::{Config, Decode, DecodeStep, Outline, ScaleMode, Tile, Trace, Wiring};

/// The name of the decoding stage.
pub const DECODE_NAME: &str = "Decoding from the KV cache";

/// The name of the tiles' stage.
pub const TILES_NAME: &str = "FlashAttention's tiled softmax";

/// What decoding from a KV cache is and why, true for every setting.
pub const DECODE_EXPLANATION: &str = "A model that writes text produces one token at a time. The first P tokens (the prompt) go through attention together: the prefill. Then each new token goes through alone, and its query meets the keys and values of every token so far.\n\n\
    A token's key and value come from its own row (and position) only, so they never change; under the causal mask no token reads a later one, so earlier tokens' outputs (in a deeper model, every layer's keys and values) stay the same too.\n\n\
    A decoder keeps the keys and values in a cache, one row more per step, instead of computing them again. A past query is never read again, so queries are not kept. The cache changes the cost, not the numbers: each step's output row is the whole sentence's, to rounding.";

/// What the tiled softmax is and why, true for every setting.
pub const TILES_EXPLANATION: &str = "FlashAttention (Dao et al., 2022; the form here, with o divided by ℓ once at the end, is FlashAttention-2's, Dao 2023) computes a row of softmax(…)·V without ever holding the whole row of weights. It reads the keys in blocks and keeps three things: m, the largest softmax input so far; ℓ, the sum of e^(x − m) over the keys so far; and o, those exponentials times their value rows, summed.\n\n\
    A block that brings a larger maximum m′ first multiplies what came before by e^(m − m′); a block whose keys are all hidden adds nothing.\n\n\
    After the last block, o ÷ ℓ is the weighted sum's row: equal in exact arithmetic (each exponential is taken from a running maximum and rescaled, and the factors cancel), and in floating point to rounding. It is not an approximation. It saves memory and memory traffic: between blocks a query keeps d_k + 2 numbers, not a weight for every key, and on a GPU the seq_len × seq_len weights are never written to the slower main memory.";

/// The query's symbol in the decoding formula: `q̃` with rotary positions.
fn q_symbol(w: Wiring) -> &'static str {
    if w.rope {
        "q̃"
    } else {
        "q"
    }
}

/// The keys' symbol in the decoding formula: `K̃` with rotary positions.
fn k_symbol(w: Wiring) -> &'static str {
    if w.rope {
        "K̃"
    } else {
        "K"
    }
}

/// What the softmax's input is divided by, as text: ` / √d_k`, ` / (√d_k·T)`, or nothing.
fn divided(c: &Config, w: Wiring) -> String {
    let t = c.temperature != 1.0;
    match (divisor_symbol(c, w), t) {
        (Some(d), true) => format!(" / ({d}·T)"),
        (Some(d), false) => format!(" / {d}"),
        (None, true) => " / T".into(),
        (None, false) => String::new(),
    }
}

/// The decoding formula in plain text, for the settings in `c`.
pub fn decode_formula(c: &Config, w: Wiring) -> String {
    let x = w.query_input();
    let (q, k) = (q_symbol(w), k_symbol(w));
    let (turn_q, turn_k) = if w.rope {
        (format!("rot({x}[i]·W_q, i)"), format!("rot({x}[i]·W_k, i)"))
    } else {
        (format!("{x}[i]·W_q"), format!("{x}[i]·W_k"))
    };
    let output = if c.n_heads > 1 {
        "y = [c₁ | … | c_H]·W_o"
    } else {
        "y = c₁·W_o"
    };
    format!(
        "{q} = {turn_q};  {k} ← [{k}; {turn_k}],  V ← [V; {x}[i]·W_v];  aₕ = softmax({q}ₕ·{k}_g(h)ᵀ{}{});  cₕ = aₕ·V_g(h);  {output}",
        divided(c, w),
        if c.window.is_some() { " + window mask" } else { "" }
    )
}

fn mi(s: &str) -> String {
    format!("<mi>{s}</mi>")
}

fn msub(base: &str, sub: &str) -> String {
    format!("<msub><mi>{base}</mi><mi>{sub}</mi></msub>")
}

/// The softmax's input divided as the settings divide it, in MathML.
fn divided_mathml(product: &str, c: &Config, w: Wiring) -> String {
    let t = c.temperature != 1.0;
    let root = |s: &str| match s {
        "d_k" => "<msqrt><msub><mi>d</mi><mi>k</mi></msub></msqrt>".to_string(),
        other => format!("<msqrt><mi>{other}</mi></msqrt>"),
    };
    let divisor = match c.scale {
        ScaleMode::SqrtHeadDim => Some(root("d_k")),
        ScaleMode::SqrtSeqLen if w.cross => Some(root("src_len")),
        ScaleMode::SqrtSeqLen => Some(root("seq_len")),
        ScaleMode::None => None,
    };
    let below = match (divisor, t) {
        (Some(d), true) => Some(format!("<mrow>{d}<mi>T</mi></mrow>")),
        (Some(d), false) => Some(d),
        (None, true) => Some(mi("T")),
        (None, false) => None,
    };
    match below {
        Some(b) => format!("<mfrac><mrow>{product}</mrow>{b}</mfrac>"),
        None => product.to_string(),
    }
}

/// The decoding formula in MathML, its equations separated as the other stages' are.
pub fn decode_formula_mathml(c: &Config, w: Wiring) -> String {
    let x = format!("{}<mo>[</mo><mi>i</mi><mo>]</mo>", symbol(w.query_input()));
    let (q, k) = (q_symbol(w), k_symbol(w));
    let turned = |m: &str| {
        let product = format!("{x}{}", msub("W", m));
        if w.rope {
            format!("<mi>rot</mi><mo>(</mo>{product}<mo>,</mo><mi>i</mi><mo>)</mo>")
        } else {
            product
        }
    };
    let sep = EQUATION_SEPARATOR;
    let product = format!(
        "{}<msubsup><mi>{k}</mi><mrow><mi>g</mi><mo>(</mo><mi>h</mi><mo>)</mo></mrow><mi>T</mi></msubsup>",
        msub(q, "h")
    );
    [
        format!("<mi>{q}</mi><mo>=</mo>{}", turned("q")),
        format!(
            "<mi>{k}</mi><mo>←</mo><mo>[</mo><mi>{k}</mi><mo>;</mo>{}<mo>]</mo>",
            turned("k")
        ),
        format!(
            "<mi>V</mi><mo>←</mo><mo>[</mo><mi>V</mi><mo>;</mo>{x}{}<mo>]</mo>",
            msub("W", "v")
        ),
        format!(
            "{}<mo>=</mo><mi>softmax</mi><mo>(</mo>{}{}<mo>)</mo>",
            msub("a", "h"),
            divided_mathml(&product, c, w),
            if c.window.is_some() {
                "<mo>+</mo><mtext>window mask</mtext>"
            } else {
                ""
            }
        ),
        format!(
            "{}<mo>=</mo>{}<msub><mi>V</mi><mrow><mi>g</mi><mo>(</mo><mi>h</mi><mo>)</mo></mrow></msub>",
            msub("c", "h"),
            msub("a", "h"),
        ),
        if c.n_heads > 1 {
            format!(
                "<mi>y</mi><mo>=</mo><mo>[</mo>{}<mo>|</mo><mo>…</mo><mo>|</mo>{}<mo>]</mo>{}",
                msub("c", "1"),
                msub("c", "H"),
                msub("W", "o")
            )
        } else {
            format!(
                "<mi>y</mi><mo>=</mo>{}{}",
                msub("c", "1"),
                msub("W", "o")
            )
        },
    ]
    .join(sep)
}

/// A matrix's symbol in MathML: `N₁` as N with subscript 1.
fn symbol(s: &str) -> String {
    match s.strip_suffix('₁') {
        Some(base) => format!("<msub><mi>{base}</mi><mn>1</mn></msub>"),
        None => mi(s),
    }
}

/// The tiles' formula in plain text.
pub fn tiles_formula() -> String {
    "m′ = max(m, maxⱼ xⱼ);  ℓ′ = ℓ·e^(m − m′) + Σⱼ e^(xⱼ − m′);  o′ = o·e^(m − m′) + Σⱼ e^(xⱼ − m′)·vⱼ;  row of Cₕ = o ÷ ℓ after the last block"
        .into()
}

/// The tiles' formula in MathML.
pub fn tiles_formula_mathml() -> String {
    let e = |power: &str| format!("<msup><mi>e</mi><mrow>{power}</mrow></msup>");
    let m2 = "<msup><mi>m</mi><mo>′</mo></msup>";
    let xj = msub("x", "j");
    let rescale = e(&format!("<mi>m</mi><mo>−</mo>{m2}"));
    let term = e(&format!("{xj}<mo>−</mo>{m2}"));
    let sum = "<munder><mo>∑</mo><mi>j</mi></munder>";
    [
        format!("{m2}<mo>=</mo><mi>max</mi><mo>(</mo><mi>m</mi><mo>,</mo><munder><mi>max</mi><mi>j</mi></munder>{xj}<mo>)</mo>"),
        format!("<msup><mi>ℓ</mi><mo>′</mo></msup><mo>=</mo><mi>ℓ</mi>{rescale}<mo>+</mo>{sum}{term}"),
        format!("<msup><mi>o</mi><mo>′</mo></msup><mo>=</mo><mi>o</mi>{rescale}<mo>+</mo>{sum}{term}{}", msub("v", "j")),
        format!("{}<mo>[</mo><mi>i</mi><mo>]</mo><mo>=</mo><mi>o</mi><mo>/</mo><mi>ℓ</mi>", msub("C", "h")),
    ]
    .join(EQUATION_SEPARATOR)
}

/// The shapes of a decoding step.
pub fn decode_shapes(outline: &Outline) -> String {
    let c = &outline.config;
    let (d, dk, g) = (c.d_model, c.head_dim(), c.n_kv_heads());
    format!(
        "one row {x}[i] (1 × {d}) → a query 1 × {dk} per head; the cache: {g} × (K and V, (i + 1) × {dk}); weights 1 × (i + 1); y: 1 × {d}",
        x = outline.wiring.query_input()
    )
}

/// The shapes of the tiles.
pub fn tiles_shapes(outline: &Outline, block: Option<usize>) -> String {
    let (n, dk) = (outline.n_keys(), outline.config.head_dim());
    let blocks = match block {
        Some(b) => format!(
            "{} of at most {b} {}",
            match n.div_ceil(b.max(1)) {
                1 => "1 block".to_string(),
                k => format!("{k} blocks"),
            },
            if b == 1 { "key" } else { "keys" }
        ),
        None => "blocks of keys".into(),
    };
    format!(
        "one query row: {n} softmax inputs and Vₕ ({n} × {dk}), in {blocks}; kept between blocks: m, ℓ (numbers) and o (1 × {dk})"
    )
}

/// `“word”` for token `i`, labelled as the heatmaps label it.
fn quoted_token(tokens: &[String], i: usize) -> String {
    format!("“{}”", token_label(tokens, i).unwrap_or_default())
}

/// A number with two decimals, in brackets when it is negative, to follow an operator.
fn bracketed(v: f64) -> String {
    let text = format_value(v, 2);
    if text.starts_with('−') {
        format!("({text})")
    } else {
        text
    }
}

/// `a`, `a and b`, `a, b and c`.
pub(crate) fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// Numbers a person reads: thousands apart by a thin space.
fn count(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (k, c) in digits.chars().enumerate() {
        if k > 0 && (digits.len() - k).is_multiple_of(3) {
            out.push('\u{2009}');
        }
        out.push(c);
    }
    out
}

/// The line above a decoding step: which token, and what it costs with the cache and without.
pub fn decode_status(trace: &Trace, step: &DecodeStep, n_steps: usize, first: usize) -> String {
    let c = &trace.config;
    let i = step.position;
    let cache = 2 * (i + 1) * c.n_kv_heads() * c.head_dim();
    format!(
        "Step {} of {n_steps}: {}, position {} (counting from 0). Multiply-adds: {} with the cache, {} recomputing the earlier keys and values. The cache holds {} numbers.",
        i - first + 1,
        quoted_token(&trace.tokens, i),
        i,
        count(step.macs.cached),
        count(step.macs.recomputed),
        count(cache)
    )
}

/// The note under a decoding step, paragraph by paragraph: that it equals the full pass, what
/// the counts count, what sharing key/value heads saves, and the mistakes.
pub fn decode_note(trace: &Trace, decode: &Decode, row: usize) -> Vec<String> {
    let c = &trace.config;
    let w = trace.wiring();
    let Some(step) = decode.steps.iter().find(|s| s.position == row) else {
        return Vec::new();
    };
    let (i, d, dk, n, g) = (row, c.d_model, c.head_dim(), c.n_heads, c.n_kv_heads());
    let token = quoted_token(&trace.tokens, i);
    let mut out = Vec::new();
    let largest = step
        .output
        .iter()
        .enumerate()
        .map(|(col, y)| (y - trace.output[(i, col)]).abs())
        .fold(0.0, f64::max);
    let same = if largest == 0.0 {
        "exactly, to the last bit".to_string()
    } else {
        format!(
            "to rounding: the largest difference is {}",
            scientific(largest)
        )
    };
    let y = if w.block.is_some() {
        "attention's output Y (before the residual sum)"
    } else {
        "the output Y"
    };
    out.push(format!(
        "{token}'s row y equals its row of {y} from the whole sentence at once, {same}. {}",
        if decode.matches_full_pass {
            "So does every step."
        } else {
            "Not every step matches."
        }
    ));
    let kv = c.kv_width();
    out.push(format!(
        "Counted with the cache: the new token's query ({d}·{d} = {}), its key and value (2·{d}·{kv} = {}), each head's scores and weighted sum over the keys it can see (2·{dk} a key), and the output projection ({}). Recomputing the {i} earlier {} keys and values as well would add 2·{i}·{d}·{kv} = {}, for {} in all: the gap grows with every token. These count this one layer; in a deeper model, recomputing a layer's keys needs the earlier tokens' pass through every layer below, so the gap is larger still.",
        count(d * d),
        count(2 * d * kv),
        count(d * d),
        if i == 1 { "token's" } else { "tokens'" },
        count(2 * i * d * kv),
        count(step.macs.recomputed)
    ));
    let cache = 2 * (i + 1) * g * dk;
    if g < n {
        out.push(format!(
            "The cache holds 2·{}·{g}·{dk} = {} numbers: keys and values for {} tokens and {g} key/value {}. With a key/value head for each of the {n} query heads it would hold {}; sharing divides it by {}. {}",
            i + 1,
            count(cache),
            i + 1,
            if g == 1 { "head" } else { "heads" },
            count(2 * (i + 1) * n * dk),
            n / g,
            past_queries(i * d)
        ));
    } else {
        let sharing = if n > 1 {
            " Sharing key/value heads between query heads (grouped-query attention) would make it smaller."
        } else {
            ""
        };
        out.push(format!(
            "The cache holds 2·{}·{n}·{dk} = {} numbers: a key and a value row of {dk} for each token and head.{sharing} {}",
            i + 1,
            count(cache),
            past_queries(i * d)
        ));
    }
    if let Some(window) = c.window {
        let recompute = if i + 1 > window {
            format!(
                " Recomputing, this layer would need only those keys and values too, so that count could stop growing at W − 1 = {} earlier tokens; it counts the whole prefix, as without the window.",
                window - 1
            )
        } else {
            String::new()
        };
        let outside = (i + 1).saturating_sub(window);
        let marked = match outside {
            0 => String::new(),
            1 => format!(
                " The key marked {OUTSIDE_WINDOW}, {}, is outside it: its raw score is shown, and its weight is 0.",
                quoted_token(&trace.tokens, 0)
            ),
            _ => format!(
                " The {outside} keys marked {OUTSIDE_WINDOW}, {} to {}, are outside it: their raw scores are shown, and their weights are 0.",
                quoted_token(&trace.tokens, 0),
                quoted_token(&trace.tokens, outside - 1)
            ),
        };
        out.push(format!(
            "With the window W = {window}, the query reads at most the last {window} keys (itself and up to {} before it): the counts above count only their scores and sums.{recompute}{marked} The cache here keeps every row; a decoder may keep only the last {window} (a rolling cache, as in Mistral).",
            window - 1
        ));
    }
    if c.rope.is_some() {
        out.push(wrong_position_note(trace, step));
    }
    if c.scale == ScaleMode::SqrtSeqLen {
        out.push(format!(
            "The scale here is the mistaken √seq_len = √{} of the whole sentence, so each step equals the full pass. A real decoder could not do this: while it writes a token it does not know how long the sentence will be.",
            trace.seq_len()
        ));
    }
    out
}

/// The mistake of caching queries, with the numbers it would keep.
fn past_queries(numbers: usize) -> String {
    format!(
        "Keeping past queries too would be a mistake: {} more numbers that no later step reads, since only the newest token's query meets the cache.",
        count(numbers)
    )
}

/// What turning the new token's query as if it stood at position 0 would do to head 1, over
/// the keys the mask lets it see.
fn wrong_position_note(trace: &Trace, step: &DecodeStep) -> String {
    let i = step.position;
    let head = &trace.heads[0];
    let Some(cache) = step.k_cache.get(trace.config.kv_head(0)) else {
        return String::new();
    };
    // Turned by position 0 is not turned at all: the new query and the new key alike, while the
    // cached keys keep the turns of their own positions.
    let q0 = head.q.rows(i, 1);
    let mut unturned = q0 * cache.transpose();
    unturned[(0, i)] = q0.dot(&head.k.rows(i, 1));
    let right = &step.heads[0].scores;
    let mask = trace.config.mask();
    let seen: Vec<usize> = (0..=i).filter(|&j| !mask.hides(i, j)).collect();
    let top = |m: &crate::attention::Matrix| {
        seen.iter()
            .copied()
            .max_by(|&a, &b| m[(0, a)].total_cmp(&m[(0, b)]))
            .unwrap_or(i)
    };
    let show = |m: &crate::attention::Matrix| {
        seen.iter()
            .map(|&j| {
                format!(
                    "{} {}",
                    quoted_token(&trace.tokens, j),
                    format_value(m[(0, j)], 2)
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (was, now) = (top(right), top(&unturned));
    let moves = if was == now {
        format!("stays on {}", quoted_token(&trace.tokens, now))
    } else {
        format!(
            "moves from {} to {}",
            quoted_token(&trace.tokens, was),
            quoted_token(&trace.tokens, now)
        )
    };
    let keys = if seen.len() == i + 1 {
        "keys"
    } else {
        "keys it can see"
    };
    format!(
        "Turning the new token's query and key as if it stood at position 0, as a decoder that forgets to count the cached tokens does, while the cached keys keep their turns, gives head 1 the raw scores {} over the {keys}, instead of {}: its largest score {moves}.",
        show(&unturned),
        show(right),
    )
}

/// The note of the tiles for head `h`'s query row `i` in blocks of `block` keys.
pub fn tiles_note(trace: &Trace, h: usize, i: usize, block: usize, tiles: &[Tile]) -> Vec<String> {
    let Some(last) = tiles.last() else {
        return Vec::new();
    };
    let head = &trace.heads[h];
    let out_row = last.output();
    let largest = out_row
        .iter()
        .enumerate()
        .map(|(c, o)| (o - head.context[(i, c)]).abs())
        .fold(0.0, f64::max);
    let token = quoted_token(&trace.tokens, i);
    let same = if largest == 0.0 {
        "exactly, to the last bit".to_string()
    } else {
        format!("to rounding (largest difference {})", scientific(largest))
    };
    let mut out = vec![format!(
        "After {}, o ÷ ℓ ≈ ({}): it equals {token}'s row of C{} from the weighted sum {same}.",
        match tiles.len() {
            1 => "the only block".to_string(),
            k => format!("the last of {k} blocks"),
        },
        out_row
            .iter()
            .map(|v| format_value(*v, 2))
            .collect::<Vec<_>>()
            .join(", "),
        super::number::subscript(h + 1)
    )];
    let mut previous = f64::NEG_INFINITY;
    let mut moves = Vec::new();
    let mut hidden = Vec::new();
    // The first block with a key the mask lets through.
    let mut first_seen = None;
    for (b, t) in tiles.iter().enumerate() {
        if first_seen.is_none() && t.m != f64::NEG_INFINITY {
            first_seen = Some(b);
        }
        let first = b * block + 1;
        let keys = if block == 1 {
            format!("key {first}")
        } else {
            format!(
                "keys {first}–{}",
                ((b + 1) * block).min(head.masked.ncols())
            )
        };
        // Hidden: every score of the block is −∞ under the mask (a block of keys that merely
        // score far below m may leave m, ℓ and o as they were too, but nothing hides them).
        let start = b * block;
        let end = ((b + 1) * block).min(head.masked.ncols());
        let masked = (start..end).all(|j| head.masked[(i, j)] == f64::NEG_INFINITY);
        if masked {
            hidden.push(format!("block {} ({keys})", b + 1));
        } else if previous != f64::NEG_INFINITY && t.m > previous {
            moves.push(format!(
                "block {} raises m from {} to {}, so what came before is multiplied by e^({} − {}) ≈ {}",
                b + 1,
                format_value(previous, 2),
                format_value(t.m, 2),
                bracketed(previous),
                bracketed(t.m),
                format_value(crate::attention::rescale(previous, t.m), 3)
            ));
        }
        previous = t.m;
    }
    if !moves.is_empty() {
        out.push(format!("Rescaling: {}.", moves.join("; ")));
    } else if let Some(b) = first_seen.filter(|b| b + 1 < tiles.len()) {
        out.push(if b == 0 {
            "No later block raises the maximum here, so nothing is rescaled: block 1's m is the row's.".to_string()
        } else {
            format!(
                "No later block raises the maximum here, so nothing is rescaled: the m of block {}, the first with a key the mask lets through, is the row's.",
                b + 1
            )
        });
    }
    if !hidden.is_empty() {
        out.push(format!(
            "Every key of {} is hidden by the mask: m, ℓ and o stay as they were (before any key: m = −∞, ℓ = 0, o = 0).",
            and_list(&hidden),
        ));
    }
    let n = head.masked.ncols();
    let dk = trace.config.head_dim();
    out.push(format!(
        "The tiles keep {} numbers (m, ℓ and o) for this query, where the whole softmax holds {n} weights: a saving once a row has more than d_k + 2 = {} keys, and blocks of fewer keys than the row.",
        dk + 2,
        dk + 2
    ));
    out
}

/// A matrix a decoding step or the tiles show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunPanel {
    /// Key/value head `g`'s cached keys.
    KeyCache(usize),
    /// Key/value head `g`'s cached values.
    ValueCache(usize),
    /// Head `h`'s query for the new token.
    Query(usize),
    /// Head `h`'s raw scores over the cache.
    Scores(usize),
    /// Head `h`'s weights over the cache.
    Weights(usize),
    /// Head `h`'s weighted sum.
    Context(usize),
    /// The step's output row.
    Output,
    /// The same row of the whole sentence's output.
    FullOutput,
    /// Head `h`'s softmax inputs for the query row.
    Inputs(usize),
    /// m, the rescale factor and ℓ after each block.
    State,
    /// o after each block.
    Running,
    /// o ÷ ℓ after the last block.
    Result,
    /// Head `h`'s row of C from the weighted sum.
    FullContext(usize),
}

/// The title of a decoding step's or the tiles' panel; `rope` says whether queries and keys
/// are turned.
pub fn run_panel_title(panel: RunPanel, rope: bool) -> String {
    use super::number::subscript;
    let tilde = if rope { "\u{303}" } else { "" };
    match panel {
        RunPanel::KeyCache(g) => format!("K{tilde}{} cache", subscript(g + 1)),
        RunPanel::ValueCache(g) => format!("V{} cache", subscript(g + 1)),
        RunPanel::Query(h) => format!("q{tilde}{} (new token)", subscript(h + 1)),
        RunPanel::Scores(h) => format!("s{} raw scores", subscript(h + 1)),
        RunPanel::Weights(h) => format!("a{} weights", subscript(h + 1)),
        RunPanel::Context(h) => format!("c{}", subscript(h + 1)),
        RunPanel::Output => "y (decoded)".into(),
        RunPanel::FullOutput => "Y's row (whole sentence)".into(),
        RunPanel::Inputs(h) => format!("x: M{}'s row ÷ T", subscript(h + 1)),
        RunPanel::State => "m, e^(m − m′), ℓ after each block".into(),
        RunPanel::Running => "o after each block".into(),
        RunPanel::Result => "o ÷ ℓ".into(),
        RunPanel::FullContext(h) => format!("C{}'s row (weighted sum)", subscript(h + 1)),
    }
}

/// What presenter mode's bar calls the decoding step's last part, after its heads.
pub const DECODE_OUTPUT_STEP: &str = "Output y";

/// The heading of a decoding step's line; the step's token is named above the lines.
pub fn decode_heading(line: DecodeLine, grouped: bool) -> String {
    match line {
        DecodeLine::Cache => {
            "The cache: the keys and values of every token so far, the new one last".into()
        }
        DecodeLine::Head { h, g } if grouped => {
            format!("Head {}, reading key/value head {}", h + 1, g + 1)
        }
        DecodeLine::Head { h, .. } => format!("Head {}", h + 1),
        DecodeLine::Output => {
            "The new token's output, and the same row of the whole sentence's".into()
        }
    }
}

/// A line of a decoding step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecodeLine {
    /// The caches after the new token's row is added.
    Cache,
    /// Query head `h`, which reads key/value head `g`.
    Head { h: usize, g: usize },
    /// The output row.
    Output,
}

/// The heading of the tiles' lines: the inputs, the running state, the result; the query is
/// named above the lines.
pub fn tiles_heading(part: usize, h: usize, block: usize) -> String {
    match part {
        0 => format!(
            "Head {}: the query's softmax inputs, read in blocks of {block} {}",
            h + 1,
            if block == 1 { "key" } else { "keys" }
        ),
        1 => "What is kept after each block".into(),
        _ => "After the last block: o ÷ ℓ, and the weighted sum's row".into(),
    }
}

/// Why a decoding step cannot be shown: every token was in the prefill.
pub fn decode_nothing(prefill: usize, seq_len: usize) -> String {
    if seq_len <= 1 {
        return "A sentence of one token has nothing to decode after its prefill: add a token to the sentence.".into();
    }
    format!(
        "All {seq_len} tokens are in the prefill (P = {prefill}), so no token is left to decode: choose a smaller P."
    )
}

/// A number of the tiles' running state: `m`, the rescale factor, `ℓ`, or a column of `o`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TileCell {
    /// The running maximum.
    Max,
    /// e^(m − m′), what the state before the block is multiplied by.
    Rescale,
    /// The running sum ℓ.
    Sum,
    /// Column `c` of the running output o.
    Output(usize),
    /// Column `c` of o ÷ ℓ after the last block.
    Result(usize),
}

/// The arithmetic of one number the tiles keep after block `b`, for head `h`'s query row `row`
/// read in blocks of `block` keys.
pub fn explain_tile(
    trace: &Trace,
    (h, row): (usize, usize),
    block: usize,
    b: usize,
    cell: TileCell,
) -> Option<super::Explanation> {
    use super::explain::Explanation;
    use crate::attention::{rescale, row_tiles, HeadMatrix, MatrixId};
    let head = trace.heads.get(h)?;
    let row_tiles = &row_tiles(head, trace.config.temperature, block, row)?;
    // o ÷ ℓ reads the last block's state.
    let b = if matches!(cell, TileCell::Result(_)) {
        row_tiles.len().checked_sub(1)?
    } else {
        b
    };
    let tile = row_tiles.get(b)?;
    let before = if b == 0 { None } else { row_tiles.get(b - 1) };
    let (m0, l0) = before.map_or((f64::NEG_INFINITY, 0.0), |t| (t.m, t.l));
    let keep = rescale(m0, tile.m);
    let n = head.masked.ncols();
    let keys: Vec<usize> = (b * block..((b + 1) * block).min(n)).collect();
    let t = trace.config.temperature;
    let x = |j: usize| head.masked[(row, j)] / t;
    // A negative number after an operator or inside e^(…) goes in brackets, as elsewhere.
    let f = |v: f64| {
        let text = format_value(v, 2);
        if v < 0.0 && text != "0.00" && v != f64::NEG_INFINITY {
            format!("({text})")
        } else {
            text
        }
    };
    let e = |j: usize| {
        if x(j) == f64::NEG_INFINITY || tile.m == f64::NEG_INFINITY {
            0.0
        } else {
            (x(j) - tile.m).exp()
        }
    };
    let term = |j: usize| {
        if x(j) == f64::NEG_INFINITY {
            format!("0 ({} hidden)", quoted_token(&trace.tokens, j))
        } else {
            format!("e^({} − {})", f(x(j)), f(tile.m))
        }
    };
    let keys_text = keys
        .iter()
        .map(|&j| quoted_token(&trace.tokens, j))
        .collect::<Vec<_>>()
        .join(", ");
    let block_name = format!("block {} ({keys_text})", b + 1);
    let first = b == 0;
    let (what, formula, expansion, value) = match cell {
        TileCell::Max => (
            "m",
            "m′ = max(m, maxⱼ xⱼ)".to_string(),
            format!(
                "max({}, {}) = {}",
                f(m0),
                keys.iter().map(|&j| f(x(j))).collect::<Vec<_>>().join(", "),
                f(tile.m)
            ),
            tile.m,
        ),
        TileCell::Rescale => (
            "e^(m − m′)",
            "e^(m − m′), m before the block and m′ after it".to_string(),
            if m0 == f64::NEG_INFINITY && tile.m == f64::NEG_INFINITY {
                "taken as 0: no key is visible yet (m and m′ are −∞), and there is nothing to rescale"
                    .to_string()
            } else if m0 == f64::NEG_INFINITY {
                format!(
                    "e^(−∞ − {}) = 0: no visible key came before this block (m = −∞), so there is nothing to rescale",
                    f(tile.m)
                )
            } else {
                format!("e^({} − {}) ≈ {}", f(m0), f(tile.m), format_value(keep, 3))
            },
            keep,
        ),
        TileCell::Sum => (
            "ℓ",
            "ℓ′ = ℓ·e^(m − m′) + Σⱼ e^(xⱼ − m′)".to_string(),
            format!(
                "{} × {} + {} ≈ {}",
                f(l0),
                format_value(keep, 3),
                keys.iter()
                    .map(|&j| term(j))
                    .collect::<Vec<_>>()
                    .join(" + "),
                format_value(tile.l, 3)
            ),
            tile.l,
        ),
        TileCell::Result(c) => (
            "o ÷ ℓ",
            "the weighted sum's row = o ÷ ℓ after the last block".to_string(),
            format!(
                "{} ÷ {} ≈ {}",
                f(*tile.o.get(c)?),
                format_value(tile.l, 3),
                format_value(*tile.output().get(c)?, 2)
            ),
            *tile.output().get(c)?,
        ),
        TileCell::Output(c) => {
            let o0 = before.map_or(0.0, |t| t.o[c]);
            let v = |j: usize| head.v[(j, c)];
            (
                "o",
                "o′ = o·e^(m − m′) + Σⱼ e^(xⱼ − m′)·vⱼ".to_string(),
                format!(
                    "{} × {} + {} ≈ {}",
                    f(o0),
                    format_value(keep, 3),
                    keys.iter()
                        .map(|&j| if x(j) == f64::NEG_INFINITY {
                            term(j)
                        } else {
                            format!("{} × {}", format_value(e(j), 3), f(v(j)))
                        })
                        .collect::<Vec<_>>()
                        .join(" + "),
                    format_value(*tile.o.get(c)?, 2)
                ),
                *tile.o.get(c)?,
            )
        }
    };
    let column = match cell {
        TileCell::Output(c) | TileCell::Result(c) => {
            format!(", column d{}", h * trace.config.head_dim() + c + 1)
        }
        _ => String::new(),
    };
    let note = if matches!(cell, TileCell::Result(_)) {
        "o and ℓ carry the same factor e^(−m), which cancels in o ÷ ℓ.".to_string()
    } else if first {
        "Before the first block nothing is kept: m = −∞, ℓ = 0, o = 0.".to_string()
    } else if m0 == f64::NEG_INFINITY {
        format!(
            "Block {b} kept nothing (its keys were all hidden), so only this block's keys count."
        )
    } else if keep == 1.0 {
        format!("The maximum did not move, so what block {b} left is kept as it was (e^0 = 1).")
    } else {
        format!(
            "What block {b} left is multiplied by e^(m − m′), so that every exponential is measured from the new maximum."
        )
    };
    Some(Explanation {
        matrix: MatrixId::Head(h, HeadMatrix::Context),
        title: format!(
            "{what} after {block_name}, query {}{column}",
            quoted_token(&trace.tokens, row)
        ),
        formula,
        expansion,
        value,
        value_text: format_value(
            value,
            if matches!(cell, TileCell::Output(_) | TileCell::Result(_)) {
                2
            } else {
                3
            },
        ),
        note: Some(note),
        operands: Vec::new(),
    })
}

/// What a cell of the decoding step or of the tiles is, for the line its explanation opens with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunCell {
    /// A cached key or value of the earlier token at this position, read by the step.
    CachedEarlier(usize),
    /// The new token's own key or value, which the step computes and adds to the cache.
    CachedNew,
    /// The new token's query, which the step computes from the token's own row.
    Query,
    /// Anything else the step computes: the scores, the weights, the sums, y.
    Decoded,
    /// One of the softmax inputs x the tiles read.
    TileInput,
    /// Anything else of the tiles: the weighted sum's row.
    Tile,
}

/// The line before the whole pass's arithmetic of a cell of the decoding step or of the tiles,
/// which computes the same number another way.
pub fn run_cell_note(trace: &Trace, cell: RunCell) -> String {
    match cell {
        RunCell::CachedEarlier(j) => format!(
            "The step reads this number from the cache: it was computed when {} was processed, and never again. The working above is the whole sentence's, which computes the same number.",
            quoted_token(&trace.tokens, j)
        ),
        RunCell::CachedNew => "The step computes the new token's key and value and adds them to the cache; the working above is the whole sentence's, which computes the same number.".into(),
        RunCell::Query if trace.config.rope.is_some() => "The step computes the new token's query from its own row alone, turned by its own position; the working above is the whole sentence's, which computes the same number.".into(),
        RunCell::Query => "The step computes the new token's query from its own row alone; the working above is the whole sentence's, which computes the same number.".into(),
        RunCell::Decoded if trace.config.window.is_some() => "The decoding step computes this number on its own, from the cache's rows, and gets the same number up to rounding; the working above is the whole sentence's, whose later keys, and keys the window hides, get weight 0.".into(),
        RunCell::Decoded => "The decoding step computes this number on its own, from the cache's rows, and gets the same number up to rounding; the working above is the whole sentence's, whose later keys get weight 0.".into(),
        RunCell::TileInput if trace.config.temperature != 1.0 => format!(
            "The tiles read this number divided by the temperature T = {}.",
            trace.config.temperature
        ),
        RunCell::TileInput => "The tiles read the same numbers, block by block.".into(),
        RunCell::Tile => "The tiles compute the same numbers in blocks.".into(),
    }
}

/// How far apart two matrices of the same shape are, at most.
fn largest_change(a: &crate::attention::Matrix, b: &crate::attention::Matrix) -> f64 {
    a.iter()
        .zip(b.iter())
        .map(|(x, y)| (x - y).abs())
        .filter(|d| d.is_finite())
        .fold(0.0, f64::max)
}

/// A change in words: `≈ 0.42`, or in powers of ten when it is rounding.
fn change_text(d: f64) -> String {
    if d == 0.0 {
        "0".into()
    } else if d < 1e-9 {
        scientific(d)
    } else {
        format!("≈ {}", format_value(d, 2))
    }
}

/// What rotary positions are for, and two mistakes, computed on head 1 of `trace`: shifting
/// every position leaves the scores as they are; turning V, or turning with the other pairing,
/// does not. Empty without rotary positions.
pub fn rotary_what_ifs(trace: &Trace) -> Vec<String> {
    use crate::attention::{Pairing, Rope};
    let (Some(rope), Some(head)) = (trace.config.rope, trace.heads.first()) else {
        return Vec::new();
    };
    let shift = 7;
    let scores =
        |r: &Rope, first: usize| r.rotate(&head.q, first) * r.rotate(&head.k, first).transpose();
    let shifted = largest_change(&scores(&rope, shift), &head.scores);
    let other = Rope {
        pairing: match rope.pairing {
            Pairing::Half => Pairing::Interleaved,
            Pairing::Interleaved => Pairing::Half,
        },
        ..rope
    };
    let paired = largest_change(&scores(&other, 0), &head.scores);
    let turned_v = &head.weights * rope.rotate(&head.v, 0);
    let valued = largest_change(&turned_v, &head.context);
    let other_name = match other.pairing {
        Pairing::Half => "half",
        Pairing::Interleaved => "interleaved",
    };
    // "Turning V₁ as well …", the subject's verb left to the sentence it starts.
    let turned_v = format!(
        "V₁ as well would change the weighted sum C₁ by up to {}: each value row would carry its own position's turn.",
        change_text(valued)
    );
    // With one pair of columns a head, both pairings pair the same two columns.
    let mistakes = if head.q.ncols() == 2 {
        format!(
            "A mistake to avoid: with these weights, turning {turned_v} Turning with the wrong pairing cannot happen here: with one pair of columns a head (d_k = 2), the half and the interleaved pairings are the same pairing. With d_k of 4 or more they pair different columns, and the wrong one changes the scores."
        )
    } else {
        format!(
            "Two mistakes, with these weights. Turning {turned_v} Turning with the {other_name} pairing instead would change the scores S₁ by up to {}: the pairing must be the one the weights were trained with.",
            change_text(paired)
        )
    };
    vec![
        format!(
            "What it is for: shift every position by {shift}, as if the sentence began {shift} tokens later. Every row of Q̃₁ and K̃₁ turns further, yet the scores S₁ change by {}: they depend only on the distance i − j.",
            change_text(shifted)
        ),
        mistakes,
    ]
}

/// What a decoding step could read from the cache, for the question of what it keeps: under
/// rotary positions the queries and keys are the turned ones.
pub fn decode_cache_choices(rope: bool) -> Vec<String> {
    let (q, k) = if rope {
        (
            "their turned queries (rows of Q̃)",
            "their turned keys (rows of K̃)",
        )
    } else {
        ("their queries (rows of Q)", "their keys (rows of K)")
    };
    vec![q.into(), k.into(), "their values (rows of V)".into()]
}

/// The question of what the cache keeps, when the token at `i` is decoded.
pub fn decode_cached_prompt(tokens: &[String], i: usize) -> String {
    format!(
        "Decoding {}, position {i} (counting from 0), reads the earlier tokens' numbers from the KV cache instead of recomputing them. Which does the cache keep? Pick every one.",
        quoted_token(tokens, i)
    )
}

/// Why the cache keeps keys and values and not queries.
pub const DECODE_CACHED_NOTE: &str = "Keys and values: every later token's query is scored against the earlier keys and sums the earlier values. A query is used only in its own token's step, so caching queries is a mistake: it saves nothing and takes memory.";

/// The question of the cache's size once the token at `i` is decoded; under a window it says
/// that this cache keeps every row.
pub fn decode_size_prompt(trace: &Trace, i: usize) -> String {
    let kept = if trace.config.window.is_some_and(|w| i + 1 > w) {
        " This cache keeps every token's row, even those the window hides."
    } else {
        ""
    };
    format!(
        "Once {}, position {i} (counting from 0), is decoded, how many numbers does the KV cache hold: keys and values of every key/value head, the new token's own included?{kept}",
        quoted_token(&trace.tokens, i)
    )
}

/// The cache's size worked out, with what sharing key/value heads saves and, under a window,
/// what a rolling cache would keep.
pub fn decode_size_note(trace: &Trace, i: usize) -> String {
    let c = &trace.config;
    let (n, g, dk) = (c.n_heads, c.n_kv_heads(), c.head_dim());
    let heads = if g == 1 { "head" } else { "heads" };
    let mut note = format!(
        "2 (keys and values) · {} tokens · {g} key/value {heads} · {dk} numbers (d_k) = {}.",
        i + 1,
        count(2 * (i + 1) * g * dk)
    );
    if g < n {
        note.push_str(&format!(
            " With a key/value head for each of the {n} query heads it would be {}.",
            count(2 * (i + 1) * n * dk)
        ));
    }
    if let Some(w) = c.window.filter(|&w| w < i + 1) {
        note.push_str(&format!(
            " A rolling cache, as in Mistral, would keep only the last {w} rows: 2 · {w} · {g} · {dk} = {}.",
            count(2 * w * g * dk)
        ));
    }
    note
}

/// The question of the tiles' result in column `col` (from 0 within the head) of head `h`'s row
/// at `i`, in blocks of `block` keys.
pub fn tiles_result_prompt(trace: &Trace, h: usize, i: usize, col: usize, block: usize) -> String {
    let n_keys = trace.n_keys();
    let column = crate::words::dim(h * trace.head_dim() + col);
    let how = if n_keys.div_ceil(block) > 1 {
        format!(
            "block by block, {block} {} at a time, and never holds the whole row of weights",
            if block == 1 { "key" } else { "keys" }
        )
    } else {
        format!("in one block of {block} keys, the whole row at once")
    };
    format!(
        "Head {} computes the row of {} {how}. After the last block, what is o ÷ ℓ in column {column}, to two decimals?",
        h + 1,
        quoted_token(&trace.tokens, i),
    )
}

/// Why the tiles' result is the weighted sum's cell, named `cell`, after `blocks` blocks.
pub fn tiles_result_note(cell: &str, blocks: usize) -> String {
    if blocks > 1 {
        format!(
            "It is {cell}, the weighted sum's cell: each rescale by e^(m − m′) puts the earlier blocks on the newest maximum, so the last o and ℓ are the whole row's, and o ÷ ℓ is its softmax-weighted sum. Tiling is exact; only rounding can differ."
        )
    } else {
        format!(
            "It is {cell}, the weighted sum's cell: with one block there is nothing to rescale, and o ÷ ℓ is the softmax-weighted sum. With smaller blocks it would be the same: tiling is exact; only rounding can differ."
        )
    }
}

/// The question of how many of `blocks` blocks change nothing for head `h`'s row at `i`;
/// `by_window` when the window hides some of its keys.
pub fn tiles_idle_prompt(
    tokens: &[String],
    h: usize,
    i: usize,
    block: usize,
    blocks: usize,
    by_window: bool,
) -> String {
    format!(
        "Head {} computes the row of {} in {blocks} blocks of {block} {}. How many of them change nothing, because {} every key in them?",
        h + 1,
        quoted_token(tokens, i),
        if block == 1 { "key" } else { "keys" },
        if by_window {
            "the causal mask and the window hide"
        } else {
            "the causal mask hides"
        }
    )
}

/// Why a hidden block changes nothing.
pub fn tiles_idle_note(by_window: bool) -> String {
    let (who, before) = if by_window {
        (
            "the causal mask and the window save",
            " Before any visible key m is still −∞, and e^(m − m′) = e^(−∞ − (−∞)) would be undefined: a kernel leaves such a block out rather than compute it.",
        )
    } else {
        ("the causal mask saves", "")
    };
    format!(
        "A block whose keys are all hidden holds only −∞: it cannot raise m and adds nothing to ℓ or o, so it leaves them as they were. A real kernel skips such blocks without reading them, which is where {who} work.{before}"
    )
}

/// The mark before a cached key the window hides from the token decoded.
pub const OUTSIDE_WINDOW: &str = "⊘";

/// A cached key's label in the decoding step's scores: marked when the window hides it.
pub fn cached_key_label(label: &str, outside_window: bool) -> String {
    if outside_window {
        format!("{OUTSIDE_WINDOW} {label}")
    } else {
        label.to_string()
    }
}

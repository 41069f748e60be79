// Where an edit's time goes: a CPU profile of N weight edits in a served release build, summed
// by function (self time), beside the main thread's busy time by trace event.
//
//   node tests/perf/profile.mjs URL [--edits N] [--largest] [--decode]
//
// URL serves a release build (tests/e2e/serve-dist.mjs). For function names in the profile,
// serve a build whose .wasm still has its names: copy target/wasm-bindgen/release/
// attention-lens_bg.wasm (what wasm-bindgen writes before wasm-opt) over the dist's .wasm file.
// The edits are the benchmark's (tests/perf/measure.mjs): Alt+ArrowUp and Alt+ArrowDown on
// W_q's first cell, on the Scores stage; --largest uses 32 tokens, d_model 16 and 8 heads with
// every head's scores on show. --decode presses Next and Previous token on the decoding stage of
// the Llama-style preset at that size instead, as the benchmark does. One run is one sample:
// repeat it on an idle machine.

import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { prepare } from "./scenarios.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const { chromium } = createRequire(path.join(here, "../e2e/package.json"))("playwright-core");

const args = process.argv.slice(2);
const url = args.find((a) => !a.startsWith("--"));
const editsAt = args.indexOf("--edits");
const edits = editsAt >= 0 ? Number(args[editsAt + 1]) : 40;
const largest = args.includes("--largest");
const decode = args.includes("--decode");
if (!url || !Number.isInteger(edits) || edits < 1) {
  console.error("usage: node tests/perf/profile.mjs URL [--edits N] [--largest] [--decode]");
  process.exit(2);
}

const browser = await chromium.launch({
  executablePath: process.env.E2E_CHROMIUM ?? "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
});
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(`${url}#v=1`);
  await page.waitForFunction(() => performance.getEntriesByName("al-first-heatmap").length > 0);
  await prepare(page, decode ? "largest-llama" : largest ? "largest" : "default");
  if (decode) {
    await page.getByTestId("decode").check();
    await page.getByTestId("stage-decode").click();
    await page.getByTestId("decode-prefill").selectOption("1");
    await page.getByTestId("canvas-dec-y").waitFor();
  }
  const nudge = async (i) => {
    if (decode) await page.getByTestId(i % 2 === 0 ? "decode-next" : "decode-prev").click();
    else await page.keyboard.press(i % 2 === 0 ? "Alt+ArrowUp" : "Alt+ArrowDown");
    await page.waitForFunction((n) => performance.getEntriesByName("al-edit").length >= n, i + 1);
  };
  for (let i = 0; i < 5; i++) await nudge(i);
  await page.evaluate(() => performance.clearMeasures("al-edit"));

  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Profiler.enable");
  await cdp.send("Profiler.setSamplingInterval", { interval: 50 });
  await browser.startTracing(page, { categories: ["devtools.timeline", "blink.user_timing"] });
  await cdp.send("Profiler.start");
  for (let i = 0; i < edits; i++) await nudge(i);
  const { profile } = await cdp.send("Profiler.stop");
  const events = JSON.parse((await browser.stopTracing()).toString()).traceEvents;
  const measured = await page.evaluate(() =>
    performance.getEntriesByName("al-edit").map((e) => e.duration),
  );

  // Self time by function, over the samples of the edits.
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  const deltas = profile.timeDeltas;
  profile.samples.forEach((id, i) => {
    const node = byId.get(id);
    const name = node.callFrame.functionName || `(${node.callFrame.url.split("/").pop() || "anonymous"})`;
    self.set(name, (self.get(name) ?? 0) + (deltas[i + 1] ?? 0) / 1000);
  });
  // Time including callees, for the app's own functions: which effect or drawing costs what.
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const inclusive = new Map();
  profile.samples.forEach((id, i) => {
    const seen = new Set();
    for (let at = id; at !== undefined; at = parent.get(at)) {
      const name = byId.get(at).callFrame.functionName;
      if (!name.startsWith("attention_lens::") || seen.has(name)) continue;
      seen.add(name);
      inclusive.set(name, (inclusive.get(name) ?? 0) + (deltas[i + 1] ?? 0) / 1000);
    }
  });
  const sorted = [...measured].sort((a, b) => a - b);
  console.log(`${edits} ${decode ? "decoding steps" : "edits"}${largest ? " (largest)" : ""}: al-edit median ${sorted[sorted.length >> 1].toFixed(2)} ms`);
  const total = [...self.entries()].filter(([n]) => n !== "(idle)" && n !== "(program)")
    .reduce((s, [, v]) => s + v, 0);
  console.log(`sampled JS and wasm time per edit: ${(total / edits).toFixed(2)} ms; by function, per edit:`);
  for (const [name, ms] of [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, 30)) {
    console.log(`  ${(ms / edits).toFixed(3).padStart(7)}  ${name.slice(0, 110)}`);
  }

  console.log("the app's functions, including what they call, per edit:");
  for (const [name, ms] of [...inclusive.entries()].sort((a, b) => b[1] - a[1]).slice(0, 25)) {
    console.log(`  ${(ms / edits).toFixed(3).padStart(7)}  ${name.replace(/::h[0-9a-f]{16}$/, "").slice(0, 110)}`);
  }
  const main = events
    .filter((e) => e.name === "thread_name" && e.args?.name === "CrRendererMain")
    .map((e) => `${e.pid}:${e.tid}`);
  const busy = new Map();
  for (const e of events) {
    if (!main.includes(`${e.pid}:${e.tid}`) || e.ph !== "X" || !e.dur) continue;
    busy.set(e.name, (busy.get(e.name) ?? 0) + e.dur / 1000);
  }
  console.log("main thread per edit, by trace event (ms; events nest, so they overlap):");
  for (const name of ["RunTask", "FunctionCall", "EventDispatch", "UpdateLayoutTree", "Layout", "Paint", "PrePaint", "Layerize", "FireAnimationFrame"]) {
    console.log(`  ${((busy.get(name) ?? 0) / edits).toFixed(3).padStart(7)}  ${name}`);
  }
} finally {
  await browser.close();
}

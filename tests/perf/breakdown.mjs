// Where a cold load's time goes before the first heatmap is drawn: one Chromium trace of the
// release build, summed by what the renderer's main thread did.
//
//   node tests/perf/breakdown.mjs URL
//
// URL serves a release build (tests/e2e/serve-dist.mjs). Prints when the module started to
// compile and when it was instantiated, the main thread's busy time by event (lazy wasm
// compilation, layout, script), how many functions were compiled on first call, its long tasks,
// and the `al-first-heatmap` time. One trace is one sample: run it a few times on an idle
// machine.

import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const { chromium } = createRequire(path.join(here, "../e2e/package.json"))("playwright-core");

const url = process.argv[2];
if (!url) {
  console.error("usage: node tests/perf/breakdown.mjs URL");
  process.exit(2);
}
const browser = await chromium.launch({
  executablePath: process.env.E2E_CHROMIUM ?? "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu"],
});
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await browser.startTracing(page, { categories: ["devtools.timeline", "disabled-by-default-devtools.timeline", "v8", "v8.wasm", "blink.user_timing"] });
  await page.goto(url);
  await page.waitForFunction(() => performance.getEntriesByName("al-first-heatmap").length > 0);
  const events = JSON.parse((await browser.stopTracing()).toString()).traceEvents;
  const start = events.find((e) => e.name === "navigationStart")?.ts ?? events[0].ts;
  const first = events.find((e) => e.name === "al-first-heatmap");
  const at = (e) => ((e.ts - start) / 1000).toFixed(1);
  const main = events
    .filter((e) => e.name === "thread_name" && e.args?.name === "CrRendererMain")
    .map((e) => `${e.pid}:${e.tid}`);
  const onMain = (e) => main.includes(`${e.pid}:${e.tid}`) && e.ph === "X" && e.dur && e.ts <= first.ts;
  const once = (name) => events.find((e) => e.name === name);
  console.log(`first heatmap drawn at ${at(first)} ms`);
  for (const name of ["wasm.StartStreamingCompilation", "wasm.FinishStreaming", "wasm.AsyncInstantiate"]) {
    const e = once(name);
    if (e) console.log(`${name.padEnd(32)} at ${at(e)} ms`);
  }
  const busy = new Map();
  for (const e of events.filter(onMain)) busy.set(e.name, (busy.get(e.name) ?? 0) + e.dur / 1000);
  console.log("main thread, by event (ms; events nest, so they overlap):");
  for (const name of ["RunTask", "FunctionCall", "wasm.CompileLazy", "Layout", "UpdateLayoutTree", "ParseHTML", "ParseAuthorStyleSheet"]) {
    console.log(`  ${(busy.get(name) ?? 0).toFixed(1).padStart(7)}  ${name}`);
  }
  // V8 compiles each wasm function on its first call; the count says how much of the module the
  // start-up reaches, and the cost is per function as much as per byte.
  const lazy = events.filter((e) => onMain(e) && e.name === "wasm.CompileLazy");
  console.log(`functions compiled on first call: ${lazy.length}`);
  console.log("long tasks (over 5 ms):");
  for (const e of events.filter((e) => onMain(e) && e.name === "RunTask" && e.dur > 5000)) {
    console.log(`  at ${at(e)} ms for ${(e.dur / 1000).toFixed(1)} ms`);
  }
} finally {
  await browser.close();
}

// Browser and bundle-size figures for scripts/bench.sh.
//
//   node tests/perf/measure.mjs --dist DIR --floor-dist DIR --out FILE [--edits N] [--loads N]
//
// Serves the release build in DIR with tests/e2e/serve-dist.mjs, drives it in headless Chromium
// (/usr/bin/chromium, or E2E_CHROMIUM) and writes a JSON list of figures to FILE:
//
// - edit-to-repaint: the app measures `al-edit` from a cell edit to the moment every heatmap
//   it changed has been drawn, and `al-edit-to-frame` from the same edit to the next animation
//   frame (which adds the wait for the display's refresh, so it is reported but not budgeted);
//   without the block, the means of `al-edit-apply`, `al-edit-effects` and `al-edit-draw` say
//   where an edit's time went (writing it into the model; the forward pass, the reactive graph
//   and the page's changes; drawing the heatmaps it changed).
//   N nudges (Alt+ArrowUp, Alt+ArrowDown, alternating) of the
//   W_q cell in row 1, column 1, on the Scores stage, at the default scenario and at the largest
//   one the app allows (32 tokens, d_model 16, 8 heads, every head shown), each also with the
//   transformer block on (the largest then also with d_ff 64 and a 32-token source sentence);
// - first heatmap: the first heatmap painted, counted from navigation start, over N cold loads
//   (each in a new browser context, so nothing is cached) in a 1280 × 800 window: the page's
//   picture of the first screen (index.html, reported by Element Timing) where the window shows
//   it, else the app's `al-first-heatmap` mark; the app's own mark as a figure of its own, with
//   where the time went (files fetched, the mount's start and end) and when the first screen was
//   painted (`al-first-paint`), and the longest task after the first heatmap (the Long Tasks
//   API), while the rest mounts; the floor app's first contentful paint over N loads taking
//   turns with the app's; and the app again over N/2 (at least 3) loads in a phone's window
//   through a typical 4G link (9 Mbit/s, 60 ms latency) with the CPU slowed 4×, as a student's
//   phone opens it. The server gzips the HTML, JavaScript, CSS and wasm, as a blog's host does;
// - bundle size: the .wasm, .js and .css of DIR and of the floor app in --floor-dist, each
//   gzipped at level 9.
//
// A figure is a measurement, not a test: being over budget is reported, not fatal. The script
// exits non-zero only when it cannot measure.

import { spawn } from "node:child_process";
import { promises as fs } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { prepare } from "./scenarios.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const e2eDir = path.resolve(here, "../e2e");
// The Playwright harness of the end-to-end tests; scripts/setup.sh --browser installs it.
const { chromium } = createRequire(path.join(e2eDir, "package.json"))("playwright-core");

const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--no-first-run",
];
const VIEWPORT = { width: 1280, height: 800 };
const WARM_UP_EDITS = 5;
const STEP_TIMEOUT_MS = 30_000;

/** The figures' budgets; a figure without one is informational. */
const BUDGETS = {
  editDefaultMedian: 2,
  editLargestMedian: 5,
  editLargestP95: 8,
  firstHeatmapMedian: 120,
  /** The first heatmap's median over the floor app's first paint's, measured in the same run. */
  firstHeatmapOverFloor: 1.3,
  bundleGzipKb: 320,
  /** The least training steps per second at the largest scenario, while drawing. */
  trainingLargestMin: 30,
  /** The least training steps (frames) per second in presenter mode at 1920×1080. */
  presenterTrainingMin: 30,
};

function parseArgs(argv) {
  const options = { dist: null, floorDist: null, out: null, edits: 100, loads: 10 };
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (value === undefined) throw new Error(`missing value for ${flag}`);
    if (flag === "--dist") options.dist = path.resolve(value);
    else if (flag === "--floor-dist") options.floorDist = path.resolve(value);
    else if (flag === "--out") options.out = path.resolve(value);
    else if (flag === "--edits") options.edits = Number(value);
    else if (flag === "--loads") options.loads = Number(value);
    else throw new Error(`unknown option ${flag}`);
  }
  if (!options.dist || !options.out) throw new Error("--dist and --out are required");
  for (const key of ["edits", "loads"]) {
    if (!Number.isInteger(options[key]) || options[key] < 1) {
      throw new Error(`--${key} must be a positive whole number`);
    }
  }
  return options;
}

/** The value below which `q` (0..1) of the sorted `values` lie: nearest rank. */
function quantile(sorted, q) {
  const rank = Math.max(1, Math.ceil(q * sorted.length));
  return sorted[rank - 1];
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** The mean of `values`, or NaN for none. */
function mean(values) {
  return values.length ? values.reduce((a, b) => a + b, 0) / values.length : NaN;
}

function round(value, digits = 2) {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

function figure(name, value, unit, budgetMax = null, note = "", budgetMin = null) {
  return { name, value: round(value), unit, budget_max: budgetMax, budget_min: budgetMin, note };
}

/** Starts serve-dist.mjs on a free port; resolves to its URL and a function that stops it. */
async function serve(root) {
  const child = spawn(
    process.execPath,
    [path.join(e2eDir, "serve-dist.mjs"), "--root", root, "--port", "0", "--gzip", "on"],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  const stop = () => {
    if (child.exitCode === null) child.kill("SIGTERM");
  };
  let output = "";
  const url = await new Promise((resolve, reject) => {
    const fail = () => reject(new Error(`serve-dist did not start:\n${output}`));
    const timer = setTimeout(fail, 10_000);
    const read = (chunk) => {
      output += chunk;
      const match = /^listening (\S+)/m.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout.on("data", read);
    child.stderr.on("data", read);
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`serve-dist exited with ${code}:\n${output}`));
    });
  }).catch((error) => {
    stop();
    throw error;
  });
  return { url, stop };
}

/** A new context and page that records uncaught errors and console errors. */
async function openPage(browser, problems, phone = false) {
  const context = await browser.newContext(
    phone
      ? { viewport: PHONE.viewport, deviceScaleFactor: 1, isMobile: true, hasTouch: true }
      : { viewport: VIEWPORT, deviceScaleFactor: 1 },
  );
  const page = await context.newPage();
  page.setDefaultTimeout(STEP_TIMEOUT_MS);
  page.on("pageerror", (error) => problems.push(`uncaught: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console error: ${message.text()}`);
  });
  return { context, page };
}

async function waitForFirstHeatmap(page) {
  await page.waitForFunction(() => performance.getEntriesByName("al-first-heatmap").length > 0);
  return page.evaluate(() => performance.getEntriesByName("al-first-heatmap")[0].startTime);
}

/**
 * Where one cold load's time went, in milliseconds from navigation start: the module's files
 * fetched (resource timing), the app's mount started (the module compiled and instantiated)
 * and finished, the first heatmap drawn, and the first screen painted (the app's marks).
 */
async function loadTimes(page) {
  await page.waitForFunction(() => performance.getEntriesByName("al-first-paint").length > 0);
  // The explanation mounts last, in the task after the first picture; the places wait until
  // they are opened.
  await page.waitForFunction(() => document.querySelector('[data-testid="explain-panel"]') !== null);
  return page.evaluate(async () => {
    const at = (name) => performance.getEntriesByName(name)[0].startTime;
    const fetched = (ext) =>
      Math.max(...performance.getEntriesByType("resource")
        .filter((r) => r.name.endsWith(ext)).map((r) => r.responseEnd));
    // Two frames later the explanation's mount has been reported as a long task, if it was one.
    await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
    const longTasks = await new Promise((resolve) => {
      new PerformanceObserver((list, observer) => {
        observer.disconnect();
        resolve(list.getEntries());
      }).observe({ type: "longtask", buffered: true });
    });
    // When the page's picture of the first screen (index.html) was painted, if it was shown.
    const pictured = await new Promise((resolve) => {
      const timer = setTimeout(() => resolve(null), 200);
      new PerformanceObserver((list, observer) => {
        const entry = list.getEntries().find((e) => e.identifier === "al-prerendered-heatmap");
        if (!entry) return;
        observer.disconnect();
        clearTimeout(timer);
        resolve(entry.renderTime || entry.loadTime);
      }).observe({ type: "element", buffered: true });
    });
    const app = at("al-first-heatmap");
    return {
      files: Math.max(fetched(".js"), fetched(".wasm"), fetched(".css")),
      mountStart: at("al-mount-start"),
      mounted: at("al-mounted"),
      pictured,
      app,
      first: Math.min(app, pictured ?? Infinity),
      painted: at("al-first-paint"),
      // The longest task of 50 ms or more (as the browser reports them) after the first
      // heatmap: a tap on the first picture waits for the task it lands in.
      blockedAfter: Math.max(0, ...longTasks.filter((t) => t.startTime > app).map((t) => t.duration)),
    };
  });
}

/**
 * A student's phone: a phone's window (390 × 844, touch), a typical 4G link (9 Mbit/s down,
 * 60 ms latency) and a CPU 4× slower than this machine's, as Chrome's DevTools emulate them.
 */
const PHONE = { viewport: { width: 390, height: 844 }, latencyMs: 60, downloadBitsPerSecond: 9_000_000, uploadBitsPerSecond: 3_000_000, cpuSlowdown: 4 };

/** Slows `page`'s network and CPU to `PHONE`'s. */
async function throttle(context, page) {
  const cdp = await context.newCDPSession(page);
  await cdp.send("Network.enable");
  await cdp.send("Network.emulateNetworkConditions", {
    offline: false,
    latency: PHONE.latencyMs,
    downloadThroughput: PHONE.downloadBitsPerSecond / 8,
    uploadThroughput: PHONE.uploadBitsPerSecond / 8,
  });
  await cdp.send("Emulation.setCPUThrottlingRate", { rate: PHONE.cpuSlowdown });
}

/**
 * `loadTimes` of `loads` cold loads, each in a new context; with `phone`, through `PHONE`'s
 * network and CPU.
 */
async function coldLoads(browser, url, loads, problems, phone = false) {
  const times = [];
  for (let i = 0; i < loads; i++) {
    const { context, page } = await openPage(browser, problems, phone);
    try {
      if (phone) await throttle(context, page);
      await page.goto(url);
      times.push(await loadTimes(page));
    } finally {
      await context.close();
    }
  }
  return times;
}

/**
 * Milliseconds from navigation start to the first contentful paint of the floor app, a Leptos
 * counter built like the app, over `loads` cold loads: what any Leptos app pays on this machine
 * before it shows anything.
 */
async function floorFirstPaints(browser, url, loads, problems) {
  const times = [];
  for (let i = 0; i < loads; i++) {
    const { context, page } = await openPage(browser, problems);
    try {
      await page.goto(url);
      await page.waitForFunction(
        () => performance.getEntriesByName("first-contentful-paint").length > 0,
      );
      times.push(
        await page.evaluate(
          () => performance.getEntriesByName("first-contentful-paint")[0].startTime,
        ),
      );
    } finally {
      await context.close();
    }
  }
  return times;
}

/** The cold loads' figures: to the first heatmap (budgeted) and to the first painted screen. */
function loadFigures(loads, label, budget) {
  const first = loads.map((l) => l.first);
  const painted = loads.map((l) => l.painted);
  const spread = (values) =>
    `fastest ${round(Math.min(...values), 1)}, slowest ${round(Math.max(...values), 1)} ms`;
  const step = (from, to) => round(median(loads.map((l) => l[to] - l[from])), 1);
  const pictured = loads.filter((l) => l.pictured !== null);
  const app = loads.map((l) => l.app);
  return [
    figure(
      `navigation to first heatmap, median${label}`,
      median(first),
      "ms",
      budget,
      `${loads.length} cold loads; ${spread(first)}; ` +
        (pictured.length > 0
          ? `the page's picture of the first screen (index.html) painted in ${pictured.length} ` +
            `of them, at ${round(median(pictured.map((l) => l.pictured)), 1)} ms (median), ` +
            "before the module had loaded"
          : "the page showed no picture of the first screen: the app drew it"),
    ),
    figure(
      `navigation to the app's first heatmap, median${label}`,
      median(app),
      "ms",
      null,
      `the app's own, drawn once it has mounted; ${spread(app)}; medians: files fetched at ` +
        `${round(median(loads.map((l) => l.files)), 1)} ms, mount started at ` +
        `${round(median(loads.map((l) => l.mountStart)), 1)} ms (module compiled and ` +
        `instantiated), mount ${step("mountStart", "mounted")} ms, first heatmaps drawn ` +
        `${step("mounted", "app")} ms later (with the page's first layout)`,
    ),
    figure(
      `navigation to first screen painted, median${label}`,
      median(painted),
      "ms",
      null,
      `the task after the first animation frame; ${spread(painted)}`,
    ),
    figure(
      `longest task after the first heatmap, median${label}`,
      median(loads.map((l) => l.blockedAfter)),
      "ms",
      null,
      "the explanation mounts after the first picture, the places (inputs, training, the lab, " +
        "sharing) when first opened; a tap waits for the task it lands in (long tasks of 50 ms or more; 0 when " +
        `there were none); ${spread(loads.map((l) => l.blockedAfter))}`,
    ),
  ];
}

/** The parts of an edit's `al-edit` the app measures, in order. */
const SPLIT = [
  { measure: "al-edit-apply", part: "writing it into the model" },
  { measure: "al-edit-effects", part: "effects (forward pass, reactive graph, page)" },
  { measure: "al-edit-draw", part: "drawing the changed heatmaps" },
];

/**
 * Nudges the focused cell `count` times; returns the `al-edit` and `al-edit-to-frame` durations
 * in milliseconds, and those of the parts of `al-edit` in the order of `SPLIT`.
 */
async function edits(page, count) {
  const cell = page.getByTestId("cell-w_q-0-0");
  const before = await cell.inputValue();
  await page.evaluate((names) => {
    for (const name of ["al-edit", "al-edit-to-frame", ...names]) performance.clearMeasures(name);
    performance.clearMarks("al-edit-painted");
  }, SPLIT.map((s) => s.measure));
  for (let i = 0; i < count; i++) {
    // Up then down, so the value stays near where it started and never reaches the clamp.
    await page.keyboard.press(i % 2 === 0 ? "Alt+ArrowUp" : "Alt+ArrowDown");
    // One edit at a time: the app's measure pairs the latest start mark with the next frame.
    await page.waitForFunction(
      (n) => performance.getEntriesByName("al-edit").length >= n,
      i + 1,
    );
  }
  const after = await cell.inputValue();
  if (count % 2 === 0 && after !== before) {
    throw new Error(`the nudges did not reach the cell as expected: ${before} became ${after}`);
  }
  const { painted, frame, paints, split } = await page.evaluate((names) => ({
    painted: performance.getEntriesByName("al-edit").map((e) => e.duration),
    frame: performance.getEntriesByName("al-edit-to-frame").map((e) => e.duration),
    paints: performance.getEntriesByName("al-edit-painted").length,
    split: names.map((n) => performance.getEntriesByName(n).map((e) => e.duration)),
  }), SPLIT.map((s) => s.measure));
  // Every nudge changes the heatmaps on show, so every measure must end at a repaint.
  if (paints < count) throw new Error(`only ${paints} of ${count} edits repainted a heatmap`);
  if (painted.length !== count || frame.length !== count) {
    throw new Error(`expected ${count} measures, found ${painted.length} and ${frame.length}`);
  }
  return { painted, frame, split };
}

async function editToRepaint(browser, url, scenario, count, problems) {
  const { context, page } = await openPage(browser, problems);
  try {
    // The default model's link: a bare address opens on the first screen's preset instead.
    await page.goto(`${url}#v=1`);
    await waitForFirstHeatmap(page);
    const canvases = await prepare(page, scenario);
    await edits(page, WARM_UP_EDITS);
    const durations = await edits(page, count);
    return { ...durations, canvases };
  } finally {
    await context.close();
  }
}

/**
 * Training steps per second in the page while every stage on show is redrawn: `scenario` is set
 * up as for the edits (the Scores stage, every head's scores on show at the largest size), then
 * Train runs for `seconds` and the step count the panel reports is divided by the time.
 */
async function trainingSpeed(browser, url, scenario, seconds, problems) {
  const { context, page } = await openPage(browser, problems);
  try {
    await page.goto(`${url}#v=1`);
    await waitForFirstHeatmap(page);
    await prepare(page, scenario);
    await page.getByTestId("place-train").click();
    const run = page.getByTestId("train-run");
    await run.scrollIntoViewIfNeeded();
    await page.getByTestId("stage-scores").scrollIntoViewIfNeeded();
    return await stepsPerSecond(page, run, seconds);
  } finally {
    await context.close();
  }
}

/** Runs training with the `run` button for `seconds`; the steps the panel reports per second. */
async function stepsPerSecond(page, run, seconds) {
  const started = Date.now();
  await run.click();
  await page.waitForTimeout(seconds * 1000);
  await run.click();
  const elapsed = (Date.now() - started) / 1000;
  const status = await page.getByTestId("train-status").innerText();
  const steps = Number(status.match(/After (\d+) step/)?.[1] ?? NaN);
  if (!Number.isFinite(steps)) throw new Error(`no step count in the training status: ${status}`);
  return steps / elapsed;
}

/**
 * Training steps per second in presenter mode at 1920×1080: the default scenario on the Softmax
 * step, the Train place opened once (so the bar holds the training buttons), then Train in the
 * presenter bar for `seconds`; each step redraws the step and the loss curve beside it.
 */
async function presenterTrainingSpeed(browser, url, seconds, problems) {
  const { context, page } = await openPage(browser, problems);
  try {
    await page.setViewportSize({ width: 1920, height: 1080 });
    await page.goto(`${url}#v=1&stage=softmax`);
    await waitForFirstHeatmap(page);
    await page.getByTestId("place-train").click();
    await page.getByTestId("place-share").click();
    await page.getByTestId("present").click();
    const run = page.getByTestId("presenter-training").getByTestId("train-run");
    return await stepsPerSecond(page, run, seconds);
  } finally {
    await context.close();
  }
}

/**
 * A decoding step's press to repaint: the Llama-style preset at the largest size with 8 heads
 * sharing 2 key/value heads, decoded after one token; Next and Previous token pressed in turn,
 * each measured by the app as an edit is (`al-edit`, from the press to the heatmaps drawn).
 */
async function decodeStepRepaint(browser, url, count, problems) {
  const { context, page } = await openPage(browser, problems);
  try {
    await page.goto(`${url}#v=1`);
    await waitForFirstHeatmap(page);
    await prepare(page, "largest-llama");
    await page.getByTestId("decode").check();
    await page.getByTestId("stage-decode").click();
    await page.getByTestId("decode-prefill").selectOption("1");
    await page.getByTestId("canvas-dec-y").waitFor();
    const press = async (n) => {
      await page.evaluate(() => performance.clearMeasures("al-edit"));
      for (let i = 0; i < n; i++) {
        await page.getByTestId(i % 2 === 0 ? "decode-next" : "decode-prev").click();
        await page.waitForFunction((k) => performance.getEntriesByName("al-edit").length >= k, i + 1);
      }
      return page.evaluate(() => performance.getEntriesByName("al-edit").map((e) => e.duration));
    };
    await press(WARM_UP_EDITS);
    return await press(count);
  } finally {
    await context.close();
  }
}

/** The gzipped (level 9) and raw sizes of the .wasm, .js and .css files in `dir`. */
async function bundleSize(dir) {
  const sizes = { wasm: 0, js: 0, css: 0, raw: 0, gzip: 0 };
  for (const name of await fs.readdir(dir)) {
    const ext = path.extname(name).slice(1);
    if (!(ext in sizes) || ext === "raw" || ext === "gzip") continue;
    const bytes = await fs.readFile(path.join(dir, name));
    const gzipped = gzipSync(bytes, { level: 9 }).length;
    sizes[ext] += gzipped;
    sizes.gzip += gzipped;
    sizes.raw += bytes.length;
  }
  if (sizes.wasm === 0) throw new Error(`no .wasm file in ${dir}: build it first`);
  return sizes;
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const figures = [];
  const problems = [];

  const app = await bundleSize(options.dist);
  const kb = (bytes) => bytes / 1000;
  figures.push(
    figure(
      "bundle: app (.wasm+.js+.css, gzip -9)",
      kb(app.gzip),
      "kB",
      BUDGETS.bundleGzipKb,
      `wasm ${round(kb(app.wasm), 1)}, js ${round(kb(app.js), 1)}, ` +
        `css ${round(kb(app.css), 1)} kB gzipped; ${round(kb(app.raw), 1)} kB raw`,
    ),
  );
  if (options.floorDist) {
    const floor = await bundleSize(options.floorDist);
    figures.push(
      figure(
        "bundle: floor, a Leptos counter (gzip -9)",
        kb(floor.gzip),
        "kB",
        null,
        `wasm ${round(kb(floor.wasm), 1)}, js ${round(kb(floor.js), 1)} kB gzipped; ` +
          `${round(kb(floor.raw), 1)} kB raw`,
      ),
      figure(
        "bundle: app above the floor (gzip -9)",
        kb(app.gzip - floor.gzip),
        "kB",
        null,
        `the app is ${round(app.gzip / floor.gzip, 1)}x the floor`,
      ),
    );
  }

  const server = await serve(options.dist);
  const stopServer = () => server.stop();
  process.on("exit", stopServer);
  const browser = await chromium.launch({
    executablePath: process.env.E2E_CHROMIUM ?? "/usr/bin/chromium",
    args: CHROMIUM_ARGS,
  });
  let chromiumVersion = "";
  try {
    chromiumVersion = browser.version();
    for (const [scenario, budget, label] of [
      ["default", BUDGETS.editDefaultMedian, "default scenario"],
      ["largest", BUDGETS.editLargestMedian, "32 tokens, d_model 16, 8 heads"],
      ["default-block", BUDGETS.editDefaultMedian, "default scenario, block on"],
      [
        "largest-block",
        BUDGETS.editLargestMedian,
        "32 tokens, d_model 16, 8 heads, block with d_ff 64, 32-token source",
      ],
      [
        "largest-llama",
        BUDGETS.editLargestMedian,
        "32 tokens, d_model 16, 8 heads sharing 2 key/value heads, rotary, Llama's block",
      ],
    ]) {
      const { painted, frame, split, canvases } = await editToRepaint(
        browser,
        server.url,
        scenario,
        options.edits,
        problems,
      );
      const sorted = [...painted].sort((a, b) => a - b);
      const note = `${painted.length} edits, Scores stage, ${canvases} canvases`;
      const frameNote = `${note}; includes the wait for the display's next refresh`;
      const p95Budget = budget === BUDGETS.editLargestMedian ? BUDGETS.editLargestP95 : null;
      figures.push(
        figure(`edit-to-repaint median, ${label}`, median(painted), "ms", budget, note),
        figure(`edit-to-repaint p95, ${label}`, quantile(sorted, 0.95), "ms", p95Budget, note),
        figure(`edit to next frame median, ${label}`, median(frame), "ms", null, frameNote),
      );
      // Where an edit's time goes, as means, which add up to the mean of `al-edit`.
      if (!scenario.endsWith("-block") && !scenario.endsWith("-llama")) {
        SPLIT.forEach(({ part }, i) => {
          figures.push(
            figure(
              `edit split, ${label}: ${part}, mean`,
              mean(split[i]),
              "ms",
              null,
              `${split[i].length} of ${painted.length} edits split (mean al-edit ` +
                `${round(mean(painted))} ms)`,
            ),
          );
        });
      }
    }
    const steps = await decodeStepRepaint(browser, server.url, Math.min(options.edits, 40), problems);
    figures.push(
      figure(
        "decode step to repaint median, the Llama-style preset at 32 tokens, d_model 16, 8 heads",
        median(steps),
        "ms",
        BUDGETS.editLargestMedian,
        `${steps.length} presses of Next and Previous token on the decoding stage, 2 key/value heads`,
      ),
    );
    for (const [scenario, label] of [
      ["default", "default scenario"],
      ["largest", "32 tokens, d_model 16, 8 heads"],
      ["largest-llama", "the Llama-style preset at 32 tokens, d_model 16, 8 heads, 2 key/value heads"],
    ]) {
      const rate = await trainingSpeed(browser, server.url, scenario, 3, problems);
      figures.push(
        figure(
          `training steps per second, ${label}`,
          rate,
          "steps/s",
          null,
          "Train for 3 s on the Scores stage, every head's scores drawn; 60 steps a second at most, up to 4 in a frame that came late",
          scenario.startsWith("largest") ? BUDGETS.trainingLargestMin : null,
        ),
      );
    }
    figures.push(
      figure(
        "training steps per second, presenter mode at 1920×1080",
        await presenterTrainingSpeed(browser, server.url, 3, problems),
        "steps/s",
        null,
        "Train for 3 s from the presenter bar on the Softmax step, the loss curve beside it; one step a frame at most",
        BUDGETS.presenterTrainingMin,
      ),
    );
    // The floor's loads take turns with the app's, so a machine that slows down during the
    // run slows both.
    const floorServer = options.floorDist ? await serve(options.floorDist) : null;
    try {
      const loads = [];
      const floor = [];
      for (let i = 0; i < options.loads; i++) {
        loads.push(...(await coldLoads(browser, server.url, 1, problems)));
        // The counter has no icon: its 404 for /favicon.ico is not the app's problem.
        if (floorServer) floor.push(...(await floorFirstPaints(browser, floorServer.url, 1, [])));
      }
      figures.push(...loadFigures(loads, "", BUDGETS.firstHeatmapMedian));
      if (floorServer) {
        figures.push(
          figure(
            "navigation to first paint, median, floor (a Leptos counter)",
            median(floor),
            "ms",
            null,
            `${floor.length} cold loads taking turns with the app's, first contentful paint; ` +
              `what this machine and browser take to show any Leptos app`,
          ),
          figure(
            "navigation to first heatmap over the floor's first paint, medians",
            median(loads.map((l) => l.first)) / median(floor),
            "x",
            BUDGETS.firstHeatmapOverFloor,
            "the bare address's first screen (the first look's softmax, two heads and their " +
              "lines) against a Leptos counter, in the same run, so the machine's speed cancels",
          ),
        );
      }
    } finally {
      floorServer?.stop();
    }
    const phoneLoads = await coldLoads(browser, server.url, Math.max(3, Math.ceil(options.loads / 2)), problems, true);
    figures.push(...loadFigures(phoneLoads, ", a phone's 390×844 window, 4G (9 Mbit/s, 60 ms) and a 4× slower CPU", null));
  } finally {
    await browser.close();
    stopServer();
  }

  const result = { chromium: chromiumVersion, problems, figures };
  await fs.mkdir(path.dirname(options.out), { recursive: true });
  await fs.writeFile(options.out, JSON.stringify(result, null, 2) + "\n");
  for (const problem of problems) console.error(`measure: the page reported ${problem}`);
  console.log(`measure: ${figures.length} figures written to ${options.out}`);
}

main().catch((error) => {
  console.error(`measure: ${error.stack ?? error}`);
  process.exit(1);
});

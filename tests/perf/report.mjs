// Gathers the figures of one scripts/bench.sh run into one table and one JSON file.
//
//   node tests/perf/report.mjs --criterion DIR --browser FILE --out FILE [--quick]
//       [--load-before L --load-after L --cores N --missing "label;label"]
//
// Reads criterion's estimates under DIR/forward and the JSON written by measure.mjs, writes
// every figure to --out, and prints them as a table with each figure's budget. When --out
// already exists it is first kept as figures.previous.json beside it, and the table gains the
// change from that run. Exits 0 whatever the figures say: they are measurements, not tests.

import { promises as fs } from "node:fs";
import path from "node:path";

function parseArgs(argv) {
  const options = { quick: false, missing: [] };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    if (flag === "--quick") {
      options.quick = true;
      continue;
    }
    const value = argv[++i];
    if (value === undefined) throw new Error(`missing value for ${flag}`);
    if (flag === "--criterion") options.criterion = path.resolve(value);
    else if (flag === "--browser") options.browser = path.resolve(value);
    else if (flag === "--out") options.out = path.resolve(value);
    else if (flag === "--load-before") options.loadBefore = Number(value);
    else if (flag === "--load-after") options.loadAfter = Number(value);
    else if (flag === "--cores") options.cores = Number(value);
    else if (flag === "--missing") options.missing = value.split(";").filter(Boolean);
    else throw new Error(`unknown option ${flag}`);
  }
  if (!options.out) throw new Error("--out is required");
  return options;
}

async function readJson(file) {
  try {
    return JSON.parse(await fs.readFile(file, "utf8"));
  } catch (error) {
    if (error.code === "ENOENT") return null;
    throw new Error(`${file}: ${error.message}`);
  }
}

function round(value, digits = 2) {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

/** `s32_d16_h8` as numbers, or null for any other id. */
function gridPoint(id) {
  const match = /^s(\d+)_d(\d+)_h(\d+)$/.exec(id);
  return match ? { seqLen: +match[1], dModel: +match[2], nHeads: +match[3] } : null;
}

/** One figure per criterion benchmark in `dir`/forward: the median time of one call. */
async function criterionFigures(dir) {
  const group = path.join(dir, "forward");
  let ids;
  try {
    ids = await fs.readdir(group);
  } catch {
    return [];
  }
  const points = [];
  for (const id of ids) {
    const estimates = await readJson(path.join(group, id, "new", "estimates.json"));
    if (!estimates) continue;
    const { point_estimate: ns, confidence_interval: ci } = estimates.median;
    points.push({ id, grid: gridPoint(id), ns, ci });
  }
  const order = (p) => (p.grid ? [p.grid.seqLen, p.grid.dModel, p.grid.nHeads] : [1e9, 0, 0]);
  points.sort((a, b) => {
    const [x, y] = [order(a), order(b)];
    return x[0] - y[0] || x[1] - y[1] || x[2] - y[2] || a.id.localeCompare(b.id);
  });
  const figures = points.map((p) => ({
    name: `forward/${p.id}`,
    value: round(p.ns / 1000, 3),
    unit: "µs",
    budget_max: null,
    note:
      `median of criterion samples, 95% CI ` +
      `${round(p.ci.lower_bound / 1000, 2)}..${round(p.ci.upper_bound / 1000, 2)} µs`,
  }));

  // How the cost grows with seq_len at the widest model: the slope of log(time) against
  // log(seq_len) from the shortest to the longest sentence. 1 is linear, 2 quadratic.
  const widest = points.filter((p) => p.grid?.dModel === 16 && p.grid?.nHeads === 8);
  if (widest.length >= 2) {
    const [first, last] = [widest[0], widest[widest.length - 1]];
    const slope =
      Math.log(last.ns / first.ns) / Math.log(last.grid.seqLen / first.grid.seqLen);
    figures.push({
      name: "forward: growth exponent in seq_len (d16 h8)",
      value: round(slope, 2),
      unit: "",
      budget_max: null,
      note: `time ∝ seq_len^k between seq_len ${first.grid.seqLen} and ${last.grid.seqLen}`,
    });
  }
  if (!points.some((p) => p.id.startsWith("stress_"))) {
    figures.push({
      name: "forward/stress_s256_d64_h8",
      value: null,
      unit: "µs",
      budget_max: null,
      note: "not measured: forward refuses sizes beyond 32 tokens and d_model 16",
    });
  }
  return figures;
}

function formatValue(value) {
  if (value === null || value === undefined) return "n/a";
  if (Math.abs(value) >= 100) return value.toFixed(0);
  if (Math.abs(value) >= 10) return value.toFixed(1);
  return value.toFixed(2);
}

const given = (x) => x !== null && x !== undefined;

/** Whether a figure has a budget: a most (`budget_max`, for times and sizes) or a least
 * (`budget_min`, for rates). */
const budgeted = (figure) => given(figure.budget_max) || given(figure.budget_min);

/** The budget in words: `< 2` or `≥ 30`. */
function budgetText(figure) {
  if (given(figure.budget_max)) return `< ${figure.budget_max}`;
  if (given(figure.budget_min)) return `≥ ${figure.budget_min}`;
  return "-";
}

function within(figure) {
  if (!budgeted(figure)) return "-";
  if (!given(figure.value)) return "?";
  const underMax = !given(figure.budget_max) || figure.value < figure.budget_max;
  const overMin = !given(figure.budget_min) || figure.value >= figure.budget_min;
  return underMax && overMin ? "yes" : "NO";
}

function change(figure, previous) {
  const before = previous?.get(figure.name);
  if (before === undefined) return previous ? "new" : "";
  if (before === null || figure.value === null || before === 0) return "n/a";
  const percent = ((figure.value - before) / Math.abs(before)) * 100;
  const sign = percent > 0 ? "+" : "";
  return `${formatValue(before)} → ${sign}${percent.toFixed(0)}%`;
}

function printTable(figures, previous) {
  const header = ["figure", "value", "unit", "budget", "within"];
  if (previous) header.push("previous → change");
  const rows = figures.map((f) => [
    f.name,
    formatValue(f.value),
    f.unit,
    budgetText(f),
    within(f),
    ...(previous ? [change(f, previous)] : []),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const numeric = new Set([1]);
  const line = (cells) =>
    cells
      .map((cell, i) => (numeric.has(i) ? cell.padStart(widths[i]) : cell.padEnd(widths[i])))
      .join("  ")
      .trimEnd();
  console.log(line(header));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const row of rows) console.log(line(row));
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const figures = [];
  if (options.criterion) figures.push(...(await criterionFigures(options.criterion)));
  const browser = options.browser ? await readJson(options.browser) : null;
  if (browser) figures.push(...browser.figures);

  const run = {
    date: new Date().toISOString(),
    quick: options.quick,
    cores: options.cores ?? null,
    load_average_before: options.loadBefore ?? null,
    load_average_after: options.loadAfter ?? null,
    chromium: browser?.chromium ?? null,
    page_problems: browser?.problems ?? [],
    missing: options.missing,
  };

  const previousFile = path.join(path.dirname(options.out), "figures.previous.json");
  const last = await readJson(options.out);
  if (last) await fs.writeFile(previousFile, JSON.stringify(last, null, 2) + "\n");
  const previous = last
    ? new Map(last.figures.map((f) => [f.name, f.value]))
    : null;
  await fs.mkdir(path.dirname(options.out), { recursive: true });
  await fs.writeFile(options.out, JSON.stringify({ run, figures }, null, 2) + "\n");

  console.log("");
  printTable(figures, previous);
  console.log("");

  const withBudget = figures.filter(budgeted);
  const over = withBudget.filter((f) => within(f) !== "yes");
  if (over.length === 0) {
    console.log(`budgets: all ${withBudget.length} met`);
  } else {
    console.log(`budgets: ${over.length} of ${withBudget.length} NOT met:`);
    for (const f of over) {
      console.log(`  ${f.name}: ${formatValue(f.value)} ${f.unit}, budget ${budgetText(f)}`);
    }
  }
  if (previous) {
    const mode = last.run?.quick ? "a quick run" : "a full run";
    const date = last.run?.date ?? "an unknown date";
    console.log(`change: against ${mode} of ${date} (kept in ${previousFile})`);
    if (last.run?.quick !== run.quick) {
      console.log("change: note that one run was quick and the other full; compare with care");
    }
  }
  if (run.cores && run.load_average_before !== null && run.load_average_before > run.cores) {
    console.log(
      `note: the machine was busy (load average ${run.load_average_before} before, ` +
        `${run.load_average_after} after, on ${run.cores} cores); times are inflated and noisy`,
    );
  }
  for (const label of run.missing) {
    console.log(`missing: ${label} did not complete, so its figures are absent`);
  }
  for (const problem of run.page_problems) console.log(`page problem: ${problem}`);
  for (const f of figures.filter((f) => f.value === null)) console.log(`${f.name}: ${f.note}`);
  console.log(`figures: written to ${options.out}`);
}

main().catch((error) => {
  console.error(`report: ${error.stack ?? error}`);
  process.exit(1);
});

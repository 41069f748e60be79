// Beyond one layer: the transformer block around attention and cross-attention, in the browser,
// checked against the CLI's trace of the same settings.
import type { Page } from "@playwright/test";
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { test, expect, clickCell, expectMatrixClose, runCli, type Matrix } from "./fixtures";


/** The block part of the CLI's JSON trace. */
interface BlockTrace {
  norm: string;
  activation: string;
  d_ff: number;
  attention_input: Matrix;
  sum_1: Matrix;
  norm_1: Matrix;
  hidden: Matrix;
  activated: Matrix;
  ffn: Matrix;
  sum_2: Matrix;
  norm_2: Matrix;
  out: Matrix;
  w_1: Matrix;
}

interface Trace {
  tokens: string[];
  source_tokens?: string[];
  heads: { scores: Matrix; weights: Matrix }[];
  output: Matrix;
  block?: BlockTrace;
}

function cli(args: string[]): Trace {
  return JSON.parse(runCli(["trace", "--format", "json", ...args]));
}

/** The CLI's trace of a scenario given as an object. */
function cliScenario(scenario: object): Trace {
  const dir = mkdtempSync(path.join(os.tmpdir(), "attention-lens-"));
  const file = path.join(dir, "scenario.json");
  writeFileSync(file, JSON.stringify(scenario));
  return cli(["--scenario", file]);
}

async function openStage(page: Page, key: string): Promise<void> {
  await page.getByTestId(`stage-${key}`).click();
  await expect(page.getByTestId(`stage-${key}`)).toHaveAttribute("aria-current", "step");
}

test("the block adds seven stages whose tables match the CLI, and editing W₁ changes H", async ({ app, page }) => {
  const expected = cli(["--block"]).block!;
  await app.goto();
  await app.openPlace("inputs");
  await app.openPlace("share");
  await page.getByTestId("block").check();
  await expect(page.getByTestId("rail-forward").locator("li")).toHaveCount(17);
  await openStage(page, "norm-2");
  await expect(page.getByTestId("progress")).toHaveText("Stage 17 of 17");
  await expect(page.getByTestId("stage-note")).toContainText("This is the block's output");

  const tables: [string, string, Matrix][] = [
    ["residual-1", "sum_1", expected.sum_1],
    ["norm-1", "norm_1", expected.norm_1],
    ["ffn-hidden", "hidden", expected.hidden],
    ["activation", "activated", expected.activated],
    ["ffn-out", "ffn", expected.ffn],
    ["residual-2", "sum_2", expected.sum_2],
    ["norm-2", "norm_2", expected.norm_2],
  ];
  await page.getByTestId("show-tables").check();
  for (const [stage, table, matrix] of tables) {
    await openStage(page, stage);
    expectMatrixClose(await app.tableValues(table), matrix, 1e-9, table);
    await expect(page.getByTestId("explanation")).not.toBeEmpty();
  }
  // ReLU: every negative number of H became 0, and the note counts them.
  const negatives = expected.hidden.flat().filter((v) => (v as number) < 0).length;
  await openStage(page, "activation");
  await expect(page.getByTestId("stage-title")).toHaveText("Activation: ReLU");
  await expect(page.getByTestId("stage-note")).toContainText(`${negatives} of H's 48 numbers are negative`);

  // Edit W₁[d1, f1] and compare H with the CLI's trace of the same W₁.
  const w1 = expected.w_1.map((row) => [...row]);
  w1[0][0] = 2;
  const edited = cliScenario({ version: 2, sentence: "I am hungry", block: { w_1: w1 } }).block!;
  await page.getByTestId("editor-tab-w_1").click();
  await page.getByTestId("cell-w_1-0-0").fill("2");
  await openStage(page, "ffn-hidden");
  await expect
    .poll(async () => (await app.tableValues("hidden"))[0][0])
    .toBeCloseTo(edited.hidden[0][0] as number, 9);
  expectMatrixClose(await app.tableValues("hidden"), edited.hidden, 1e-9, "edited hidden");
  await openStage(page, "norm-2");
  expectMatrixClose(await app.tableValues("norm_2"), edited.norm_2, 1e-9, "edited output");

  // Switched off, the block's stages go and the step falls back to attention's last stage.
  await page.getByTestId("block").uncheck();
  await expect(page.getByTestId("rail-forward").locator("li")).toHaveCount(10);
  await expect(page.getByTestId("stage-output")).toHaveAttribute("aria-current", "step");
});

test("pre-norm normalises before attention, GELU and d_ff follow the settings", async ({ app, page }) => {
  const expected = cli(["--norm", "pre", "--activation", "gelu", "--d-ff", "6"]).block!;
  await app.goto();
  await app.openPlace("inputs");
  await app.openPlace("share");
  await page.getByTestId("block").check();
  await page.getByTestId("norm").selectOption("pre");
  await page.getByTestId("activation").selectOption("gelu");
  await page.getByTestId("d-ff").fill("6");
  await page.getByTestId("d-ff").press("Enter");
  await page.getByTestId("show-tables").check();
  // In pre-norm, N₁ is stage 2, before the projections.
  await expect(page.getByTestId("rail-forward").locator("li").nth(1).getByRole("button")).toHaveAttribute("data-testid", "stage-norm-1");
  await openStage(page, "norm-1");
  await expect(page.getByTestId("progress")).toHaveText("Stage 2 of 17");
  expectMatrixClose(await app.tableValues("norm_1"), expected.norm_1, 1e-9, "N₁");
  await openStage(page, "projection");
  await expect(page.getByTestId("formula")).toContainText("N");
  await openStage(page, "activation");
  await expect(page.getByTestId("stage-title")).toHaveText("Activation: GELU (tanh approximation)");
  expectMatrixClose(await app.tableValues("activated"), expected.activated, 1e-9, "G");
  await openStage(page, "residual-2");
  expectMatrixClose(await app.tableValues("sum_2"), expected.out, 1e-9, "the block's output");
  // A bad d_ff is refused next to the field and the last valid one is kept.
  await page.getByTestId("d-ff").fill("65");
  await page.getByTestId("d-ff").press("Enter");
  await expect(page.getByTestId("d-ff-error")).toContainText("from 2 to 64; d_ff stays 6");
  expectMatrixClose(await app.tableValues("sum_2"), expected.out, 1e-9, "kept");
});

test("cross-attention: keys from the source, a non-square alignment, and no causal mask", async ({ app, page }) => {
  const expected = cli(["--source", "le chat noir dort"]);
  await app.goto();
  await app.openPlace("inputs");
  await app.openPlace("share");
  await page.getByTestId("causal").check();
  await page.getByTestId("cross").check();
  await expect(page.getByTestId("causal")).not.toBeChecked();
  await expect(page.getByTestId("causal")).toBeDisabled();
  await expect(page.getByTestId("causal-reason")).toContainText("belongs to self-attention");
  await page.getByTestId("source").fill("le chat noir dort");
  await page.getByTestId("show-tables").check();
  await openStage(page, "softmax");
  await expect(page.getByTestId("shapes")).toHaveText("seq_len × src_len = 3 × 4, per head");
  expectMatrixClose(await app.tableValues("weights-h0"), expected.heads[0].weights, 1e-9, "A₁");
  const lines = page.getByTestId("lines-h0");
  await expect(lines.locator(".attention-line")).toHaveCount(12);
  await expect(page.getByTestId("line-key-0-3")).toHaveText("dort");
  await openStage(page, "mask");
  await expect(page.getByTestId("stage-title")).toHaveText("Causal mask: off (cross-attention)");
  await expect(page.getByTestId("stage-note")).toContainText("every query sees every source token");
  // The source's embeddings have an editor of their own.
  await page.getByTestId("editor-tab-x_src").click();
  await expect(page.getByTestId("editor-x_src").locator("tbody tr")).toHaveCount(4);
});

test("a hostile source sentence is refused next to the field and the last valid one is kept", async ({ app, page }) => {
  await app.goto();
  await app.openPlace("inputs");
  await app.openPlace("share");
  await page.getByTestId("cross").check();
  await page.getByTestId("show-tables").check();
  await openStage(page, "softmax");
  const before = await app.tableCells("weights-h0");
  const source = page.getByTestId("source");
  await source.fill("word ".repeat(2000));
  await expect(page.getByTestId("source-error")).toContainText("In the source sentence");
  await expect(page.getByTestId("source-error")).toContainText("at most 32");
  await expect(source).toHaveAttribute("aria-invalid", "true");
  expect(await app.tableCells("weights-h0")).toEqual(before);
  await source.fill("   ");
  await expect(page.getByTestId("source-error")).toContainText("at least one word");
  expect(await app.tableCells("weights-h0")).toEqual(before);
  // Markup is text: its characters become tokens, never elements.
  await source.fill('<img src=x onerror="alert(1)">');
  await expect(page.getByTestId("source-error")).toBeEmpty();
  await expect(page.getByTestId("line-key-0-0")).toHaveText("<");
  await expect(page.locator("img[src='x']")).toHaveCount(0);
  // A bad number in a block editor keeps the last valid value.
  await page.getByTestId("block").check();
  await page.getByTestId("editor-tab-b_1").click();
  const cell = page.getByTestId("cell-b_1-0-0");
  await cell.fill("NaN");
  await expect(cell).toHaveAttribute("aria-invalid", "true");
  await expect(page.getByTestId("editor-error-b_1")).toContainText("last valid value");
});

test("a share link carries the source, the block and its edits", async ({ app, page }) => {
  await app.goto();
  await app.openPlace("inputs");
  await page.getByTestId("cross").check();
  await page.getByTestId("source").fill("le chat");
  await page.getByTestId("block").check();
  await page.getByTestId("norm").selectOption("pre");
  await page.getByTestId("editor-tab-ln_2_gamma").click();
  await page.getByTestId("cell-ln_2_gamma-0-1").fill("2.5");
  await openStage(page, "norm-2");
  await expect.poll(() => new URL(page.url()).hash).toContain("g2=");
  const link = page.url();
  const hash = new URLSearchParams(new URL(link).hash.slice(1));
  expect(hash.get("src")).toBe("le chat");
  expect(hash.get("blk")).toBe("1");
  expect(hash.get("norm")).toBe("pre");
  expect(hash.get("stage")).toBe("norm-2");

  const other = await page.context().newPage();
  await other.goto(link);
  await expect(other.getByTestId("stage-norm-2")).toHaveAttribute("aria-current", "step");
  await other.getByTestId("place-inputs").click();
  await expect(other.getByTestId("block")).toBeChecked();
  await expect(other.getByTestId("source")).toHaveValue("le chat");
  await other.getByTestId("editor-tab-ln_2_gamma").click();
  await expect(other.getByTestId("cell-ln_2_gamma-0-1")).toHaveValue("2.5");
  await other.close();
});

test("the translation preset shows an alignment whose lines cross", async ({ app, page }) => {
  await app.goto();
  await app.openPlace("inputs");
  await page.getByTestId("preset").selectOption("translation");
  await expect(page.getByTestId("preset-caption")).toContainText("the lines of black and cat cross");
  await expect(page.getByTestId("stage-softmax")).toHaveAttribute("aria-current", "step");
  await expect(page.getByTestId("cross")).toBeChecked();
  const black = page.locator("[data-testid='lines-h0'] line[data-query='1'][data-key='2']");
  const cat = page.locator("[data-testid='lines-h0'] line[data-query='2'][data-key='1']");
  expect(Number(await black.getAttribute("data-weight"))).toBeGreaterThan(0.96);
  expect(Number(await cat.getAttribute("data-weight"))).toBeGreaterThan(0.96);
  await expect(page.getByTestId("canvas-weights-h0")).toHaveAttribute("data-drawn", "true");
  await app.screenshot("cross-translation");
});

test("the block's first LayerNorm, as the guide shows it", async ({ app, page }) => {
  await app.goto();
  await app.openPlace("inputs");
  await page.getByTestId("block").check();
  await openStage(page, "norm-1");
  await expect(page.getByTestId("canvas-norm_1")).toHaveAttribute("data-drawn", "true");
  await expect(page.getByTestId("canvas-ln_1_gamma")).toHaveAttribute("data-drawn", "true");
  await app.screenshot("block-norm-1");
});

test("a LayerNorm cell and a ReLU cell explain themselves with the real numbers", async ({ app, page }) => {
  const block = cli(["--block"]).block!;
  await app.goto();
  await app.openPlace("inputs");
  await page.getByTestId("block").check();
  await openStage(page, "norm-1");
  await clickCell(page, "canvas-norm_1", 1, 2);
  await expect(page.getByTestId("explain-title")).toContainText("N₁[am, d3]");
  await expect(page.getByTestId("explain-formula")).toContainText("√(σᵢ² + ε)");
  const n = (block.norm_1[1][2] as number).toFixed(2).replace("-", "−");
  await expect(page.getByTestId("explain-expansion")).toHaveText(new RegExp(`[=≈] ${n}$`));
  await expect(page.getByTestId("explain-note")).toContainText("÷ d_model = 4");

  await openStage(page, "activation");
  const hidden = block.hidden[0] as number[];
  const negative = hidden.findIndex((v) => v < 0);
  expect(negative).toBeGreaterThanOrEqual(0);
  await clickCell(page, "canvas-activated", 0, negative);
  await expect(page.getByTestId("explain-expansion")).toHaveText(/^max\(−[\d.]+, 0\) = 0\.00$/);
  await expect(page.getByTestId("explain-note")).toContainText("ReLU sets it to 0");
});

test("the what-if lab compares on the source's keys and has no mask to switch off", async ({ app, page }) => {
  const seqLen = cli(["--source", "le chat noir dort", "--scale", "sqrt_seq_len"]);
  await app.goto();
  await app.openPlace("inputs");
  await app.openPlace("lab");
  await page.getByTestId("cross").check();
  await page.getByTestId("source").fill("le chat noir dort");
  const lab = page.getByTestId("whatif-lab");
  await lab.scrollIntoViewIfNeeded();
  await expect(page.getByTestId("whatif-cross-note")).toContainText("no mask to switch off");
  await expect(page.getByTestId("whatif-no_causal_mask")).toBeDisabled();
  await page.getByTestId("whatif-scale_by_seq_len").click();
  await expect(page.getByTestId("whatif-explanation")).toContainText("√src_len");
  expectMatrixClose(await app.tableValues("whatif-shown"), seqLen.heads[0].weights, 1e-9, "÷√src_len");
  await expect(app.table("whatif-shown").locator("thead th").filter({ hasText: "dort" })).toHaveCount(1);
});

test("with the block at 1366×768 the rail keeps every stage's name, on two rows", async ({ app, page }) => {
  await page.setViewportSize({ width: 1366, height: 768 });
  await app.goto("./#v=1&blk=1&stage=softmax");
  const names = page.locator('[data-testid="rail-forward"] .rail-name');
  await expect(names).toHaveCount(17);
  for (const name of await names.all()) {
    const b = await name.boundingBox();
    expect(b!.width, await name.textContent()).toBeGreaterThan(5);
  }
  const rail = await page.getByTestId("rail-forward").boundingBox();
  expect(rail!.width, "no sideways scrolling").toBeLessThanOrEqual(1366);
  expect(await page.getByTestId("rail-forward").evaluate((el) => el.scrollWidth - el.clientWidth)).toBeLessThanOrEqual(1);
});

for (const [what, hash, count] of [
  ["rotary positions", "rope=10000", 11],
  ["rotary positions, the tiles and decoding", "causal=1&rope=10000&pf=2&tile=2", 13],
] as const) {
  test(`with ${what} at 1280×800 the rail shows all ${count} stages' names, half on each of two rows`, async ({ app, page }) => {
    await page.setViewportSize({ width: 1280, height: 800 });
    await app.goto(`./#v=1&${hash}&stage=input`);
    const rail = page.getByTestId("rail-forward");
    const buttons = rail.locator("button");
    await expect(buttons).toHaveCount(count);
    expect(await rail.evaluate((el) => el.scrollWidth - el.clientWidth), "nothing behind the rail's end").toBeLessThanOrEqual(1);
    const tops = new Map<number, number>();
    for (const button of await buttons.all()) {
      const b = (await button.boundingBox())!;
      tops.set(Math.round(b.y), (tops.get(Math.round(b.y)) ?? 0) + 1);
      const name = button.locator(".rail-name");
      expect((await name.boundingBox())!.width, `${await name.textContent()} is named`).toBeGreaterThan(5);
    }
    expect([...tops.values()]).toEqual([Math.ceil(count / 2), Math.floor(count / 2)]);
  });
}

test("with the Llama-style block, decoding and the tiles at 1280×800 the rail shows all 20 stages' names, on three rows", async ({ app, page }) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  await app.goto();
  await app.openPlace("inputs");
  await page.getByTestId("preset").selectOption("llama");
  await page.getByTestId("decode").check();
  await page.getByTestId("tiles").check();
  const rail = page.getByTestId("rail-forward");
  const buttons = rail.locator("button");
  await expect(buttons).toHaveCount(20);
  expect(await rail.evaluate((el) => el.scrollWidth - el.clientWidth), "nothing behind the rail's end").toBeLessThanOrEqual(1);
  const edge = (await rail.boundingBox())!;
  const tops = new Set<number>();
  for (const button of await buttons.all()) {
    const b = (await button.boundingBox())!;
    tops.add(Math.round(b.y));
    expect(b.x + b.width, `${await button.textContent()} ends inside the rail`).toBeLessThanOrEqual(edge.x + edge.width + 1);
    const name = button.locator(".rail-name");
    expect((await name.boundingBox())!.width, `${await name.textContent()} is named`).toBeGreaterThan(5);
  }
  expect(tops.size).toBe(3);
});

test("with the block at 1366×768 every matrix tab is in sight, none behind a scrollbar", async ({ app, page }) => {
  await page.setViewportSize({ width: 1366, height: 768 });
  await app.goto("./#v=1&blk=1");
  await app.openPlace("inputs");
  const tabs = page.locator('.editors [role="tab"]');
  expect(await tabs.count()).toBeGreaterThan(10);
  const list = page.locator(".editors .tabs").first();
  const edge = (await list.boundingBox())!;
  for (const tab of await tabs.all()) {
    const b = (await tab.boundingBox())!;
    expect(b.x + b.width, `${await tab.textContent()} ends inside its row`).toBeLessThanOrEqual(edge.x + edge.width + 1);
  }
});

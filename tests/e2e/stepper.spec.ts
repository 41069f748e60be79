// The stepper in a real browser: typing, editing weights, stepping with the keyboard, and
// refusing bad input without losing the last valid state.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Page } from "@playwright/test";
import {
  test,
  expect,
  expectMatrixClose,
  runCli,
  SCREENSHOT_DIR,
  STAGES,
  STAGE_TITLES,
  type Trace,
} from "./fixtures";



/** The trace the native CLI computes for `scenario`. */
function cliTrace(scenario: object): Trace {
  const dir = mkdtempSync(path.join(os.tmpdir(), "attention-lens-"));
  const file = path.join(dir, "scenario.json");
  writeFileSync(file, JSON.stringify(scenario));
  return JSON.parse(runCli(["trace", "--scenario", file, "--format", "json"]));
}

/** The default scenario with every matrix written out. */
function defaultScenario(): Record<string, unknown> {
  return JSON.parse(runCli(["scenario"]));
}

/** How many different colours a canvas shows: a blank canvas has one. */
async function canvasColours(page: Page, testId: string): Promise<number> {
  return page.getByTestId(testId).evaluate((element) => {
    const canvas = element as HTMLCanvasElement;
    const context = canvas.getContext("2d");
    if (!context || canvas.width === 0 || canvas.height === 0) return 0;
    const pixels = context.getImageData(0, 0, canvas.width, canvas.height).data;
    const seen = new Set<number>();
    for (let i = 0; i < pixels.length && seen.size < 50; i += 16) {
      seen.add((pixels[i] << 16) | (pixels[i + 1] << 8) | pixels[i + 2]);
    }
    return seen.size;
  });
}

test("typing a sentence shows its tokens as chips", async ({ app, page }) => {
  await app.goto();
  await app.openPlace("inputs");
  const input = page.getByTestId("sentence-input");
  await input.fill("I like sushi, because");
  await expect(app.tokens).toHaveText(["I", "like", "sushi", ",", "because"]);
  await app.openStage("scores");
  // Five tokens: a 5 × 5 score matrix per head.
  await expect(app.table("scores-h0").locator("tbody tr")).toHaveCount(5);
});

test("an empty or over-long sentence shows a message and keeps the last valid trace", async ({ app, page }) => {
  await app.goto();
  await app.openPlace("inputs");
  await app.openStage("output");
  const before = await app.tableValues("output");
  const input = page.getByTestId("sentence-input");

  await input.fill("   ");
  await expect(page.getByTestId("sentence-error")).toContainText("at least one word");
  await expect(app.tokens).toHaveText(["I", "am", "hungry"]);
  expect(await app.tableValues("output")).toEqual(before);

  await input.fill(Array.from({ length: 33 }, (_, i) => `w${i}`).join(" "));
  await expect(page.getByTestId("sentence-error")).toContainText("at most 32");
  expect(await app.tableValues("output")).toEqual(before);

  await input.fill("I am hungry");
  await expect(page.getByTestId("sentence-error")).toBeEmpty();
});

test("editing one W_q cell changes the scores to what the core computes", async ({ app, page }) => {
  await app.goto();
  await app.openPlace("inputs");
  await app.openStage("scores");
  const before = await app.tableValues("scores-h0");

  await page.getByTestId("editor-tab-w_q").click();
  const cell = page.getByTestId("cell-w_q-0-1");
  await cell.click();
  await cell.fill("1.5");

  const scenario = defaultScenario();
  (scenario.w_q as number[][])[0][1] = 1.5;
  const expected = cliTrace(scenario);
  await expect
    .poll(async () => JSON.stringify(await app.tableValues("scores-h0")))
    .not.toBe(JSON.stringify(before));
  expectMatrixClose(await app.tableValues("scores-h0"), expected.heads[0].scores, 1e-9, "scores-h0");
  expectMatrixClose(await app.tableValues("scores-h1"), expected.heads[1].scores, 1e-9, "scores-h1");
});

test("keyboard nudges and arrow keys move between cells", async ({ app, page }) => {
  await app.goto();
  await app.openPlace("inputs");
  await page.getByTestId("editor-tab-w_k").click();
  const cell = page.getByTestId("cell-w_k-1-1");
  await cell.click();
  const start = Number(await cell.inputValue());
  await page.keyboard.press("Alt+ArrowUp");
  await expect(cell).toHaveValue(String(Math.round((start + 0.1) * 1e4) / 1e4));
  await page.keyboard.press("ArrowDown");
  await expect(page.getByTestId("cell-w_k-2-1")).toBeFocused();
  await page.keyboard.press("ArrowUp");
  await expect(cell).toBeFocused();
});

test("dragging a cell sideways scrubs its value", async ({ app, page }) => {
  await app.goto();
  await app.openPlace("inputs");
  await page.getByTestId("editor-tab-w_v").click();
  const cell = page.getByTestId("cell-w_v-0-0");
  await expect(cell).toBeVisible();
  const start = Number(await cell.inputValue());
  await cell.hover();
  const box = (await cell.boundingBox())!;
  await page.mouse.down();
  await page.mouse.move(box.x + box.width / 2 + 30, box.y + box.height / 2, { steps: 5 });
  await page.mouse.up();
  await expect(cell).toHaveValue(String(Math.round((start + 0.3) * 100) / 100));
  // A drag does not start typing: the cell is not focused.
  await expect(cell).not.toBeFocused();
});

test("invalid cell text is marked, explained and not applied", async ({ app, page }) => {
  await app.goto();
  await app.openPlace("inputs");
  await app.openStage("scores");
  const before = await app.tableValues("scores-h0");
  await page.getByTestId("editor-tab-w_q").click();
  const cell = page.getByTestId("cell-w_q-0-0");
  const error = page.getByTestId("editor-error-w_q");

  for (const [text, message] of [
    ["abc", "Not a number"],
    ["1e999", "finite"],
    ["NaN", "finite"],
    ["١٢", "digits 0–9"],
    ["1e308", "1,000,000"],
  ]) {
    await cell.fill(text);
    await expect(cell).toHaveAttribute("aria-invalid", "true");
    await expect(error).toContainText(message);
    expect(await app.tableValues("scores-h0")).toEqual(before);
  }
  await page.keyboard.press("Escape");
  await expect(cell).toHaveAttribute("aria-invalid", "false");
  await expect(error).toBeEmpty();
});

test("the heads menu offers only head counts that divide d_model", async ({ app, page }) => {
  await app.goto();
  await app.openPlace("inputs");
  await page.getByTestId("d-model").selectOption("6");
  const options = await page.getByTestId("n-heads").locator("option").evaluateAll((els) =>
    els.map((el) => (el as HTMLOptionElement).value),
  );
  expect(options).toEqual(["1", "2", "3", "6"]);
  await page.getByTestId("n-heads").selectOption("3");
  await app.openStage("softmax");
  // More than two heads: a head picker, one head at a time.
  await page.getByTestId("head-2").click();
  await expect(app.table("weights-h2")).toBeAttached();
});

test("the causal mask shows −∞ above the diagonal and softmax rows sum to 1", async ({ app, page }) => {
  await app.goto();
  await app.openPlace("inputs");
  await page.getByTestId("causal").check();
  await app.openStage("mask");
  const masked = await app.tableValues("masked-h0");
  masked.forEach((row, i) =>
    row.forEach((v, j) => expect(v === -Infinity, `masked[${i}][${j}]`).toBe(j > i)),
  );
  await app.openStage("softmax");
  const sums = await app.table("weights-h0").locator("td[data-sum]").evaluateAll((els) =>
    els.map((el) => Number(el.getAttribute("data-sum"))),
  );
  expect(sums).toHaveLength(3);
  for (const s of sums) expect(Math.abs(s - 1)).toBeLessThan(1e-12);
  await expect(page.getByTestId("sums-weights-h0")).toContainText("Σ 1.00");
});

test("the keyboard walks all ten stages and every canvas is drawn", async ({ app, page }) => {
  // Ten full-page screenshots and a pixel count of every canvas: on a busy
  // two-core machine this walk alone takes 15–20 s.
  test.setTimeout(60_000);
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await app.goto();
  await app.openPlace("inputs");
  await page.getByTestId("causal").check();
  await page.getByTestId("positional").check();
  // Leave the form fields so the arrow keys belong to the stepper.
  await page.locator("body").click({ position: { x: 5, y: 5 } });
  for (let i = 0; i < STAGES.length; i++) {
    if (i > 0) await page.keyboard.press("ArrowRight");
    // The mask is on, and its stage says so.
    await expect(page.getByTestId("stage-title")).toHaveText(STAGES[i] === "mask" ? "Causal mask" : STAGE_TITLES[i]);
    await expect(app.stage(STAGES[i])).toHaveAttribute("aria-current", "step");
    const canvases = page.locator("canvas[data-testid^='canvas-']");
    const count = await canvases.count();
    expect(count, `${STAGES[i]} has canvases`).toBeGreaterThan(0);
    for (let c = 0; c < count; c++) {
      const id = (await canvases.nth(c).getAttribute("data-testid"))!;
      await expect(canvases.nth(c)).toHaveAttribute("data-drawn", "true");
      expect(await canvasColours(page, id), `${id} is not blank`).toBeGreaterThan(5);
    }
    await page.screenshot({
      path: path.join(SCREENSHOT_DIR, `stage-${String(i + 1).padStart(2, "0")}-${STAGES[i]}.png`),
      fullPage: true,
    });
  }
  // After the last forward stage → goes on into the backward stages, and ← comes back.
  await page.keyboard.press("ArrowRight");
  await expect(page.getByTestId("stage-title")).toHaveText("Pattern loss and ∂L/∂Aₕ");
  await page.keyboard.press("ArrowLeft");
  await expect(page.getByTestId("stage-title")).toHaveText(STAGE_TITLES[9]);
  await page.keyboard.press("ArrowLeft");
  await expect(page.getByTestId("stage-title")).toHaveText(STAGE_TITLES[8]);
  await page.getByTestId("prev").click();
  await expect(page.getByTestId("stage-title")).toHaveText(STAGE_TITLES[7]);
  await page.getByTestId("next").click();
  await expect(page.getByTestId("stage-title")).toHaveText(STAGE_TITLES[8]);
});

test("play advances through the stages on its own and pause stops it", async ({ app, page }) => {
  await app.goto();
  await page.getByTestId("play").click();
  await expect(page.getByTestId("play")).toHaveText("Pause");
  // One step every 2.5 s (4 s with reduced motion).
  await expect(page.getByTestId("stage-title")).toHaveText(STAGE_TITLES[1], { timeout: 6_000 });
  await page.getByTestId("play").click();
  await expect(page.getByTestId("play")).toHaveText("Play");
  const paused = await page.getByTestId("stage-title").textContent();
  await page.waitForTimeout(3_000);
  await expect(page.getByTestId("stage-title")).toHaveText(paused!);
});

test("a phone-sized screen shows the softmax stage", async ({ app, page }) => {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.setViewportSize({ width: 375, height: 700 });
  await app.goto();
  await app.openStage("softmax");
  await expect(page.getByTestId("canvas-weights-h0")).toHaveAttribute("data-drawn", "true");
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  expect(overflow, "no horizontal scroll").toBeLessThanOrEqual(0);
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, "phone-375-softmax.png") });
});

test("the number tables can be shown for everyone", async ({ app, page }) => {
  await app.goto();
  await app.openPlace("share");
  const wrap = page.getByTestId("tablewrap-x");
  await expect(wrap).toHaveClass(/visually-hidden/);
  expect((await wrap.boundingBox())!.width).toBeLessThanOrEqual(1);
  await page.getByTestId("show-tables").check();
  await expect(wrap).not.toHaveClass(/visually-hidden/);
  expect((await wrap.boundingBox())!.width).toBeGreaterThan(100);
  await expect(app.table("x").locator("tbody th")).toHaveText(["I", "am", "hungry"]);
});

// The what-if lab and the presets: mistakes computed by the core, presets that show what their
// captions promise.
import type { Page } from "@playwright/test";
import { test, expect, expectMatrixClose, loadTrace, runCli, type Trace } from "./fixtures";


function cli(args: string[]): Trace {
  return JSON.parse(runCli(["trace", "--format", "json", ...args]));
}

test("switching a mistake on shows the altered matrix, and off shows the correct one again", async ({ app, page }) => {
  const correct = loadTrace();
  const unscaled = cli(["--scale", "none"]);
  await app.goto();
  await app.openPlace("lab");
  const lab = page.getByTestId("whatif-lab");
  await lab.scrollIntoViewIfNeeded();

  expectMatrixClose(await app.tableValues("whatif-shown"), correct.heads[0].weights, 1e-9, "off");
  await page.getByTestId("whatif-no_scaling").click();
  await expect(page.getByTestId("whatif-no_scaling")).toHaveAttribute("aria-pressed", "true");
  await expect(page.getByTestId("whatif-explanation")).toContainText("undivided");
  await expect
    .poll(async () => JSON.stringify(await app.tableValues("whatif-shown")))
    .not.toBe(JSON.stringify(await app.tableValues("whatif-correct")));
  expectMatrixClose(await app.tableValues("whatif-shown"), unscaled.heads[0].weights, 1e-9, "no scaling");
  expectMatrixClose(await app.tableValues("whatif-correct"), correct.heads[0].weights, 1e-9, "correct side");
  await expect(page.getByTestId("saturation").locator("tbody tr")).toHaveCount(8);

  await page.getByTestId("whatif-no_scaling").click();
  await expect(page.getByTestId("whatif-no_scaling")).toHaveAttribute("aria-pressed", "false");
  expectMatrixClose(await app.tableValues("whatif-shown"), correct.heads[0].weights, 1e-9, "back off");
});

test("softmax over columns breaks the row sums and no mask leaks the future", async ({ app, page }) => {
  await app.goto();
  await app.openPlace("inputs");
  await app.openPlace("lab");
  await page.getByTestId("whatif-softmax_over_columns").click();
  await expect(page.getByTestId("whatif-summary")).toContainText("Row sums with the mistake");
  const cols = await app.tableValues("whatif-shown");
  for (let j = 0; j < cols.length; j++) {
    const sum = cols.reduce((s, row) => s + row[j], 0);
    expect(Math.abs(sum - 1), `column ${j} sums to 1`).toBeLessThan(1e-9);
  }
  await expect(page.getByTestId("whatif-summary")).not.toContainText("leaks the future");
  await page.getByTestId("whatif-no_causal_mask").click();
  await expect(page.getByTestId("whatif-summary")).toContainText("sees the future");
  await expect(page.getByTestId("canvas-whatif-shown")).toHaveAttribute("data-highlight", /cells:0\.1,/);
  // Under the causal mask a column softmax leaks too: the first two rows' visible weights are
  // divided by column totals that include later tokens.
  await page.getByTestId("causal").check();
  await page.getByTestId("whatif-softmax_over_columns").click();
  await expect(page.getByTestId("whatif-summary")).toContainText("leaks the future too: 3 weights");
  await expect(page.getByTestId("canvas-whatif-shown")).toHaveAttribute("data-highlight", /cells:0\.0,1\.0,1\.1$/);
});

test("the temperature slider and the unstable softmax", async ({ app, page }) => {
  await app.goto();
  await app.openPlace("lab");
  await page.getByTestId("whatif-temperature").click();
  const slider = page.getByTestId("whatif-temperature-slider");
  await slider.fill("1");
  await expect(page.getByTestId("whatif-temperature-value")).toHaveText("10");
  const flat = await app.tableValues("whatif-shown");
  for (const row of flat) for (const v of row) expect(v).toBeGreaterThan(0.2);
  await page.getByTestId("whatif-unstable_softmax").click();
  // In f32, the default sentence's scores × 100 overflow in one row of head 1 only.
  await expect(page.getByTestId("whatif-summary")).toContainText("1 of 3 rows contain NaN");
  await expect(page.getByTestId("whatif-summary")).toContainText("The other rows stayed within the limits");
  await expect(page.getByTestId("whatif-explanation")).toContainText("about 88.7");
  // The row of NaN weights sums to NaN, not to the 0 of its finite terms.
  await expect(page.getByTestId("sums-whatif-shown").locator("li")).toHaveText(["Σ 1.00", "Σ 1.00", "Σ NaN"]);
  // So does its table, and a screen reader hears of the NaN cells.
  await expect(page.getByTestId("table-whatif-shown").locator("td.sum")).toHaveText(["1.000", "1.000", "NaN"]);
  await expect(page.getByTestId("canvas-whatif-shown")).toHaveAttribute("aria-label", /3 cells are NaN, not a number\./);
});

test("a preset loads its sentence and shows the pattern its caption claims", async ({ app, page }) => {
  await app.goto();
  await app.openPlace("inputs");
  await page.getByTestId("preset").selectOption("pronoun");
  await expect(page.getByTestId("preset-caption")).toContainText("sushi");
  const tokens = await app.tokens.allTextContents();
  expect(tokens).toContain("it");
  await app.openStage("softmax");
  const weights = await app.tableValues("weights-h0");
  const it = tokens.indexOf("it");
  const sushi = tokens.indexOf("sushi");
  expect(weights[it][sushi]).toBeGreaterThan(0.5);
  expect(Math.max(...weights[it])).toBe(weights[it][sushi]);
  await expect(page.getByTestId("sentence-input")).toHaveValue(/sushi/);
});

test("at 1366×768 the lab puts its two sides side by side and keeps each bar off its digits", async ({ app, page }) => {
  await page.setViewportSize({ width: 1366, height: 768 });
  await app.goto();
  await app.openPlace("lab");
  await page.getByTestId("whatif-scale_by_seq_len").click();
  await page.getByTestId("whatif-head-1").click();
  await expect(page.getByTestId("whatif-lab").locator(".heatmap-title")).toHaveText(["A₂, standard attention", "A₂ with the mistake"]);
  const correct = (await page.getByTestId("canvas-whatif-correct").boundingBox())!;
  const shown = (await page.getByTestId("canvas-whatif-shown").boundingBox())!;
  expect(Math.abs(correct.y - shown.y), "one row").toBeLessThan(2);
  expect(shown.x, "the mistake to the right of the correct side").toBeGreaterThan(correct.x + correct.width);
  // Each value of the saturation table sits clear of its bar's track.
  const overlaps = await page.getByTestId("saturation").evaluate((table) =>
    [...table.querySelectorAll(".meter")].filter((meter) => {
      const track = meter.querySelector(".track")!.getBoundingClientRect();
      const text = [...meter.childNodes].find((n) => n.nodeType === Node.TEXT_NODE && n.textContent!.trim())!;
      const range = document.createRange();
      range.selectNodeContents(text);
      const digits = range.getBoundingClientRect();
      return digits.width === 0 || track.right > digits.left;
    }).length,
  );
  expect(overlaps, "bars crossing their digits").toBe(0);
  await expect(page.getByTestId("saturation").locator(".meter")).toHaveCount(16);
});

test("with no mistake on, the reference side stays standard attention whatever the learner's settings", async ({ app, page }) => {
  await app.goto();
  await app.openPlace("inputs");
  await app.openPlace("lab");
  const standard = await app.tableValues("whatif-correct");
  await page.getByTestId("scale-mode").selectOption("sqrt_seq_len");
  await page.getByTestId("temperature").fill("0.5");
  await page.getByTestId("temperature").press("Enter");
  const lab = page.getByTestId("whatif-lab");
  await expect(lab.locator(".heatmap-title")).toHaveText(["A₁, standard attention", "A₁ with your settings"]);
  await expect(page.getByTestId("whatif-explanation")).toContainText("left side is standard attention");
  await expect(page.getByTestId("whatif-explanation")).toContainText("T = 0.5");
  // The reference side did not move; the learner's side did.
  await expect.poll(async () => JSON.stringify(await app.tableValues("whatif-shown"))).not.toBe(JSON.stringify(standard));
  expect(await app.tableValues("whatif-correct")).toEqual(standard);
});

test("a preset's caption says so when an edit breaks what it promises, and recovers", async ({ app, page }) => {
  await app.goto();
  await app.openPlace("inputs");
  await page.getByTestId("preset").selectOption("pronoun");
  await expect(page.getByTestId("preset-caption")).toContainText("sushi");
  await expect(page.getByTestId("caption-broken")).toHaveCount(0);
  // A hot softmax flattens every row: no token keeps most of its weight on one other.
  await page.getByTestId("temperature").fill("10");
  await page.getByTestId("temperature").press("Enter");
  const broken = page.getByTestId("caption-broken");
  await expect(broken).toContainText("Your edits changed what this caption describes");
  await expect(broken).toContainText("“it”");
  await expect(broken).toContainText(/found 0\.\d+ in total/);
  await page.getByTestId("temperature").fill("1");
  await page.getByTestId("temperature").press("Enter");
  await expect(broken).toHaveCount(0);
});

test("the mistakes tutorials make are listed, each leading to a what-if or a stage", async ({ app, page }) => {
  await app.goto();
  await app.openPlace("lab");
  const list = page.getByTestId("mistakes-read");
  await list.locator("summary").click();
  await expect(list.locator("li")).toHaveCount(7);
  await expect(list).toContainText("q_I · k_am");
  await page.getByTestId("mistake-1").click();
  await expect(page.getByTestId("whatif-scale_by_head_dim")).toHaveAttribute("aria-pressed", "true");
  await expect(page.getByTestId("whatif-explanation")).toContainText("dividing by d_k over-corrects");
  await page.getByTestId("mistake-3").click();
  await expect(page.getByTestId("whatif-repeated_denominator")).toHaveAttribute("aria-pressed", "true");
  await expect(page.getByTestId("whatif-summary")).toContainText("the repeated sum is");
  const uniform = await app.tableValues("whatif-shown");
  for (const row of uniform) for (const v of row) expect(Math.abs(v - 1 / 3)).toBeLessThan(1e-12);
  await expect(page.getByTestId("whatif-summary")).toContainText("Row “I”, key “I”");
  // Picking another cell of the lab's heatmap compares that cell's sums.
  const shown = page.getByTestId("canvas-whatif-shown");
  await shown.focus();
  for (const key of ["ArrowDown", "ArrowDown", "ArrowRight"]) await page.keyboard.press(key);
  await expect(page.getByTestId("whatif-summary")).toContainText("Row “hungry”, key “am”: the repeated sum is");
  await page.getByTestId("mistake-5").click();
  await expect(page.getByTestId("stage-title")).toHaveText("Causal mask: off");
});

test("leaving out W_o compares the outputs, Y beside C", async ({ app, page }) => {
  await app.goto();
  await app.openPlace("lab");
  await page.getByTestId("whatif-no_output_projection").click();
  await expect(page.getByTestId("whatif-lab").locator(".heatmap-title")).toHaveText(["With W_o: Y = C·W_o", "Without W_o: C"]);
  // The shape beside each title is the matrix it ends with: Y's and C's, not W_o's.
  await expect(page.getByTestId("whatif-lab").locator("figcaption").first()).toContainText(/Y = C·W_o\s*3 × 4/);
  const trace = loadTrace();
  expectMatrixClose(await app.tableValues("whatif-correct"), trace.output, 1e-9, "Y");
  expectMatrixClose(await app.tableValues("whatif-shown"), trace.concat, 1e-9, "C");
  await expect(page.getByTestId("whatif-summary")).toContainText("Largest change in attention's output Y");
});

test("no scaling shows the gradient reaching the scores vanish as d_k grows", async ({ app, page }) => {
  await page.setViewportSize({ width: 1366, height: 768 });
  await app.goto();
  await app.openPlace("lab");
  await page.getByTestId("whatif-lab").scrollIntoViewIfNeeded();
  await page.getByTestId("whatif-no_scaling").click();
  const table = page.getByTestId("gradient-table");
  await expect(table.locator("tbody tr")).toHaveCount(7);
  await expect(table.locator("caption")).toContainText("copy_previous");
  await expect(table.locator("caption")).toContainText("divided by √d_k");
  const rows = await table
    .locator("tbody tr")
    .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll("td[data-value]")].map((td) => Number(td.getAttribute("data-value")))));
  const [first, last] = [rows[0], rows[rows.length - 1]];
  // Columns: no scaling, ÷ √d_k. At d_k = 2 the undivided gradient is the larger; at 128 it
  // has nearly vanished through the saturated softmax.
  expect(first[0]).toBeGreaterThan(first[1]);
  expect(last[1] / last[0]).toBeGreaterThan(3);
  const summary = page.getByTestId("gradient-summary");
  await expect(summary).toContainText("At d_k = 2 the divisor √2 ≈ 1.41 mostly shrinks the gradient");
  await expect(summary).toContainText("at d_k = 128");
  await expect(summary).toContainText("times smaller");
  await table.scrollIntoViewIfNeeded();
  await app.screenshot("whatif-gradient-1366x768");
  await page.getByTestId("whatif-scale_by_seq_len").click();
  await expect(table).toHaveCount(0);
});

test.describe("the gradient table on a phone", () => {
  test.use({ viewport: { width: 375, height: 812 }, hasTouch: true, isMobile: true });

  test("fits the screen", async ({ app, page }) => {
    await app.goto();
    await app.openPlace("inputs");
    await app.openPlace("lab");
    await page.getByTestId("whatif-lab").scrollIntoViewIfNeeded();
    await page.getByTestId("whatif-no_scaling").tap();
    const table = page.getByTestId("gradient-table");
    await table.scrollIntoViewIfNeeded();
    const box = (await table.boundingBox())!;
    expect(box.x + box.width).toBeLessThanOrEqual(375);
    await app.screenshot("whatif-gradient-phone");
  });
});

test.describe("the lab on a small phone", () => {
  test.use({ viewport: { width: 360, height: 640 }, hasTouch: true, isMobile: true });

  test("a tap on a mistake brings its explanation into sight", async ({ app, page }) => {
    await app.goto();
    await app.openPlace("lab");
    const button = page.getByTestId("whatif-softmax_over_columns");
    await button.scrollIntoViewIfNeeded();
    await expect(page.getByTestId("whatif-explanation")).not.toBeInViewport();
    await button.tap();
    await expect(page.getByTestId("whatif-explanation")).toContainText("column");
    await expect(page.getByTestId("whatif-explanation")).toBeInViewport();
    // Below the bar that stays at the top, not under it.
    const bar = (await page.locator(".topbar").boundingBox())!;
    const words = (await page.getByTestId("whatif-explanation").boundingBox())!;
    expect(words.y).toBeGreaterThanOrEqual(bar.y + bar.height - 1);
  });
});

/**
 * Waits until the browser has reported what came into or went out of sight after a scroll: it
 * does so when it next renders, in a task of its own.
 */
async function reported(page: Page): Promise<void> {
  await page.evaluate(
    () =>
      new Promise((resolve) =>
        requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(resolve, 0))),
      ),
  );
}

/** Types `value` as the temperature and returns the lab's words once the edit's effects have run. */
async function temperatureThenLab(page: Page, value: string): Promise<string | null> {
  return page.evaluate(async (value) => {
    const field = document.querySelector<HTMLInputElement>('[data-testid="temperature"]')!;
    field.value = value;
    field.dispatchEvent(new Event("change", { bubbles: true }));
    await new Promise((resolve) => setTimeout(resolve, 0));
    return document.querySelector('[data-testid="whatif-explanation"]')!.textContent;
  }, value);
}

test("out of sight, the lab skips an edit's work and catches up once edits pause", async ({ app, page }) => {
  await app.goto();
  await app.openPlace("inputs");
  await app.openPlace("train");
  await app.openPlace("lab");
  const lab = page.getByTestId("whatif-lab");
  const explanation = page.getByTestId("whatif-explanation");
  await expect(explanation).toContainText("both sides agree");
  // The premise: the lab starts more than 400 px below the window (opening it brought it
  // into view, so back to the top).
  await page.evaluate(() => window.scrollTo(0, 0));
  const below = async () => (await lab.boundingBox())!.y - page.viewportSize()!.height;
  expect(await below()).toBeGreaterThan(400);
  await reported(page);
  // Right after an edit, the lab has not followed it.
  expect(await temperatureThenLab(page, "2")).toContain("both sides agree");
  // Once edits pause it catches up, without being scrolled to.
  await expect(explanation).toContainText("T = 2");
  expect(await below()).toBeGreaterThan(400);
  // Scrolled near, it follows each edit at once.
  await lab.scrollIntoViewIfNeeded();
  await reported(page);
  expect(await temperatureThenLab(page, "3")).toContain("T = 3");
});

test("out of sight, the lab waits for a training run to stop, then catches up", async ({ app, page }) => {
  await app.goto();
  await app.openPlace("train");
  await app.openPlace("lab");
  const lab = page.getByTestId("whatif-lab");
  await expect(page.getByTestId("whatif-explanation")).toContainText("both sides agree");
  const shown = async () => JSON.stringify(await app.tableValues("whatif-shown"));
  const before = await shown();
  // The premise: the lab stays more than 400 px below the window while the run trains.
  await page.evaluate(() => window.scrollTo(0, 0));
  const below = async () => (await lab.boundingBox())!.y - page.viewportSize()!.height;
  expect(await below()).toBeGreaterThan(400);
  // Until the browser reports it out of sight, the lab would follow the run's first frames.
  await reported(page);
  const run = page.getByTestId("train-run");
  await run.evaluate((button: HTMLButtonElement) => button.click());
  await expect(page.getByTestId("train-status")).toContainText(/After \d{2,} steps/, { timeout: 20_000 });
  // While the run trains, the lab out of sight follows none of its frames, however far apart
  // a slow machine draws them.
  expect(await shown()).toBe(before);
  expect(await below()).toBeGreaterThan(400);
  await run.evaluate((button: HTMLButtonElement) => button.click());
  await expect.poll(shown, { message: "the lab caught up once the run stopped" }).not.toBe(before);
});

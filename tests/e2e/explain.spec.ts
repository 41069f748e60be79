// Explaining every number: selecting a heatmap cell shows its arithmetic with the real numbers
// and lights up the operands it came from.
import type { Page } from "@playwright/test";
import { test, expect, loadTrace } from "./fixtures";

/** A number as the app displays it: two decimals and a real minus sign. */
function shown(value: number): string {
  const text = value.toFixed(2);
  return /^-0\.00$/.test(text) ? "0.00" : text.replace("-", "−");
}

/** Clicks cell (row, col) of a heatmap canvas, using the grid geometry the canvas reports. */
async function clickCell(page: Page, testId: string, row: number, col: number): Promise<void> {
  const canvas = page.getByTestId(testId);
  await expect(canvas).toHaveAttribute("data-grid", /\d/);
  const [gx, gy, cw, ch] = (await canvas.getAttribute("data-grid"))!.split(",").map(Number);
  const box = (await canvas.boundingBox())!;
  const css = await canvas.evaluate((el) => el.getBoundingClientRect().width);
  const layoutWidth = Number(await canvas.getAttribute("data-width"));
  const k = css / layoutWidth;
  await canvas.click({ position: { x: (gx + (col + 0.5) * cw) * k, y: (gy + (row + 0.5) * ch) * k } });
  expect(box.width).toBeGreaterThan(0);
}

test("clicking a score cell shows its dot product and lights the query and key rows", async ({ app, page }) => {
  const trace = loadTrace();
  await app.goto();
  await app.openStage("scores");
  await clickCell(page, "canvas-scores-h0", 1, 2);

  const panel = page.getByTestId("explain-panel");
  await expect(page.getByTestId("explain-title")).toContainText("am");
  await expect(page.getByTestId("explain-title")).toContainText("hungry");
  const q = trace.heads[0].q[1] as number[];
  const k = trace.heads[0].k[2] as number[];
  const score = trace.heads[0].scores[1][2] as number;
  const expansion = page.getByTestId("explain-expansion");
  for (const v of [...q, ...k]) await expect(expansion).toContainText(shown(Math.abs(v)));
  await expect(expansion).toHaveText(new RegExp(`[=≈] ${shown(score)}$`));
  await expect(panel).toHaveAttribute("aria-live", "polite");

  await expect(page.getByTestId("canvas-scores-h0")).toHaveAttribute("data-highlight", /^cell:1,2;/);
  await expect(page.getByTestId("canvas-q-h0")).toHaveAttribute("data-highlight", /rows:1;/);
  await expect(page.getByTestId("canvas-kt-h0")).toHaveAttribute("data-highlight", /cols:2;/);
});

test("a sum whose rounded terms miss the shown score ends in ≈ and says what they give", async ({ app, page }) => {
  await app.goto();
  await app.openStage("scores");
  // 0.24 × 1.83 + (−0.79) × 0.04 is 0.4076 written out, but the exact score is 0.40.
  await clickCell(page, "canvas-scores-h0", 0, 1);
  await expect(page.getByTestId("explain-expansion")).toHaveText("q_I · k_am = 0.24 × 1.83 + (−0.79) × 0.04 ≈ 0.40");
  await expect(page.getByTestId("explain-note")).toContainText("this comes to ≈ 0.41, but the result, 0.40, is computed from the exact values");
  // A sum whose rounded terms give the shown score keeps "=".
  await clickCell(page, "canvas-scores-h0", 0, 0);
  await expect(page.getByTestId("explain-expansion")).toHaveText(/ = −?\d\.\d\d$/);
  await expect(page.getByTestId("explain-panel")).not.toContainText("Redone with the rounded numbers");
});

test("arrow keys move the selected cell", async ({ app, page }) => {
  const trace = loadTrace();
  await app.goto();
  await app.openStage("softmax");
  const canvas = page.getByTestId("canvas-weights-h1");
  await canvas.focus();
  await expect(canvas).toHaveAttribute("data-highlight", /^cell:0,0;/);
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("ArrowRight");
  await expect(canvas).toHaveAttribute("data-highlight", /^cell:1,1;/);
  // A softmax cell lights its whole row of scores and shows every term of the row.
  await expect(page.getByTestId("canvas-masked-h1")).toHaveAttribute("data-highlight", /rows:1;/);
  const expansion = page.getByTestId("explain-expansion");
  await expect(expansion).toContainText("exp(");
  const w = trace.heads[1].weights[1][1] as number;
  await expect(expansion).toHaveText(new RegExp(`[=≈] ${shown(w)}$`));
  // The stepper keeps its own arrow keys: the stage did not change.
  await expect(page.getByTestId("stage-title")).toHaveText("Softmax");
  await page.keyboard.press("ArrowUp");
  await expect(canvas).toHaveAttribute("data-highlight", /^cell:0,1;/);
});

test("a masked cell says why it is −∞", async ({ app, page }) => {
  await app.goto();
  await app.openPlace("inputs");
  await page.getByTestId("causal").check();
  await app.openStage("mask");
  await clickCell(page, "canvas-masked-h0", 0, 2);
  await expect(page.getByTestId("explain-expansion")).toContainText("−∞");
  await expect(page.getByTestId("explain-panel")).toContainText("j > i");
});

test("attention lines isolate one token's lines on hover", async ({ app, page }) => {
  const trace = loadTrace();
  await app.goto();
  await app.openStage("softmax");
  const lines = page.getByTestId("lines-h0").locator("line.attention-line");
  await expect(lines).toHaveCount(9);
  // Each line's weight is the softmax weight of its query and key.
  const w = await lines.evaluateAll((els) =>
    els.map((el) => [Number(el.getAttribute("data-query")), Number(el.getAttribute("data-key")), Number(el.getAttribute("data-weight"))]),
  );
  for (const [q, k, weight] of w) expect(weight).toBe(trace.heads[0].weights[q][k]);
  await page.getByTestId("line-query-0-1").hover();
  const visible = await lines.evaluateAll((els) =>
    els.filter((el) => el.getAttribute("visibility") !== "hidden").map((el) => el.getAttribute("data-query")),
  );
  expect(visible).toEqual(["1", "1", "1"]);
  await page.mouse.move(0, 0);
  await expect(page.getByTestId("lines-h0").locator("line.attention-line[visibility='visible']")).toHaveCount(9);
});

test("compare all heads shows every head's result on one scale", async ({ app, page }) => {
  await app.goto();
  await app.openPlace("inputs");
  await page.getByTestId("d-model").selectOption("8");
  await page.getByTestId("n-heads").selectOption("4");
  await app.openStage("softmax");
  await expect(page.locator("canvas[data-testid^='canvas-weights-h']")).toHaveCount(1);
  await page.getByTestId("compare-heads").click();
  await expect(page.getByTestId("compare-heads")).toHaveAttribute("aria-pressed", "true");
  await expect(page.locator("canvas[data-testid^='canvas-weights-h']")).toHaveCount(4);
});

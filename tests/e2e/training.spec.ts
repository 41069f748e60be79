// Training in the page: a head learns the `previous` pattern, the loss falls and the curve is
// drawn, Reset and Back bring the weights from before training back, and one run is one
// history step.

import { test, expect } from "./fixtures";

const SENTENCE = "the cat sat on a mat";

/** A loss as the status line writes it: "0.0049" or "2.13 × 10⁻⁴". */
function lossValue(text: string): number {
  const [mantissa, power] = text.split(" × 10");
  if (power === undefined) return Number(mantissa);
  const exponent = [...power].map((c) => (c === "⁻" ? "-" : String("⁰¹²³⁴⁵⁶⁷⁸⁹".indexOf(c)))).join("");
  return Number(mantissa) * 10 ** Number(exponent);
}

/** The column of the largest entry of each row. */
function argmaxRows(m: number[][]): number[] {
  return m.map((row) => row.indexOf(Math.max(...row)));
}

test("training teaches every head to look one token back and the loss falls", async ({ app, page }) => {
  await app.goto();
  await page.getByTestId("sentence-input").fill(SENTENCE);
  await page.getByTestId("causal").check();
  await app.openStage("softmax");
  await page.getByTestId("show-tables").check();
  const before = await app.tableValues("weights-h0");
  expect(argmaxRows(before)).not.toEqual([0, 0, 1, 2, 3, 4]);

  const panel = page.getByTestId("training");
  await panel.scrollIntoViewIfNeeded();
  await expect(page.getByTestId("train-goal")).toHaveValue("previous");
  await page.getByTestId("train-step").click();
  await expect(page.getByTestId("train-status")).toContainText("After 1 step: loss L ≈");
  const historyAfterStep = await page.evaluate(() => history.length);

  await page.getByTestId("train-run").click();
  await expect(page.getByTestId("train-run")).toHaveText("Pause");
  await expect(page.getByTestId("train-status")).toContainText(/After \d{3,} steps/, { timeout: 20_000 });
  await page.getByTestId("train-run").click();
  await expect(page.getByTestId("train-run")).toHaveText("Train");

  const status = await page.getByTestId("train-status").innerText();
  const [, now, was] = status.match(/loss L ≈ (.+) \(≈ (.+) when this run started/) ?? [];
  expect(lossValue(now), status).toBeLessThan(lossValue(was) / 4);
  expect(lossValue("2.13 × 10⁻⁴")).toBeCloseTo(0.000213, 9);
  // The curve is drawn at the screen's pixel ratio.
  const width = await page.getByTestId("loss-curve").evaluate((c: HTMLCanvasElement) => c.width);
  expect(width).toBeGreaterThanOrEqual(480);

  // Every head now puts most weight on the token before (the first token on itself).
  for (const h of [0, 1]) {
    expect(argmaxRows(await app.tableValues(`weights-h${h}`)), `head ${h + 1}`).toEqual([0, 0, 1, 2, 3, 4]);
  }
  // The whole run is the one history entry the first step made.
  expect(await page.evaluate(() => history.length)).toBe(historyAfterStep);

  // Reset brings back the weights from before training.
  await page.getByTestId("train-reset").click();
  await expect(page.getByTestId("train-status")).toHaveText("");
  expect(await app.tableValues("weights-h0")).toEqual(before);
});

test("Back after training returns to the untrained weights", async ({ app, page }) => {
  await app.goto();
  await app.openStage("softmax");
  await page.getByTestId("show-tables").check();
  const before = await app.tableValues("weights-h0");
  await page.getByTestId("training").scrollIntoViewIfNeeded();
  await page.getByTestId("train-step").click();
  await page.getByTestId("train-step").click();
  await expect(page.getByTestId("train-status")).toContainText("After 2 steps");
  expect(await app.tableValues("weights-h0")).not.toEqual(before);
  await page.goBack();
  await expect.poll(() => app.tableValues("weights-h0")).toEqual(before);
  // The curve belonged to the weights Back left behind.
  await expect(page.getByTestId("train-status")).toHaveText("");
});

test("a target the causal mask hides is refused next to the goal, and the model is kept", async ({ app, page }) => {
  await app.goto();
  await page.getByTestId("causal").check();
  await page.getByTestId("training").scrollIntoViewIfNeeded();
  await page.getByTestId("train-goal").selectOption("next");
  const link = await page.evaluate(() => location.hash);
  await page.getByTestId("train-step").click();
  await expect(page.getByTestId("train-error")).toContainText("next");
  await expect(page.getByTestId("train-error")).toContainText("mask");
  expect(await page.evaluate(() => location.hash)).toBe(link);
});

test("a task leaves the embeddings out of what learns", async ({ app, page }) => {
  await app.goto();
  await page.getByTestId("training").scrollIntoViewIfNeeded();
  await page.getByTestId("train-embeddings").check();
  await page.getByTestId("train-goal").selectOption("mean");
  await expect(page.getByTestId("train-embeddings")).not.toBeChecked();
  await expect(page.getByTestId("train-embeddings")).toBeDisabled();
  await expect(page.getByTestId("train-w_o")).toBeChecked();
  await page.getByTestId("train-step").click();
  await expect(page.getByTestId("train-status")).toContainText("After 1 step");
});

test.describe("on a phone", () => {
  test.use({ viewport: { width: 360, height: 640 }, hasTouch: true, isMobile: true });

  test("the training panel fits the screen and trains by tapping", async ({ app, page }) => {
    await app.goto();
    const panel = page.getByTestId("training");
    await panel.scrollIntoViewIfNeeded();
    // The long goal and optimizer names once pushed their menus past the panel's edge.
    const wider = await panel.evaluate((p) => {
      const right = p.getBoundingClientRect().right;
      return [...p.querySelectorAll("*")]
        .filter((e) => e.getBoundingClientRect().right > right + 1)
        .map((e) => e.tagName);
    });
    expect(wider).toEqual([]);
    expect((await panel.boundingBox())!.width).toBeLessThanOrEqual(360);
    await page.getByTestId("train-step").tap();
    await expect(page.getByTestId("train-status")).toContainText("After 1 step");
  });
});

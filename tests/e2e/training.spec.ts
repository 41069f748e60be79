// Training in the page: a head learns the `previous` pattern, the loss falls and the curve is
// drawn, Reset and Back bring the weights from before training back, and one run is one
// history step.

import type { Page } from "@playwright/test";
import { test, expect, cellHeight, box, overlaps, expectInside, type Box } from "./fixtures";

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
  await app.openPlace("inputs");
  await app.openPlace("share");
  await app.openPlace("train");
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
  // The curve is drawn at the size it is shown, at the screen's pixel ratio.
  await expectCurveDrawnAsShown(page, "the curve after the run");

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
  await app.openPlace("share");
  await app.openPlace("train");
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

test("a target the causal mask hides is refused next to the goal, and the last goal is kept", async ({ app, page }) => {
  await app.goto();
  await app.openPlace("inputs");
  await app.openPlace("train");
  await page.getByTestId("causal").check();
  await page.getByTestId("training").scrollIntoViewIfNeeded();
  const link = await page.evaluate(() => location.hash);
  await page.getByTestId("train-goal").selectOption("next");
  const refusal = page.getByTestId("train-goal-error");
  await expect(refusal).toContainText("`next` target");
  await expect(refusal).toContainText("causal mask");
  // Both heads share the target: the refusal is about every head and names the tokens.
  await expect(refusal).toContainText("in every head, row 1 (“I”) puts weight on key 2 (“am”), a later token");
  await expect(page.getByTestId("train-goal")).toHaveValue("previous");
  expect(await page.evaluate(() => location.hash)).toBe(link);
  // Training goes on with the goal it kept; a goal the mask allows clears the refusal.
  await page.getByTestId("train-step").click();
  await expect(page.getByTestId("train-status")).toContainText("After 1 step");
  await page.getByTestId("train-goal").selectOption("first");
  await expect(refusal).toHaveText("");
  expect(await page.evaluate(() => location.hash)).toContain("goal=first");
});

test("a painted target names a repeated word by its position, as the heatmaps do", async ({ app, page }) => {
  await app.goto();
  await app.openPlace("inputs");
  await app.openPlace("train");
  await page.getByTestId("sentence-input").fill("the cat saw the dog");
  await page.getByTestId("training").scrollIntoViewIfNeeded();
  await page.getByTestId("train-goal").selectOption("per_head");
  await page.getByTestId("train-goal-h0").selectOption("painted");
  const grid = page.getByTestId("paint-h0");
  await expect(grid.locator("thead th")).toHaveText(["", "the (1)", "cat", "saw", "the (4)", "dog"]);
  await expect(grid.locator("tbody th").nth(3)).toHaveText("the (4)");
  await expect(page.getByTestId("paint-h0-3-0")).toHaveAttribute("aria-label", /^the \(4\) → the \(1\): target weight/);
});

test("each head gets its own goal, one painted by hand, carried by the link and Back", async ({ app, page }) => {
  await app.goto();
  await app.openPlace("inputs");
  await app.openPlace("train");
  await page.getByTestId("sentence-input").fill("a b c");
  await page.getByTestId("causal").check();
  await page.getByTestId("training").scrollIntoViewIfNeeded();
  await page.getByTestId("train-goal").selectOption("per_head");
  await expect(page.getByTestId("train-goal-h0")).toHaveValue("previous");
  await expect(page.getByTestId("train-goal-h1")).toHaveValue("previous");
  await page.getByTestId("train-goal-h0").selectOption("first");
  await page.getByTestId("train-goal-h1").selectOption("painted");
  const grid = page.getByTestId("paint-h1");
  await expect(grid).toBeVisible();
  // It starts as the head's pattern (previous); a click adds a key, and the row is shared out.
  await expect(page.getByTestId("paint-h1-2-1")).toHaveText("1.00");
  await page.getByTestId("paint-h1-2-2").click();
  await expect(page.getByTestId("paint-h1-2-1")).toHaveText("0.50");
  await expect(page.getByTestId("paint-h1-2-2")).toHaveText("0.50");
  // A masked cell cannot be painted and says why beside the grid; nothing changes.
  const hash = await page.evaluate(() => location.hash);
  await page.getByTestId("paint-h1-0-2").click({ force: true });
  await expect(page.getByTestId("train-goal-error-h1")).toContainText("In head 2's painted target, key 3 (“c”) comes after row 1's token (“a”)");
  await expect(page.getByTestId("train-goal-error-h1")).toContainText("cannot be painted");
  await expect(page.getByTestId("train-goal-error-h1")).toContainText("causal mask");
  await expect(page.getByTestId("paint-mask-note-h1")).toContainText("causal mask");
  expect(await page.evaluate(() => location.hash)).toBe(hash);
  expect(hash).toContain("goal=first,painted");
  expect(hash).toContain("paint=1,0,0,1,0,0,0,1,1");

  // The painted goal trains, and a reload of the link opens on it.
  await page.getByTestId("train-step").click();
  await expect(page.getByTestId("train-status")).toContainText("After 1 step");
  await page.reload();
  await app.openPlace("train");
  await page.getByTestId("training").scrollIntoViewIfNeeded();
  await expect(page.getByTestId("train-goal")).toHaveValue("per_head");
  await expect(page.getByTestId("paint-h1-2-2")).toHaveText("0.50");

  // Back undoes the step, then the last click, then the painted goal itself.
  await page.goBack();
  await expect(page.getByTestId("paint-h1-2-2")).toHaveText("0.50");
  await page.goBack();
  await expect(page.getByTestId("paint-h1-2-2")).toHaveText("0.00");
  await page.goBack();
  await expect(page.getByTestId("train-goal-h1")).toHaveValue("previous");
});

test("a task leaves the embeddings out of what learns", async ({ app, page }) => {
  await app.goto();
  await app.openPlace("train");
  await page.getByTestId("training").scrollIntoViewIfNeeded();
  await page.getByTestId("train-embeddings").check();
  await page.getByTestId("train-goal").selectOption("mean");
  await expect(page.getByTestId("train-embeddings")).not.toBeChecked();
  await expect(page.getByTestId("train-embeddings")).toBeDisabled();
  await expect(page.getByTestId("train-w_o")).toBeChecked();
  await page.getByTestId("train-step").click();
  await expect(page.getByTestId("train-status")).toContainText("After 1 step");
});

test("the look-back preset's head learns to look one token back while the loss falls", async ({ app, page }) => {
  await app.goto();
  await app.openPlace("inputs");
  await app.openPlace("share");
  await app.openPlace("train");
  await page.getByTestId("preset").selectOption("look-back");
  await expect(page.getByTestId("preset-caption")).toContainText("left of the diagonal");
  await expect(page.getByTestId("stage-title")).toContainText("Softmax");
  await page.getByTestId("show-tables").check();
  const before = await app.tableValues("weights-h0");
  const back = [0, 0, 1, 2, 3, 4, 5];
  expect(argmaxRows(before)).not.toEqual(back);

  await page.getByTestId("training").scrollIntoViewIfNeeded();
  await expect(page.getByTestId("train-goal")).toHaveValue("previous");
  await page.getByTestId("train-run").click();
  await expect(page.getByTestId("train-status")).toContainText(/After \d{3,} steps/, { timeout: 20_000 });
  await page.getByTestId("train-run").click();
  await expect(page.getByTestId("train-run")).toHaveText("Train");
  await app.screenshot("training-look-back");

  const status = await page.getByTestId("train-status").innerText();
  const [, now, was] = status.match(/loss L ≈ (.+) \(≈ (.+) when this run started/) ?? [];
  expect(lossValue(now), status).toBeLessThan(lossValue(was) / 100);
  expect(argmaxRows(await app.tableValues("weights-h0"))).toEqual(back);
});

test("presenting shows the loss curve large while the head trains", async ({ app, page }) => {
  await page.setViewportSize({ width: 1920, height: 1080 });
  await app.goto();
  await app.openPlace("inputs");
  await app.openPlace("share");
  await app.openPlace("train");
  await page.getByTestId("preset").selectOption("look-back");
  await page.getByTestId("present").click();
  const panel = page.getByTestId("training");
  // Before a run the panel has nothing to show: its buttons are in the presenter bar.
  await expect(panel).toBeHidden();
  await expect(page.getByTestId("presenter-bar").getByTestId("train-run")).toBeVisible();
  await expect(page.getByTestId("train-goal")).toBeHidden();
  await page.getByTestId("train-run").click();
  await expect(panel).toBeVisible();
  await expect(page.getByTestId("train-status")).toContainText(/After \d{2,} steps/, { timeout: 20_000 });
  await page.getByTestId("train-run").click();
  const curve = (await page.getByTestId("loss-curve").boundingBox())!;
  expect(curve.width).toBeGreaterThanOrEqual(500);
  // The curve keeps a column of its own: the stage ends left of it.
  const stage = (await page.locator(".stage").boundingBox())!;
  expect(stage.x + stage.width).toBeLessThanOrEqual(curve.x);
  await app.screenshot("training-presenter-1920x1080");
  // At 1024×768 the preset's explained cell joins the curve's column: the step keeps the
  // rest of the screen, its cells at least 24 px tall, and nothing scrolls.
  await page.setViewportSize({ width: 1024, height: 768 });
  const sheet = page.getByTestId("explain-panel");
  await expect(sheet).toHaveClass(/active/);
  await expect(async () => {
    const [s, explained] = [await box(page.locator(".stage")), await box(sheet)];
    expect(s.x + s.width, "the step ends left of the column").toBeLessThanOrEqual(explained.x);
    expect(await page.evaluate(() => document.scrollingElement!.scrollHeight - innerHeight)).toBeLessThanOrEqual(1);
    for (const canvas of await page.locator(".stage canvas").all()) {
      expect(await cellHeight(canvas), "a cell of the step").toBeGreaterThanOrEqual(23.9);
    }
  }).toPass({ timeout: 5000 });
  await app.screenshot("training-presenter-1024x768");
});

/**
 * The loss curve's bitmap against its box: drawn at the size it is shown (at the screen's pixel
 * ratio), its 12 px writing, or 16 px presenting, keeps that size instead of being shrunk.
 */
async function expectCurveDrawnAsShown(page: Page, what: string): Promise<void> {
  const curve = page.getByTestId("loss-curve");
  await expect(curve).toBeVisible();
  await expect(async () => {
    const [bitmap, shown, ratio] = await curve.evaluate((c: HTMLCanvasElement) => {
      const r = c.getBoundingClientRect();
      return [[c.width, c.height], [r.width, r.height], devicePixelRatio];
    });
    expect(Math.abs(bitmap[0] - shown[0] * ratio), `${what}: ${bitmap} drawn for ${shown}`).toBeLessThanOrEqual(1.5);
    expect(Math.abs(bitmap[1] - shown[1] * ratio), `${what}: ${bitmap} drawn for ${shown}`).toBeLessThanOrEqual(1.5);
  }).toPass({ timeout: 5000 });
}

test("the loss curve is drawn at the size it is shown: on a phone, in the window and presenting", async ({ app, page }) => {
  for (const [width, height] of [[360, 640], [1366, 768]]) {
    await page.setViewportSize({ width, height });
    await app.goto("./#v=1&stage=softmax&goal=previous");
    await app.openPlace("train");
    await page.getByTestId("train-step").click();
    await expect(page.getByTestId("train-status")).toContainText("After 1 step");
    await expectCurveDrawnAsShown(page, `${width}×${height}`);
  }
  // Presenting, the curve's column is narrower at 1024 px than the curve elsewhere, and wider at
  // 1920 px: neither shrinks nor blows up its writing.
  await page.getByTestId("place-share").click();
  await page.getByTestId("present").click();
  for (const [width, height] of [[1024, 768], [1920, 1080]]) {
    await page.setViewportSize({ width, height });
    await page.getByTestId("presenter-training").getByTestId("train-step").click();
    await expectCurveDrawnAsShown(page, `presenting at ${width}×${height}`);
    const curve = await box(page.getByTestId("loss-curve"));
    // The curve fills the column's height under the goal and the status.
    expect(curve.height, "a curve tall enough for its axis's name").toBeGreaterThanOrEqual(0.65 * curve.width);
    const column = await box(page.getByTestId("training"));
    expect(curve.y + curve.height, "the curve inside its column").toBeLessThanOrEqual(column.y + column.height);
    // The panel's menus are away: a line above the run says what it trains towards, shortly
    // in the narrow column at 1024 px.
    const goal = page.getByTestId("train-goal-line");
    await expect(goal).toBeVisible();
    await expect(goal).toHaveText(
      width < 1280
        ? "Goal: Pattern: the token before"
        : "Goal: Pattern: each token looks at the key one position before it (the first at itself)",
      { useInnerText: true },
    );
    expect((await box(goal)).y + (await box(goal)).height).toBeLessThanOrEqual((await box(page.getByTestId("train-status"))).y + 1);
  }
  // Not presenting, the menu and the sentence under it say it.
  await page.keyboard.press("Escape");
  await expect(page.getByTestId("train-goal-line")).toBeHidden();
  await expect(page.getByTestId("train-goal-says")).toBeVisible();
});

test("presenting on a phone, a run's curve takes a band at the foot and the step keeps the width", async ({ app, page }) => {
  await page.setViewportSize({ width: 375, height: 812 });
  await app.goto();
  await app.openPlace("inputs");
  await app.openPlace("train");
  await page.getByTestId("preset").selectOption("look-back");
  await app.openPlace("share");
  await page.getByTestId("present").click();
  await page.getByTestId("presenter-training").getByTestId("train-step").click();
  const curve = page.getByTestId("training");
  await expect(curve).toBeVisible();
  await expect(async () => {
    const [step, band] = [await box(page.locator(".stage-body")), await box(curve)];
    expect(step.width, "the step's width").toBeGreaterThanOrEqual(300);
    expect(band.width, "the curve's band").toBeGreaterThanOrEqual(340);
    expect(band.y + band.height).toBeLessThanOrEqual(812);
  }).toPass({ timeout: 5000 });
  // The band keeps its height for the curve: the goal is left to the menu.
  await expect(page.getByTestId("train-goal-line")).toBeHidden();
  expect((await box(page.getByTestId("loss-curve"))).height, "the curve's height in the band").toBeGreaterThanOrEqual(145);
  // The preset's explained cell folds to its title above the band, so the step keeps the room
  // between: A₁ and its explained cell are in sight, and the step keeps a margin each side.
  const sheet = page.getByTestId("explain-panel");
  await expect(sheet).toHaveClass(/folded/);
  const weights = page.getByTestId("canvas-weights-h0");
  await expect(async () => {
    const [a, folded, stage] = [await box(weights), await box(sheet), await box(page.locator(".stage"))];
    expect(a.y + a.height, "A₁ above the folded explanation").toBeLessThanOrEqual(folded.y + 1);
    expect(375 - (stage.x + stage.width), "the step's right margin").toBeCloseTo(stage.x, 0);
  }).toPass({ timeout: 5000 });
  // A tap unfolds it.
  await page.getByTestId("explain-fold").click();
  await expect(sheet).not.toHaveClass(/folded/);
});

/** The boxes of everything the presented step draws: its pictures, and the step as a whole. */
async function stagePictures(page: Page): Promise<Box[]> {
  const pictures = page.locator(".stage").locator("canvas, svg, .heatmap, .attention-lines");
  const boxes = [await box(page.locator(".stage"))];
  for (const picture of await pictures.all()) if (await picture.isVisible()) boxes.push(await box(picture));
  return boxes;
}

for (const viewport of [
  { width: 1024, height: 768 },
  { width: 1920, height: 1080 },
]) {
  test(`presenting at ${viewport.width}×${viewport.height}, the training buttons cover nothing of the step, before and during a run`, async ({ app, page }) => {
    await page.setViewportSize(viewport);
    for (const scenario of ["default", "look-back"]) {
      await app.goto();
      await app.openPlace("inputs");
      await app.openPlace("share");
      await app.openPlace("train");
      if (scenario === "look-back") await page.getByTestId("preset").selectOption("look-back");
      await page.getByTestId("present").click();
      const what = `${scenario} at ${viewport.width}×${viewport.height}`;
      const buttons = page.getByTestId("presenter-training");
      await expect(buttons).toBeVisible();
      await expect(page.locator(".stage canvas").first()).toHaveAttribute("data-drawn", "true");
      await page.waitForTimeout(300);
      const controls = await box(buttons);
      expectInside(controls, viewport, `${what}: the training buttons`);
      for (const picture of await stagePictures(page)) {
        expect(overlaps(controls, picture), `${what}: the buttons clear of the step`).toBe(false);
      }
      // They work from the keyboard: Tab reaches them from the arrows and Enter takes a step.
      await page.getByTestId("presenter-next").focus();
      await page.keyboard.press("Tab");
      await expect(page.getByTestId("train-step")).toBeFocused();
      await page.keyboard.press("Enter");
      await expect(page.getByTestId("train-status")).toContainText("After 1 step");
      // Space presses the focused button too, and leaves the stage where it is.
      const title = await page.getByTestId("stage-title").textContent();
      await page.keyboard.press("Space");
      await expect(page.getByTestId("train-status")).toContainText("After 2 steps");
      await expect(page.getByTestId("stage-title")).toHaveText(title!);
      const curve = page.getByTestId("training");
      await expect(curve).toBeVisible();
      await page.waitForTimeout(300);
      const during = [await box(buttons), await box(curve)];
      expectInside(during[0], viewport, `${what}: the training buttons during a run`);
      for (const picture of await stagePictures(page)) {
        for (const b of during) expect(overlaps(b, picture), `${what}: a run's buttons and curve clear of the step`).toBe(false);
      }
      await page.getByTestId("train-reset").click();
      await page.keyboard.press("Escape");
    }
  });
}

test.describe("on a phone", () => {
  test.use({ viewport: { width: 360, height: 640 }, hasTouch: true, isMobile: true });

  test("the training panel fits the screen and trains by tapping", async ({ app, page }) => {
    await app.goto();
    await app.openPlace("train");
    const panel = page.getByTestId("training");
    await panel.scrollIntoViewIfNeeded();
    // The long goal and optimizer names once pushed their menus past the panel's edge.
    const wider = await panel.evaluate((p) => {
      const right = p.getBoundingClientRect().right;
      // A heatmap's table for screen readers is clipped to nothing, whatever its width.
      return [...p.querySelectorAll("*")]
        .filter((e) => !e.closest(".visually-hidden"))
        .filter((e) => e.getBoundingClientRect().right > right + 1)
        .map((e) => e.tagName);
    });
    expect(wider).toEqual([]);
    expect((await panel.boundingBox())!.width).toBeLessThanOrEqual(360);
    // Every entry of the two menus reads whole in its menu, in the menu's own font; the
    // sentence under each menu says the chosen entry in full.
    for (const [menu, says, chosen] of [
      ["train-goal", "train-goal-says", "each token looks at the key one position before it"],
      ["train-optimizer", "train-optimizer-says", "W ← W − η·m̂/(√v̂ + ε)"],
    ]) {
      const cut = await page.getByTestId(menu).evaluate((select: HTMLSelectElement) => {
        const style = getComputedStyle(select);
        const context = document.createElement("canvas").getContext("2d")!;
        context.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
        // The text's room: the box less its padding and the arrow's.
        const room = select.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - 24;
        return [...select.options].filter((o) => context.measureText(o.text).width > room).map((o) => o.text);
      });
      expect(cut, `${menu}: entries cut by the menu's width`).toEqual([]);
      await expect(page.getByTestId(says)).toContainText(chosen);
    }
    await page.getByTestId("train-step").tap();
    await expect(page.getByTestId("train-status")).toContainText("After 1 step");
  });

  test("a painted target fits the screen and paints by tapping", async ({ app, page }) => {
    await app.goto();
    await app.openPlace("train");
    await page.getByTestId("training").scrollIntoViewIfNeeded();
    await page.getByTestId("train-goal").selectOption("per_head");
    await page.getByTestId("train-goal-h0").selectOption("painted");
    await page.getByTestId("paint-h0-0-2").tap();
    await expect(page.getByTestId("paint-h0-0-2")).toHaveText("0.50");
    const grid = (await page.getByTestId("train-head-0").boundingBox())!;
    expect(grid.x + grid.width).toBeLessThanOrEqual(360);
    await page.getByTestId("paint-h0-0-2").scrollIntoViewIfNeeded();
    await app.screenshot("training-paint-phone");
  });
});

test("each head's target names source words in cross-attention, and presenting names each head's target or why none can be trained", async ({ app, page }) => {
  await page.setViewportSize({ width: 1920, height: 1080 });
  await app.goto("./#v=1&stage=softmax&goal=previous,first&src=the%20cat%20sat%20down%20today");
  await app.openPlace("train");
  const head = page.getByTestId("train-head-0");
  await expect(head.locator("label")).toContainText("Head 1: query i looks at");
  await expect(page.getByTestId("train-goal-h0").locator("option")).toContainText([
    "source word i (past the source's end, its last)",
    "source word i−1 (query 1 at the first; past the source's end, its last)",
  ]);
  await expect(head).not.toContainText("at itself");
  // Presenting, the line above the run names each head's target.
  await page.goto("about:blank");
  await app.goto("./#v=1&stage=softmax&goal=previous,first");
  await app.openPlace("train");
  await page.getByTestId("train-step").click();
  await app.openPlace("share");
  await page.getByTestId("present").click();
  await expect(page.getByTestId("train-goal-line")).toHaveText(
    "Goal: Pattern, a target for each head — head 1, the key one position before (the first at itself); head 2, the first key",
    { useInnerText: true },
  );
  await page.keyboard.press("Escape");
  // A goal the mask makes untrainable: presenting says why in the curve's column, once, beside
  // the step.
  await page.goto("about:blank");
  await app.goto("./#v=1&stage=softmax&goal=next");
  await app.openPlace("inputs");
  await page.getByTestId("causal").check();
  await app.openPlace("share");
  await page.getByTestId("present").click();
  const why = page.getByTestId("train-goal-error");
  await expect(why).toBeVisible();
  await expect(why).toContainText("puts weight on a key the causal mask hides");
  await expect(page.getByTestId("train-error")).toBeHidden();
  const [column, step] = [await box(page.getByTestId("training")), await box(page.locator(".stage"))];
  expect(step.x + step.width, "the step left of the column").toBeLessThanOrEqual(column.x + 1);
});

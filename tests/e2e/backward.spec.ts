// The Backward part of the stepper: every backward stage is reached from the stepper, the link
// records it, and its heatmaps and a cell explanation agree with the CLI's `grad`, for a pattern
// goal and for a task goal.

import {
  test,
  expect,
  runCli,
  cellBox,
  expectMatrixClose,
  BACKWARD_STAGES as BACKWARD,
  type Matrix,
  type AppPage,
} from "./fixtures";
import type { Page } from "@playwright/test";

const SENTENCE = "the cat sat down";

interface Grad {
  loss: number;
  grad: { w_q: Matrix; w_k: Matrix; w_v: Matrix; w_o: Matrix; embeddings: Matrix };
  heads: { d_weights: Matrix; d_scores: Matrix }[];
}

function grad(extra: string[]): Grad {
  return JSON.parse(runCli(["grad", "--sentence", SENTENCE, "--causal", ...extra])) as Grad;
}

/** A number as the heatmaps write a gradient: three decimals, a real minus, no −0. */
function shown(v: number): string {
  const text = v.toFixed(3);
  return /^-0\.0+$/.test(text) ? text.slice(1) : text.replace("-", "−");
}

async function open(page: Page, key: (typeof BACKWARD)[number]): Promise<void> {
  await page.getByTestId(`stage-${key}`).click();
  await expect(page.getByTestId(`stage-${key}`)).toHaveAttribute("aria-current", "step");
}

async function expectTable(app: AppPage, name: string, expected: Matrix): Promise<void> {
  await expect(app.table(name)).toHaveCount(1);
  expectMatrixClose(await app.tableValues(name), expected, 1e-9, name);
}

/** Clicks cell (row, col) of heatmap `name` and returns the explanation's expansion. */
async function explainCell(page: Page, name: string, row: number, col: number): Promise<string> {
  const canvas = page.getByTestId(`canvas-${name}`);
  await canvas.scrollIntoViewIfNeeded();
  const cell = await cellBox(canvas, row, col);
  await page.mouse.click(cell.x + cell.width / 2, cell.y + cell.height / 2);
  const expansion = page.getByTestId("explain-expansion");
  await expect(expansion).toBeVisible();
  return expansion.innerText();
}

test("the pattern goal's backward stages match the CLI's grad and say what the loss does not reach", async ({ app, page }) => {
  const cli = grad(["--target", "previous"]);
  await app.goto();
  await app.openPlace("train");
  await app.openPlace("inputs");
  await app.openPlace("share");
  await page.getByTestId("sentence-input").fill(SENTENCE);
  await page.getByTestId("causal").check();
  await app.openStage("output");
  await page.getByTestId("show-tables").check();

  // Next from the last forward stage opens the first backward one, and the link records it.
  await page.getByTestId("next").click();
  await expect(page.getByTestId("stage-title")).toHaveText("Pattern loss and ∂L/∂Aₕ");
  await expect(page.getByTestId("progress")).toContainText("1 of 8");
  await expect.poll(() => page.evaluate(() => location.hash)).toContain("stage=back-loss");
  await expect(page.getByTestId("backward-goal")).toContainText("looks at the key one position before it");
  await expect(page.getByTestId("backward-goal")).toContainText("Goal (another can be chosen under “Train the weights”)");
  await expect(page.getByTestId("stage-note")).toContainText(`L ≈ ${shown(cli.loss)}`);
  for (const h of [0, 1]) await expectTable(app, `d_weights-h${h}`, cli.heads[h].d_weights);

  // The pattern loss reaches neither W_o nor the values: the stages say so, with no heatmap.
  for (const key of ["back-output", "back-weighted-sum"] as const) {
    await open(page, key);
    await expect(page.getByTestId("unreached")).toContainText("no gradient reaches Y, W_o, C or the values");
    await expect(page.locator(".stage-body canvas")).toHaveCount(0);
    // No head's pictures, so nothing to compare and no head to pick.
    await expect(page.getByTestId("compare-heads")).toHaveCount(0);
    await expect(page.getByTestId("stage-view").locator(".head-picker")).toHaveCount(0);
  }
  await open(page, "back-softmax");
  await expect(page.getByTestId("compare-heads")).toBeVisible();

  await open(page, "back-softmax");
  await expect(page.getByTestId("formula")).toContainText("heads");
  await expect(page.getByTestId("canvas-d_masked-h0")).toBeVisible();

  await open(page, "back-scale");
  await expect(page.getByTestId("stage-title")).toHaveText("∂L/∂Sₕ through the mask and ÷√d_k");
  for (const h of [0, 1]) await expectTable(app, `d_scores-h${h}`, cli.heads[h].d_scores);
  const scoreCell = await explainCell(page, "d_scores-h0", 2, 1);
  expect(scoreCell).toContain("/ √2");
  expect(scoreCell.endsWith(`= ${shown(cli.heads[0].d_scores[2][1] as number)}`), scoreCell).toBe(true);
  await expect(page.getByTestId("explain-formula")).toHaveText("∂L/∂S₁[i, j] = ∂L/∂M₁[i, j] / √d_k");

  await open(page, "back-scores");
  await expect(page.getByTestId("canvas-d_q-h1")).toBeVisible();
  await expect(page.getByTestId("canvas-d_k-h1")).toBeVisible();

  await open(page, "back-projection");
  await expectTable(app, "d_w_q", cli.grad.w_q);
  await expectTable(app, "d_w_k", cli.grad.w_k);
  await expect(app.table("d_w_v")).toHaveCount(0);
  await expect(page.getByTestId("unreached")).toContainText("∂L/∂W_v is exactly 0");
  expect(cli.grad.w_v.flat().every((v) => v === 0)).toBe(true);
  const weightCell = await explainCell(page, "d_w_q", 1, 3);
  expect(weightCell.endsWith(`= ${shown(cli.grad.w_q[1][3] as number)}`), weightCell).toBe(true);
  // Four tokens: four terms in[i, r] × ∂L/∂Q[i, c].
  expect(weightCell.split(" × ").length).toBe(5);
  await expect(page.getByTestId("explain-note")).toContainText("against this gradient");

  await open(page, "back-input");
  await expectTable(app, "d_embeddings", cli.grad.embeddings);
  await expect(page.getByTestId("next")).toBeDisabled();

  // The keyboard walks back, and so does the history.
  await page.locator("body").click({ position: { x: 2, y: 2 } });
  await page.keyboard.press("ArrowLeft");
  await expect(page.getByTestId("stage-back-projection")).toHaveAttribute("aria-current", "step");
  await page.goBack();
  await expect(page.getByTestId("stage-back-input")).toHaveAttribute("aria-current", "step");
  await app.screenshot("backward-input");
});

test("a task goal's backward stages reach W_o and the values and match the CLI's grad", async ({ app, page }) => {
  const cli = grad(["--task", "copy_previous"]);
  await app.goto();
  await app.openPlace("inputs");
  await app.openPlace("share");
  await app.openPlace("train");
  await page.getByTestId("sentence-input").fill(SENTENCE);
  await page.getByTestId("causal").check();
  await page.getByTestId("training").scrollIntoViewIfNeeded();
  await page.getByTestId("train-goal").selectOption("copy_previous");
  await page.getByTestId("show-tables").check();
  await page.getByTestId("stage-back-loss").click();
  await expect(page.getByTestId("stage-title")).toHaveText("Task loss and ∂L/∂Y");
  await expect(page.getByTestId("stage-note")).toContainText(`L ≈ ${shown(cli.loss)}`);

  await open(page, "back-output");
  await expect(page.getByTestId("unreached")).toHaveCount(0);
  await expectTable(app, "d_w_o", cli.grad.w_o);

  await open(page, "back-weighted-sum");
  for (const h of [0, 1]) await expectTable(app, `d_weights-h${h}`, cli.heads[h].d_weights);
  const weightCell = await explainCell(page, "d_weights-h1", 3, 1);
  expect(weightCell.endsWith(`= ${shown(cli.heads[1].d_weights[3][1] as number)}`), weightCell).toBe(true);

  await open(page, "back-softmax");
  await expect(page.getByTestId("formula")).toContainText("rowsum");

  await open(page, "back-scale");
  for (const h of [0, 1]) await expectTable(app, `d_scores-h${h}`, cli.heads[h].d_scores);

  await open(page, "back-projection");
  await expectTable(app, "d_w_q", cli.grad.w_q);
  await expectTable(app, "d_w_k", cli.grad.w_k);
  await expectTable(app, "d_w_v", cli.grad.w_v);
  const vCell = await explainCell(page, "d_w_v", 0, 2);
  expect(vCell.endsWith(`= ${shown(cli.grad.w_v[0][2] as number)}`), vCell).toBe(true);

  await open(page, "back-input");
  // E's gradient counts the task target's own path, as the CLI's does.
  await expectTable(app, "d_embeddings", cli.grad.embeddings);
  await expect(page.getByTestId("stage-note")).toContainText("built from E");
  await app.screenshot("backward-task-input");
});

test("the backward stages follow an edit, and a goal the mask forbids is explained, not drawn", async ({ app, page }) => {
  await app.goto();
  await app.openPlace("inputs");
  await app.openPlace("share");
  await app.openPlace("train");
  await page.getByTestId("show-tables").check();
  await page.getByTestId("stage-back-projection").click();
  const before = await app.tableValues("d_w_q");
  // The goal changes the gradient: it is recomputed from the same trace.
  await page.getByTestId("training").scrollIntoViewIfNeeded();
  await page.getByTestId("train-goal").selectOption("next");
  await expect.poll(() => app.tableValues("d_w_q")).not.toEqual(before);
  // Switching the mask on under `next` leaves a goal the settings refuse: the stage says why
  // instead of drawing.
  await page.getByTestId("causal").check();
  await expect(page.getByTestId("backward-error")).toContainText("next");
  await expect(page.locator(".stage-body canvas")).toHaveCount(0);
  // With a goal the mask allows, the quiz asks on the backward stage and hides its result
  // until answered.
  await page.getByTestId("train-goal").selectOption("first");
  await page.getByTestId("quiz-me").click();
  await expect(page.getByTestId("quiz-prompt")).toContainText("learned by plain gradient descent");
  await expect(page.locator(".stage [data-testid^='hidden-d_w_']").first()).toBeVisible();
  await expect(page.getByTestId("canvas-d_w_q")).toHaveCount(0);
});

test("on a phone the stepper says a backward stage is one, as the page's words do", async ({ app, page }) => {
  await page.setViewportSize({ width: 360, height: 640 });
  const shown = () =>
    page.getByTestId("progress").evaluate((el) => {
      const before = getComputedStyle(el, "::before").content;
      const word = before.startsWith('"') ? before.split('"')[1] : "";
      return (word + (el as HTMLElement).innerText.split("\n").pop()).trim();
    });
  await app.goto("./#v=1&goal=previous&stage=back-softmax");
  await expect.poll(shown).toBe("Back 4 of 8");
  // Screen readers read the whole word once.
  await expect(page.getByTestId("progress")).toHaveText("Backward 4 of 8");
  await app.goto("./#v=1&goal=previous&stage=softmax");
  await expect.poll(shown).toBe("7 of 10");
});

test("presenting, a stage the loss does not reach is its sentence, large and inside the screen", async ({ app, page }) => {
  for (const [width, height, least] of [
    [375, 812, 17],
    [1024, 768, 24],
    [1920, 1080, 30],
  ]) {
    await page.setViewportSize({ width, height });
    await app.goto("./?present=1#v=1&stage=back-output&goal=previous");
    const sentence = page.getByTestId("unreached").first();
    await expect(sentence).toContainText("leave presenter mode");
    const [text, stage] = [(await sentence.boundingBox())!, (await page.locator(".stage").boundingBox())!];
    expect(text.x + text.width, `${width}×${height}: the sentence ends inside the step`).toBeLessThanOrEqual(stage.x + stage.width + 0.5);
    expect(text.y + text.height, `${width}×${height}: the sentence ends on the screen`).toBeLessThanOrEqual(height);
    const size = await sentence.evaluate((el) => parseFloat(getComputedStyle(el).fontSize));
    expect(size, `${width}×${height}: the sentence's type`).toBeGreaterThanOrEqual(least);
    // The goal above it is set in the step's type too, at least the page's.
    const goal = await page.getByTestId("backward-goal").evaluate((el) => parseFloat(getComputedStyle(el).fontSize));
    expect(goal, `${width}×${height}: the goal's type`).toBeGreaterThanOrEqual(width >= 1920 ? 20 : 14);
  }
});

test("presenter mode and a compact embed step into the backward stages", async ({ app, page }) => {
  await app.goto("./?present=1#v=1&stage=output");
  const bar = page.getByTestId("presenter-bar");
  await expect(bar).toHaveAttribute("data-step", /^output-/);
  await page.keyboard.press("ArrowRight");
  await expect(bar).toHaveAttribute("data-step", /^back-loss-/);
  await expect(page.getByTestId("stage-title")).toHaveText("Pattern loss and ∂L/∂Aₕ");
  await expect(page.getByTestId("canvas-d_weights-h0")).toBeVisible();
  // The training panel is hidden while presenting: the goal is named in one line, which keeps
  // the step its height.
  const goal = page.getByTestId("backward-goal");
  await expect(goal).toHaveText("Goal: Pattern: each token looks at the key one position before it (the first at itself).");
  // Each head's ∂L/∂Aₕ has a step of its own.
  await expect(bar).toHaveAttribute("data-step", "back-loss-0");
  await expect(page.getByTestId("presenter-head")).toHaveText("Head 1 of 2");
  await page.keyboard.press("ArrowRight");
  await expect(bar).toHaveAttribute("data-step", "back-loss-1");
  await expect(page.getByTestId("presenter-head")).toHaveText("Head 2 of 2");
  await expect(page.getByTestId("canvas-d_weights-h1")).toBeVisible();
  await expect(page.getByTestId("canvas-d_weights-h0")).toHaveCount(0);
  // The next stage, after every head's step of this one.
  for (let i = 0; i < 4; i++) {
    const step = (await bar.getAttribute("data-step")) ?? "";
    if (step.startsWith("back-output-")) break;
    await page.keyboard.press("ArrowRight");
    await expect(bar).not.toHaveAttribute("data-step", step);
  }
  await expect(bar).toHaveAttribute("data-step", /^back-output-/);
  await expect(page.getByTestId("stage-title")).toContainText("not reached");
  await expect(page.getByTestId("unreached").first()).toContainText("leave presenter mode (the Leave button or Esc) and choose a task as the goal");
  // A note, in smaller type than the step's title, though no picture takes the room.
  const fontSize = (testid: string) =>
    page.getByTestId(testid).first().evaluate((el) => parseFloat(getComputedStyle(el).fontSize));
  expect(await fontSize("unreached")).toBeLessThan(await fontSize("stage-title"));
  await page.getByTestId("leave-presenter").click();
  expect(await fontSize("unreached")).toBeLessThanOrEqual(17);
  await expect(goal).toContainText("Goal (another can be chosen under “Train the weights”):");
  await expect(page.getByTestId("unreached").first()).toContainText("Choose a task as the goal under “Train the weights”");

  // A compact embed keeps a backward stage to its results.
  await app.goto("./?embed=1&controls=0#v=1&stage=back-input");
  await expect(page.getByTestId("stage-title")).toHaveText("∂L/∂X and ∂L/∂E");
  await expect(page.getByTestId("canvas-d_embeddings")).toBeVisible();
  await expect(page.getByTestId("canvas-d_q")).toHaveCount(0);
  await page.getByTestId("prev").click();
  await expect(page.getByTestId("canvas-d_w_q")).toBeVisible();
  await expect(page.getByTestId("canvas-d_q")).toHaveCount(0);
});

test("a shared state whose goal the mask refuses opens as it was shared, saying why", async ({ app, page }) => {
  // In the app: `next` chosen, then the mask switched on under it.
  await app.goto();
  await app.openPlace("inputs");
  await app.openPlace("train");
  await page.getByTestId("training").scrollIntoViewIfNeeded();
  await page.getByTestId("train-goal").selectOption("next");
  await page.getByTestId("causal").check();
  await page.getByTestId("stage-back-softmax").click();
  await expect(page.getByTestId("backward-error")).toContainText("in every head, row 1 (“I”) puts weight on key 2 (“am”)");
  const hash = await page.evaluate(() => location.hash);
  expect(hash).toContain("goal=next");
  // Its embed opens on the same goal, with no notice: the stage says why there is no gradient.
  await app.goto(`./?embed=1&controls=0${hash}`);
  await expect(page.getByTestId("backward-error")).toContainText("This embed's goal does not fit its settings");
  await expect(page.getByTestId("backward-error")).toContainText("in every head, row 1 (“I”) puts weight on key 2 (“am”)");
  await expect(page.getByTestId("notice")).toHaveCount(0);
  // A scenario file of that state imports as it was: the goal stays, and the stage says why.
  await app.goto("./#v=1&stage=back-softmax");
  await app.openPlace("inputs");
  await app.openPlace("share");
  await app.openPlace("train");
  await app.openExportMenu();
  await page.getByTestId("import-file").setInputFiles({
    name: "next-under-the-mask.json",
    mimeType: "application/json",
    buffer: Buffer.from(
      JSON.stringify({ version: 3, sentence: "I am hungry", causal: true, training: { targets: ["next"] } }),
    ),
  });
  await expect(page.getByTestId("causal")).toBeChecked();
  await expect(page.getByTestId("train-goal")).toHaveValue("next");
  await expect(page.getByTestId("backward-error")).toContainText("in every head, row 1 (“I”) puts weight on key 2 (“am”)");
});

test("the backward stages' goal line names each head's own target, in the app, presenter mode and an embed", async ({ app, page }) => {
  const each = "Pattern, a target for each head — head 1, the key one position before (the first at itself); head 2, the first key";
  for (const query of ["", "?present=1", "?embed=1&controls=0"]) {
    await app.goto(`./${query}#v=1&goal=previous,first&stage=back-loss`);
    await expect(page.getByTestId("stage-title")).toHaveText("Pattern loss and ∂L/∂Aₕ");
    await expect(page.getByTestId("backward-goal"), query).toContainText(each);
  }
});

test("an embed sends its backward stages' reader to the full view for another goal, since it shows no training panel", async ({ app, page }) => {
  for (const query of ["?embed=1", "?embed=1&controls=0"]) {
    await app.goto(`./${query}#v=1&stage=back-loss`);
    await expect(page.getByTestId("stage-title")).toHaveText("Pattern loss and ∂L/∂Aₕ");
    await expect(page.getByTestId("training")).toHaveCount(0);
    const goal = page.getByTestId("backward-goal");
    // The link sets no goal, so the line claims none.
    await expect(goal, query).not.toContainText("link");
    await expect(goal, query).toContainText("full view");
    await expect(goal, query).not.toContainText("Goal (chosen in");
    await expect(goal, query).toContainText("another can be chosen in the full view");
    // A compact embed shows one head's ∂L/∂Aₕ at a time, and the others a click away; the
    // loss has no comparison of heads.
    if (query.includes("controls=0")) {
      await page.getByTestId("head-1").click();
      await expect(page.getByTestId("canvas-d_weights-h1")).toBeVisible();
      await expect(page.getByTestId("canvas-d_weights-h0")).toHaveCount(0);
      // The note names the numbers of the head on show.
      await expect(page.getByTestId("stage-note")).toContainText("Head 2's largest in size is ∂L/∂A₂[");
    }
    await expect(page.getByTestId("compare-heads")).toHaveCount(0);
    // A stage the pattern loss does not reach says where a task can be chosen.
    await page.getByTestId("next").click();
    await expect(page.getByTestId("stage-title")).toContainText("not reached");
    const unreached = page.getByTestId("unreached");
    await expect(unreached, query).toContainText("open the full view and choose a task as the goal");
    await expect(unreached, query).not.toContainText("Choose a task as the goal in");
  }
});

test("each head's ∂L/∂Vₕ line names that head's ∂L/∂C", async ({ app, page }) => {
  await app.goto("./#v=1&stage=back-weighted-sum&goal=copy_first");
  const ops = page.locator(".stage .op");
  await expect(ops.filter({ hasText: "∂L/∂C" })).toHaveText(["· ∂L/∂C₁ =", "· ∂L/∂C₂ ="]);
});

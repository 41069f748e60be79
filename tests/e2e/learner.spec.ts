// A learner's first minutes: an edit shows where it matters, a preset opens on the cell its
// caption talks about, every setting and matrix symbol has one line of help, and the first
// screen says where to start.
import type { Page } from "@playwright/test";
import { test, expect, STAGES, type AppPage, type StageKey } from "./fixtures";

/** The stages whose rail button is marked as changed by the last edit, in order. */
async function markedStages(app: AppPage): Promise<StageKey[]> {
  const marked: StageKey[] = [];
  for (const key of STAGES) {
    if ((await app.stage(key).getAttribute("data-changed")) === "true") marked.push(key);
  }
  return marked;
}

/** Types `value` into cell (row, col) of the editor of `matrix` (`w_q`, `x`, …). */
async function editCell(page: Page, matrix: string, row: number, col: number, value: string): Promise<void> {
  const inputs = page.getByTestId("place-inputs");
  if ((await inputs.getAttribute("aria-expanded")) !== "true") await inputs.click();
  await page.getByTestId(`editor-tab-${matrix}`).click();
  await page.getByTestId(`cell-${matrix}-${row}-${col}`).fill(value);
}

test.describe("an edit always shows its effect", () => {
  test("a link opens with no stage marked and no edit note: its sentence and weights are no edit", async ({ app, page }) => {
    await app.goto("./#v=1&s=the%20cat%20sat%20on%20the%20mat&stage=softmax");
    await expect(page.getByTestId("canvas-weights-h0")).toHaveAttribute("data-drawn", "true");
    await expect(page.getByTestId("edit-note")).toHaveCount(0);
    expect(await markedStages(app)).toEqual([]);
  });

  test("editing W_q on stage 1 points to stage 2 and marks stages 2 to 10", async ({ app, page }) => {
    await app.goto();
    await app.openPlace("inputs");
    const note = page.getByTestId("edit-note");
    await expect(note).toHaveCount(0);
    expect(await markedStages(app)).toEqual([]);

    await editCell(page, "w_q", 0, 0, "1.5");
    await expect(note).toHaveText(/W_q is first used in stage 2 \(Projections Q, K, V\)\./);
    await expect.poll(() => markedStages(app)).toEqual(STAGES.slice(1));
    // The mark is part of the button's name for screen readers.
    await expect(app.stage("scores")).toHaveAccessibleName(/changed by your edit/);
    await expect(app.stage("input")).not.toHaveAccessibleName(/changed by your edit/);

    // The note's button goes there; the stage on screen is no longer marked, nor the note shown.
    await page.getByTestId("edit-note-go").click();
    await expect(app.stage("projection")).toHaveAttribute("aria-current", "step");
    await expect(note).toHaveCount(0);
    await expect.poll(() => markedStages(app)).toEqual(STAGES.slice(2));

    // Visiting clears a mark; another edit replaces them all.
    await app.openStage("softmax");
    await expect.poll(() => markedStages(app)).not.toContain("softmax");
    await app.openStage("input");
    const temperature = page.getByTestId("temperature");
    await temperature.fill("2");
    await temperature.dispatchEvent("change");
    await expect(note).toHaveText(/The temperature first matters in stage 7 \(Softmax\)\./);
    await expect.poll(() => markedStages(app)).toEqual(["softmax", "weighted-sum", "concat", "output"]);
  });

  test("editing W_v marks the projections, the split and the stages after the softmax only", async ({ app, page }) => {
    await app.goto();
    await editCell(page, "w_v", 1, 1, "2");
    const note = page.getByTestId("edit-note");
    await expect(note).toHaveText(/W_v is first used in stage 2/);
    await expect
      .poll(() => markedStages(app))
      .toEqual(["projection", "split", "weighted-sum", "concat", "output"]);

    // The scores do not read V: there the note points on to the weighted sum.
    await app.openStage("scores");
    await expect(note).toHaveText(/W_v does not change this stage; it matters again in stage 8/);
    await page.getByTestId("edit-note-go").click();
    await expect(app.stage("weighted-sum")).toHaveAttribute("aria-current", "step");
    await expect(note).toHaveCount(0);
  });

  test("editing W_o points to the last stage, and an edit in use on screen shows no note", async ({ app, page }) => {
    await app.goto();
    await editCell(page, "w_o", 0, 1, "0.5");
    await expect(page.getByTestId("edit-note")).toHaveText(/W_o is first used in stage 10 \(Output projection\)\./);
    await expect.poll(() => markedStages(app)).toEqual(["output"]);

    await app.openStage("projection");
    await editCell(page, "w_k", 0, 1, "0.5");
    await expect(page.getByTestId("edit-note")).toHaveCount(0);
    await expect.poll(() => markedStages(app)).toEqual(STAGES.slice(2));
  });
});

/** Each preset's opening cell: head (from 0), query row and key column, as the caption names them. */
const OPENINGS = [
  { key: "first-look", head: 0, row: 2, col: 0, title: "A₁[hungry, I]" },
  { key: "pronoun", head: 0, row: 4, col: 2, title: "A₁[it, sushi]" },
  { key: "adjective", head: 0, row: 6, col: 5, title: "A₁[dog, lazy]" },
  { key: "previous-token", head: 0, row: 2, col: 1, title: "A₁[looks, word]" },
  { key: "sink", head: 0, row: 3, col: 0, title: "A₁[time, once]" },
  { key: "same-word", head: 0, row: 4, col: 1, title: "A₁[rose (5), rose (2)]" },
];

test.describe("a preset opens on the cell its caption talks about", () => {
  for (const o of OPENINGS) {
    test(`${o.key} opens on ${o.title}`, async ({ app, page }) => {
      await app.goto();
      await app.openPlace("inputs");
      await page.getByTestId("preset").selectOption(o.key);

      await expect(app.stage("softmax")).toHaveAttribute("aria-current", "step");
      const canvas = page.getByTestId(`canvas-weights-h${o.head}`);
      await expect(canvas).toBeVisible();
      await expect(canvas).toHaveAttribute("data-highlight", new RegExp(`^cell:${o.row},${o.col};`));
      await expect(page.getByTestId("explain-panel")).toHaveClass(/\bactive\b/);
      await expect(page.getByTestId("explain-title")).toHaveText(`Attention weight ${o.title}`);
      // Loading a preset replaces everything at once: no edit is marked.
      expect(await markedStages(app)).toEqual([]);

      // Two lines of caption, then "more" shows the rest and "less" folds it again.
      const text = page.getByTestId("preset-caption-text");
      const more = page.getByTestId("caption-more");
      const lines = () =>
        text.evaluate((el) => {
          const style = getComputedStyle(el);
          return { shown: el.clientHeight / parseFloat(style.lineHeight), hidden: el.scrollHeight > el.clientHeight + 1 };
        });
      await expect(more).toHaveText("more");
      await expect(more).toHaveAttribute("aria-expanded", "false");
      const folded = await lines();
      expect(folded.shown).toBeLessThanOrEqual(2.05);
      expect(folded.hidden).toBe(true);
      await more.click();
      await expect(more).toHaveText("less");
      await expect(more).toHaveAttribute("aria-expanded", "true");
      const open = await lines();
      expect(open.shown).toBeGreaterThan(2.5);
      expect(open.hidden).toBe(false);
      await more.click();
      await expect(more).toHaveAttribute("aria-expanded", "false");
      expect((await lines()).shown).toBeLessThanOrEqual(2.05);
    });
  }
});

test.describe("one line of help on hover and focus", () => {
  test("a setting's help shows on hover and on focus, and Escape hides it", async ({ app, page }) => {
    await app.goto();
    await app.openPlace("inputs");
    for (const [key, words] of [
      ["d-model", "how many numbers describe each token"],
      ["heads", "attention patterns run side by side"],
      ["d-k", "d_k = d_model ÷ heads"],
      ["temperature", "divided by T"],
    ]) {
      const trigger = page.getByTestId(`help-${key}`);
      const tip = page.getByTestId(`tip-${key}`);
      await expect(tip).toHaveAttribute("role", "tooltip");
      await expect(trigger).toHaveAttribute("aria-describedby", `help-${key}`);
      await expect(trigger).toHaveAccessibleDescription(new RegExp(words.replace(/[()]/g, "\\$&")));
      await expect(tip).toBeHidden();
      await trigger.hover();
      await expect(tip).toBeVisible();
      await expect(tip).toContainText(words);
      await page.mouse.move(0, 0);
      await expect(tip).toBeHidden();
      await trigger.focus();
      await expect(tip).toBeVisible();
      await page.keyboard.press("Escape");
      await expect(tip).toBeHidden();
      await trigger.blur();
    }
  });

  test("matrix symbols explain themselves on heatmap titles and editor tabs", async ({ app, page }) => {
    await app.goto();
    await app.openPlace("inputs");
    const symbols: [StageKey, string, string][] = [
      ["input", "embeddings", "E: the token embeddings"],
      ["input", "x", "X = E + P"],
      ["projection", "q", "Q = X·W_q"],
      ["projection", "k", "K = X·W_k"],
      ["projection", "v", "V = X·W_v"],
      ["scores", "scores-h0", "S₁ = Q₁·K₁ᵀ"],
      ["softmax", "weights-h0", "A₁: attention weights"],
      ["weighted-sum", "context-h0", "C₁ = A₁·V₁"],
      ["concat", "concat", "C: every head's result"],
    ];
    for (const [stage, panel, words] of symbols) {
      await app.openStage(stage);
      const trigger = page.getByTestId(`help-panel-${panel}`);
      const tip = page.getByTestId(`tip-panel-${panel}`);
      await trigger.hover();
      await expect(tip).toBeVisible();
      await expect(tip).toContainText(words);
      await page.mouse.move(0, 0);
      await expect(tip).toBeHidden();
    }
    // P appears with positional encoding on.
    await app.openStage("input");
    await page.getByTestId("positional").check();
    await page.getByTestId("help-panel-positional").focus();
    await expect(page.getByTestId("tip-panel-positional")).toBeVisible();
    await expect(page.getByTestId("tip-panel-positional")).toContainText("P: the positional encoding");

    const tab = page.getByTestId("editor-tab-w_v");
    const tabTip = page.getByTestId("tip-tab-w_v");
    await expect(tab).toHaveAccessibleDescription(/V = X·W_v/);
    await expect(tabTip).toBeHidden();
    await tab.hover();
    await expect(tabTip).toBeVisible();
    await page.mouse.move(0, 0);
    await expect(tabTip).toBeHidden();
    await page.getByTestId("editor-tab-x").focus();
    await expect(page.getByTestId("tip-tab-x")).toBeVisible();
    await expect(page.getByTestId("tip-tab-x")).toContainText("E: the token embeddings");
  });
});

test.describe("the first screen says where to start", () => {
  test("on the input stage, and not after it", async ({ app, page }) => {
    await app.goto();
    await app.openPlace("inputs");
    const start = page.getByTestId("start-here");
    await expect(start).toBeVisible();
    await expect(start).toContainText("Next →");
    // What it names is there.
    await expect(page.getByTestId("sentence-input")).toBeVisible();
    await expect(page.getByTestId("next")).toHaveText("Next →");
    // Below Next: when it goes, Next stays where it was for the second press.
    const next = (await page.getByTestId("next").boundingBox())!;
    expect((await start.boundingBox())!.y).toBeGreaterThan(next.y);
    await page.getByTestId("next").click();
    await expect(start).toHaveCount(0);
    expect(Math.abs((await page.getByTestId("next").boundingBox())!.y - next.y)).toBeLessThanOrEqual(1);
  });

  test("not in an embed nor while presenting", async ({ app, page }) => {
    await app.goto("./?embed=1&controls=0");
    await expect(page.getByTestId("stage-view")).toBeVisible();
    await expect(page.getByTestId("start-here")).toHaveCount(0);
    await app.goto("./?present=1");
    await expect(page.getByTestId("stage-view")).toBeVisible();
    await expect(page.getByTestId("start-here")).toHaveCount(0);
  });
});

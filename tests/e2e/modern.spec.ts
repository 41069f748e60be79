// Today's attention in the browser: rotary positions, shared key/value heads, the sliding
// window and the Llama-style block, at the places of the layout rule, against the CLI.
import type { Page } from "@playwright/test";
import path from "node:path";
import { test, expect, box, cellHeight, clickCell, expectMatrixClose, runCli, copiedEmbed, narrowHost, presentOnScreen, type AppPage, type Matrix } from "./fixtures";

/** A link with rotary positions, one key/value head for two query heads and a window of 3. */
const MODERN = "#v=1&d=8&h=2&causal=1&rope=10000&kv=1&win=3&s=the%20cat%20sat%20on%20the%20mat";

interface Head {
  kv_head: number;
  q: Matrix;
  q_rope: Matrix;
  k_rope: Matrix;
  weights: Matrix;
}

function cliHeads(args: string[]): Head[] {
  return JSON.parse(runCli(["trace", "--format", "json", ...args])).heads;
}

async function openStage(page: Page, key: string): Promise<void> {
  await page.getByTestId(`stage-${key}`).click();
  await expect(page.getByTestId(`stage-${key}`)).toHaveAttribute("aria-current", "step");
}

test("the Llama-style preset turns queries and keys as the CLI does, and a turned cell writes its rotation", async ({ app, page }) => {
  const heads = cliHeads(["--scenario", path.resolve(__dirname, "../../assets/presets/llama.json")]);
  await app.goto();
  await app.openPlace("inputs");
  await page.getByTestId("preset").selectOption("llama");
  await expect(page.getByTestId("rail-forward").locator("li")).toHaveCount(18);
  await app.openPlace("share");
  await page.getByTestId("show-tables").check();
  await page.keyboard.press("Escape");
  await openStage(page, "rotary");
  await expect(page.getByTestId("stage-title")).toHaveText("Rotary positions Q̃ₕ, K̃ₕ");
  expectMatrixClose(await app.tableValues("qr-h0"), heads[0].q_rope, 1e-9, "Q̃₁");
  expectMatrixClose(await app.tableValues("kr-h1"), heads[1].k_rope, 1e-9, "K̃₂");
  await app.openPlace("share");
  await page.getByTestId("show-tables").uncheck();
  await page.keyboard.press("Escape");
  // “sat” at position 2, pair 0 turns by 2 radians: 2.42·cos 2 − (−3.76)·sin 2 ≈ 2.41 … written
  // with the shown numbers.
  await clickCell(page, "canvas-qr-h0", 2, 0);
  await expect(page.getByTestId("explain-expansion")).toContainText("2.42 × (−0.42) − (−3.76) × 0.91");
  await expect(page.getByTestId("explain-note")).toContainText("position p = 2");
  await expect(page.getByTestId("explain-note")).toContainText("φ = p·ω = 2 rad");
  await expect(page.getByTestId("canvas-q-h0")).toHaveAttribute("data-highlight", /cell:2,0/);
  // The two heads share one key/value head; the split says so.
  await openStage(page, "split");
  await expect(page.getByTestId("stage-title")).toHaveText("Split into heads (one shared K, V)");
  expect(heads.map((h) => h.kv_head)).toEqual([0, 0]);
  // The claims of the caption hold: head 1 looks one token back.
  await openStage(page, "softmax");
  expect(heads[0].weights[3][2] as number).toBeGreaterThan(0.95);
  await expect(page.getByTestId("preset-caption-text")).toContainText("0.98");
  await app.screenshot("llama-rotary");
});

test("settings switch rotary positions, share key/value heads and set the window, and the link keeps them", async ({ app, page }) => {
  await app.goto();
  await app.openPlace("inputs");
  await expect(page.getByTestId("rail-forward").locator("li")).toHaveCount(10);
  await page.getByTestId("rope").check();
  await expect(page.getByTestId("rail-forward").locator("li")).toHaveCount(11);
  await expect(page.getByTestId("stage-rotary")).toBeVisible();
  // The head width 2 is even; θ and the pairing are offered, the pairing's menu whole in the
  // settings' column, and a line under it saying which columns turn together.
  const pairing = page.getByTestId("rope-pairing");
  await expect(page.getByTestId("rope-pairing-note")).toHaveText("Each head's first half of columns turns with its second half: its 1st with its 2nd (rotate_half in Hugging Face's Llama code).");
  for (const width of [1366, 1280, 375]) {
    await page.setViewportSize({ width, height: 800 });
    await pairing.scrollIntoViewIfNeeded();
    const cut = await pairing.evaluate((el: HTMLSelectElement) => {
      const probe = document.createElement("span");
      probe.style.cssText = `font: ${getComputedStyle(el).font}; position: absolute; white-space: nowrap`;
      probe.textContent = el.selectedOptions[0].text;
      document.body.append(probe);
      const wanted = probe.getBoundingClientRect().width;
      probe.remove();
      // The menu's arrow and padding take about 2.5 rem beside the text.
      return wanted + 28 > el.getBoundingClientRect().width;
    });
    expect(cut, `${width}: the pairing's label is cut`).toBe(false);
  }
  await page.setViewportSize({ width: 1280, height: 800 });
  await pairing.selectOption("interleaved");
  await expect(page.getByTestId("rope-pairing-note")).toHaveText("Each head's columns turn in neighbouring pairs: its 1st with its 2nd (Meta's original Llama code).");
  await page.getByTestId("rope-theta").fill("500");
  await page.getByTestId("rope-theta").press("Enter");
  await expect(page).toHaveURL(/rope=500,i/);
  await page.getByTestId("rope-theta").fill("0.5");
  await page.getByTestId("rope-theta").press("Enter");
  await expect(page.getByTestId("rope-error")).toContainText("greater than 1");
  await expect(page.getByTestId("rope-theta")).toHaveAttribute("aria-invalid", "true");
  await expect(page).toHaveURL(/rope=500,i/);
  // A large θ is a number all the same: the turns are only slower.
  await page.getByTestId("rope-theta").fill("1e20");
  await page.getByTestId("rope-theta").press("Enter");
  await expect(page.getByTestId("rope-error")).toBeEmpty();
  await expect(page.getByTestId("rope-theta")).not.toHaveAttribute("aria-invalid", "true");
  await expect(page.getByTestId("rope-theta")).toHaveValue("1e20");
  await expect(page).toHaveURL(/rope=100000000000000000000,i|rope=1e20,i/);
  await page.getByTestId("rope-theta").fill("500");
  await page.getByTestId("rope-theta").press("Enter");
  await expect(page).toHaveURL(/rope=500,i/);

  await page.getByTestId("kv-heads").selectOption("1");
  await expect(page.getByTestId("kv-note")).toHaveText(
    "W_k and W_v are now 4 × 2: they kept their first 2 columns and dropped the other 2.",
  );
  await expect(page).toHaveURL(/kv=1/);

  // The window needs the causal mask, and rests while it is off.
  await expect(page.getByTestId("window")).toBeDisabled();
  await page.getByTestId("causal").check();
  await expect(page.getByTestId("window")).toBeEnabled();
  await page.getByTestId("window").fill("two");
  await page.getByTestId("window").press("Enter");
  await expect(page.getByTestId("window-error")).toContainText("whole number of tokens");
  await page.getByTestId("window").fill("2");
  await page.getByTestId("window").press("Enter");
  await expect(page).toHaveURL(/win=2/);
  await page.keyboard.press("Escape");
  await openStage(page, "mask");
  await expect(page.getByTestId("stage-title")).toHaveText("Causal mask, window W = 2");
  await expect(page.getByTestId("stage-note")).toContainText("2 or more places left of it");

  // The block's norms: RMSNorm has a scale γ and no shift β.
  await app.openPlace("inputs");
  await page.getByTestId("block").check();
  await page.getByTestId("norm-type").selectOption("rmsnorm");
  await page.keyboard.press("Escape");
  await openStage(page, "norm-1");
  await expect(page.getByTestId("stage-title")).toHaveText("RMSNorm N₁");
  await expect(page.getByTestId("canvas-ln_1_beta")).toHaveCount(0);
  // The matrices' help says RMSNorm too: no mean taken off, no β.
  const tips = page.locator(".stage [data-testid^='tip-panel-']");
  await expect(tips.filter({ hasText: "N₁ = RMSNorm₁" })).toHaveCount(1);
  await expect(tips.filter({ hasText: "γ: RMSNorm's scale" })).toHaveCount(1);
  await expect(tips.filter({ hasText: "LayerNorm" })).toHaveCount(0);
  // With rotary positions, a head's raw scores come from the turned queries and keys.
  await openStage(page, "scores");
  await expect(page.getByTestId("tip-panel-scores-h0")).toContainText("S₁ = Q̃₁·K̃₁ᵀ: head 1's raw scores from the turned queries and keys");
  await openStage(page, "mask");

  // The link carries it all.
  const url = page.url();
  await page.goto("about:blank");
  await page.goto(url);
  await expect(page.getByTestId("stage-title")).toHaveText("Causal mask, window W = 2");
  await expect(page.getByTestId("stage-rotary")).toBeVisible();
});

test("the backward stages turn the turned gradients back and sum a shared head's", async ({ app, page }) => {
  await app.goto(`./${MODERN}&stage=back-scores`);
  await expect(page.getByTestId("stage-title")).toHaveText("∂L/∂Qₕ and ∂L/∂Kₕ");
  await expect(page.getByTestId("canvas-d_q_rope-h0")).toHaveAttribute("data-drawn", "true");
  await clickCell(page, "canvas-d_q-h0", 1, 0);
  await expect(page.getByTestId("explain-note")).toContainText("A turn's transpose is the turn by −φ");
  await openStage(page, "back-projection");
  await expect(page.getByTestId("stage-title")).toBeVisible();
  // The tables a screen reader reads head each column of the shared keys once: K, ∂L/∂K and
  // ∂L/∂W_k are one key/value head wide (4 columns), not d_model.
  for (const [stage, table] of [["back-projection", "d_k"], ["back-projection", "d_w_k"], ["projection", "k"]]) {
    if (stage !== "back-projection") await openStage(page, stage);
    const counts = await page.getByTestId(`table-${table}`).evaluate((t) => ({
      heads: t.querySelectorAll("thead th").length - 1,
      cells: t.querySelector("tbody tr")!.querySelectorAll("td").length,
    }));
    expect(counts, `${table}: a column header over each column`).toEqual({ heads: 4, cells: 4 });
  }
});

for (const viewport of [
  { width: 1024, height: 768 },
  { width: 1920, height: 1080 },
]) {
  test(`presenter mode at ${viewport.width}×${viewport.height} steps through the rotary stage per head, each step on the screen`, async ({ app, page }) => {
    await page.setViewportSize(viewport);
    await app.goto(`./?present=1${MODERN}`);
    const steps = await presentOnScreen(page, viewport, "output-0", 40);
    expect(steps).toContain("rotary-0");
    expect(steps).toContain("rotary-1");
    expect(steps.indexOf("rotary-0")).toBe(steps.indexOf("split-1") + 1);
  });
}

/** Presents the Llama-style preset at 1024×768 from `stage`: the preset's link, without its
 *  cell of A₁. */
async function presentLlama(app: AppPage, page: Page, stage: string): Promise<void> {
  await page.setViewportSize({ width: 1024, height: 768 });
  await app.goto();
  await app.openPlace("inputs");
  await page.getByTestId("preset").selectOption("llama");
  await expect(page.getByTestId("rail-forward").locator("li")).toHaveCount(18);
  const link = new URL(page.url());
  link.searchParams.set("present", "1");
  link.hash = link.hash.replace(/&(stage|cell)=[^&]*/g, "") + `&stage=${stage}`;
  await page.goto(link.toString());
}

test("presenting the Llama-style preset at 1024×768, a head's ∂L/∂Qₕ and ∂L/∂Kₕ each take a step with 24 px cells", async ({ app, page }) => {
  await presentLlama(app, page, "back-scores");
  const bar = page.getByTestId("presenter-bar");
  for (const [step, label, result] of [
    ["back-scores-0", "∂L/∂Q₁: 1 of 4", "d_q-h0"],
    ["back-scores-1", "∂L/∂K₁: 2 of 4", "d_k-h0"],
    ["back-scores-2", "∂L/∂Q₂: 3 of 4", "d_q-h1"],
    ["back-scores-3", "∂L/∂K₂: 4 of 4", "d_k-h1"],
  ]) {
    await expect(bar).toHaveAttribute("data-step", step);
    await expect(page.getByTestId("presenter-head")).toHaveText(label);
    await expect(page.getByTestId(`canvas-${result}`)).toHaveAttribute("data-drawn", "true");
    // The step's own two equations: its turned operand's gradient, and that turned back.
    const equations = page.getByTestId("formula").locator("math");
    await expect(equations).toHaveCount(2);
    await expect(equations.nth(1)).toContainText("rot");
    // ∂L/∂Kₕ = (∂L/∂Sₕ)ᵀ·Qₕ is drawn with the ∂L/∂Sₕ it reads, as ∂L/∂Qₕ is; a head sharing its
    // key/value head numbers the shared head's columns (one key/value head: d1 to d4).
    await expect(page.getByTestId(`canvas-d_scores-h${result.slice(-1)}`)).toBeVisible();
    await expect
      .poll(() => page.evaluate(() => document.documentElement.scrollHeight), { message: `${step}: no scrolling` })
      .toBeLessThanOrEqual(768);
    // The step is laid out over a few frames after it appears.
    for (const canvas of await page.locator(".stage canvas").all()) {
      await expect.poll(() => cellHeight(canvas), { message: `${step}: cell height` }).toBeGreaterThanOrEqual(23.9);
    }
    await page.keyboard.press("ArrowRight");
  }
  await expect(bar).toHaveAttribute("data-step", "back-projection-0");
});

test("presenting the Llama-style preset at 1024×768, SwiGLU's gating and the gate's weights each take a step with 24 px cells", async ({ app, page }) => {
  await presentLlama(app, page, "activation");
  const bar = page.getByTestId("presenter-bar");
  for (const [step, label, canvases] of [
    ["activation-0", "Gating: G = SiLU(N₂·W_gate) ⊙ H", ["hidden", "activated"]],
    ["activation-1", "The gate's weights: W_gate", ["w_gate"]],
  ] as const) {
    await expect(bar).toHaveAttribute("data-step", step);
    await expect(page.getByTestId("presenter-head")).toHaveText(label);
    const shown = page.locator(".stage canvas");
    await expect(shown).toHaveCount(canvases.length);
    // The gate reads the pre-norm block's N₂, as the header and the bar say.
    if (step === "activation-0") await expect(page.locator(".stage .op").first()).toHaveText("⊙ SiLU(N₂·W_gate) →");
    for (const name of canvases) {
      const canvas = page.getByTestId(`canvas-${name}`);
      await expect(canvas).toHaveAttribute("data-drawn", "true");
      await expect.poll(() => cellHeight(canvas), { message: `${step}: ${name}'s cells` }).toBeGreaterThanOrEqual(23.9);
    }
    await expect
      .poll(() => page.evaluate(() => document.documentElement.scrollHeight), { message: `${step}: no scrolling` })
      .toBeLessThanOrEqual(768);
    await page.keyboard.press("ArrowRight");
  }
  await expect(bar).toHaveAttribute("data-step", "ffn-out-0");
});

test("with rotary positions, a head count that leaves an odd d_k is shown refused, with why", async ({ app, page }) => {
  await app.goto("./#v=1&rope=10000");
  await app.openPlace("inputs");
  const four = page.getByTestId("n-heads").locator('option[value="4"]');
  await expect(four).toBeDisabled();
  await expect(four).toHaveText("4 (d_k = 1: rotary positions turn pairs, so d_k must be even)");
  await expect(page.getByTestId("n-heads").locator('option[value="2"]')).toBeEnabled();
  // Without rotary positions every divisor is offered.
  await page.getByTestId("rope").uncheck();
  await expect(four).toBeEnabled();
  await expect(four).toHaveText("4 (d_k = 1)");
});

test("the Llama-style preset's way back to X names its norm RMSNorm₁, as its title does", async ({ app, page }) => {
  await app.goto();
  await app.openPlace("inputs");
  await page.getByTestId("preset").selectOption("llama");
  // The backward stages join the rail once training is opened.
  await app.openPlace("train");
  await page.getByTestId("stage-back-input").click();
  await expect(page.getByTestId("stage-title")).toContainText("RMSNorm₁");
  await expect(page.locator(".line-heading").filter({ hasText: "Back through" })).toHaveText("Back through RMSNorm₁");
  await expect(page.locator(".stage .op").filter({ hasText: "backward" })).toHaveText(/^RMSNorm₁\s+backward →$/);
});

test("on a phone the rotary stage fits the column and a tapped cell explains its turn", async ({ app, page }) => {
  await page.setViewportSize({ width: 375, height: 812 });
  await app.goto(`./${MODERN}&stage=rotary`);
  const canvas = page.getByTestId("canvas-qr-h0");
  await expect(canvas).toHaveAttribute("data-drawn", "true");
  const b = await box(canvas);
  expect(b.x).toBeGreaterThanOrEqual(0);
  expect(b.x + b.width).toBeLessThanOrEqual(375);
  await clickCell(page, "canvas-qr-h0", 1, 1);
  await expect(page.getByTestId("explain-expansion")).toContainText("×");
  await expect(page.getByTestId("explain-note")).toContainText("position p = 1");
  await app.screenshot("phone-rotary");
});

test("an embed of the rotary stage draws and explains in a narrow column", async ({ page, context }) => {
  const code = await copiedEmbed(page, context, `./${MODERN}&stage=rotary`);
  expect(code).toContain("rope=10000");
  const { inner } = await narrowHost(context, code);
  const canvas = inner.getByTestId("canvas-qr-h0");
  await expect(canvas).toHaveAttribute("data-drawn", "true");
  await expect(inner.getByTestId("stage-title")).toContainText("Rotary");
});

// Running attention another way, in the browser: decoding token by token from a KV cache and
// FlashAttention's tiles, against the CLI's `--prefill` and `--tile`, at the places of the
// layout rule.
import { test, expect, box, cellHeight, expectInside, clickCell, expectMatrixClose, runCli, copiedEmbed, narrowHost, presentOnScreen, type Matrix } from "./fixtures";

/** Rotary positions, one key/value head for two query heads, a window of 3, decoding after 3
 * tokens and tiles of 2 keys. */
const RUNNING =
  "#v=1&d=8&h=2&causal=1&rope=10000&kv=1&win=3&pf=3&tile=2&s=the%20cat%20sat%20on%20the%20mat";
const CLI_ARGS = [
  "--sentence", "the cat sat on the mat", "--d-model", "8", "--heads", "2", "--causal", "--rope",
  "--kv-heads", "1", "--window", "3",
];

interface Step {
  position: number;
  k_cache: Matrix[];
  v_cache: Matrix[];
  heads: { q: Matrix; scores: Matrix; weights: Matrix; context: Matrix }[];
  output: Matrix;
  macs: { cached: number; recomputed: number };
}
interface Tile {
  m: number | null;
  l: number;
  o: number[];
}
interface CliTrace {
  output: Matrix;
  decode: { prefill: number; steps: Step[]; matches_full_pass: boolean };
  heads: { context: Matrix; tiles: Tile[][] }[];
}

function cli(extra: string[]): CliTrace {
  return JSON.parse(runCli(["trace", "--format", "json", ...CLI_ARGS, ...extra]));
}

test("decoding steps token by token and every matrix is the CLI's", async ({ app, page }) => {
  const t = cli(["--prefill", "3"]);
  expect(t.decode.matches_full_pass).toBe(true);
  await app.goto(`./${RUNNING}&stage=decode`);
  await expect(page.getByTestId("stage-title")).toHaveText("Decoding from the KV cache");
  await app.openPlace("share");
  await page.getByTestId("show-tables").check();
  await page.keyboard.press("Escape");
  const status = page.getByTestId("decode-status");
  await expect(status).toContainText("Step 1 of 3: “on”, position 3 (counting from 0)");
  await expect(status).toContainText(`${t.decode.steps[0].macs.cached} with the cache`);
  for (const [i, step] of t.decode.steps.entries()) {
    if (i > 0) {
      await page.getByTestId("decode-next").click();
      await expect(status).toContainText(`Step ${i + 1} of 3`);
    }
    expectMatrixClose(await app.tableValues("dec-k-g0"), step.k_cache[0], 1e-9, `K̃ cache at ${step.position}`);
    expectMatrixClose(await app.tableValues("dec-v-g0"), step.v_cache[0], 1e-9, `V cache at ${step.position}`);
    expectMatrixClose(await app.tableValues("dec-a-h1"), step.heads[1].weights, 1e-9, `a₂ at ${step.position}`);
    expectMatrixClose(await app.tableValues("dec-s-h0"), step.heads[0].scores, 1e-9, `s₁ at ${step.position}`);
    expectMatrixClose(await app.tableValues("dec-y"), step.output, 1e-9, `y at ${step.position}`);
    expectMatrixClose(await app.tableValues("dec-full-y"), [t.output[step.position]], 1e-9, "Y's row");
  }
  await expect(page.getByTestId("decode-next")).toBeDisabled();
  await expect(page.getByTestId("stage-note")).toContainText("So does every step.");
  // “mat” at 5 with W = 3: the raw scores mark the three cached keys the window hides.
  await expect(app.table("dec-s-h0").locator("thead th")).toHaveText([
    "query \\ keys", "⊘ the (1)", "⊘ cat", "⊘ sat", "on", "the (5)", "mat",
  ]);
  await expect(page.getByTestId("stage-note")).toContainText("The 3 keys marked ⊘, “the (1)” to “sat”, are outside it");
  await expect(page).toHaveURL(/row=5/);
  // On the tools' buttons, ← and → step the tokens and leave the stage where it is.
  await page.getByTestId("decode-prev").focus();
  await page.keyboard.press("ArrowLeft");
  await expect(status).toContainText("Step 2 of 3");
  await page.keyboard.press("ArrowRight");
  await expect(status).toContainText("Step 3 of 3");
  await expect(page.getByTestId("stage-title")).toHaveText("Decoding from the KV cache");
  // Reaching the first token disables Previous: the focus moves to the token menu, not the page.
  await page.keyboard.press("ArrowLeft");
  await page.keyboard.press("ArrowLeft");
  await expect(status).toContainText("Step 1 of 3");
  await expect(page.getByTestId("decode-row")).toBeFocused();
  await page.keyboard.press("ArrowLeft");
  await expect(page.getByTestId("stage-title")).toHaveText("Decoding from the KV cache");
  await page.getByTestId("decode-row").selectOption("5");
  await expect(status).toContainText("Step 3 of 3");
  // A prefill of one token decodes five; Play walks them all and stops.
  await page.getByTestId("decode-prefill").selectOption("1");
  await expect(status).toContainText("Step 1 of 5: “cat”");
  await expect(page).toHaveURL(/pf=1/);
  await page.getByTestId("decode-play").click();
  await expect(page.getByTestId("decode-play")).toHaveAttribute("aria-pressed", "true");
  await expect(status).toContainText("Step 5 of 5", { timeout: 15_000 });
  await expect(page.getByTestId("decode-play")).toHaveAttribute("aria-pressed", "false", { timeout: 5_000 });
  await page.getByTestId("decode-prev").click();
  await expect(status).toContainText("Step 4 of 5");
  await app.screenshot("decode");
});

test("stepping the decoding, each row's picture keeps its size and place: only its numbers change", async ({ app, page }) => {
  // A sentence whose tokens differ in length, so a row label sized to its own token would move.
  await app.goto("./#v=1&d=8&h=2&causal=1&rope=10000&kv=1&pf=1&s=a%20considerable%20cat%20sat%20on%20it&stage=decode");
  const status = page.getByTestId("decode-status");
  await expect(status).toContainText("Step 1 of 5");
  const rows = ["dec-q-h0", "dec-c-h0", "dec-y", "dec-full-y"];
  const sizes = () =>
    page.evaluate((names) => {
      const of = (n: string) => document.querySelector<HTMLCanvasElement>(`[data-testid="canvas-${n}"]`)!;
      return {
        // Cᵢ follows the scores and weights, which grow by a key a step: its size is its own.
        rows: names.map((n) => `${n} ${of(n).dataset.width} × ${of(n).height}` + (n === "dec-c-h0" ? "" : ` at x ${Math.round(of(n).getBoundingClientRect().x)}`)),
        caches: ["dec-k-g0", "dec-v-g0"].map((n) => `${n} ${of(n).dataset.width}`),
      };
    }, rows);
  await expect(page.getByTestId("canvas-dec-y")).toHaveAttribute("data-drawn", "true");
  const first = await sizes();
  for (let step = 2; step <= 5; step++) {
    await page.getByTestId("decode-next").click();
    await expect(status).toContainText(`Step ${step} of 5`);
    await expect.poll(sizes, `step ${step}: the one-row pictures and the caches' widths`).toEqual(first);
  }
});

test("a cell of a decoding step or of the tiles explains its arithmetic", async ({ app, page }) => {
  await app.goto(`./${RUNNING}&stage=decode`);
  // “on”'s weight on “cat”: the whole sentence's A₁ cell, computed alone from the cache.
  await clickCell(page, "canvas-dec-a-h0", 0, 1);
  await expect(page.getByTestId("explain-title")).toContainText("A₁");
  await expect(page.getByTestId("explain-title")).toContainText("on");
  await expect(page.getByTestId("explain-note")).toContainText("computes this number on its own, from the cache");
  // Another step: the explanation follows the token decoded.
  await page.getByTestId("stage-tiles").click();
  await clickCell(page, "canvas-tile-state-h0", 2, 2);
  await expect(page.getByTestId("explain-title")).toContainText("ℓ after block 3 (“the (5)”, “mat”), query “mat”");
  await expect(page.getByTestId("explain-expansion")).toContainText("e^(");
  await clickCell(page, "canvas-tile-o-h0", 0, 0);
  await expect(page.getByTestId("explain-expansion")).toContainText("“the (1)” hidden");
  await expect(page.getByTestId("explain-note")).toContainText("Before the first block nothing is kept");
  await clickCell(page, "canvas-tile-out-h0", 0, 1);
  await expect(page.getByTestId("explain-title")).toContainText("o ÷ ℓ after block 3");
  await expect(page.getByTestId("explain-expansion")).toContainText(" ÷ 1.258 ≈ ");
  // Another head takes the cell's picture away, and its explanation with it.
  await page.getByTestId("head-1").click();
  await expect(page.getByTestId("explain-title")).toHaveCount(0);
});

test("the settings show decoding only under the causal mask, and the tiles always", async ({ app, page }) => {
  await app.goto("./#v=1&s=the%20cat%20sat");
  await app.openPlace("inputs");
  const decode = page.getByTestId("decode");
  await expect(decode).toBeDisabled();
  await expect(page.locator("#decode-reason")).toBeVisible();
  await page.getByTestId("tiles").check();
  await expect(page.getByTestId("stage-tiles")).toBeVisible();
  await expect(page).toHaveURL(/tile=2/);
  await page.getByTestId("causal").check();
  await expect(decode).toBeEnabled();
  await decode.check();
  await expect(page.getByTestId("stage-decode")).toBeVisible();
  await expect(page).toHaveURL(/pf=1/);
  await page.getByTestId("stage-decode").click();
  await expect(page.getByTestId("decode-status")).toContainText("Step 1 of 2: “cat”");
  // Without the mask the stage rests, and the page steps back to the output.
  await page.getByTestId("causal").uncheck();
  await expect(page.getByTestId("stage-decode")).toHaveCount(0);
  await expect(page.getByTestId("stage-title")).toHaveText("Output projection");
});

test("the tiles' last o ÷ ℓ is the weighted sum's row, block by block as the CLI keeps them", async ({ app, page }) => {
  const t = cli(["--tile", "2"]);
  await app.goto(`./${RUNNING}&stage=tiles`);
  await expect(page.getByTestId("stage-title")).toHaveText("FlashAttention's tiled softmax");
  await app.openPlace("share");
  await page.getByTestId("show-tables").check();
  await page.keyboard.press("Escape");
  // “mat”, the last row, by default; the window hides the first block.
  const tiles = t.heads[0].tiles[5];
  const state = await app.tableValues("tile-state-h0");
  expect(state.length).toBe(3);
  expect(state[0][0]).toBe(-Infinity);
  for (const [b, tile] of tiles.entries()) {
    if (tile.m !== null) expect(Math.abs(state[b][0] - tile.m)).toBeLessThan(1e-9);
    expect(Math.abs(state[b][2] - tile.l)).toBeLessThan(1e-9);
  }
  expectMatrixClose(await app.tableValues("tile-o-h0"), tiles.map((x) => x.o), 1e-9, "o after each block");
  expectMatrixClose(await app.tableValues("tile-out-h0"), await app.tableValues("tile-c-h0"), 1e-12, "o ÷ ℓ");
  expectMatrixClose(await app.tableValues("tile-c-h0"), [t.heads[0].context[5]], 1e-9, "C₁'s row");
  await expect(page.getByTestId("stage-note")).toContainText("block 1 (keys 1–2) is hidden by the mask");
  // Another block size, another row, the other head.
  await page.getByTestId("tile-block").selectOption("4");
  await expect(page.getByTestId("shapes")).toContainText("2 blocks of at most 4 keys");
  await page.getByTestId("tile-row").selectOption("2");
  await page.getByTestId("head-1").click();
  const t4 = cli(["--tile", "4"]);
  expectMatrixClose(await app.tableValues("tile-o-h1"), t4.heads[1].tiles[2].map((x) => x.o), 1e-9, "head 2, “sat”");
  await expect(page).toHaveURL(/tile=4/);
  await expect(page).toHaveURL(/row=2/);
  await app.screenshot("tiles");
});

for (const viewport of [
  { width: 1024, height: 768 },
  { width: 1920, height: 1080 },
]) {
  test(`presenter mode at ${viewport.width}×${viewport.height} shows the tiles and each decoding head on the screen`, async ({ app, page }) => {
    await page.setViewportSize(viewport);
    await app.goto(`./?present=1${RUNNING}&stage=tiles`);
    const steps = await presentOnScreen(page, viewport, "decode-2", 12);
    expect(steps).toEqual(expect.arrayContaining(["tiles-0", "tiles-1", "decode-0", "decode-1"]));
    // After the heads, the output beside the whole sentence's row, on a step of its own.
    const bar = page.getByTestId("presenter-bar");
    await expect(page.getByTestId("presenter-head")).toHaveText("Output y");
    await expect(page.getByTestId("canvas-dec-full-y")).toHaveAttribute("data-drawn", "true");
    // "=" stands beside the row it equals y to, wherever the two wrap: never at the end of y's row.
    await expect(async () => {
      const equals = await box(page.locator(".stage .op", { hasText: /^=$/ }));
      const full = await box(page.getByTestId("canvas-dec-full-y"));
      expect(equals.x + equals.width, "“=” before Y's row").toBeLessThanOrEqual(full.x);
      expect(equals.y + equals.height / 2, "“=” level with Y's row").toBeGreaterThan(full.y - full.height);
    }).toPass({ timeout: 3000 });
    await expect(page.getByTestId("canvas-dec-q-h1")).toHaveCount(0);
    await expect(page.getByTestId("formula")).not.toContainText("softmax");
    // From a token's output a clicker goes on to the next token's first head, and back.
    const status = page.getByTestId("decode-status");
    await expect(status).toContainText("Step 1 of 3");
    await page.keyboard.press("PageDown");
    await expect(bar).toHaveAttribute("data-step", "decode-0");
    await expect(status).toContainText("Step 2 of 3");
    await page.keyboard.press("PageUp");
    await expect(bar).toHaveAttribute("data-step", "decode-2");
    await expect(status).toContainText("Step 1 of 3");
    await page.keyboard.press("PageUp");
    await expect(bar).toHaveAttribute("data-step", "decode-1");
    await expect(page.getByTestId("canvas-dec-y")).toHaveCount(0);
    await expect(page.getByTestId("formula")).toContainText("softmax");
    // The step's own controls work while presenting.
    await page.getByTestId("decode-next").click();
    await expect(page.getByTestId("decode-status")).toContainText("Step 2 of 3");
    // → on the focused Next token steps the token, not the presentation.
    const step = await bar.getAttribute("data-step");
    await page.keyboard.press("ArrowRight");
    await expect(page.getByTestId("decode-status")).toContainText("Step 3 of 3");
    await expect(bar).toHaveAttribute("data-step", step!);
    // The last token's longer cache and rows of scores are laid out again on the screen.
    await expect(page.getByTestId("canvas-dec-a-h1")).toHaveAttribute("data-drawn", "true");
    // Every cell of the last token's step, its cache of six keys too, is at least 24 px tall.
    await expect(async () => {
      for (const canvas of await page.locator(".stage canvas").all()) {
        expectInside(await box(canvas), viewport, "a heatmap of the last token");
        expect(await cellHeight(canvas), "a cell of the last token's step").toBeGreaterThanOrEqual(23.9);
      }
    }).toPass({ timeout: 3000 });
    // The step's captions stay readable from the back of the room.
    for (const caption of await page.locator(".stage .heatmap figcaption").all()) {
      const size = await caption.evaluate((el) => parseFloat(getComputedStyle(el).fontSize));
      expect(size).toBeGreaterThanOrEqual(12);
    }
    // The token menu, which has the focus once Next token runs out, leaves a clicker's
    // PageDown to the presentation.
    await page.getByTestId("decode-prev").click();
    await page.getByTestId("decode-next").click();
    await page.getByTestId("decode-row").focus();
    await page.keyboard.press("PageDown");
    await expect(bar).not.toHaveAttribute("data-step", step!);
  });
}

test("a rail wider than its column fades out where more stages lie beyond it", async ({ app, page }) => {
  // Thirteen stages take two rows on a laptop; a phone's column scrolls them.
  await page.setViewportSize({ width: 375, height: 812 });
  const rail = page.getByTestId("rail-forward");
  const fades = () =>
    rail.evaluate((el) => {
      const style = getComputedStyle(el);
      return [style.getPropertyValue("--rail-fade-start"), style.getPropertyValue("--rail-fade-end")];
    });
  await app.goto(`./${RUNNING}&stage=input`);
  expect(await rail.evaluate((el) => el.scrollWidth > el.clientWidth)).toBe(true);
  await expect.poll(fades).toEqual(["0px", "48px"]);
  await rail.evaluate((el) => el.scrollTo({ left: el.scrollWidth }));
  await expect.poll(fades).toEqual(["48px", "0px"]);
  // A rail that fits does not fade.
  await page.setViewportSize({ width: 1366, height: 768 });
  await app.goto("./#v=1&stage=input");
  expect(await rail.evaluate((el) => el.scrollWidth > el.clientWidth)).toBe(false);
  await expect.poll(fades).toEqual(["0px", "0px"]);
});

test.describe("on a phone", () => {
  test.use({ viewport: { width: 375, height: 812 }, hasTouch: true, isMobile: true });

  test("the decoding step fits the column and steps with a tap", async ({ app, page }) => {
    await app.goto(`./${RUNNING}&stage=decode`);
    const canvas = page.getByTestId("canvas-dec-a-h0");
    await expect(canvas).toHaveAttribute("data-drawn", "true");
    for (const c of await page.locator(".stage canvas").all()) {
      const b = await box(c);
      expect(b.x).toBeGreaterThanOrEqual(0);
      expect(b.x + b.width).toBeLessThanOrEqual(375);
    }
    await page.getByTestId("decode-next").tap();
    await expect(page.getByTestId("decode-status")).toContainText("Step 2 of 3");
    await expect(page.getByTestId("stage-title")).toHaveText("Decoding from the KV cache");
    await app.screenshot("phone-decode");
  });
});

test("an embed of the decoding stage steps inside a narrow column", async ({ page, context }) => {
  const code = await copiedEmbed(page, context, `./${RUNNING}&stage=decode`);
  expect(code).toContain("pf=3");
  const { host, inner } = await narrowHost(context, code);
  await expect(inner.getByTestId("canvas-dec-y")).toHaveAttribute("data-drawn", "true");
  await expect(inner.getByTestId("decode-status")).toContainText("Step 1 of 3");
  await inner.getByTestId("decode-next").click();
  await expect(inner.getByTestId("decode-status")).toContainText("Step 2 of 3");
  const frame = await box(host.locator("iframe.attention-lens"));
  const y = await box(inner.getByTestId("canvas-dec-y"));
  expect(y.x + y.width).toBeLessThanOrEqual(frame.x + frame.width + 1);
});

test("the quiz asks what the cache keeps or holds on the step shown, and the tiles' result", async ({ app, page }) => {
  // Question sets draw either question of each stage; both are answered right here.
  for (const set of [1, 2, 3]) {
    // A fresh page each time: a quiz keeps its answers while the page lives.
    await page.goto("about:blank");
    await app.goto(`./${RUNNING}&stage=decode&quiz=1&qn=${set}`);
    const prompt = page.getByTestId("quiz-prompt");
    await expect(prompt).toContainText("“on”, position 3 (counting from 0)");
    // The status line counts the cache, so it waits with the results.
    await expect(page.getByTestId("decode-status")).toBeHidden();
    await expect(page.locator(".stage [data-testid^='hidden-dec-']").first()).toBeVisible();
    const number = page.getByTestId("quiz-number");
    if (await number.count()) {
      // 2 (keys and values) · 4 tokens · 1 key/value head · d_k = 4.
      await expect(prompt).toContainText("how many numbers does the KV cache hold");
      await number.fill("32");
    } else {
      await expect(prompt).toContainText("Which does the cache keep?");
      await page.getByLabel("their turned keys (rows of K̃)").check();
      await page.getByLabel("their values (rows of V)").check();
    }
    await page.getByTestId("quiz-check").click();
    await expect(page.getByTestId("quiz-feedback")).toHaveAttribute("data-verdict", "right");
    await expect(page.getByTestId("quiz-note")).toBeVisible();
    await expect(page.getByTestId("decode-status")).toContainText("position 3");
    await expect(page.getByTestId("canvas-dec-k-g0")).toBeVisible();
  }
  const t = cli(["--tile", "2"]);
  await page.goto("about:blank");
  await app.goto(`./${RUNNING}&stage=tiles&quiz=1&qn=1`);
  const prompt = page.getByTestId("quiz-prompt");
  await expect(prompt).toContainText("2 keys");
  await expect(prompt).toContainText("“mat”");
  const asked = (await prompt.textContent()) ?? "";
  const head = Number(/Head (\d)/.exec(asked)?.[1]) - 1;
  const number = page.getByTestId("quiz-number");
  if (asked.includes("change nothing")) {
    // “mat” is the last row: the causal mask hides no key of it, the window of 3 hides keys 0 to
    // 2, so of the blocks {0, 1}, {2, 3} and {4, 5} one is wholly hidden.
    await number.fill("1");
  } else {
    // Columns are named as in C: head 2's first is d5 (d_k = 4).
    const col = Number(/column d(\d+)/.exec(asked)?.[1]) - 1 - 4 * head;
    await number.fill(t.heads[head].context[5][col].toFixed(2));
  }
  await page.getByTestId("quiz-check").click();
  await expect(page.getByTestId("quiz-feedback")).toHaveAttribute("data-verdict", "right");
  await expect(page.getByTestId(`canvas-tile-out-h${head}`)).toBeVisible();
});

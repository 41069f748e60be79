// A blog post that pastes the copied embed code: the reader clicks and taps inside the frame, at
// a wide and a narrow column, and everything answers where the reader is looking.
import type { BrowserContext, FrameLocator, Locator, Page } from "@playwright/test";
import { test, expect, cellBox, overlaps, type Box } from "./fixtures";


/** The embed code the app copies for its current state (compact, the default). */
async function copiedEmbedCode(page: Page, context: BrowserContext, stage: string): Promise<string> {
  await context.grantPermissions(["clipboard-read", "clipboard-write"]);
  await page.goto(`./#v=1&stage=${stage}`);
  await page.getByTestId("place-share").click();
  await page.getByTestId("copy-embed").click();
  await expect(page.getByTestId("share-status")).toHaveText("Embed code copied.");
  return page.evaluate(() => navigator.clipboard.readText());
}

/** A blog post with text before and after the pasted code, in a column `column` px wide. */
async function hostPage(context: BrowserContext, code: string, column: number, viewport: { width: number; height: number }): Promise<Page> {
  const host = await context.newPage();
  await host.setViewportSize(viewport);
  await host.setContent(`<!doctype html><html><body style="margin:0;font:18px/1.6 Georgia,serif">
    <article style="max-width:${column}px;margin:0 auto;padding:0 12px">
      <h1>How attention works</h1><p style="height:420px">Some words before the figure.</p>
      ${code}
      <p style="height:1600px">Some words after it.</p>
    </article></body></html>`);
  return host;
}

/** The box of cell (`row`, `col`) of a drawn heatmap canvas in the frame, in host-page pixels. */
async function cellInHost(frame: Locator, canvas: Locator, row: number, col: number): Promise<Box> {
  const offset = (await frame.boundingBox())!;
  const inner = await cellBox(canvas, row, col);
  return { ...inner, x: inner.x + offset.x, y: inner.y + offset.y };
}

async function frameBox(frame: Locator): Promise<Box> {
  return (await frame.boundingBox())!;
}

for (const { column, viewport, name } of [
  { column: 700, viewport: { width: 1280, height: 800 }, name: "a wide column" },
  { column: 360, viewport: { width: 390, height: 760 }, name: "a narrow column" },
  { column: 400, viewport: { width: 420, height: 640 }, name: "a narrow column in a short window" },
]) {
  test(`in ${name}, a clicked cell's explanation opens where the reader looks, clear of the picture`, async ({ page, context }) => {
    const code = await copiedEmbedCode(page, context, "softmax");
    const host = await hostPage(context, code, column, viewport);
    const frame = host.locator("iframe.attention-lens");
    const inner: FrameLocator = host.frameLocator("iframe.attention-lens");
    const canvas = inner.getByTestId("canvas-weights-h0");
    await expect(canvas).toHaveAttribute("data-drawn", "true");
    // The frame has taken its content's height.
    await expect.poll(async () => (await frameBox(frame)).height).not.toBe(600);

    // Two places a reader clicks from: the last row near the bottom of the window, the first
    // row near its top.
    for (const [row, at] of [
      [2, "bottom"],
      [0, "top"],
    ] as const) {
      const target = await cellInHost(frame, canvas, row, 1);
      const scrollBy = at === "bottom" ? target.y + target.height - (viewport.height - 40) : target.y - 60;
      await host.evaluate((dy) => window.scrollBy(0, dy), scrollBy);
      const cell = await cellInHost(frame, canvas, row, 1);
      expect(cell.y, `row ${row} is on screen`).toBeGreaterThanOrEqual(0);
      expect(cell.y + cell.height).toBeLessThanOrEqual(viewport.height);
      const before = await frameBox(frame);
      await host.mouse.click(cell.x + cell.width / 2, cell.y + cell.height / 2);
      await expect(canvas).toHaveAttribute("data-highlight", new RegExp(`^cell:${row},1;`));
      const panel = inner.getByTestId("explain-panel");
      await expect(inner.getByTestId("explain-title")).toContainText("A₁");
      await host.waitForTimeout(700);
      const after = await frameBox(frame);
      // Where the frame has no room clear of the picture, the explanation takes room below the
      // picture's line and the frame grows downwards: the frame's top stays put, and the host
      // page scrolls only where the explanation would otherwise open out of sight, the cell
      // still on screen above it.
      const shown = (await panel.boundingBox())!;
      const scrolled = after.y - before.y;
      if (Math.abs(scrolled) > 1) {
        expect(scrolled, `${at}: the page scrolls only to bring the explanation up`).toBeLessThan(0);
      }
      const moved = await cellInHost(frame, canvas, row, 1);
      expect(Math.abs(moved.y - (cell.y + scrolled)), `${at}: the cell did not move in the frame`).toBeLessThanOrEqual(1);
      expect(moved.y, `${at}: the cell is still on screen`).toBeGreaterThanOrEqual(0);
      expect(moved.y + moved.height, `${at}: the cell is above the window's foot`).toBeLessThanOrEqual(viewport.height);
      // Playwright's boxes are in the host page's pixels, frame or not.
      const clickedHeatmap = (await canvas.boundingBox())!;
      const clear = shown.y >= clickedHeatmap.y + clickedHeatmap.height || shown.y + shown.height <= clickedHeatmap.y;
      expect(clear, `${at}: the explanation keeps clear of the heatmap`).toBe(true);
      expect(shown.y, `${at}: the explanation's top is in the window`).toBeGreaterThanOrEqual(0);
      expect(shown.y + shown.height, `${at}: the explanation's bottom is in the window`).toBeLessThanOrEqual(viewport.height + 0.5);
      expect(shown.x).toBeGreaterThanOrEqual(after.x - 0.5);
      expect(shown.x + shown.width).toBeLessThanOrEqual(after.x + after.width + 0.5);
      // Inside the frame's own box too: nothing is cut off by the frame's edge.
      expect(shown.y).toBeGreaterThanOrEqual(after.y - 0.5);
      expect(shown.y + shown.height).toBeLessThanOrEqual(after.y + after.height + 0.5);
      if (at === "bottom") {
        await host.screenshot({ path: `test-results/embed-explain-${column}.png` });
      }
      await inner.getByRole("button", { name: "Clear the selection" }).click();
      await expect(panel).not.toHaveClass(/active/);
    }
    await host.close();
  });
}

test("in an embed, a step to another stage closes the explanation of the cell left behind", async ({ page, context }) => {
  const code = await copiedEmbedCode(page, context, "softmax");
  const host = await hostPage(context, code, 700, { width: 1280, height: 800 });
  const frame = host.locator("iframe.attention-lens");
  const inner = host.frameLocator("iframe.attention-lens");
  const weights = inner.getByTestId("canvas-weights-h0");
  await expect(weights).toHaveAttribute("data-drawn", "true");
  await weights.scrollIntoViewIfNeeded();
  const cell = await cellInHost(frame, weights, 1, 1);
  await host.mouse.click(cell.x + cell.width / 2, cell.y + cell.height / 2);
  const panel = inner.getByTestId("explain-panel");
  await expect(panel).toHaveClass(/active/);
  await expect(inner.getByTestId("explain-title")).toContainText("A₁");
  // The explanation floats clear of the stepper's bar (it is placed once the frame's visible
  // part has been measured, so the check waits for that).
  const next = inner.getByTestId("next");
  await expect
    .poll(async () => overlaps((await panel.boundingBox())!, (await next.boundingBox())!), { message: "the explanation leaves Next clear" })
    .toBe(false);

  await next.click();
  await expect(inner.getByTestId("stage-title")).not.toHaveText("Softmax");
  await expect(panel).not.toHaveClass(/active/);
  // Stepping back to Softmax leaves it closed: the step cleared the selection.
  await inner.getByTestId("prev").click();
  await expect(inner.getByTestId("stage-title")).toHaveText("Softmax");
  await expect(weights).toHaveAttribute("data-drawn", "true");
  await expect(panel).not.toHaveClass(/active/);
  // A cell picked after the steps opens its explanation as before.
  const again = await cellInHost(frame, weights, 0, 0);
  await host.mouse.click(again.x + again.width / 2, again.y + again.height / 2);
  await expect(panel).toHaveClass(/active/);
  await host.close();
});

for (const { column, viewport } of [
  { column: 700, viewport: { width: 1280, height: 800 } },
  { column: 360, viewport: { width: 390, height: 760 } },
]) {
  test(`in a ${column} px column, Next on a tall stage shows the next stage, not the page below`, async ({ page, context }) => {
    // ∂L/∂W_q and ∂L/∂W_k is the tallest stage; the one after it is far shorter.
    const code = await copiedEmbedCode(page, context, "back-projection");
    const host = await hostPage(context, code, column, viewport);
    const frame = host.locator("iframe.attention-lens");
    const inner = host.frameLocator("iframe.attention-lens");
    await expect(inner.locator(".stage canvas").first()).toHaveAttribute("data-drawn", "true");
    const next = inner.getByTestId("next");
    await expect.poll(async () => (await frameBox(frame)).height, { message: "the frame fits the tall stage" }).toBeGreaterThan(viewport.height);
    const tall = (await frameBox(frame)).height;
    await next.scrollIntoViewIfNeeded();
    await next.click();
    await expect(inner.getByTestId("stage-title")).toContainText("∂L/∂E");
    await expect.poll(async () => (await frameBox(frame)).height, { message: "the frame shrinks" }).toBeLessThan(tall);
    await expect
      .poll(async () => {
        const title = (await inner.getByTestId("stage-title").boundingBox())!;
        return title.y >= 0 && title.y + title.height <= viewport.height;
      }, { message: "the new stage's title is in the window" })
      .toBe(true);
    await host.close();
  });
}

for (const { column, viewport } of [
  { column: 700, viewport: { width: 1280, height: 800 } },
  { column: 375, viewport: { width: 390, height: 844 } },
]) {
  test(`in a ${column} px column, Next stays where the reader pressed it, with the next stage's title beside it`, async ({ page, context }) => {
    const code = await copiedEmbedCode(page, context, "softmax");
    const host = await hostPage(context, code, column, viewport);
    const frame = host.locator("iframe.attention-lens");
    const inner = host.frameLocator("iframe.attention-lens");
    await expect(inner.locator(".stage canvas").first()).toHaveAttribute("data-drawn", "true");
    const next = inner.getByTestId("next");
    await next.scrollIntoViewIfNeeded();
    const first = (await next.boundingBox())!;
    // Weighted sum, Concatenate, Output: each taller or shorter than the last, the frame
    // following each one's height.
    const heights = new Set<number>();
    for (const title of ["Weighted sum", "Concatenate", "Output"]) {
      await next.click();
      await expect(inner.getByTestId("stage-title")).toContainText(title);
      await expect(inner.locator(".stage canvas").first()).toHaveAttribute("data-drawn", "true");
      await host.waitForTimeout(300);
      heights.add(Math.round((await frameBox(frame)).height));
      const now = (await next.boundingBox())!;
      expect(Math.abs(now.y - first.y), `${title}: Next has not moved`).toBeLessThanOrEqual(1);
      expect(now.y + now.height, `${title}: Next is in the window`).toBeLessThanOrEqual(viewport.height);
      const shown = (await inner.getByTestId("stage-title").boundingBox())!;
      expect(shown.y, `${title}: the title is in the window`).toBeGreaterThanOrEqual(0);
      expect(shown.y + shown.height, `${title}: the title is in the window`).toBeLessThanOrEqual(viewport.height);
    }
    expect(heights.size, "the stages differ in height").toBeGreaterThan(1);
    await host.close();
  });
}

for (const column of [700, 400]) {
  test(`in a ${column} px column, no stage of the copied embed scrolls sideways or cuts its row sums`, async ({ page, context }) => {
    const code = await copiedEmbedCode(page, context, "input");
    const host = await hostPage(context, code, column, { width: 1280, height: 800 });
    const frame = host.locator("iframe.attention-lens");
    const inner = host.frameLocator("iframe.attention-lens");
    await expect(inner.locator(".stage canvas").first()).toHaveAttribute("data-drawn", "true");
    const heights: number[] = [];
    for (let step = 0; step < 10; step++) {
      await expect(inner.locator(".stage canvas").first()).toHaveAttribute("data-drawn", "true");
      const title = (await inner.getByTestId("stage-title").textContent()) ?? "";
      const overflow = await inner.locator("html").evaluate((el) => el.scrollWidth - el.clientWidth);
      expect(overflow, `${title}: nothing wider than the frame`).toBeLessThanOrEqual(0);
      for (const sums of await inner.locator(".row-sums").all()) {
        const cut = await sums.evaluate((ol) => {
          const frameWidth = document.documentElement.clientWidth;
          return Array.from(ol.querySelectorAll("li")).some((li) => {
            const r = li.getBoundingClientRect();
            return r.right > frameWidth + 0.5 || li.scrollWidth > li.clientWidth + 0.5 || !/Σ\s*\d/.test(li.textContent ?? "");
          });
        });
        expect(cut, `${title}: every row sum shows its number`).toBe(false);
      }
      // Every heatmap is drawn at the size the layout gave it (an operator taking a row of its
      // own in a line kept on one row squeezed the operands to half of it).
      const squeezed = await inner.locator(".stage").evaluate((stage) => {
        const app = getComputedStyle(stage.closest(".app")!);
        const zoom = Number(app.getPropertyValue("--zoom"));
        const given = Number(app.getPropertyValue("--given-zoom"));
        const room = stage.getBoundingClientRect().width;
        return Array.from(stage.querySelectorAll("canvas"))
          .filter((c) => c.closest(".heatmap") && c.style.getPropertyValue("--w"))
          .map((c) => {
            const wanted = Number(c.style.getPropertyValue("--w")) * (c.closest(".given") ? given : zoom);
            return { id: c.dataset.testid, drawn: c.getBoundingClientRect().width, wanted: Math.min(wanted, room) };
          })
          .filter((c) => c.drawn < 0.9 * c.wanted);
      });
      expect(squeezed, `${title}: heatmaps drawn at their size`).toEqual([]);
      heights.push(Math.round((await frameBox(frame)).height));
      const next = inner.getByTestId("next");
      if (await next.isDisabled()) break;
      await next.click();
    }
    if (column === 700) {
      // About 700 px tall in a 700 px column, at every stage.
      expect(Math.max(...heights), `frame heights ${heights.join(", ")}`).toBeLessThanOrEqual(760);
    }
    await host.close();
  });
}

test("a compact embed's Q, K and V buttons show the matrix picked, through the split and back", async ({ app, page }) => {
  await app.goto("./?embed=1&controls=0#v=1&stage=projection");
  const results = page.locator(".stage canvas:not(.given canvas)");
  await expect(page.getByTestId("part-q")).toHaveAttribute("aria-pressed", "true");
  await expect(results).toHaveCount(1);
  await expect(results).toHaveAttribute("data-testid", "canvas-q");
  await page.getByTestId("part-v").click();
  await expect(page.getByTestId("part-v")).toHaveAttribute("aria-pressed", "true");
  await expect(page.getByTestId("part-q")).toHaveAttribute("aria-pressed", "false");
  await expect(results).toHaveAttribute("data-testid", "canvas-v");
  // The formula is the picked matrix's equation alone.
  const equations = page.getByTestId("formula").locator("math");
  await expect(equations).toHaveCount(1);
  await expect(equations).toHaveText("V=XWv");
  // The split shows V's heads, as picked, and V's cut.
  await page.getByTestId("next").click();
  await expect(page.locator(".stage canvas[data-testid^='canvas-v-h']").first()).toBeVisible();
  await expect(page.getByTestId("part-v")).toHaveAttribute("aria-pressed", "true");
  await expect(page.locator(".stage canvas[data-testid^='canvas-q'], .stage canvas[data-testid^='canvas-k']")).toHaveCount(0);
  await expect(equations).toHaveCount(1);
  await expect(equations).toHaveText(/^Vh=V\[/);
  await page.getByTestId("part-k").click();
  await expect(page.locator(".stage canvas[data-testid^='canvas-v']")).toHaveCount(0);
  await expect(page.locator(".stage canvas[data-testid^='canvas-k']").first()).toBeVisible();
  await expect(equations).toHaveText(/^Kh=K\[/);
  // Back at the projection, K is still the one picked.
  await page.getByTestId("prev").click();
  await expect(page.getByTestId("part-k")).toHaveAttribute("aria-pressed", "true");
  await expect(results).toHaveAttribute("data-testid", "canvas-k");
  await expect(equations).toHaveText("K=XWk");
});

test("in a phone's embed, a checked answer keeps its verdict where the form was, with the focus on the next question", async ({ app, page }) => {
  await page.setViewportSize({ width: 360, height: 640 });
  await app.goto("./?embed=1&controls=0#v=1&s=the%20cat%20sat%20on%20the%20mat&stage=weighted-sum&quiz=1");
  const input = page.getByTestId("quiz-number");
  await input.scrollIntoViewIfNeeded();
  await input.fill("0.5");
  const before = await page.evaluate(() => window.scrollY);
  await page.getByTestId("quiz-check").click();
  await expect(page.getByTestId("quiz-another")).toBeFocused();
  expect(await page.evaluate(() => window.scrollY)).toBe(before);
  await expect(page.getByTestId("quiz-feedback")).toBeInViewport();
});

for (const { column, viewport } of [
  { column: 700, viewport: { width: 1280, height: 900 } },
  { column: 360, viewport: { width: 390, height: 800 } },
]) {
  test(`the training view embeds in a ${column} px column: the head learns beside its loss curve`, async ({ page, context }) => {
    await context.grantPermissions(["clipboard-read", "clipboard-write"]);
    await page.goto("./#v=1&stage=softmax");
    await page.getByTestId("place-share").click();
    await page.getByTestId("embed-train").check();
    await page.getByTestId("copy-embed").click();
    await expect(page.getByTestId("share-status")).toHaveText("Embed code copied.");
    const code = await page.evaluate(() => navigator.clipboard.readText());
    expect(code).toContain("train=1");
    const host = await hostPage(context, code, column, viewport);
    const inner = host.frameLocator("iframe.attention-lens");
    await expect(inner.getByTestId("canvas-weights-h0")).toHaveAttribute("data-drawn", "true");
    const head = inner.getByTestId("training-head");
    await expect(head).toBeVisible();
    await inner.getByTestId("train-run").click();
    await expect(inner.getByTestId("train-status")).toContainText(/After \d+ step/);
    await inner.getByTestId("train-run").click();
    // The head and the loss curve, side by side or one under the other, both inside the frame.
    const frame = (await host.locator("iframe.attention-lens").boundingBox())!;
    for (const part of [head, inner.getByTestId("loss-curve")]) {
      const b = (await part.boundingBox())!;
      expect(b.x).toBeGreaterThanOrEqual(frame.x - 0.5);
      expect(b.x + b.width).toBeLessThanOrEqual(frame.x + frame.width + 0.5);
      expect(b.y + b.height).toBeLessThanOrEqual(frame.y + frame.height + 0.5);
    }
    await host.close();
  });
}

test("an embed as a quiz with the training view says how to see training without pointing at controls it lacks", async ({ page, context }) => {
  await context.grantPermissions(["clipboard-read", "clipboard-write"]);
  await page.goto("./#v=1&stage=softmax");
  await page.getByTestId("place-share").click();
  await page.getByTestId("embed-quiz").check();
  await page.getByTestId("embed-train").check();
  await page.getByTestId("copy-embed").click();
  await expect(page.getByTestId("share-status")).toHaveText("Embed code copied.");
  const code = await page.evaluate(() => navigator.clipboard.readText());
  const host = await hostPage(context, code, 700, { width: 1280, height: 800 });
  const inner = host.frameLocator("iframe.attention-lens");
  const waits = inner.getByTestId("train-waits");
  await expect(waits).toContainText("answer the question first");
  await expect(waits).not.toContainText("Share & present");
  // The full page still says where the quiz is left.
  await page.goto("./#v=1&stage=softmax&quiz=1&goal=previous");
  await page.getByTestId("place-train").click();
  await expect(page.getByTestId("train-waits")).toContainText("Quiz me, in Share & present");
  await host.close();
});

test("an embed that opens with a picked cell explains it below the picture, leaving the stage's title and the page where they were", async ({ page, context }) => {
  // The bare address opens with a cell explained; the copied code picks it too.
  await context.grantPermissions(["clipboard-read", "clipboard-write"]);
  await page.goto("./");
  await expect(page.getByTestId("explain-title")).toContainText("A₁");
  await page.getByTestId("place-share").click();
  await page.getByTestId("copy-embed").click();
  await expect(page.getByTestId("share-status")).toHaveText("Embed code copied.");
  const code = await page.evaluate(() => navigator.clipboard.readText());
  const host = await hostPage(context, code, 700, { width: 1280, height: 800 });
  const inner = host.frameLocator("iframe.attention-lens");
  await expect(inner.getByTestId("canvas-weights-h0")).toHaveAttribute("data-drawn", "true");
  await expect(inner.getByTestId("explain-title")).toContainText("A₁");
  await host.waitForTimeout(700);
  expect(await host.evaluate(() => scrollY), "the host page did not scroll").toBe(0);
  const panel = (await inner.getByTestId("explain-panel").boundingBox())!;
  for (const id of ["stage-title", "formula", "canvas-weights-h0"]) {
    const b = (await inner.getByTestId(id).first().boundingBox())!;
    const overlaps = panel.y < b.y + b.height && panel.y + panel.height > b.y && panel.x < b.x + b.width && panel.x + panel.width > b.x;
    expect(overlaps, `the explanation leaves ${id} uncovered`).toBe(false);
  }
  await host.close();
});

test("an embed's explanation moves with its cell when the host page's column narrows", async ({ page, context }) => {
  const code = await copiedEmbedCode(page, context, "softmax&cell=weights-h0.2.0");
  const host = await hostPage(context, code, 700, { width: 1280, height: 900 });
  const inner = host.frameLocator("iframe.attention-lens");
  await expect(inner.getByTestId("explain-panel")).toHaveClass(/active/);
  // The explained cell, A₁[hungry, I], and the explanation do not overlap.
  const clear = () =>
    inner.locator("html").evaluate(() => {
      const panel = document.getElementById("explain-panel")!.getBoundingClientRect();
      const canvas = document.querySelector<HTMLElement>('[data-testid="canvas-weights-h0"]')!;
      const [gx, gy, cw, ch] = canvas.dataset.grid!.split(",").map(Number);
      const r = canvas.getBoundingClientRect();
      const k = r.width / Number(canvas.dataset.width);
      const cell = { x: r.x + gx * k, y: r.y + (gy + 2 * ch) * k, w: cw * k, h: ch * k };
      return !(panel.x < cell.x + cell.w && cell.x < panel.right && panel.y < cell.y + cell.h && cell.y < panel.bottom);
    });
  await expect.poll(clear).toBe(true);
  // The column narrows (a phone turned, a sidebar opened): the picture stacks, and the
  // explanation follows its cell.
  await host.evaluate(() => {
    document.querySelector("article")!.style.maxWidth = "400px";
  });
  await expect.poll(clear).toBe(true);
  await host.close();
});

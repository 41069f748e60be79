// Geometry at the sizes the app is used at: laptops, a projector, a phone. These tests measure
// boxes, not only presence: what a learner must see has to be inside the window.
import type { Locator, Page } from "@playwright/test";
import { test, expect, box, cellBox, cellHeight, clickCell, expectInside, overlaps, BACKWARD_STAGES, SCREENSHOT_DIR, STAGES, type AppPage, type Box } from "./fixtures";

test.describe.configure({ mode: "parallel" });


for (const viewport of [
  { width: 1024, height: 768 },
  { width: 1280, height: 800 },
  { width: 1366, height: 768 },
]) {
  test(`at ${viewport.width}×${viewport.height} every stage's first heatmap shows without scrolling`, async ({ app, page }) => {
    await page.setViewportSize(viewport);
    await app.goto();
    for (const stage of STAGES) {
      await app.openStage(stage);
      await expect(app.stage(stage)).toHaveAttribute("aria-current", "step");
      const first = page.locator(".stage canvas").first();
      await expect(first).toHaveAttribute("data-drawn", "true");
      expect(await page.evaluate(() => window.scrollY), "the page is not scrolled").toBe(0);
      expectInside(await box(first), viewport, `the first heatmap of ${stage}`);
    }
    if (viewport.width === 1366) await app.screenshot("laptop-1366x768");
    if (viewport.width === 1024) await app.screenshot("laptop-1024x768");
  });
}

/** The font size, in CSS pixels, of the numbers in the cells of `canvas`: 12 drawing units. */
async function digitSize(canvas: Locator): Promise<number> {
  return canvas.evaluate((el) => (12 * el.getBoundingClientRect().width) / Number(el.getAttribute("data-width")));
}

/** The least size of a presented result's digits at 1920×1080 when its operands also need room:
 * 28 px where the operands' cells can stay 24 px tall, otherwise a little less. */
const RESULT_DIGITS = 24;

async function expectStepFits(page: Page, viewport: { width: number; height: number }, what: string): Promise<void> {
  await expect(page.locator(".stage canvas").first()).toHaveAttribute("data-drawn", "true");
  // The zoom is chosen after the step is drawn; wait until it has settled.
  await expect
    .poll(() => page.evaluate(() => document.documentElement.scrollHeight), { message: `${what}: no scrolling` })
    .toBeLessThanOrEqual(viewport.height);
  expect(await page.evaluate(() => window.scrollY), `${what}: at the top`).toBe(0);
  const stage = await box(page.locator(".stage"));
  expectInside(stage, viewport, `${what}: the stage`);
  for (const canvas of await page.locator(".stage canvas").all()) {
    expectInside(await box(canvas), viewport, `${what}: a heatmap`);
  }
  // Inside the stage's card too, its colour bar and labels included.
  for (const heatmap of await page.locator(".stage .heatmap").all()) {
    const b = await box(heatmap);
    expect(b.x + b.width, `${what}: a heatmap's right edge inside the stage`).toBeLessThanOrEqual(stage.x + stage.width + 0.5);
  }
}

/**
 * Steps through presenter mode from the first step to the last, checking that each step fits
 * the window and, at 1920×1080, that the numbers of each step's result (the heatmaps it
 * computes; its operands were the results of earlier steps) can be read from the back of a room.
 */
async function presentEveryStep(page: Page, viewport: { width: number; height: number }, resultDigits = 28): Promise<string[]> {
  const bar = page.getByTestId("presenter-bar");
  const steps: string[] = [];
  for (let i = 0; i < 60; i++) {
    const step = (await bar.getAttribute("data-step"))!;
    steps.push(step);
    await expectStepFits(page, viewport, step);
    if (viewport.width === 1920) {
      const results = await page.locator(".stage canvas:not(.given canvas)").all();
      expect(results.length, `${step}: a result`).toBeGreaterThan(0);
      for (const canvas of results) {
        expect(await digitSize(canvas), `${step}: cell digits`).toBeGreaterThanOrEqual(resultDigits);
      }
    }
    // Every heatmap's cells, the operands' too, at least 24 px tall.
    for (const canvas of await page.locator(".stage canvas").all()) {
      expect(await cellHeight(canvas), `${step}: cell height`).toBeGreaterThanOrEqual(23.9);
    }
    if (step === "output-0") break;
    // Page down from the bottom of the window: the step must not scroll the page.
    await page.mouse.wheel(0, 400);
    await page.keyboard.press("PageDown");
    await expect(bar).not.toHaveAttribute("data-step", step);
  }
  return steps;
}

for (const viewport of [
  { width: 1024, height: 768 },
  { width: 1920, height: 1080 },
]) {
  test(`presenter mode at ${viewport.width}×${viewport.height}: every step fits the screen, one head at a time`, async ({ app, page }) => {
    await page.setViewportSize(viewport);
    await app.goto("./?present=1");
    const steps = await presentEveryStep(page, viewport);
    // The two heads of each per-head stage, and the projection's three products, are steps of
    // their own.
    expect(steps).toEqual([
      "input-0",
      "projection-0",
      "projection-1",
      "projection-2",
      "split-0",
      "split-1",
      "scores-0",
      "scores-1",
      "scale-0",
      "scale-1",
      "mask-0",
      "mask-1",
      "softmax-0",
      "softmax-1",
      "weighted-sum-0",
      "weighted-sum-1",
      "concat-0",
      "output-0",
    ]);
    await expect(page.locator(".stage .heatmap canvas[data-testid$='-h1']")).toHaveCount(0);
    if (viewport.width === 1920) {
      await page.keyboard.press("PageUp");
      await page.keyboard.press("PageUp");
      await page.keyboard.press("PageUp");
      await page.keyboard.press("PageUp");
      await page.keyboard.press("PageUp");
      await expect(page.getByTestId("presenter-bar")).toHaveAttribute("data-step", "softmax-0");
      await expectStepFits(page, viewport, "softmax-0");
      await app.screenshot("presenter-1920x1080");
    }
  });
}

test("presenter mode at 1920×1080 draws the results of eight tokens with digits a room can read", async ({ app, page }) => {
  const viewport = { width: 1920, height: 1080 };
  await page.setViewportSize(viewport);
  await app.goto();
  await app.openPlace("inputs");
  await app.openPlace("share");
  await page.getByTestId("sentence-input").fill("the cat sat on the mat because hungry");
  await expect(page.getByTestId("token")).toHaveCount(8);
  await page.getByTestId("present").click();
  // Eight tokens: where digits 28 px tall would leave the operands' cells under 24 px, the
  // results give way a little instead (see `plot::place`): every cell stays 24 px tall.
  const steps = await presentEveryStep(page, viewport, 20);
  expect(steps).toContain("softmax-1");
  expect(steps.at(-1)).toBe("output-0");
});

test("present=1 written into a share link's fragment starts presenter mode without a notice", async ({ app, page }) => {
  await app.goto("./#v=1&stage=scores&present=1");
  await expect(page.getByTestId("presenter-bar")).toHaveAttribute("data-step", "scores-0");
  await expect(page.getByTestId("notice")).toHaveCount(0);
  // Leaving drops it, so a reload opens the page as it is now.
  await page.keyboard.press("Escape");
  await expect(page.getByTestId("presenter-bar")).toHaveCount(0);
  await expect(page).not.toHaveURL(/present/);
  await expect(page).toHaveURL(/stage=scores/);
});

test("the presenter bar keeps its height from step to step on a laptop, with the training buttons in it", async ({ app, page }) => {
  await page.setViewportSize({ width: 1366, height: 768 });
  await app.goto("./?present=1#v=1&stage=input&goal=previous");
  const bar = page.getByTestId("presenter-bar");
  await expect(page.getByTestId("presenter-training")).toBeVisible();
  // The input names no head, the split and the scores do.
  const heights = new Set<number>();
  for (const step of ["input-0", "projection-0", "projection-1", "projection-2", "split-0", "split-1", "scores-0"]) {
    await expect(bar).toHaveAttribute("data-step", step);
    heights.add(Math.round((await bar.boundingBox())!.height));
    await expectHelpWhole(page, step);
    await page.keyboard.press("ArrowRight");
  }
  expect([...heights]).toHaveLength(1);
  expect([...heights][0]).toBeLessThanOrEqual(40);
});

test("the keys' help is never cut short: it names fewer keys where the bar gives it less room", async ({ app, page }) => {
  for (const [width, height] of [[1920, 1080], [1366, 768], [1280, 800], [1024, 768]] as const) {
    await page.setViewportSize({ width, height });
    await app.goto("./?present=1#v=1&stage=input&goal=previous&quiz=1");
    await expect(page.locator(".presenter-help")).toContainText("R: reveal");
    const bar = page.getByTestId("presenter-bar");
    // The input names no head; the projections and the split name what they show. With the
    // quiz, a step's first press reveals its answer.
    const seen = new Set<string>();
    for (let i = 0; i < 12; i++) {
      const step = (await bar.getAttribute("data-step"))!;
      seen.add(step);
      await expectHelpWhole(page, `${width}, ${step}`);
      await page.keyboard.press("PageDown");
      await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
    }
    expect(seen).toContain("split-1");
  }
});

/** The presenter's keys' help shows all it says within its two lines, and names `h` where it
 *  has the room of a laptop's bar. */
async function expectHelpWhole(page: Page, at: string): Promise<void> {
  const help = await page.locator(".presenter-help").evaluate((el) => ({
    clipped: el.scrollHeight > el.clientHeight + 1,
    width: el.getBoundingClientRect().width,
    text: (el as HTMLElement).innerText,
  }));
  expect(help.clipped, `${at}: the help is clipped: ${help.text}`).toBe(false);
  expect(help.text, `${at}: the help names the step keys`).toContain("step");
  if (help.width >= 240) expect(help.text, `${at}: the help names h`).toContain("h: a cell's explanation on/off");
}

test("the presenter bar fits a tablet's width: its dots in three rows at most, Leave on screen", async ({ app, page }) => {
  for (const width of [920, 800, 720]) {
    await page.setViewportSize({ width, height: 600 });
    await app.goto("./?present=1#v=1&stage=input&goal=previous");
    const bar = page.getByTestId("presenter-bar");
    await expect(page.getByTestId("presenter-training")).toBeVisible();
    // The input names no head; the projections name what they show, which leaves the rest less
    // room.
    for (const step of ["input-0", "projection-0", "projection-1", "projection-2", "split-0", "split-1", "scores-0"]) {
      const at = `${width}, ${step}`;
      await expect(bar).toHaveAttribute("data-step", step);
      const dots = (await page.getByTestId("presenter-progress").boundingBox())!;
      expect(dots.height, `${at}: the dots' rows`).toBeLessThanOrEqual(48);
      expect(dots.width, `${at}: the dots' width`).toBeGreaterThan(80);
      expect((await bar.boundingBox())!.height, `${at}: the bar`).toBeLessThanOrEqual(110);
      const leave = (await page.getByTestId("leave-presenter").boundingBox())!;
      expectInside(leave, { width, height: 600 }, `${at}: Leave`);
      // From 800 px the buttons keep one row (the training buttons without their label), so
      // the step does not jump as the bar names what it shows.
      if (width >= 800) expect(leave.y, `${at}: Leave on the first row`).toBeLessThan(30);
      expect(await page.evaluate(() => document.documentElement.scrollWidth), `${at}: no sideways scroll`).toBeLessThanOrEqual(width);
      await page.keyboard.press("PageDown");
    }
  }
});

test("clicker keys step in presenter mode even with a heatmap or a button focused", async ({ app, page }) => {
  await app.goto("./?present=1&stage=scores");
  const bar = page.getByTestId("presenter-bar");
  await expect(bar).toHaveAttribute("data-step", "scores-0");
  const canvas = page.getByTestId("canvas-scores-h0");
  await canvas.focus();
  await page.keyboard.press("ArrowRight");
  await expect(bar).toHaveAttribute("data-step", "scores-1");
  await page.keyboard.press("ArrowLeft");
  await expect(bar).toHaveAttribute("data-step", "scores-0");
  await page.getByTestId("canvas-scores-h0").focus();
  await page.keyboard.press("PageDown");
  await expect(bar).toHaveAttribute("data-step", "scores-1");
  // A button the mouse clicked keeps the focus: the clicker's Space steps, and does not press
  // it again.
  const trainStep = page.getByTestId("train-step");
  await trainStep.click();
  await expect(page.getByTestId("train-status")).toContainText("After 1 step");
  await expect(trainStep).toBeFocused();
  await page.keyboard.press(" ");
  await expect(bar).toHaveAttribute("data-step", "scale-0");
  await expect(page.getByTestId("train-status")).toContainText("After 1 step");
  await page.keyboard.press("PageUp");
  await expect(bar).toHaveAttribute("data-step", "scores-1");
  await expect(page.getByTestId("presenter-progress")).toBeVisible();
});

/** Clicks each corner cell of `name`, placed near the bottom of the window, and checks each. */
async function clickCorners(app: AppPage, page: Page, name: string, tokens: string[]): Promise<void> {
  const canvas = page.getByTestId(`canvas-${name}`);
  await expect(canvas).toHaveAttribute("data-drawn", "true");
  const n = tokens.length;
  for (const [row, col] of [
    [0, 0],
    [0, n - 1],
    [n - 1, 0],
    [n - 1, n - 1],
  ]) {
    // Start from nothing selected, the heatmap's bottom just above the bottom of the window.
    const clear = page.getByRole("button", { name: "Clear the selection" });
    if (await clear.isVisible()) await clear.click();
    await canvas.evaluate((el) => {
      // The bottom of what shows: the window's, or the top of a bar fixed over its foot.
      const bar = document.querySelector(".stage-area > .stage-controls")!.getBoundingClientRect();
      const bottom = bar.bottom >= window.innerHeight - 1 ? bar.top : window.innerHeight;
      window.scrollBy(0, el.getBoundingClientRect().bottom - bottom + 12);
    });
    const cell = await cellBox(canvas, row, col);
    await page.mouse.click(cell.x + cell.width / 2, cell.y + cell.height / 2);
    await expect(canvas, `clicked (${row}, ${col})`).toHaveAttribute("data-highlight", new RegExp(`^cell:${row},${col};`));
    await expect(page.getByTestId("explain-title")).toContainText(`${tokens[row]}`);
    await expect(page.getByTestId("explain-title")).toContainText(`${tokens[col]}`);
    // Once the panel is open, it covers neither the cell nor (when in view) the cell's row.
    await page.waitForTimeout(100);
    const panel = await box(page.getByTestId("explain-panel"));
    const after = await cellBox(canvas, row, col);
    expect(overlaps(panel, after), `the explanation covers (${row}, ${col})`).toBe(false);
    const viewport = page.viewportSize()!;
    expectInside(after, viewport, `cell (${row}, ${col}) after the explanation opened`);
    expectInside(panel, viewport, "the explanation");
  }
}

test("at 1366×768 a click on each corner cell near the bottom of the window explains exactly that cell", async ({ app, page }) => {
  await page.setViewportSize({ width: 1366, height: 768 });
  await app.goto("./#v=1&s=I%20am%20very%20hungry");
  await app.openStage("softmax");
  await clickCorners(app, page, "weights-h1", ["I", "am", "very", "hungry"]);
});

test("on a phone a tapped cell is explained in a sheet that leaves the cell in view", async ({ app, page }) => {
  await page.setViewportSize({ width: 375, height: 812 });
  await app.goto("./#v=1&s=I%20am%20very%20hungry");
  await app.openStage("scores");
  await clickCorners(app, page, "scores-h1", ["I", "am", "very", "hungry"]);
  await app.screenshot("phone-375x812-explain");
});

for (const size of [{ width: 1280, height: 800 }, { width: 1366, height: 768 }]) {
  test(`at ${size.width}×${size.height}, a preset loaded beside the stage opens with its cell in sight`, async ({ app, page }) => {
    await page.setViewportSize(size);
    await app.goto();
    await app.openPlace("inputs");
    for (const preset of ["pronoun", "adjective", "sink", "same-word", "previous-token"]) {
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.getByTestId("preset").selectOption(preset);
      // The picked cell's heatmap: its highlight names a cell (an operand's names only a row).
      await expect(page.locator(".stage canvas[data-highlight^='cell:']").first()).toHaveAttribute("data-drawn", "true");
      const picked = await page.evaluate(
        () => Array.from(document.querySelectorAll(".stage canvas")).find((c) => /^cell:\d/.test(c.getAttribute("data-highlight") ?? ""))?.getAttribute("data-testid"),
      );
      expect(picked, preset).toBeTruthy();
      const canvas = page.getByTestId(picked!);
      const [row, col] = (await canvas.getAttribute("data-highlight"))!.slice(5).split(";")[0].split(",").map(Number);
      // Once laid out and scrolled: the cell the caption names is in the window.
      await expect
        .poll(async () => {
          const cell = await cellBox(canvas, row, col);
          return cell.y >= 0 && cell.y + cell.height <= size.height;
        }, { message: `${preset}: its cell in sight` })
        .toBe(true);
      await expect(page.getByTestId("preset")).toBeVisible();
    }
  });
}

test("at 1366×768, opening Export / import keeps Share & present within its column", async ({ app, page }) => {
  await page.setViewportSize({ width: 1366, height: 768 });
  await app.goto();
  await app.openPlace("share");
  await page.getByTestId("export-menu").click();
  await expect(page.getByTestId("export-trace-json")).toBeAttached();
  const body = page.locator(".place-body:not([hidden])").filter({ has: page.getByTestId("copy-link") });
  const edge = await body.evaluate((el) => ({ right: el.getBoundingClientRect().right, sideways: el.scrollWidth - el.clientWidth }));
  expect(edge.sideways, "nothing runs past the column's side").toBeLessThanOrEqual(1);
  for (const id of ["copy-link", "copy-embed", "embed-editors", "export-trace-json"]) {
    const b = await box(page.getByTestId(id));
    expect(b.x + b.width, `${id} ends inside the column`).toBeLessThanOrEqual(edge.right + 1);
  }
});

test("on a phone the stage comes first, the places sit under the name and the stepper stays at the foot", async ({ app, page }) => {
  const viewport = { width: 375, height: 812 };
  await page.setViewportSize(viewport);
  await app.goto();
  await app.openStage("softmax");
  // Two short rows of chrome above the stage: the name, then the places, one tap each.
  const bar = await box(page.locator(".topbar"));
  expect(bar.height, "the top bar is two rows at most").toBeLessThanOrEqual(100);
  for (const key of ["inputs", "train", "lab", "share"]) {
    const b = await box(page.getByTestId(`place-${key}`));
    expectInside(b, viewport, `place ${key}`);
    expect(b.height, `place ${key} height`).toBeGreaterThanOrEqual(44);
  }
  for (const id of ["copy-link", "copy-embed", "export-menu", "present", "show-tables"]) {
    await expect(page.getByTestId(id), `${id} waits in its place`).toHaveCount(0);
  }
  const first = page.locator(".stage canvas").first();
  await expect(first).toHaveAttribute("data-drawn", "true");
  await page.evaluate(() => window.scrollTo(0, 0));
  expectInside(await box(first), viewport, "the first heatmap");
  // Previous, the stage number and Next: one row at the foot of the window, 44 px targets.
  const controls = page.locator(".stage-area > .stage-controls");
  const foot = await box(controls);
  expect(foot.y + foot.height, "the stepper sits at the foot").toBeGreaterThan(viewport.height - 2);
  expect(foot.height, "the stepper is one row").toBeLessThanOrEqual(64);
  for (const id of ["prev", "next"]) {
    const b = await box(page.getByTestId(id));
    expect(b.height, `${id} height`).toBeGreaterThanOrEqual(44);
    expect(b.width, `${id} width`).toBeGreaterThanOrEqual(44);
  }
  await expect(page.getByTestId("progress")).toBeVisible();
  // Sharing holds every action, each a target of at least 24 px.
  await app.openActionsMenu();
  for (const id of ["copy-link", "copy-embed", "export-menu", "present", "show-tables", "embed-editors"]) {
    const target = page.getByTestId(id);
    await target.scrollIntoViewIfNeeded();
    await expect(target, `${id} in the open place`).toBeVisible();
    const b = await box(target);
    expectInside(b, viewport, id);
    expect(Math.min(b.width, b.height), `${id} size`).toBeGreaterThanOrEqual(24);
  }
  await page.getByTestId("export-menu").click();
  await page.getByTestId("export-trace-json").scrollIntoViewIfNeeded();
  expectInside(await box(page.getByTestId("export-trace-json")), viewport, "an export in the menu");
  // Below the stage, the inputs' small controls are touch targets too.
  await app.openPlace("inputs");
  const targets = [
    page.locator(".heatmap-export button").first(),
    page.getByTestId("causal"),
    page.getByTestId("positional"),
    page.getByTestId("cell-w_q-0-0"),
  ];
  for (const target of targets) {
    await target.scrollIntoViewIfNeeded();
    const b = await box(target);
    expect(Math.min(b.width, b.height), `${await target.evaluate((el) => el.outerHTML.slice(0, 60))}`).toBeGreaterThanOrEqual(24);
  }
  await page.getByTestId("place-inputs").click();
  await page.getByTestId("place-share").click();
  await page.evaluate(() => window.scrollTo(0, 0));
  await app.screenshot("phone-375x812");
});

test("on a 360×640 phone the export menu reaches its last item above the stepper and closes like a menu", async ({ app, page }) => {
  await page.setViewportSize({ width: 360, height: 640 });
  await app.goto();
  const isOpen = (menu: Locator) => menu.evaluate((el) => (el as HTMLDetailsElement).open);
  const exports = page.locator("details.export-menu");
  await app.openActionsMenu();
  await app.openExportMenu();
  await expect(page.getByTestId("export-trace-json")).toBeVisible();
  // Scrolled to, the menu's last item is on top of the Previous / Next bar.
  const last = page.locator(".export-menu .menu-body button").last();
  await last.scrollIntoViewIfNeeded();
  const b = await box(last);
  const onTop = await page.evaluate(
    ([x, y]) => document.elementFromPoint(x, y)?.closest("button, label, input")?.textContent ?? null,
    [b.x + b.width / 2, b.y + b.height - 4],
  );
  expect(onTop, "what is at the foot of the last export").toBe(await last.textContent());
  // A press outside closes it, as it would a menu.
  await page.locator(".stage h2").first().click();
  expect(await isOpen(exports)).toBe(false);
  // An export, once taken, closes the menu.
  await app.openExportMenu();
  await app.downloaded(() => page.getByTestId("export-worksheet").click());
  expect(await isOpen(exports)).toBe(false);
  // Escape closes it and gives the focus back to its summary.
  await app.openExportMenu();
  await page.keyboard.press("Escape");
  expect(await isOpen(exports)).toBe(false);
  await expect(page.getByTestId("export-menu")).toBeFocused();
});

test("keyboard focus on a heatmap starts at its first cell, a pointer press does not", async ({ app, page }) => {
  await app.goto();
  await app.openStage("scores");
  const canvas = page.getByTestId("canvas-scores-h0");
  await expect(canvas).toHaveAttribute("data-drawn", "true");
  const cell = await cellBox(canvas, 2, 1);
  await page.mouse.click(cell.x + cell.width / 2, cell.y + cell.height / 2);
  await expect(canvas).toHaveAttribute("data-highlight", /^cell:2,1;/);
  await page.getByTestId("explain-panel").getByRole("button", { name: "Clear the selection" }).click();
  await canvas.focus();
  await expect(canvas).toHaveAttribute("data-highlight", /^cell:0,0;/);
});

test("the copied embed code is compact: it fits a 700 px blog column and shows the picture at 360 px", async ({ app, page, context }) => {
  await context.grantPermissions(["clipboard-read", "clipboard-write"]);
  await app.goto("./#v=1&stage=softmax");
  await app.openPlace("share");
  await page.getByTestId("copy-embed").click();
  await expect(page.getByTestId("share-status")).toHaveText("Embed code copied.");
  const code = await page.evaluate(() => navigator.clipboard.readText());
  for (const [width, screen] of [
    [700, 700],
    [360, 640],
  ]) {
    const host = await context.newPage();
    await host.setViewportSize({ width, height: screen });
    await host.setContent(`<!doctype html><body style="margin:0">${code}</body>`);
    const frame = host.locator("iframe.attention-lens");
    const inner = host.frameLocator("iframe.attention-lens");
    const first = inner.locator(".stage canvas").first();
    await expect(first).toHaveAttribute("data-drawn", "true");
    await expect(inner.locator(".controls")).toHaveCount(0);
    await expect(inner.locator(".rail")).toHaveCount(0);
    await expect(inner.getByTestId("next")).toBeVisible();
    // The script sizes the frame to its content.
    const content = () => inner.locator("body").evaluate((b) => Math.ceil(b.getBoundingClientRect().height));
    await expect.poll(async () => Math.abs((await box(frame)).height - (await content())), { message: `${width} px: frame fits` }).toBeLessThanOrEqual(2);
    if (width === 700) {
      expect((await box(frame)).height, "at most about 700 px tall in a 700 px column").toBeLessThanOrEqual(720);
      await host.screenshot({ path: `${SCREENSHOT_DIR}/embed-700.png`, fullPage: true });
    }
    const picture = await first.evaluate((el) => el.getBoundingClientRect().bottom);
    expect(picture, `${width} px: the first heatmap is in the first screen`).toBeLessThanOrEqual(screen);
    await host.close();
  }
});

for (const viewport of [
  { width: 1366, height: 768 },
  { width: 1024, height: 768 },
]) {
  test(`at ${viewport.width}×${viewport.height} the matrix tabs share one row and a long number keeps its minus in view`, async ({ app, page }) => {
    await page.setViewportSize(viewport);
    await app.goto();
    await app.openPlace("inputs");
    const list = await box(page.getByRole("tablist", { name: "Matrix to edit" }));
    const tabs = await page.getByRole("tab").all();
    expect(tabs.length).toBe(5);
    for (const tab of tabs) {
      const b = await box(tab);
      expect(Math.abs(b.y - list.y), `${await tab.textContent()} on the first row`).toBeLessThan(2);
      expect(b.x + b.width, `${await tab.textContent()} inside the tab list`).toBeLessThanOrEqual(list.x + list.width + 0.5);
    }
    // The tab keeps its full name for screen readers.
    await expect(page.getByRole("tab", { name: "Embeddings E" })).toBeVisible();

    const cell = page.getByTestId("cell-w_q-0-0");
    await cell.click();
    await cell.press("ControlOrMeta+a");
    await page.keyboard.type("-0.12345");
    await expect(cell).toHaveValue("-0.12345");
    const view = await cell.evaluate((el: HTMLInputElement) => ({ left: el.scrollLeft, overflow: el.scrollWidth - el.clientWidth }));
    expect(view.left, "scrolled to the start").toBe(0);
    expect(view.overflow, "the whole number shows").toBeLessThanOrEqual(0);
  });
}

test("at 1024×768 every setting shows its whole value in the narrow inputs column", async ({ app, page }) => {
  await page.setViewportSize({ width: 1024, height: 768 });
  await app.goto();
  await app.openPlace("inputs");
  for (const id of ["d-model", "n-heads", "scale-mode"]) {
    const room = await page.getByTestId(id).evaluate((select: HTMLSelectElement) => {
      const probe = document.createElement("span");
      probe.textContent = select.selectedOptions[0].textContent;
      probe.style.font = getComputedStyle(select).font;
      probe.style.whiteSpace = "nowrap";
      document.body.append(probe);
      const text = probe.getBoundingClientRect().width;
      probe.remove();
      // Room for the text: the box less its padding and the menu's arrow.
      return select.clientWidth - 40 - text;
    });
    expect(room, `${id} holds its value`).toBeGreaterThanOrEqual(0);
  }
  const dk = await box(page.getByTestId("d-k"));
  expect(dk.height, "d_k on one line").toBeLessThan(30);
  const presets = await box(page.getByTestId("preset"));
  const panel = await box(page.locator(".controls .panel").first());
  expect(presets.x + presets.width, "the preset menu inside its panel").toBeLessThanOrEqual(panel.x + panel.width);
});

test("on a phone a stage's equations wrap one under the other rather than hide behind a scroll", async ({ app, page }) => {
  await page.setViewportSize({ width: 360, height: 640 });
  const stages: [string, string, number][] = [
    ["back-loss", "", 2],
    ["back-softmax", "&goal=mean", 2],
    ["back-projection", "&goal=mean", 3],
    ["back-input", "&goal=mean", 2],
  ];
  for (const [stage, goal, equations] of stages) {
    await app.goto(`./#v=1&stage=${stage}${goal}`);
    const formula = page.getByTestId("formula");
    await expect(formula.locator("math").first()).toBeVisible();
    expect(await formula.locator("math").count(), stage).toBe(equations);
    const [scroll, client] = await formula.evaluate((f) => [f.scrollWidth, f.clientWidth]);
    expect(scroll, `${stage}: the formula's width`).toBeLessThanOrEqual(client + 1);
  }
});

test("on a phone each operator of a stage takes a row of its own between the pictures", async ({ app, page }) => {
  await page.setViewportSize({ width: 360, height: 640 });
  await app.goto("./#v=1&s=the%20cat%20sat%20on%20the%20mat&stage=scores");
  await expect(page.getByTestId("canvas-scores-h0")).toHaveAttribute("data-drawn", "true");
  const rows = await page.locator(".stage .equation").first().evaluate((line) => {
    // The line's flex items: an operand wrapper with `display: contents` lays out its children.
    const flat = (el: Element): Element[] =>
      getComputedStyle(el).display === "contents" ? [...el.children].flatMap(flat) : [el];
    const items = [...line.children].flatMap(flat).map((el) => ({ op: el.classList.contains("op"), box: el.getBoundingClientRect() }));
    return items.map(({ op, box }, i) => ({
      op,
      // Nothing else shares the operator's row: no item before it ends below its top.
      alone: !op || items.slice(0, i).every((other) => other.box.bottom <= box.top + 1),
    }));
  });
  expect(rows.filter((r) => r.op).length).toBeGreaterThanOrEqual(2);
  expect(rows.every((r) => r.alone), JSON.stringify(rows)).toBe(true);
});

test("a product's dot is drawn round and large enough to see, on a phone's row of its own as beside its operands", async ({ app, page }) => {
  for (const width of [360, 1280]) {
    await page.setViewportSize({ width, height: 800 });
    await app.goto("./#v=1&stage=scores");
    const mark = page.locator(".stage .op.dot .dot-mark").first();
    await expect(mark).toBeVisible();
    const shape = await mark.evaluate((el) => {
      const r = el.getBoundingClientRect();
      return { width: r.width, height: r.height, round: getComputedStyle(el).borderRadius };
    });
    expect(shape.width, `${width}: the dot's size`).toBeGreaterThanOrEqual(6);
    expect(shape.height).toBeCloseTo(shape.width, 1);
    expect(shape.round).toBe("50%");
  }
});

test("on a phone the row sums sit beside their rows of a drawing that gave way to the column", async ({ app, page }) => {
  await page.setViewportSize({ width: 360, height: 640 });
  await app.goto("./#v=1&s=the%20cat%20sat%20on%20the%20mat&stage=softmax");
  const sums = page.getByTestId("sums-weights-h0");
  await expect(sums.locator("li")).toHaveCount(6);
  const { canvas, drawn, rows } = await sums.evaluate((ol) => {
    const c = ol.parentElement!.querySelector("canvas")!;
    const box = c.getBoundingClientRect();
    return {
      canvas: { top: box.top, height: box.height },
      drawn: parseFloat(getComputedStyle(c).getPropertyValue("--w")),
      rows: [...ol.querySelectorAll("li")].map((li) => {
        const r = li.getBoundingClientRect();
        return r.top + r.height / 2;
      }),
    };
  });
  const shown = await page.getByTestId("canvas-weights-h0").evaluate((c) => c.getBoundingClientRect().width);
  // The drawing is shown smaller than it was laid out, so the sums must shrink with it.
  expect(shown).toBeLessThan(drawn * 0.9);
  const step = rows[1] - rows[0];
  for (let r = 1; r < rows.length; r++) expect(Math.abs(rows[r] - rows[r - 1] - step)).toBeLessThan(1);
  // Every sum sits within the drawing, the last one a row's height from its foot at most.
  expect(rows[0]).toBeGreaterThan(canvas.top);
  expect(rows[5]).toBeLessThan(canvas.top + canvas.height);
  expect(canvas.top + canvas.height - rows[5]).toBeLessThan(step * 1.5);
  // And each is in the middle of its row of cells: one row's height apart, as the cells are.
  expect(step).toBeLessThan((canvas.height / 6) * 1.01);
});

for (const viewport of [
  { width: 1024, height: 768 },
  { width: 1920, height: 1080 },
]) {
  test(`presenter mode at ${viewport.width}×${viewport.height} shows the output's, the weights' and the inputs' gradients one at a time`, async ({ app, page }) => {
    await page.setViewportSize(viewport);
    // Eight tokens, a source sentence, a pre-norm block and a task: the input's five gradients.
    await app.goto(
      "./?present=1#v=1&stage=back-output&s=the%20cat%20sat%20on%20the%20mat%20because%20hungry" +
        "&src=le%20chat%20est%20assis&blk=1&norm=pre&goal=copy_first",
    );
    const bar = page.getByTestId("presenter-bar");
    const label = page.getByTestId("presenter-head");
    // ∂L/∂W_o, then ∂L/∂C, each as its own product.
    // The header gives the one equation on show.
    const formula = page.getByTestId("formula");
    for (const [step, name, result, operands, equation] of [
      ["back-output-0", "∂L/∂W_o: 1 of 2", "d_w_o", ["concat", "d_output"], "∂L∂Wo=CT∂L∂Y"],
      ["back-output-1", "∂L/∂C: 2 of 2", "d_concat", ["d_output", "w_o"], "∂L∂C=∂L∂YWoT"],
    ] as const) {
      await expect(bar).toHaveAttribute("data-step", step);
      await expect(label).toHaveText(name);
      await expect(formula.locator("math")).toHaveCount(1);
      expect((await formula.textContent())?.replace(/\s+/g, "")).toBe(equation);
      await expectStepFits(page, viewport, step);
      const results = page.locator(".stage canvas:not(.given canvas)");
      await expect(results).toHaveCount(1);
      await expect(results).toHaveAttribute("data-testid", `canvas-${result}`);
      const given = await page.locator(".stage .given canvas").evaluateAll((cs) => cs.map((c) => c.getAttribute("data-testid")));
      expect(given).toEqual(operands.map((o) => `canvas-${o}`));
      if (viewport.width === 1920) {
        expect(await digitSize(results), `${step}: the result's digits`).toBeGreaterThanOrEqual(RESULT_DIGITS);
      }
      await page.keyboard.press("ArrowRight");
    }
    while (!((await bar.getAttribute("data-step")) ?? "").startsWith("back-projection")) {
      const before = await bar.getAttribute("data-step");
      await page.keyboard.press("ArrowRight");
      await expect(bar).not.toHaveAttribute("data-step", before ?? "");
    }
    const parts = [
      ["back-projection-0", "∂L/∂W_q: 1 of 3", "d_w_q"],
      ["back-projection-1", "∂L/∂W_k: 2 of 3", "d_w_k"],
      ["back-projection-2", "∂L/∂W_v: 3 of 3", "d_w_v"],
      ["back-input-0", "∂L/∂N₁: 1 of 5", "d_norm_1"],
      ["back-input-1", "∂L/∂X: 2 of 5", "d_x"],
      ["back-input-2", "∂L/∂X_src: 3 of 5", "d_x-src"],
      ["back-input-3", "∂L/∂E: 4 of 5", "d_embeddings"],
      ["back-input-4", "∂L/∂E_src: 5 of 5", "d_embeddings-src"],
    ];
    const gradients = ["d_w_q", "d_w_k", "d_w_v", "d_norm_1", "d_x", "d_x-src", "d_embeddings", "d_embeddings-src"];
    for (const [i, [step, name, result]] of parts.entries()) {
      await expect(bar).toHaveAttribute("data-step", step);
      await expect(label).toHaveText(name);
      await expectStepFits(page, viewport, step);
      if (step.startsWith("back-projection")) {
        await expect(formula.locator("math")).toHaveCount(1);
        // ∂L/∂W_q = N₁ᵀ·∂L/∂Q, and so on: "∂Wq" in the MathML's text.
        await expect(formula).toContainText(`∂W${result.slice(-1)}`);
      } else {
        // ∂L/∂X through LayerNorm comes with its ĝ = ∂L/∂N₁ ⊙ γ₁.
        const equations = {
          d_norm_1: ["∂L∂N1=∂L∂QWqT"],
          d_x: ["∂L∂X=ĝ−mean(ĝ)−n̂·mean(ĝ⊙n̂)σ2+ε,", "ĝ=∂L∂N1⊙γ1"],
          "d_x-src": ["∂L∂Xsrc=∂L∂KWkT+∂L∂VWvT"],
          d_embeddings: ["∂L∂E=∂L∂X"],
          "d_embeddings-src": ["∂L∂Esrc=∂L∂Xsrc+ΠT∂L∂Y*"],
        }[result];
        const shown = await formula.locator("math").evaluateAll((ms) => ms.map((m) => (m.textContent ?? "").replace(/\s+/g, "")));
        expect(shown, step).toEqual(equations);
      }
      // The part's own result, and no other part's.
      const shown = page.locator(`.stage canvas[data-testid='canvas-${result}']:not(.given canvas)`);
      await expect(shown).toHaveCount(1);
      for (const other of gradients.filter((g) => g !== result)) {
        await expect(page.locator(`.stage canvas[data-testid='canvas-${other}']:not(.given canvas)`), `${step}: ${other}`).toHaveCount(0);
      }
      if (viewport.width === 1920) {
        expect(await digitSize(shown), `${step}: the result's digits`).toBeGreaterThanOrEqual(RESULT_DIGITS);
      }
      if (i < parts.length - 1) await page.keyboard.press("ArrowRight");
    }
    // Back steps through the parts again, and into the projection at its last part.
    for (const [step] of parts.slice(0, -1).reverse()) {
      await page.keyboard.press("ArrowLeft");
      await expect(bar).toHaveAttribute("data-step", step);
    }
  });
}

for (const viewport of [
  { width: 1280, height: 800 },
  { width: 1920, height: 1080 },
]) {
  test(`presented at ${viewport.width}×${viewport.height}, the weights' gradients under the pattern loss stay inside the stage`, async ({ app, page }) => {
    await page.setViewportSize(viewport);
    await app.goto("./?present=1#v=1&stage=back-projection&goal=previous");
    const bar = page.getByTestId("presenter-bar");
    for (const step of ["back-projection-0", "back-projection-1"]) {
      await expect(bar).toHaveAttribute("data-step", step);
      await expect(page.locator(".stage canvas:not(.given canvas)")).toHaveCount(1);
      await expectStepFits(page, viewport, step);
      await page.keyboard.press("ArrowRight");
    }
  });
}

test("presenting under the pattern loss, ∂L/∂W_v's sentence comes with ∂L/∂W_k, and the quiz asks about the gradient on show", async ({ app, page }) => {
  await page.setViewportSize({ width: 1920, height: 1080 });
  await app.goto("./?present=1#v=1&stage=back-input&quiz=1");
  const bar = page.getByTestId("presenter-bar");
  const label = page.getByTestId("presenter-head");
  const prompt = page.getByTestId("quiz-prompt");
  const sentence = page.getByText("∂L/∂W_v is exactly 0");
  // The input's first part is ∂L/∂X, and the question is about it.
  await expect(bar).toHaveAttribute("data-step", "back-input-0");
  await expect(label).toHaveText("∂L/∂X: 1 of 2");
  await expect(prompt).toContainText("Is ∂L/∂X[");
  // Stepping back enters the projection at its last part.
  await page.keyboard.press("ArrowLeft");
  await expect(bar).toHaveAttribute("data-step", "back-projection-1");
  await expect(label).toHaveText("∂L/∂W_k: 2 of 2");
  await expect(prompt).toContainText("move W_k[");
  await expect(sentence).toBeVisible();
  await expectStepFits(page, { width: 1920, height: 1080 }, "back-projection-1");
  await page.keyboard.press("ArrowLeft");
  await expect(bar).toHaveAttribute("data-step", "back-projection-0");
  await expect(label).toHaveText("∂L/∂W_q: 1 of 2");
  await expect(prompt).toContainText("move W_q[");
  await expect(sentence).toHaveCount(0);
});

test("presenting, ∂L/∂E's step shows the ∂L/∂X it is made from, also while its answer is hidden", async ({ app, page }) => {
  await page.setViewportSize({ width: 1024, height: 768 });
  const bar = page.getByTestId("presenter-bar");
  const stage = page.getByTestId("stage-view");
  // Under the pattern loss ∂L/∂E = ∂L/∂X: the quiz hides ∂L/∂E, and ∂L/∂X is there to reason from.
  await app.goto("./?present=1#v=1&stage=back-input&quiz=1&goal=previous");
  await page.keyboard.press("End");
  await expect(page.getByTestId("presenter-head")).toHaveText("∂L/∂E: 2 of 2");
  await expect(page.getByTestId("quiz-prompt")).toContainText("Is ∂L/∂E[");
  await expect(stage.getByTestId("canvas-d_x")).toHaveAttribute("data-drawn", "true");
  await expect(stage.getByTestId("canvas-d_embeddings")).toHaveCount(0);
  await expectStepFits(page, { width: 1024, height: 768 }, "back-input-1");
  await page.keyboard.press("r");
  await expect(stage.getByTestId("canvas-d_embeddings")).toHaveAttribute("data-drawn", "true");
  await expectStepFits(page, { width: 1024, height: 768 }, "back-input-1");
  // Under a task ∂L/∂E adds the path through the target to ∂L/∂X: both are its operands.
  await app.goto("./?present=1#v=1&stage=back-input&goal=copy_previous");
  await page.keyboard.press("End");
  await expect(bar).toHaveAttribute("data-step", "back-input-1");
  for (const name of ["d_via_target", "d_x", "d_embeddings"]) {
    await expect(stage.getByTestId(`canvas-${name}`)).toHaveAttribute("data-drawn", "true");
  }
  await expectStepFits(page, { width: 1024, height: 768 }, "back-input-1");
});

test("presenting, a stage reached by a link or Back opens at its first part", async ({ app, page }) => {
  await page.setViewportSize({ width: 1366, height: 768 });
  await app.goto("./?present=1#v=1&stage=back-input&src=le%20chat&goal=copy_first");
  const bar = page.getByTestId("presenter-bar");
  const label = page.getByTestId("presenter-head");
  // Step to the input's last gradient, ∂L/∂E_src.
  await expect(bar).toHaveAttribute("data-step", "back-input-0");
  for (const step of ["back-input-1", "back-input-2", "back-input-3"]) {
    await page.keyboard.press("ArrowRight");
    await expect(bar).toHaveAttribute("data-step", step);
  }
  await expect(label).toHaveText("∂L/∂E_src: 4 of 4");
  // A link to the weights' gradients shows ∂L/∂W_q, not the third of them.
  await page.evaluate(() => {
    location.hash = location.hash.replace("stage=back-input", "stage=back-projection");
  });
  await expect(bar).toHaveAttribute("data-step", "back-projection-0");
  await expect(label).toHaveText("∂L/∂W_q: 1 of 3");
  // Stepping keeps the part it moves to, and Back to another stage opens at its first part.
  await page.keyboard.press("ArrowRight");
  await expect(label).toHaveText("∂L/∂W_k: 2 of 3");
  await page.keyboard.press("ArrowRight");
  await page.keyboard.press("ArrowRight");
  await expect(bar).toHaveAttribute("data-step", "back-input-0");
  await page.keyboard.press("ArrowRight");
  await page.keyboard.press("ArrowRight");
  await expect(label).toHaveText("∂L/∂E: 3 of 4");
  await page.goBack();
  await expect(bar).toHaveAttribute("data-step", "back-projection-0");
  await expect(label).toHaveText("∂L/∂W_q: 1 of 3");
  // Through a stage of heads too: Back from it opens ∂L/∂W_o, not ∂L/∂C where the step left.
  await page.evaluate(() => {
    location.hash = location.hash.replace("stage=back-projection", "stage=back-output");
  });
  await expect(label).toHaveText("∂L/∂W_o: 1 of 2");
  await page.keyboard.press("ArrowRight");
  await expect(label).toHaveText("∂L/∂C: 2 of 2");
  await page.keyboard.press("ArrowRight");
  await expect(bar).toHaveAttribute("data-step", "back-weighted-sum-0");
  await page.goBack();
  await expect(bar).toHaveAttribute("data-step", "back-output-0");
});

test.describe("on a phone", () => {
  test.use({ viewport: { width: 360, height: 640 }, hasTouch: true, isMobile: true });

  test("a matrix's one-letter name is a target a finger can tap", async ({ app, page }) => {
    await app.goto("./#v=1&stage=scores");
    const name = page.getByTestId("panel-scores-h0").locator(".help-trigger");
    await expect(name).toHaveText("S₁");
    const target = await box(name);
    expect(target.width, "tap width").toBeGreaterThanOrEqual(24);
    expect(target.height, "tap height").toBeGreaterThanOrEqual(24);
    await name.tap();
    await expect(page.locator(".help-tip:visible").first()).toBeVisible();
  });

  test("presenting, no step's pictures or formula run off the side of the screen", async ({ app, page }) => {
    await app.goto(
      "./?present=1#v=1&s=the%20cat%20sat%20on%20the%20mat%20because%20hungry" +
        "&src=le%20chat%20est%20assis&blk=1&norm=pre&goal=copy_first",
    );
    const bar = page.getByTestId("presenter-bar");
    let steps = 0;
    for (let presses = 0; presses < 60; presses++) {
      const step = (await bar.getAttribute("data-step")) ?? "";
      await expect(page.locator(".stage canvas").first()).toHaveAttribute("data-drawn", "true");
      // The zoom is chosen in the frame after the step is drawn.
      await expect
        .poll(
          () =>
            page.evaluate(() =>
              Math.max(0, ...[...document.querySelectorAll(".stage .equation")].map((l) => l.scrollWidth - l.clientWidth)),
            ),
          { message: `${step}: every line of pictures fits the screen's width` },
        )
        .toBeLessThanOrEqual(1);
      // A formula wider than the screen starts at its box's left edge, so it can be scrolled.
      const clipped = await page.evaluate(() => {
        const box = document.querySelector(".stage .formula")!.getBoundingClientRect();
        return Math.max(0, ...[...document.querySelectorAll(".stage .formula > *")].map((m) => box.left - m.getBoundingClientRect().left));
      });
      expect(clipped, `${step}: the formula's left edge`).toBeLessThanOrEqual(1);
      steps += 1;
      if (step === "back-input-4") break;
      await page.keyboard.press("ArrowRight");
      await expect(bar).not.toHaveAttribute("data-step", step);
    }
    expect(steps).toBeGreaterThan(30);
  });

  test("presenting, the bar's arrows step by touch, and Next first reveals the class's answer", async ({ app, page }) => {
    await app.goto("./?present=1#v=1&quiz=1&stage=back-output&goal=copy_first");
    const bar = page.getByTestId("presenter-bar");
    const [prev, next] = [page.getByTestId("presenter-prev"), page.getByTestId("presenter-next")];
    for (const arrow of [prev, next]) {
      const box = (await arrow.boundingBox())!;
      expect(box.width, "a touch target").toBeGreaterThanOrEqual(44);
      expect(box.height, "a touch target").toBeGreaterThanOrEqual(24);
    }
    await expect(page.getByTestId("quiz-prompt")).toContainText("W_o[");
    await next.tap();
    await expect(page.getByTestId("quiz-feedback")).toContainText("The answer is");
    await expect(bar).toHaveAttribute("data-step", "back-output-0");
    await next.tap();
    await expect(bar).toHaveAttribute("data-step", "back-output-1");
    await expect(page.getByTestId("presenter-head")).toHaveText("∂L/∂C: 2 of 2");
    await prev.tap();
    await prev.tap();
    await expect(bar).toHaveAttribute("data-step", "back-loss-0");
    // The first step has nothing before it.
    await app.goto("./?present=1#v=1&stage=input");
    await expect(page.getByTestId("presenter-prev")).toBeDisabled();
    // Where there is room, Leave shares the arrows' row rather than taking a row of its own
    // above the step.
    const [leave, arrow] = [await page.getByTestId("leave-presenter").boundingBox(), await next.boundingBox()];
    expect(Math.abs(leave!.y - arrow!.y), "Leave on the arrows' row").toBeLessThanOrEqual(2);
    expect(leave!.x, "Leave after the arrows").toBeGreaterThan(arrow!.x + arrow!.width);
    await page.getByTestId("presenter-next").tap();
    await expect(bar).toHaveAttribute("data-step", "projection-0");
  });
});

test.describe("on a narrow phone", () => {
  test.use({ viewport: { width: 375, height: 812 }, hasTouch: true, isMobile: true });

  test("the stage rail scrolls the current stage into its view, on opening and at every step", async ({ app, page }) => {
    const inView = () =>
      page.evaluate(() =>
        [...document.querySelectorAll(".rail ol")].every((ol) => {
          const current = ol.querySelector("[aria-current=step]");
          if (!current) return true;
          const [o, c] = [ol.getBoundingClientRect(), current.getBoundingClientRect()];
          return c.left >= o.left - 1 && c.right <= o.right + 1;
        }),
      );
    await app.goto("./#v=1&stage=back-input");
    await app.openPlace("train");
    await expect(page.getByTestId("stage-back-input")).toHaveAttribute("aria-current", "step");
    await expect.poll(inView, { message: "the last backward stage shows in its rail" }).toBe(true);
    for (let i = 0; i < 6; i++) {
      await page.getByTestId("prev").tap();
      await expect.poll(inView, { message: `step ${i + 1} back` }).toBe(true);
    }
    await app.goto("./#v=1&stage=output&blk=1");
    await expect.poll(inView, { message: "the block's last stages show in their rail" }).toBe(true);
  });
});

test("presenting, a stage the loss does not reach is one step, and h hides the explanation", async ({ app, page }) => {
  await page.setViewportSize({ width: 1024, height: 768 });
  // Two heads, the pattern loss: "Back through AₕVₕ" is not reached, and says so once.
  await app.goto("./?present=1#v=1&stage=back-loss&cell=d_weights-h0.1.0");
  const bar = page.getByTestId("presenter-bar");
  await expect(bar).toHaveAttribute("data-step", "back-loss-0");
  await expect(page.getByTestId("explain-panel")).toHaveClass(/active/);
  await page.keyboard.press("h");
  await expect(page.getByTestId("explain-panel")).not.toHaveClass(/active/);
  // Each head's loss, then "Back through W_o", not reached either.
  await page.keyboard.press("ArrowRight");
  await expect(bar).toHaveAttribute("data-step", "back-loss-1");
  await page.keyboard.press("ArrowRight");
  await expect(bar).toHaveAttribute("data-step", /^back-output-/);
  await page.keyboard.press("ArrowRight");
  await expect(bar).toHaveAttribute("data-step", "back-weighted-sum-0");
  await expect(page.getByTestId("unreached").first()).toBeVisible();
  // One step for every head: the bar names none.
  await expect(page.getByTestId("presenter-head")).toHaveText("");
  await page.keyboard.press("ArrowRight");
  await expect(bar).toHaveAttribute("data-step", /^back-softmax-0/);
  await expect(page.getByTestId("presenter-head")).toHaveText("Head 1 of 2");
  // A stage it reaches steps through the heads.
  await page.keyboard.press("ArrowRight");
  await expect(bar).toHaveAttribute("data-step", /^back-softmax-1/);
  await expect(page.getByTestId("presenter-head")).toHaveText("Head 2 of 2");
});

test("presenting at 1366×768 with a cell explained, the step uses the room above the explanation", async ({ app, page }) => {
  await page.setViewportSize({ width: 1366, height: 768 });
  await app.goto("./?present=1#v=1&stage=softmax&cell=weights-h0.2.0");
  const panel = page.getByTestId("explain-panel");
  await expect(panel).toHaveClass(/active/);
  const given = page.getByTestId("canvas-masked-h0");
  const result = page.getByTestId("canvas-weights-h0");
  await expect(result).toHaveAttribute("data-drawn", "true");
  // The room the page keeps below itself for the sheet is not the step's: once settled, the
  // operand the explanation reads from is drawn as large as the result, both above the sheet.
  await expect
    .poll(async () => (await cellHeight(given)) / (await cellHeight(result)), { message: "M₁'s cells beside A₁'s" })
    .toBeGreaterThan(0.95);
  expect(await cellHeight(given)).toBeGreaterThanOrEqual(36);
  const stage = await box(page.locator(".app .stage"));
  expect(stage.y + stage.height).toBeLessThanOrEqual((await box(panel)).y);
});

test("presenting, h hides the explanation of a cell just clicked, whose heatmap has the focus", async ({ app, page }) => {
  await page.setViewportSize({ width: 1366, height: 768 });
  await app.goto("./?present=1#v=1&stage=softmax");
  const canvas = page.getByTestId("canvas-weights-h0");
  await clickCell(page, "canvas-weights-h0", 2, 0);
  await expect(page.getByTestId("explain-panel")).toHaveClass(/active/);
  await expect(canvas).toBeFocused();
  await page.keyboard.press("h");
  await expect(page.getByTestId("explain-panel")).not.toHaveClass(/active/);
  // The heatmap keeps its arrows: another cell, explained again.
  await clickCell(page, "canvas-weights-h0", 1, 1);
  await expect(page.getByTestId("explain-panel")).toHaveClass(/active/);
  await page.keyboard.press("H");
  await expect(page.getByTestId("explain-panel")).not.toHaveClass(/active/);
  // h again shows it again, for the same cell.
  await page.keyboard.press("h");
  await expect(page.getByTestId("explain-panel")).toHaveClass(/active/);
  await expect(page.getByTestId("explain-panel")).toContainText("A₁[am, am]");
  // Not on another step: there h has nothing to bring back.
  await page.keyboard.press("h");
  await page.keyboard.press("ArrowRight");
  await page.keyboard.press("h");
  await expect(page.getByTestId("explain-panel")).not.toHaveClass(/active/);
});

for (const [width, height] of [[1024, 768], [1920, 1080]] as const) {
  test(`presenting at ${width}×${height}, a matrix's name reads at least as large as the axes drawn under it`, async ({ app, page }) => {
    await page.setViewportSize({ width, height });
    for (const stage of ["input", "projection", "output"]) {
      await app.goto(`./?present=1#v=1&stage=${stage}`);
      const canvases = page.locator(".stage canvas[data-grid]");
      await expect(canvases.first()).toHaveAttribute("data-drawn", "true");
      await page.waitForTimeout(300);
      const sizes = await page.locator(".stage .heatmap").evaluateAll((figures) =>
        figures.flatMap((f) => {
          const canvas = f.querySelector("canvas[data-grid]") as HTMLCanvasElement | null;
          const title = f.querySelector(".heatmap-title");
          if (!canvas || !title) return [];
          // The axes are drawn 11 units tall, in the drawing's units.
          const unit = canvas.getBoundingClientRect().width / Number(canvas.dataset.width);
          return [{ name: title.textContent, title: parseFloat(getComputedStyle(title).fontSize), axes: 11 * unit }];
        }),
      );
      expect(sizes.length, stage).toBeGreaterThan(1);
      for (const s of sizes) expect(s.title, `${stage}: ${s.name}`).toBeGreaterThanOrEqual(s.axes - 0.5);
    }
  });
}

test("presenting at 1024×768, a picked cell's explanation takes its room below the step, and Home and End jump", async ({ app, page }) => {
  await page.setViewportSize({ width: 1024, height: 768 });
  await app.goto("./?present=1#v=1&stage=softmax&cell=weights-h0.1.0");
  await expect(page.getByTestId("explain-panel")).toHaveClass(/active/);
  const canvas = page.getByTestId("canvas-weights-h0");
  await expect(canvas).toHaveAttribute("data-drawn", "true");
  await expect
    .poll(async () => overlaps(await box(page.getByTestId("explain-panel")), await cellBox(canvas, 1, 0)), {
      message: "the explanation leaves its cell in view",
    })
    .toBe(false);
  await page.keyboard.press("Home");
  await expect(page.getByTestId("stage-title")).toHaveText("Input X");
  await page.keyboard.press("End");
  const bar = page.getByTestId("presenter-bar");
  await expect(bar).toHaveAttribute("data-step", /^back-input-/);
  // The last step of the last stage: a step on goes nowhere.
  const last = await bar.getAttribute("data-step");
  await page.keyboard.press("ArrowRight");
  await page.waitForTimeout(200);
  await expect(bar).toHaveAttribute("data-step", last!);
  await page.keyboard.press("ArrowLeft");
  await expect(bar).not.toHaveAttribute("data-step", last!);
});

test("presenting on a 1024×768 projector, the bar has the zoom buttons beside the steps, in one row", async ({ app, page }) => {
  await page.setViewportSize({ width: 1024, height: 768 });
  await app.goto("./?present=1#v=1&stage=softmax");
  const canvas = page.getByTestId("canvas-weights-h0");
  await expect(canvas).toHaveAttribute("data-drawn", "true");
  const [smaller, larger, next] = ["presenter-smaller", "presenter-larger", "presenter-next"].map((id) => page.getByTestId(id));
  await expect(smaller).toBeVisible();
  await expect(larger).toBeVisible();
  // One row: the zoom buttons sit level with the step buttons and Leave, also on the steps
  // whose bar names what they show at length.
  const bar = page.getByTestId("presenter-bar");
  for (const step of ["softmax-0", "projection-0", "projection-1", "projection-2"]) {
    if (step !== "softmax-0") {
      await page.keyboard.press(step === "projection-0" ? "Home" : "PageDown");
      if (step === "projection-0") await page.keyboard.press("PageDown");
    }
    await expect(bar).toHaveAttribute("data-step", step);
    const y = (await box(next)).y;
    for (const id of ["presenter-larger", "leave-presenter"]) {
      expect(Math.abs((await box(page.getByTestId(id))).y - y), `${step}: ${id} in the row of Next`).toBeLessThanOrEqual(1);
    }
  }
  await page.keyboard.press("End");
  await page.goto("about:blank");
  await app.goto("./?present=1#v=1&stage=softmax");
  await expect(canvas).toHaveAttribute("data-drawn", "true");
  await expectStepFits(page, { width: 1024, height: 768 }, "fitted");
  await larger.click();
  await expect(page.getByTestId("presenter-fit")).toHaveText("125 %");
  await page.getByTestId("presenter-fit").click();
  await expect(page.getByTestId("presenter-fit")).toBeHidden();
});

test.describe("on a touch screen", () => {
  test.use({ viewport: { width: 1024, height: 768 }, hasTouch: true, isMobile: true });
  test("presenting, the bar leaves zoom to the fingers", async ({ app, page }) => {
    await app.goto("./?present=1#v=1&stage=softmax");
    await expect(page.getByTestId("presenter-next")).toBeVisible();
    await expect(page.getByTestId("presenter-larger")).toBeHidden();
  });
});

test("presenting, + and − zoom the step from its fitted size, and 0 or the readout fits it again", async ({ app, page }) => {
  await page.setViewportSize({ width: 1920, height: 1080 });
  await app.goto("./?present=1#v=1&stage=softmax");
  const canvas = page.getByTestId("canvas-weights-h0");
  await expect(canvas).toHaveAttribute("data-drawn", "true");
  await expect.poll(() => digitSize(canvas)).toBeGreaterThanOrEqual(28);
  await expectStepFits(page, { width: 1920, height: 1080 }, "fitted");
  const fitted = await digitSize(canvas);
  // Within 3 %: the fit is measured again from the zoom it starts at.
  const near = (want: number) => async () => Math.abs((await digitSize(canvas)) / want - 1) < 0.03;
  const fit = page.getByTestId("presenter-fit");
  await expect(fit).toBeHidden();
  await page.keyboard.press("+");
  await expect(fit).toHaveText("125 %");
  await expect.poll(near(fitted * 1.25)).toBe(true);
  await page.keyboard.press("0");
  await expect(fit).toBeHidden();
  await expect.poll(near(fitted)).toBe(true);
  await page.getByTestId("presenter-smaller").click();
  await expect(fit).toHaveText("80 %");
  await expect.poll(near(fitted * 0.8)).toBe(true);
  await fit.click();
  await expect(fit).toBeHidden();
  await expect.poll(near(fitted)).toBe(true);
  await expectStepFits(page, { width: 1920, height: 1080 }, "fitted again");
  // Zoomed in no further than the widest picture fits across the screen, which it never leaves.
  for (let i = 0; i < 8; i++) await page.keyboard.press("+");
  await page.waitForTimeout(300);
  for (const c of await page.locator(".stage canvas").all()) {
    const b = await box(c);
    expect(b.x + b.width, "inside the screen's width").toBeLessThanOrEqual(1920);
  }
  const percent = Number((await fit.textContent())?.replace(/[^0-9]/g, ""));
  expect(percent).toBeGreaterThan(100);
  expect(percent).toBeLessThan(300);
  await page.keyboard.press("0");
  await expect(fit).toBeHidden();
});

for (const size of [{ width: 1920, height: 1080 }, { width: 1024, height: 768 }]) {
  test(`presenting at ${size.width}×${size.height}, a step zoomed in wraps its equation instead of running off the side, and scrolls down`, async ({ app, page }) => {
    await page.setViewportSize(size);
    // The last step, ∂L/∂X = ∂L/∂E: one row at the fitted size.
    await app.goto("./#v=1&stage=input&goal=previous");
    await app.openPlace("share");
    await page.getByTestId("present").click();
    await page.keyboard.press("End");
    const result = page.getByTestId("canvas-d_embeddings");
    await expect(result).toHaveAttribute("data-drawn", "true");
    if (size.width === 1920) await expect(page.locator(".app")).toHaveAttribute("data-one-row", "true");
    await page.keyboard.press("+");
    await page.keyboard.press("+");
    await expect(page.getByTestId("presenter-fit")).toHaveText("156 %");
    await expect(page.locator(".app")).toHaveAttribute("data-one-row", "false");
    await expect(async () => {
      for (const c of await page.locator(".stage canvas").all()) {
        const b = await box(c);
        expect(b.x + b.width, "inside the screen's width").toBeLessThanOrEqual(size.width);
      }
    }).toPass({ timeout: 3000 });
    // What runs past the foot is reached by scrolling.
    await result.scrollIntoViewIfNeeded();
    const b = await box(result);
    expect(b.y + b.height).toBeLessThanOrEqual(size.height + 1);
    expect(b.y).toBeGreaterThanOrEqual(-1);
  });
}

test("in a wide window the picture grows to fill the stage's column, and keeps its own size in a short one", async ({ app, page }) => {
  await page.setViewportSize({ width: 1920, height: 1080 });
  await app.goto("./#v=1&stage=scores");
  const result = page.getByTestId("canvas-scores-h0");
  await expect(result).toHaveAttribute("data-drawn", "true");
  // Larger than its own size (digits 12 px), and nothing wider than the column.
  await expect.poll(() => digitSize(result)).toBeGreaterThan(14);
  const column = await box(page.locator(".stage .stage-body"));
  for (const canvas of await page.locator(".stage canvas").all()) {
    const b = await box(canvas);
    expect(b.x + b.width, "inside the stage's column").toBeLessThanOrEqual(column.x + column.width + 0.5);
  }
  await page.setViewportSize({ width: 1280, height: 560 });
  await expect.poll(() => digitSize(result)).toBeCloseTo(12, 0);
});

test("presenting the backward pass at 1024×768, every step of the default walk fits the screen", async ({ app, page }) => {
  await page.setViewportSize({ width: 1024, height: 768 });
  await app.goto("./?present=1#v=1&stage=back-loss");
  const bar = page.getByTestId("presenter-bar");
  for (let presses = 0; presses < 20; presses++) {
    const step = (await bar.getAttribute("data-step")) ?? "";
    await expect(page.getByTestId("stage-title")).toBeVisible();
    // Laid out again after a frame or two; the last check of each layout must leave it on screen.
    await page.waitForTimeout(400);
    await expect
      .poll(() => page.evaluate(() => document.documentElement.scrollHeight), { message: `${step}: no scrolling` })
      .toBeLessThanOrEqual(768);
    if (step.startsWith("back-input")) break;
    await page.keyboard.press("ArrowRight");
    await expect(bar).not.toHaveAttribute("data-step", step);
  }
});

test("leaving presenter mode while a head trains lays the step out for the page again", async ({ app, page }) => {
  await page.setViewportSize({ width: 1024, height: 768 });
  await app.goto("./?present=1#v=1&goal=previous&stage=softmax");
  await expect(page.locator(".stage canvas").first()).toHaveAttribute("data-drawn", "true");
  await page.getByTestId("presenter-bar").getByRole("button", { name: "Train" }).click();
  await page.waitForTimeout(800);
  await page.keyboard.press("Escape");
  await expect(page.getByTestId("presenter-bar")).toHaveCount(0);
  // Training redraws the step every frame: none of those frames may lay it out as presented.
  await page.waitForTimeout(1500);
  for (const canvas of await page.locator(".stage canvas").all()) {
    expect(await cellHeight(canvas), "the page's own cell height").toBeGreaterThanOrEqual(27.5);
  }
});

test("presenting at 1920×1080, a heatmap's title grows with its picture, no smaller than its shape", async ({ app, page }) => {
  await page.setViewportSize({ width: 1920, height: 1080 });
  await app.goto("./?present=1#v=1&stage=softmax");
  await expect(page.getByTestId("canvas-weights-h0")).toHaveAttribute("data-drawn", "true");
  const sizes = await page.locator(".stage .heatmap figcaption").first().evaluate((caption) => {
    const size = (el: Element | null) => parseFloat(getComputedStyle(el!).fontSize);
    return [size(caption.querySelector(".heatmap-title")), size(caption.querySelector(".heatmap-shape"))];
  });
  expect(sizes[0], "the title M₁ against “3 × 3”").toBeGreaterThanOrEqual(sizes[1]);
  expect(sizes[0]).toBeGreaterThanOrEqual(18);
});

test("an arrow that ends a row points down, at the picture it leads to", async ({ app, page }) => {
  // Every forward and backward stage in four places: 72 pages, about 20 s on an idle machine.
  test.setTimeout(120_000);
  // Presented at 1920×1080, the softmax step wraps its line after "M₁ softmax →": the arrow
  // turns down to A₁ rather than point right at nothing. Beside its picture, it points right.
  const places: [number, number, string][] = [
    [1920, 1080, "./?present=1"],
    [1024, 768, "./?present=1"],
    [1366, 768, "./"],
    [375, 812, "./"],
  ];
  for (const [width, height, url] of places) {
    await page.setViewportSize({ width, height });
    for (const stage of [...STAGES, ...BACKWARD_STAGES]) {
      await app.goto(`${url}#v=1&stage=${stage}`);
      await expect(page.locator(".stage-body .line, .stage-body .unreached").first()).toBeVisible();
      await settled(page);
      const wrong = await page.evaluate(() =>
        Array.from(document.querySelectorAll(".stage-body .op"))
          .filter((op) => op.textContent!.trim().endsWith("→"))
          .filter((op) => {
            const next = op.nextElementSibling ?? op.parentElement!.nextElementSibling;
            const below = !!next && next.getBoundingClientRect().top >= op.getBoundingClientRect().bottom - 1;
            const arrow = op.querySelector(".arrow");
            const turned = !!arrow && getComputedStyle(arrow).transform !== "none";
            // Down and back where its picture starts the next row left of it.
            const back = below && next!.getBoundingClientRect().left < op.getBoundingClientRect().left - 8;
            return below !== turned || back !== op.classList.contains("turns-back");
          })
          .map((op) => op.textContent!.trim()),
      );
      expect(wrong, `${stage} at ${width}×${height} ${url}: arrows pointing away from their pictures`).toEqual([]);
    }
  }
  // Ending a row of pictures, it points down and back to A₁ at the next row's start; on a
  // phone, on a row of its own, straight down at A₂ under it.
  const direction = async () => {
    await settled(page);
    const arrow = page.locator(".stage-body .op.turns .arrow").first();
    return arrow.evaluate((el) => {
      const [a, b] = getComputedStyle(el).transform.replace(/[^-\d.,]/g, "").split(",").map(Number);
      return Math.round((Math.atan2(b, a) * 180) / Math.PI);
    });
  };
  await page.setViewportSize({ width: 1920, height: 1080 });
  await app.goto("./?present=1#v=1&stage=softmax");
  expect(await direction()).toBe(135);
  await page.setViewportSize({ width: 375, height: 812 });
  await app.goto("./#v=1&stage=softmax");
  expect(await direction()).toBe(90);
});

/** Waits until every heatmap of the stage is drawn and the stage's layout has kept still for
 * five frames. */
async function settled(page: Page): Promise<void> {
  await page.waitForFunction(() =>
    Array.from(document.querySelectorAll(".stage canvas")).every((c) => c.getAttribute("data-drawn") === "true"),
  );
  await page.evaluate(
    () =>
      new Promise<void>((resolve) => {
        let last = "";
        let still = 0;
        const look = () => {
          const now = Array.from(document.querySelectorAll(".stage-body .heatmap, .stage-body .op"))
            .map((el) => {
              const r = el.getBoundingClientRect();
              return `${r.left},${r.top},${r.width},${r.height}`;
            })
            .join(";");
          still = now === last ? still + 1 : 0;
          last = now;
          if (still >= 5) resolve();
          else requestAnimationFrame(look);
        };
        requestAnimationFrame(look);
      }),
  );
}

test("presented, a cell's explanation leaves nothing to scroll: the step sits above it", async ({ app, page }) => {
  for (const [width, height] of [
    [1024, 768],
    [1920, 1080],
  ]) {
    await page.setViewportSize({ width, height });
    await app.goto("./?present=1#v=1&stage=softmax");
    await expect(page.getByTestId("canvas-weights-h0")).toHaveAttribute("data-drawn", "true");
    await clickCell(page, "canvas-weights-h0", 2, 0);
    const sheet = page.getByTestId("explain-panel");
    await expect(sheet).toHaveClass(/active/);
    await expect(async () => {
      expect(await page.evaluate(() => document.scrollingElement!.scrollHeight - innerHeight), `${width}×${height}`).toBeLessThanOrEqual(1);
      const [a, explained] = [await box(page.getByTestId("canvas-weights-h0")), await box(sheet)];
      expect(a.y + a.height, "A₁ above the explanation").toBeLessThanOrEqual(explained.y + 1);
      expect(explained.y + explained.height).toBeLessThanOrEqual(height + 1);
    }).toPass({ timeout: 5000 });
    await page.mouse.wheel(0, 400);
    await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
    expect(await page.evaluate(() => scrollY)).toBe(0);
  }
});

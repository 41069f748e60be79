// Print: Ctrl+P gives the current stage alone, black on white, with the heatmaps redrawn light
// and sharp; the export menu's "Print the worked example" shows every stage, forward and
// backward, every head, a page each, and opens the print dialog. The handout's print-media
// screenshot goes to the docs.
import path from "node:path";
import type { Locator, Page } from "@playwright/test";
import { test, expect, cellHeight, STAGES, BACKWARD_STAGES, SCREENSHOT_DIR, type AppPage } from "./fixtures";

/** Every stage the handout prints with the default settings: the forward ones, then the backward. */
const HANDOUT_STAGES = [...STAGES, ...BACKWARD_STAGES];

/** How many device pixels a drawn canvas has per CSS pixel of its drawing. */
async function sharpness(page: Page, canvas: string | Locator): Promise<number> {
  const located = typeof canvas === "string" ? page.getByTestId(canvas) : canvas;
  return located.evaluate((c) => {
    const canvas = c as HTMLCanvasElement;
    return canvas.width / Number(canvas.dataset.width);
  });
}

/** Counts the calls of window.print instead of opening the dialog. */
async function stubPrint(page: Page): Promise<void> {
  await page.addInitScript(() => {
    const w = window as unknown as { printed: number; sharpAtPrint: number[]; print: () => void };
    w.printed = 0;
    w.sharpAtPrint = [];
    // As a browser does once the dialog closes.
    w.print = () => {
      w.printed += 1;
      const canvas = document.querySelector<HTMLCanvasElement>("[data-testid='canvas-output']");
      if (canvas) w.sharpAtPrint.push(canvas.width / Number(canvas.dataset.width));
      setTimeout(() => window.dispatchEvent(new Event("afterprint")), 50);
    };
  });
}

/** Opens the handout of the page at `address` from the export menu, the print dialog stubbed. */
async function openHandout(app: AppPage, page: Page, address: string): Promise<void> {
  await stubPrint(page);
  await app.goto(address);
  await app.openPlace("share");
  await app.openExportMenu();
  await page.getByTestId("export-print").click();
}

const printed = (page: Page) => page.evaluate(() => (window as unknown as { printed: number }).printed);

test("Ctrl+P prints the current stage alone, light and sharp, even from the dark theme", async ({ app, page }) => {
  await app.goto("./?theme=dark#v=1&stage=softmax");
  const canvas = page.getByTestId("canvas-weights-h0");
  await expect(canvas).toHaveAttribute("data-drawn", "true");
  expect(await sharpness(page, "canvas-weights-h0")).toBeLessThan(2.5);
  await page.emulateMedia({ media: "print" });
  for (const part of [".topbar", ".controls", ".rail", ".stage-controls", ".head-tools", ".whatif", ".training"]) {
    await expect(page.locator(part).first(), part).toBeHidden();
  }
  // No control is printed; a matrix's name (a help trigger on screen) is printed as its name.
  await expect(page.locator("button:not(.help-trigger):visible")).toHaveCount(0);
  await expect(page.locator("input:visible, select:visible, textarea:visible")).toHaveCount(0);
  await expect(page.getByTestId("stage-title")).toHaveText("Softmax");
  await expect(page.getByTestId("stage-note")).toBeVisible();
  await expect(canvas).toBeVisible();
  await expect(page.locator("body")).toHaveCSS("background-color", "rgb(255, 255, 255)");
  await expect.poll(() => sharpness(page, "canvas-weights-h0")).toBeGreaterThanOrEqual(3);
  // The canvas is painted on a light background while printing.
  const corner = await canvas.evaluate((c) => Array.from((c as HTMLCanvasElement).getContext("2d")!.getImageData(1, 1, 1, 1).data));
  expect(corner.slice(0, 3).every((v) => v > 200), `corner ${corner}`).toBe(true);
  await page.emulateMedia({ media: "screen" });
  await expect.poll(() => sharpness(page, "canvas-weights-h0")).toBeLessThan(2.5);
});

test("the handout prints no cell picked on screen: it prints the worked example, not the explanation", async ({ app, page }) => {
  // The first screen explains A₁[hungry, I], outlined on screen.
  await openHandout(app, page, "./");
  await expect(page.getByTestId("handout")).toBeVisible();
  const weights = page.getByTestId("handout-softmax").getByTestId("canvas-weights-h0");
  await expect(weights).toHaveAttribute("data-drawn", "true");
  await expect(weights).toHaveAttribute("data-highlight", "cell:;rows:;cols:;cells:");
  const scores = page.getByTestId("handout-mask").getByTestId("canvas-masked-h0");
  await expect(scores).toHaveAttribute("data-highlight", "cell:;rows:;cols:;cells:");
});

test("the export menu prints the whole worked example, every stage and head, forward and backward, a page each", async ({ app, page }) => {
  await stubPrint(page);
  await app.goto("./#v=1&stage=scale");
  await app.openPlace("train");
  await app.openPlace("share");
  await app.openExportMenu();
  await page.getByTestId("export-print").click();
  // An A4 page's width at 96 px per inch.
  await page.setViewportSize({ width: 794, height: 1123 });
  const handout = page.getByTestId("handout");
  await expect(handout).toBeVisible();
  await expect(page.getByTestId("app")).toBeHidden();
  await expect(page.getByTestId("handout-title")).toHaveText("Self-attention, step by step: I am hungry");
  await expect(handout.locator("article.print-stage")).toHaveCount(HANDOUT_STAGES.length);
  for (const key of HANDOUT_STAGES) await expect(page.getByTestId(`handout-${key}`)).toBeVisible();
  // Both heads of a per-head stage, drawn.
  for (const h of [0, 1]) {
    await expect(page.getByTestId("handout-scores").getByTestId(`canvas-scores-h${h}`)).toHaveAttribute("data-drawn", "true");
  }
  // The backward stages follow the goal of the training settings, named once, in words that
  // are true on paper.
  const goal = page.getByTestId("handout-goal");
  await expect(goal).toContainText("“Pattern: each token looks at the key one position before it (the first at itself)”");
  await expect(goal).not.toContainText("Train the weights");
  await expect(page.getByTestId("handout-back-loss").getByTestId("handout-stage-title")).toHaveText("Pattern loss and ∂L/∂Aₕ");
  await expect(page.getByTestId("handout-back-loss").getByTestId("stage-note")).toContainText("L ≈");
  // Every head's gradients, drawn, with the targets they are measured against.
  for (const h of [0, 1]) {
    for (const [stage, panel] of [
      ["back-loss", `a_target-h${h}`],
      ["back-loss", `d_weights-h${h}`],
      ["back-softmax", `d_masked-h${h}`],
      ["back-scale", `d_scores-h${h}`],
      ["back-scores", `d_q-h${h}`],
      ["back-scores", `d_k-h${h}`],
    ]) {
      await expect(page.getByTestId(`handout-${stage}`).getByTestId(`canvas-${panel}`), panel).toHaveAttribute("data-drawn", "true");
    }
  }
  for (const panel of ["d_w_q", "d_w_k"]) {
    await expect(page.getByTestId("handout-back-projection").getByTestId(`canvas-${panel}`)).toHaveAttribute("data-drawn", "true");
  }
  await expect(page.getByTestId("handout-back-input").getByTestId("canvas-d_embeddings")).toHaveAttribute("data-drawn", "true");
  // The pattern loss reaches neither W_o nor the values: those stages say so, with no zeros
  // drawn, and point to the app for a task.
  for (const key of ["back-output", "back-weighted-sum"]) {
    const stage = page.getByTestId(`handout-${key}`);
    await expect(stage.getByTestId("unreached")).toContainText("no gradient reaches Y, W_o, C or the values");
    await expect(stage.getByTestId("unreached")).toContainText("in the app");
    await expect(stage).not.toContainText("Choose a task as the goal");
    await expect(stage.locator("canvas")).toHaveCount(0);
  }
  await expect(page.getByTestId("handout-back-projection").locator("canvas[data-testid='canvas-d_w_v']")).toHaveCount(0);
  await expect(page.getByTestId("handout-back-projection").getByTestId("stage-note")).toContainText("∂L/∂W_v is exactly 0");
  await expect.poll(() => printed(page)).toBe(1);
  // Drawn for paper before the dialog opened, and for the screen again after it closed.
  const atPrint = await page.evaluate(() => (window as unknown as { sharpAtPrint: number[] }).sharpAtPrint);
  expect(atPrint[0]).toBeGreaterThanOrEqual(3);
  await expect.poll(() => sharpness(page, "canvas-output")).toBeLessThan(2.5);

  await page.emulateMedia({ media: "print" });
  await expect(page.locator(".handout-bar")).toBeHidden();
  await expect(handout.locator("button:not(.help-trigger):visible")).toHaveCount(0);
  const breaks = await handout
    .locator("article.print-stage")
    .evaluateAll((stages) => stages.map((s) => getComputedStyle(s).breakBefore));
  expect(breaks).toEqual(["auto", ...Array(HANDOUT_STAGES.length - 1).fill("page")]);
  await expect.poll(() => sharpness(page, "canvas-output")).toBeGreaterThanOrEqual(3);
  // The one layout rule sizes each stage to its A4 page (the page's box inside its margins,
  // 703 × 1017 px; the first page also holds the title and settings), and a stage with one
  // result draws it at least half the page wide.
  const head = (await page.locator(".handout-head").boundingBox())!.height;
  const heights = await handout.locator("article.print-stage").evaluateAll((stages) => stages.map((s) => s.getBoundingClientRect().height));
  heights.forEach((h, i) => expect(h + (i === 0 ? head : 0), `${HANDOUT_STAGES[i]} fits its page`).toBeLessThanOrEqual(1017));
  for (const [stage, result] of [["concat", "concat"], ["output", "output"]]) {
    const width = (await page.getByTestId(`handout-${stage}`).getByTestId(`canvas-${result}`).boundingBox())!.width;
    expect(width, `${stage}: half the page`).toBeGreaterThanOrEqual(703 / 2);
  }
  // The gradients' diverging heatmaps are redrawn for paper too, on a light background.
  const gradient = page.getByTestId("handout-back-softmax").getByTestId("canvas-d_masked-h1");
  await expect.poll(() => sharpness(page, gradient)).toBeGreaterThanOrEqual(3);
  const corner = await gradient.evaluate((c) => Array.from((c as HTMLCanvasElement).getContext("2d")!.getImageData(1, 1, 1, 1).data));
  expect(corner.slice(0, 3).every((v) => v > 200), `corner ${corner}`).toBe(true);
  const top = (await page.getByTestId("handout-split").boundingBox())!.y;
  await page.screenshot({
    path: path.join(SCREENSHOT_DIR, "print-handout.png"),
    clip: { x: 0, y: 0, width: 794, height: Math.min(top, 2200) },
    fullPage: true,
  });
  await page.emulateMedia({ media: "screen" });

  // Print again from the bar; then back to the app as it was.
  await page.getByTestId("handout-print").click();
  await expect.poll(() => printed(page)).toBe(2);
  await page.getByTestId("handout-back").click();
  await expect(handout).toHaveCount(0);
  await expect(page.getByTestId("stage-title")).toHaveText("Scale ÷√d_k");
  // Escape leaves the handout too.
  await page.setViewportSize({ width: 1280, height: 800 });
  await app.openExportMenu();
  await page.getByTestId("export-print").click();
  await expect(handout).toBeVisible();
  await page.keyboard.press("Escape");
  await expect(handout).toHaveCount(0);
});

test("with the block, the handout has all 17 forward stages and the 8 backward ones", async ({ app, page }) => {
  await openHandout(app, page, "./#v=1&blk=1&src=le%20chat");
  await expect(page.getByTestId("handout-title")).toHaveText("Cross-attention, step by step: “I am hungry” (queries) attending to “le chat” (source)");
  await expect(page.locator("article.print-stage")).toHaveCount(25);
  // The source's own gradients close the backward stages.
  const input = page.getByTestId("handout-back-input");
  await expect(page.locator("article.print-stage").last()).toHaveAttribute("data-testid", "handout-back-input");
  await expect(input.getByTestId("canvas-d_embeddings-src")).toHaveAttribute("data-drawn", "true");
  await expect(page.getByTestId("handout-norm-2")).toBeVisible();
});

test("a task's backward stages reach W_o and the values on paper too", async ({ app, page }) => {
  await stubPrint(page);
  await app.goto("./#v=1&goal=copy_previous");
  await app.openPlace("share");
  await app.openExportMenu();
  await page.getByTestId("export-print").click();
  await expect(page.getByTestId("handout-goal")).toContainText("“Task: Y row i should equal E row i−1 (E row 1 for the first)”");
  await expect(page.locator("article.print-stage")).toHaveCount(HANDOUT_STAGES.length);
  await expect(page.getByTestId("unreached")).toHaveCount(0);
  await expect(page.getByTestId("handout-back-output").getByTestId("canvas-d_w_o")).toHaveAttribute("data-drawn", "true");
  for (const h of [0, 1]) {
    await expect(page.getByTestId("handout-back-weighted-sum").getByTestId(`canvas-d_v-h${h}`)).toHaveAttribute("data-drawn", "true");
  }
  await expect(page.getByTestId("handout-back-projection").getByTestId("canvas-d_w_v")).toHaveAttribute("data-drawn", "true");
});

test("a goal the settings refuse is named once with its reason, and the handout ends with the forward stages", async ({ app, page }) => {
  await stubPrint(page);
  await app.goto("./#v=1");
  await app.openPlace("inputs");
  await app.openPlace("share");
  await app.openPlace("train");
  await page.getByTestId("training").scrollIntoViewIfNeeded();
  await page.getByTestId("train-goal").selectOption("next");
  await page.getByTestId("causal").check();
  await app.openExportMenu();
  await page.getByTestId("export-print").click();
  const refused = page.getByTestId("handout-backward-error");
  await expect(refused).toContainText("cannot be used with these settings");
  await expect(refused).toContainText("“Pattern: each token looks at the key one position after it (the last at itself)”");
  await expect(refused).toContainText("causal mask");
  await expect(page.locator("article.print-stage")).toHaveCount(STAGES.length);
  await expect(page.locator("article.print-stage").last()).toHaveAttribute("data-testid", "handout-output");
  await expect(page.getByTestId("handout-goal")).toHaveCount(0);
  await expect(page.getByTestId("backward-error")).toHaveCount(0);
});

test("a stage whose notes would leave its pictures small prints the pictures on a page and the notes on the next", async ({ app, page }) => {
  await openHandout(app, page, "./#v=1&d=8&h=2&causal=1&rope=10000&kv=1&win=3&pf=3&tile=2&s=the%20cat%20sat%20on%20the%20mat&stage=decode");
  await page.setViewportSize({ width: 794, height: 1123 });
  await page.emulateMedia({ media: "print" });
  const decode = page.getByTestId("handout-decode");
  await expect(decode.getByTestId("canvas-dec-y")).toHaveAttribute("data-drawn", "true");
  // Paper has no tools to show the step: a line says which one is printed, as the tools do.
  await expect(decode.getByTestId("handout-decode-status")).toContainText("Prefill P = 3. Step 1 of 3: “on”, position 3");
  await expect(page.getByTestId("handout-tiles-status")).toContainText("Query “mat”, in blocks of B = 2 keys.");
  await expect(decode).toHaveAttribute("data-notes-apart", "true");
  const zoom = () => decode.evaluate((s) => parseFloat((s as HTMLElement).style.getPropertyValue("--zoom")));
  await expect.poll(zoom).toBeGreaterThanOrEqual(0.8);
  await expect(decode.locator(".stage-notes")).toHaveCSS("break-before", "page");
  // The pictures and the title above them fill one page; the notes start the next.
  const [top, notes] = await decode.evaluate((s) => [s.getBoundingClientRect().top, s.querySelector(".stage-notes")!.getBoundingClientRect().top]);
  expect(notes - top).toBeLessThanOrEqual(1017);
  // A stage whose notes are short keeps them on its page.
  await expect(page.getByTestId("handout-scores")).toHaveAttribute("data-notes-apart", "false");
});

test("the Llama-style handout names its block's norm: pre-norm, as GPT-2 and Llama place it, and RMSNorm", async ({ app, page }) => {
  await stubPrint(page);
  await app.goto();
  await app.openPlace("inputs");
  await page.getByTestId("preset").selectOption("llama");
  await expect(page.getByTestId("norm").locator("option:checked")).toHaveText("Pre-norm (GPT-2, Llama)");
  await app.openPlace("share");
  await app.openExportMenu();
  await page.getByTestId("export-print").click();
  await expect(page.locator(".handout-settings")).toContainText("Pre-norm (GPT-2, Llama), RMSNorm, SwiGLU (Llama) activation, d_ff = ");
});

test("on paper a word operator leaves its operands the room: M₁ drawn near A₁'s size", async ({ app, page }) => {
  // A4 at 96 px an inch.
  await page.setViewportSize({ width: 794, height: 1123 });
  await app.goto("./#v=1&stage=softmax");
  await expect(page.getByTestId("canvas-weights-h0")).toHaveAttribute("data-drawn", "true");
  await page.emulateMedia({ media: "print" });
  await expect(async () => {
    const operand = await cellHeight(page.getByTestId("canvas-masked-h0"));
    const result = await cellHeight(page.getByTestId("canvas-weights-h0"));
    expect(operand / result, `M₁'s cells ${operand} px against A₁'s ${result} px`).toBeGreaterThanOrEqual(0.8);
    expect(result).toBeGreaterThanOrEqual(28);
  }).toPass({ timeout: 5000 });
});

test("the handout on screen is laid out as on paper, so an arrow that ends a row there points down on paper too", async ({ app, page }) => {
  // The screen cannot tell which arrows end a row once the browser lays the page out for
  // printing: the screen's layout must be the paper's.
  await openHandout(app, page, "./#v=1&stage=scale");
  await expect(page.getByTestId("handout")).toBeVisible();
  await expect(page.getByTestId("handout-softmax").locator("canvas").first()).toHaveAttribute("data-drawn", "true");
  const arrows = () =>
    page.evaluate(() =>
      Array.from(document.querySelectorAll(".handout .op"))
        .filter((op) => op.textContent!.trim().endsWith("→"))
        .map((op) => {
          const next = (op.nextElementSibling ?? op.parentElement!.nextElementSibling)!;
          const below = next.getBoundingClientRect().top >= op.getBoundingClientRect().bottom - 1;
          const turned = op.classList.contains("turns");
          return `${op.closest("article")!.getAttribute("data-testid")} ${op.textContent!.trim()}: ${below ? "below" : "beside"}${turned ? ", turned" : ""}`;
        }),
    );
  await expect.poll(arrows).toContainEqual(expect.stringMatching(/, turned$/));
  const onScreen = await arrows();
  for (const arrow of onScreen) expect(arrow).toMatch(/: (below, turned|beside)$/);
  await page.emulateMedia({ media: "print" });
  await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
  expect(await arrows()).toEqual(onScreen);
});

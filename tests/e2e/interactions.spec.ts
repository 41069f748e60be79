// Interactions where people really use the app: a student's phone (touch), a lecturer's laptop,
// paper. Each test taps, clicks or prints as they do and measures what they would see.
import { test, expect, box, expectInside, overlaps } from "./fixtures";


const PHONES = [
  { width: 360, height: 640 },
  { width: 375, height: 812 },
];

for (const viewport of PHONES) {
  test.describe(`a phone at ${viewport.width}×${viewport.height}, by touch`, () => {
    test.use({ viewport, hasTouch: true, isMobile: true });

    test("Share & present opens on screen and the stepper keeps one line", async ({ app, page }) => {
      await app.goto("./#v=1&stage=softmax");
      await page.getByTestId("place-share").tap();
      const place = page.getByTestId("place-body-share");
      await expect(place).toBeVisible();
      // At the window's top under the places' bar, with its name, as every place opens.
      const bar = await box(page.locator(".topbar"));
      await expect.poll(async () => (await box(place)).y).toBeLessThanOrEqual(bar.y + bar.height + 8);
      await expect(place.getByRole("heading", { name: "Share & present" })).toBeInViewport();
      await expect(page.getByTestId("copy-embed")).toBeInViewport();
      expectInside(await box(page.getByTestId("copy-embed")), viewport, "Copy embed code");
      const progress = page.getByTestId("progress");
      await expect(progress).toHaveText("Stage 7 of 10");
      const line = await progress.evaluate((el) => parseFloat(getComputedStyle(el).lineHeight) || 24);
      expect((await box(progress)).height, "“7 of 10” on one line").toBeLessThan(line * 1.6);
    });

    test("the explanation's sheet steps aside while a place covers the stage, and comes back with it", async ({ app, page }) => {
      await app.goto("./");
      const panel = page.getByTestId("explain-panel");
      await expect(panel).toBeVisible();
      await page.getByTestId("place-inputs").tap();
      await expect(page.getByTestId("sentence-input")).toBeInViewport();
      // Nothing of the stage in the window: the sheet covers no token, no field.
      await expect.poll(() => page.getByTestId("stage-view").evaluate((el) => el.getBoundingClientRect().bottom <= 0 || el.getBoundingClientRect().top >= innerHeight)).toBe(true);
      await expect(panel).toBeHidden();
      await page.evaluate(() => window.scrollTo(0, 0));
      await expect(panel).toBeVisible();
    });

    test("tapping Quiz after scrolling brings the question into view", async ({ app, page }) => {
      await app.goto("./#v=1&stage=softmax");
      await app.openPlace("share");
      await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
      await page.getByTestId("quiz-me").tap();
      const prompt = page.getByTestId("quiz-prompt");
      await expect(prompt).not.toBeEmpty();
      await expect.poll(async () => {
        const b = await box(prompt);
        return b.y >= 0 && b.y + b.height <= viewport.height;
      }, { message: "the question is on screen" }).toBe(true);
    });

    test("a tapped cell's sheet closes with a finger-sized button, and nothing says hover", async ({ app, page }) => {
      await app.goto("./#v=1&stage=softmax");
      const canvas = page.getByTestId("canvas-weights-h0");
      await expect(canvas).toHaveAttribute("data-drawn", "true");
      await canvas.scrollIntoViewIfNeeded();
      await canvas.tap({ position: { x: 90, y: 50 } });
      const close = page.getByTestId("explain-panel").getByRole("button", { name: "Clear the selection" });
      await expect(close).toBeVisible();
      const b = await box(close);
      expect(b.width, "close button width").toBeGreaterThanOrEqual(44);
      expect(b.height, "close button height").toBeGreaterThanOrEqual(44);
      await close.tap();
      await expect(page.getByTestId("explain-panel")).not.toHaveClass(/\bactive\b/);
      const visibleText = await page.evaluate(() => document.body.innerText);
      expect(visibleText.toLowerCase()).not.toContain("hover");
      await expect(page.locator(".hint-touch").first()).toBeVisible();
    });
  });
}

test.describe("a laptop at 1366×768", () => {
  test.use({ viewport: { width: 1366, height: 768 } });

  test("an open explanation covers neither the settings nor the token chips, and the editor shows its last column", async ({ app, page }) => {
    await app.goto("./#v=1&stage=scores");
    await app.openPlace("inputs");
    const canvas = page.getByTestId("canvas-scores-h0");
    await expect(canvas).toHaveAttribute("data-drawn", "true");
    await canvas.click({ position: { x: 90, y: 60 } });
    const panel = await box(page.getByTestId("explain-panel"));
    expect(panel.height).toBeGreaterThan(40);
    for (const id of ["d-model", "n-heads", "scale-mode", "temperature", "causal", "positional"]) {
      const control = page.getByTestId(id);
      await control.scrollIntoViewIfNeeded();
      const b = await box(control);
      expect(overlaps(b, await box(page.getByTestId("explain-panel"))), `${id} is not under the explanation`).toBe(false);
    }
    await page.getByTestId("token").first().scrollIntoViewIfNeeded();
    for (const chip of await page.getByTestId("token").all()) {
      expect(overlaps(await box(chip), await box(page.getByTestId("explain-panel"))), "a token chip is not under it").toBe(false);
    }
    await page.getByTestId("editor-tab-w_q").click();
    const scroll = page.locator(".editor-scroll").first();
    const overflow = await scroll.evaluate((el) => el.scrollWidth - el.clientWidth);
    expect(overflow, "the editor's four columns fit without scrolling").toBeLessThanOrEqual(0);
  });
});

test("at 1366×768 a step to another stage closes the explanation, and Back brings the cell back", async ({ app, page }) => {
  await page.setViewportSize({ width: 1366, height: 768 });
  await app.goto("./#v=1&stage=scores");
  const canvas = page.getByTestId("canvas-scores-h0");
  await expect(canvas).toHaveAttribute("data-drawn", "true");
  await canvas.click({ position: { x: 90, y: 60 } });
  await expect(page.getByTestId("explain-title")).toContainText("S₁[");
  // The address holds the cell once fine adjustments pause.
  await expect(page).toHaveURL(/&cell=scores-h0\./);
  await page.getByTestId("next").click();
  await expect(page.getByTestId("stage-title")).toContainText("Scale");
  await expect(page.getByTestId("explain-panel")).not.toHaveClass(/\bactive\b/);
  await expect(page.getByTestId("explain-title")).toHaveCount(0);
  // A stage and a cell that change together, as Back brings them, stay together.
  await page.goBack();
  await expect(page.getByTestId("stage-title")).toContainText("Scores");
  await expect(page.getByTestId("explain-title")).toContainText("S₁[");
});

test("presenting at 1024×768, a step to the next head closes the explanation of the head left behind", async ({ app, page }) => {
  await page.setViewportSize({ width: 1024, height: 768 });
  await app.goto("./?present=1#v=1&stage=scores");
  const scores = page.getByTestId("canvas-scores-h0");
  await expect(scores).toHaveAttribute("data-drawn", "true");
  const b = (await scores.boundingBox())!;
  await scores.click({ position: { x: b.width * 0.5, y: b.height * 0.6 } });
  await expect(page.getByTestId("explain-title")).toContainText("S₁[");
  await page.keyboard.press("ArrowRight");
  await expect(page.getByTestId("presenter-bar")).toContainText("Head 2 of 2");
  await expect(page.getByTestId("canvas-scores-h1")).toHaveAttribute("data-drawn", "true");
  await expect(page.getByTestId("explain-title")).toHaveCount(0);
  // A cell of the head on show opens as before.
  const second = page.getByTestId("canvas-scores-h1");
  const c = (await second.boundingBox())!;
  await second.click({ position: { x: c.width * 0.5, y: c.height * 0.6 } });
  await expect(page.getByTestId("explain-title")).toContainText("S₂[");
});

test("presenting, a step to the next weight's gradient closes the explanation and asks its own question", async ({ app, page }) => {
  await page.setViewportSize({ width: 1920, height: 1080 });
  await app.goto("./?present=1#v=1&stage=back-projection&goal=copy_first");
  const wk = page.getByTestId("canvas-d_w_q");
  await expect(wk).toHaveAttribute("data-drawn", "true");
  const b = (await wk.boundingBox())!;
  await wk.click({ position: { x: b.width * 0.5, y: b.height * 0.6 } });
  await expect(page.getByTestId("explain-title")).toContainText("∂L/∂W_q[");
  await page.keyboard.press("ArrowRight");
  await expect(page.getByTestId("presenter-head")).toHaveText("∂L/∂W_k: 2 of 3");
  await expect(page.getByTestId("explain-title")).toHaveCount(0);

  // With the quiz: the question is about W_q; once revealed, the step to W_k asks about W_k
  // behind its own hidden result, not about W_q, and a step back brings W_q's answer back.
  await page.goto("about:blank");
  await app.goto("./?present=1#v=1&stage=back-projection&goal=copy_first&quiz=1");
  await expect(page.getByTestId("quiz-prompt")).toContainText("move W_q[");
  await page.keyboard.press("r");
  await expect(page.getByTestId("quiz-feedback")).toContainText("The answer is ");
  await page.keyboard.press("ArrowRight");
  await expect(page.getByTestId("presenter-head")).toHaveText("∂L/∂W_k: 2 of 3");
  await expect(page.getByTestId("quiz-prompt")).toContainText("move W_k[");
  await expect(page.getByTestId("quiz-feedback")).toHaveText("");
  await expect(page.locator(".stage [data-testid^='hidden-']")).toHaveCount(1);
  await page.keyboard.press("ArrowLeft");
  await expect(page.getByTestId("quiz-prompt")).toContainText("move W_q[");
  await expect(page.getByTestId("quiz-feedback")).toContainText("The answer is ");
});

test("at 1280 px the stage rail names every stage", async ({ app, page }) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  await app.goto("./#v=1&stage=scores");
  for (const name of await page.locator(".rail .rail-name").all()) {
    const b = await box(name);
    expect(b.width, `${await name.textContent()} shows`).toBeGreaterThan(8);
  }
  for (const ol of await page.locator(".rail ol").all()) {
    expect(await ol.evaluate((el) => el.scrollWidth - el.clientWidth), "the rail does not scroll").toBeLessThanOrEqual(0);
  }
});

test("a fresh β's heatmap is drawn on a real scale, not 0.00 to 0.00", async ({ app, page }) => {
  await app.goto("./#v=1");
  await app.openPlace("inputs");
  await page.getByTestId("block").check();
  await page.getByTestId("stage-norm-1").click();
  const canvas = page.getByTestId("canvas-ln_1_beta");
  await expect(canvas).toHaveAttribute("data-drawn", "true");
  await expect(canvas).toHaveAttribute("data-range", "1");
  await expect(canvas).toHaveAttribute("aria-label", /one row/);
});

test("the printed worked example is a page a stage, without pointer hints", async ({ app, page }) => {
  await page.addInitScript(() => {
    window.print = () => {};
  });
  await app.goto("./#v=1");
  await app.openPlace("share");
  await page.getByTestId("export-menu").click();
  await page.getByTestId("export-print").click();
  await expect(page.getByTestId("handout")).toBeVisible();
  await expect(page.locator("[data-testid^='handout-'] canvas").last()).toHaveAttribute("data-drawn", "true");
  await page.emulateMedia({ media: "print" });
  await expect(page.locator(".lines-hint").first()).toBeHidden();
  const pdf = await page.pdf({ format: "A4", printBackground: true });
  const pages = (pdf.toString("latin1").match(/\/Type\s*\/Page[^s]/g) ?? []).length;
  expect(pages, "one page for each of the 10 forward and 8 backward stages").toBe(18);
});

test("a preset broken by the learner's own sentence says so once, and Restore brings it back", async ({ app, page }) => {
  await app.goto();
  await app.openPlace("inputs");
  await page.getByTestId("preset").selectOption("previous-token");
  await expect(page.getByTestId("caption-broken")).toHaveCount(0);
  await page.getByTestId("sentence-input").fill("my own words here");
  const broken = page.getByTestId("caption-broken");
  await expect(broken).toHaveCount(1);
  await expect(broken).toContainText("Press Restore the preset to get it back");
  await expect(broken).toContainText("click Zero on the Embeddings tab");
  await expect(broken).not.toContainText("token 7");
  expect(((await broken.textContent()) ?? "").match(/no longer/g)?.length, "said once").toBe(1);
  expect(await broken.textContent()).not.toMatch(/ {2}/);
  await page.getByTestId("caption-restore").click();
  await expect(page.getByTestId("caption-broken")).toHaveCount(0);
  await expect(app.tokens.first()).toHaveText("each");
  // The editors say how to build such a head by hand.
  await page.getByTestId("editor-tab-w_q").click();
  const recipe = page.getByTestId("recipe-w_q");
  await recipe.locator("summary").click();
  await expect(recipe).toContainText("4·cos 1 ≈ 2.16");
});

test("'with editors' reads as part of Copy embed code, not on its own", async ({ app, page }) => {
  await page.setViewportSize({ width: 1366, height: 768 });
  await app.goto();
  await app.openPlace("share");
  const group = page.getByRole("group", { name: "Embed code" });
  await expect(group.getByTestId("copy-embed")).toBeVisible();
  await expect(group.getByTestId("embed-editors")).toBeVisible();
  const outline = await group.evaluate((el) => getComputedStyle(el).borderTopStyle);
  expect(outline, "drawn as one control").toBe("solid");
});

test("the what-if lab's pictures follow an edit made while the lab was out of sight", async ({ app, page }) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  await app.goto("./#v=1&stage=scores");
  await app.openPlace("inputs");
  await app.openPlace("lab");
  const canvas = page.getByTestId("canvas-whatif-shown");
  await canvas.scrollIntoViewIfNeeded();
  await expect(canvas).toHaveAttribute("data-drawn", "true");
  const pixels = () =>
    canvas.evaluate((el) => {
      const cv = el as HTMLCanvasElement;
      return Array.from(cv.getContext("2d")!.getImageData(0, 0, cv.width, cv.height).data).join(",");
    });
  const before = await pixels();
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.getByTestId("editor-tab-w_q").click();
  await page.getByTestId("cell-w_q-0-0").fill("3");
  await page.getByTestId("cell-w_q-0-0").press("Enter");
  await canvas.scrollIntoViewIfNeeded();
  await expect.poll(pixels, { message: "the lab's picture was redrawn with the new numbers" }).not.toBe(before);
});

for (const viewport of [
  { width: 1366, height: 768 },
  { width: 1920, height: 1080 },
]) {
  test(`presenting at ${viewport.width}×${viewport.height} with two heads, the attention lines are large and the step fills the screen`, async ({ app, page }) => {
    await page.setViewportSize(viewport);
    await app.goto("./?present=1#v=1&stage=softmax");
    const weights = page.getByTestId("canvas-weights-h0");
    await expect(weights).toHaveAttribute("data-drawn", "true");
    await expect.poll(async () => {
      const [lines, result, stage] = await Promise.all([
        box(page.locator(".attention-lines").first()),
        box(weights),
        box(page.locator(".stage").first()),
      ]);
      return (
        lines.height >= 0.5 * result.height &&
        lines.width >= stage.width / 3 &&
        stage.y + stage.height >= 0.9 * viewport.height &&
        lines.y + lines.height <= viewport.height
      );
    }, { message: "lines at least half the result's height and a third of the stage's width; the step reaches the foot of the screen" }).toBe(true);
  });
}

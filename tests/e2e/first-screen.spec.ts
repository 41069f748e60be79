// The first screen: a bare address opens calmly on an attention pattern with one cell explained,
// everything else one click or tap away in the places of the top bar.

import { test, expect, box, cellBox, overlaps, type Box } from "./fixtures";
import type { Page } from "@playwright/test";

const SIZES = [
  { width: 1280, height: 800 },
  { width: 1920, height: 1080 },
  { width: 1366, height: 768 },
  { width: 375, height: 812 },
  { width: 360, height: 640 },
];

/**
 * The controls and the words a reader sees in the window. A control is a stop of the Tab key
 * that is on screen; a figure (a heatmap with its symbol's help, or the attention lines) is one
 * control, as the rail is (one stop, ← and → from there). Words are the visible words that hold
 * a letter, so the numbers of a picture are not words.
 */
async function firstScreen(page: Page): Promise<{ controls: string[]; words: number }> {
  return page.evaluate(() => {
    const vw = innerWidth;
    const vh = innerHeight;
    const inView = (r: DOMRect) =>
      r.width > 2 && r.height > 2 && r.bottom > 0 && r.right > 0 && r.top < vh && r.left < vw;
    const shown = (el: Element) => {
      const style = getComputedStyle(el);
      return style.visibility !== "hidden" && style.display !== "none" && !el.closest("[hidden]");
    };
    const stops = Array.from(
      document.querySelectorAll<HTMLElement | SVGElement>(
        "a[href], button, input, select, textarea, summary, [tabindex]",
      ),
    ).filter((el) => el.tabIndex >= 0 && !(el as HTMLButtonElement).disabled && shown(el) && inView(el.getBoundingClientRect()));
    const controls = new Map<Element, string>();
    for (const el of stops) {
      const figure = el.closest("figure.heatmap, figure.lines-figure") ?? el;
      controls.set(figure, figure.getAttribute("data-testid") ?? figure.tagName);
    }
    let words = 0;
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    while (walker.nextNode()) {
      const node = walker.currentNode;
      const text = (node.textContent ?? "").trim();
      const parent = node.parentElement;
      if (!text || !parent || !shown(parent)) continue;
      const range = document.createRange();
      range.selectNodeContents(node);
      if (!inView(range.getBoundingClientRect())) continue;
      words += text.split(/\s+/).filter((w) => /\p{L}/u.test(w)).length;
    }
    return { controls: Array.from(controls.values()), words };
  });
}

for (const size of SIZES) {
  test(`a bare address at ${size.width}×${size.height} opens on attention with one cell explained`, async ({ app, page }) => {
    await page.setViewportSize(size);
    await app.goto("./");
    await expect(page.getByTestId("stage-title")).toHaveText("Softmax");
    // The pattern and its lines are on the first screen.
    const weights = page.getByTestId("canvas-weights-h0");
    await expect(weights).toHaveAttribute("data-drawn", "true");
    const picture = await box(weights);
    expect(picture.y, "A₁ starts inside the window").toBeGreaterThanOrEqual(0);
    expect(picture.y + picture.height / 2, "A₁ is mostly inside the window").toBeLessThan(size.height);
    // hungry's row puts most of its weight on I, and that cell is explained.
    await expect(page.getByTestId("explain-title")).toContainText("A₁[hungry, I]");
    const explanation = await box(page.getByTestId("explain-panel"));
    const cell: Box = await cellBox(weights, 2, 0);
    expect(overlaps(explanation, cell), "the explanation leaves its cell in view").toBe(false);
    const scores = await cellBox(page.getByTestId("canvas-masked-h0"), 2, 0);
    if (size.width > 960) {
      expect(overlaps(explanation, scores), "the explanation leaves its operand in view").toBe(false);
    }
    for (const id of ["prev", "next"]) {
      expect(overlaps(explanation, await box(page.getByTestId(id))), `the explanation leaves ${id} in view`).toBe(false);
    }
    // The address carries what the page opened on, so a reload opens the same.
    expect(new URL(page.url()).hash).toContain("stage=softmax");
    // The backward stages wait for a training goal.
    await expect(page.getByTestId("rail-backward")).toBeHidden();
    if (size.width >= 1920) {
      // A projector's window holds the whole first screen: nothing to scroll.
      await expect.poll(() => page.evaluate(() => document.documentElement.scrollHeight)).toBeLessThanOrEqual(size.height);
    }
    await app.screenshot(`first-screen-${size.width}x${size.height}`);
  });
}

test("the first screen at 1280×800 has at most 15 controls and 150 words", async ({ app, page }) => {
  await app.goto("./");
  await expect(page.getByTestId("canvas-weights-h1")).toHaveAttribute("data-drawn", "true");
  await expect(page.getByTestId("explain-title")).toBeVisible();
  const { controls, words } = await firstScreen(page);
  expect(controls.length, `controls: ${controls.join(", ")}`).toBeLessThanOrEqual(15);
  expect(words).toBeLessThanOrEqual(150);
  expect(words, "the screen says something").toBeGreaterThan(20);
  // Next is the primary button, and the editors are not on the first screen.
  await expect(page.getByTestId("next")).toHaveCSS("font-weight", "600");
  await expect(page.getByTestId("sentence-input")).toHaveCount(0);
});

test("each place opens with one click, beside or below the stage, and closes again", async ({ app, page }) => {
  await app.goto("./");
  for (const [key, inside] of [
    ["inputs", "sentence-input"],
    ["train", "train-run"],
    ["lab", "whatif-lab"],
    ["share", "copy-link"],
  ] as const) {
    await page.getByTestId(`place-${key}`).click();
    await expect(page.getByTestId(`place-${key}`)).toHaveAttribute("aria-expanded", "true");
    await expect(page.getByTestId(inside)).toBeInViewport();
  }
  // Each toggles on its own: the weights stay open while a head trains.
  await expect(page.getByTestId("place-body-inputs")).toBeVisible();
  await page.getByTestId("place-share").click();
  await expect(page.getByTestId("place-body-share")).toBeHidden();
  // A place keeps what was typed while it was closed.
  await app.openPlace("inputs");
  await page.getByTestId("sentence-input").fill("the cat sat");
  await page.getByTestId("place-inputs").click();
  await app.openPlace("inputs");
  await expect(page.getByTestId("sentence-input")).toHaveValue("the cat sat");
});

test("the sentence's place names the preset the page opened on, with its caption", async ({ app, page }) => {
  // A bare address opens on the first look.
  await app.goto("./");
  await app.openPlace("inputs");
  await expect(page.getByTestId("preset")).toHaveValue("first-look");
  await expect(page.getByTestId("preset-caption")).toBeVisible();
  // An edit of its sentence keeps the caption, which says the sentence is no longer the preset's.
  await page.getByTestId("sentence-input").fill("I am not hungry");
  await page.getByTestId("sentence-input").press("Enter");
  await expect(page.getByTestId("preset-caption")).toContainText("describes the preset's own sentence, “I am hungry”");
});

test("the backward stages join the rail once training is opened", async ({ app, page }) => {
  await app.goto("./");
  await expect(page.getByTestId("rail-backward")).toBeHidden();
  await app.openPlace("train");
  await expect(page.getByTestId("rail-backward")).toBeVisible();
  await expect(app.stage("output")).toBeVisible();
  await expect(page.getByTestId("stage-back-loss")).toBeVisible();
});

test("the rail is one stop for Tab, and the arrows carry the focus along it", async ({ app, page }) => {
  await app.goto("./");
  await expect(page.getByTestId("stage-title")).toHaveText("Softmax");
  await app.stage("softmax").focus();
  await page.keyboard.press("ArrowRight");
  await expect(page.getByTestId("stage-title")).toHaveText("Weighted sum AₕVₕ");
  await expect(page.getByTestId("stage-weighted-sum")).toBeFocused();
  await page.keyboard.press("Tab");
  await expect(page.getByTestId("prev")).toBeFocused();
});

test("at 1280×800 the sentence's place leaves the settings in sight above an open explanation, and fades where more lies below", async ({ app, page }) => {
  await app.goto("./");
  await expect(page.getByTestId("explain-title")).toContainText("A₁[hungry, I]");
  await app.openPlace("inputs");
  // The first setting can be reached where it is: nothing covers it.
  const select = page.getByTestId("d-model");
  const reachable = await select.evaluate((el) => {
    const r = el.getBoundingClientRect();
    const hit = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
    return hit === el || el.contains(hit);
  });
  expect(reachable, "the first setting is not under the explanation").toBe(true);
  const places = page.locator(".side-places");
  await expect.poll(() => places.evaluate((el) => getComputedStyle(el).getPropertyValue("--places-fade"))).toBe("48px");
  await places.evaluate((el) => el.scrollTo({ top: el.scrollHeight }));
  await expect.poll(() => places.evaluate((el) => getComputedStyle(el).getPropertyValue("--places-fade"))).toBe("0px");
});

test("with a mouse, the tip under the stage names the arrow keys", async ({ app, page }) => {
  await app.goto("./#v=1&stage=scores");
  // What the reader sees, not the text hidden for the other kind of pointer.
  await expect.poll(() => page.getByTestId("step-tip").innerText()).toBe("Tip: ← and → step through the stages.");
});

test("the skip link takes the keyboard to the stage", async ({ app, page }) => {
  await app.goto("./");
  await page.keyboard.press("Tab");
  await expect(page.getByTestId("skip-link")).toBeFocused();
  await expect(page.getByTestId("skip-link")).toBeInViewport();
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("stage-title")).toBeFocused();
  // The address still holds the state, not the link's target.
  expect(new URL(page.url()).hash).toContain("v=1");
});

test.describe("on a phone", () => {
  test.use({ viewport: { width: 375, height: 812 }, hasTouch: true, isMobile: true });

  test("the first screen's explanation opens folded where it would cover its cell, and a tap opens it with the cell kept in sight", async ({ app, page }) => {
    await app.goto("./");
    const sheet = page.getByTestId("explain-panel");
    const weights = page.getByTestId("canvas-weights-h0");
    // Open, the sheet would cover hungry's row: the page opens with it folded to its title.
    await expect(sheet).toHaveClass(/folded/);
    await expect(page.getByTestId("explain-title")).toBeVisible();
    await expect(page.getByTestId("explain-expansion")).toBeHidden();
    const folded = await box(sheet);
    expect(overlaps(folded, await cellBox(weights, 2, 0)), "the cell shows above the folded sheet").toBe(false);
    await expect(page.getByTestId("stage-title")).toBeInViewport();
    await page.getByTestId("explain-fold").tap();
    await expect(page.getByTestId("explain-expansion")).toBeVisible();
    const open = await box(sheet);
    expect(folded.height, "folded, the sheet is its title").toBeLessThan(open.height / 2);
    // Opened by the reader, the sheet scrolls its cell into sight above it.
    await expect.poll(async () => overlaps(await box(sheet), await cellBox(weights, 2, 0))).toBe(false);
    expect((await cellBox(weights, 2, 0)).y).toBeGreaterThanOrEqual(0);
    await page.getByTestId("explain-fold").tap();
    await expect(page.getByTestId("explain-expansion")).toBeHidden();
    // A cell the reader taps opens its explanation whole, the cell in sight.
    await page.evaluate(() => window.scrollTo(0, 0));
    const cell = await cellBox(weights, 0, 1);
    await page.touchscreen.tap(cell.x + cell.width / 2, cell.y + cell.height / 2);
    await expect(page.getByTestId("explain-title")).toContainText("A₁[I, am]");
    await expect(page.getByTestId("explain-expansion")).toBeVisible();
    await expect.poll(async () => overlaps(await box(sheet), await cellBox(weights, 0, 1))).toBe(false);
  });

  for (const [address, size] of [
    ["./", { width: 375, height: 812 }],
    ["./", { width: 390, height: 844 }],
    ["./", { width: 360, height: 640 }],
    ["./#v=1&stage=scores&cell=scores-h0.2.1", { width: 375, height: 812 }],
  ] as const) {
    test(`${address} at ${size.width}×${size.height} opens as it stays: nothing moves after the first picture, its cell in sight`, async ({ app, page }) => {
      await page.setViewportSize(size);
      // After each painted frame: where the page is scrolled to, and where the sheet's top is.
      await page.addInitScript(() => {
        const seen: string[] = [];
        (window as unknown as { seen: string[] }).seen = seen;
        const look = () => {
          const sheet = document.querySelector("#explain-panel.active");
          const drawn = document.querySelector("canvas[data-drawn=true]");
          if (drawn) seen.push(`${Math.round(scrollY)} ${sheet ? Math.round(sheet.getBoundingClientRect().top) : "-"}`);
          if (seen.length < 40) requestAnimationFrame(() => setTimeout(look, 0));
        };
        requestAnimationFrame(() => setTimeout(look, 0));
      });
      await app.goto(address);
      await expect.poll(() => page.evaluate(() => (window as unknown as { seen: string[] }).seen.length), { timeout: 10000 }).toBeGreaterThanOrEqual(40);
      const seen = await page.evaluate(() => (window as unknown as { seen: string[] }).seen);
      expect(new Set(seen).size, `scroll and sheet from the first picture on: ${[...new Set(seen)].join(", ")}`).toBe(1);
      expect(seen[0].split(" ")[1], "the sheet is there from the first picture").not.toBe("-");
      const panel = new URL(page.url()).hash.match(/cell=([a-z0-9-]+)\.(\d+)\.(\d+)/);
      const [name, row, col] = panel ? [panel[1], Number(panel[2]), Number(panel[3])] : ["weights-h0", 2, 0];
      const cell = await cellBox(page.getByTestId(`canvas-${name}`), row, col);
      const sheet = await box(page.getByTestId("explain-panel"));
      expect(cell.y, "the cell is below the window's top").toBeGreaterThanOrEqual(0);
      expect(cell.y + cell.height, "the cell is above the sheet").toBeLessThanOrEqual(sheet.y);
    });
  }

  test("the sentence is one tap from the first screen", async ({ app, page }) => {
    await app.goto("./");
    const inputs = page.getByTestId("place-inputs");
    await expect(inputs).toBeInViewport();
    await inputs.tap();
    await expect(page.getByTestId("sentence-input")).toBeInViewport();
    // The place covers the stage: the explanation's sheet steps aside, so it covers nothing the
    // learner types in (not even the token chips below the field), and folds to its title.
    await expect(page.getByTestId("explain-panel")).toBeHidden();
    await expect(page.getByTestId("tokens")).toBeInViewport();
    await page.evaluate(() => window.scrollTo(0, 0));
    await expect(page.getByTestId("explain-title")).toBeVisible();
    await expect(page.getByTestId("explain-expansion")).toBeHidden();
  });

  test("closing a place goes back to where the page was", async ({ app, page }) => {
    await app.goto("./");
    await expect(page.getByTestId("explain-title")).toBeVisible();
    const before = await page.evaluate(() => scrollY);
    await page.getByTestId("place-inputs").tap();
    await expect(page.getByTestId("sentence-input")).toBeInViewport();
    await page.getByTestId("place-inputs").tap();
    await expect(page.getByTestId("sentence-input")).toBeHidden();
    await expect.poll(() => page.evaluate(() => scrollY)).toBeCloseTo(before, -1);
  });

  test("Next and Previous open a stage at its top", async ({ app, page }) => {
    await app.goto("./#v=1&stage=softmax");
    await expect(page.getByTestId("stage-title")).toHaveText("Softmax");
    await page.mouse.wheel(0, 900);
    await expect.poll(() => page.evaluate(() => scrollY)).toBeGreaterThan(300);
    await page.getByTestId("next").tap();
    await expect(page.getByTestId("stage-title")).toHaveText("Weighted sum AₕVₕ");
    await expect.poll(async () => (await box(page.getByTestId("stage-view"))).y).toBeGreaterThanOrEqual(-1);
    await expect(page.getByTestId("stage-title")).toBeInViewport();
    // Below the places' bar, which stays at the top of the window, not under it.
    const bar = await box(page.locator(".topbar"));
    await expect.poll(async () => (await box(page.getByTestId("stage-title"))).y).toBeGreaterThanOrEqual(bar.y + bar.height - 1);
    // A place opened from the bar shows its top below the bar too.
    await page.getByTestId("place-train").tap();
    await expect.poll(async () => (await box(page.getByTestId("place-body-train"))).y).toBeGreaterThanOrEqual(bar.y + bar.height - 1);
    await page.mouse.wheel(0, 900);
    await page.getByTestId("prev").tap();
    await expect(page.getByTestId("stage-title")).toHaveText("Softmax");
    await expect(page.getByTestId("stage-title")).toBeInViewport();
  });

  test("a swipe across the stage steps to the next and the previous stage", async ({ app, page }) => {
    await app.goto("./#v=1&stage=scores");
    await expect(page.getByTestId("stage-title")).toHaveText("Scores QₕKₕᵀ");
    const swipe = async (from: number, to: number) => {
      const title = await box(page.getByTestId("stage-title"));
      const y = title.y + title.height / 2;
      await page.evaluate(
        ([from, to, y]) => {
          const target = document.querySelector("[data-testid=stage-title]")!;
          const touch = (x: number) =>
            new Touch({ identifier: 1, target, clientX: x, clientY: y });
          target.dispatchEvent(new TouchEvent("touchstart", { bubbles: true, touches: [touch(from)], changedTouches: [touch(from)] }));
          target.dispatchEvent(new TouchEvent("touchend", { bubbles: true, touches: [], changedTouches: [touch(to)] }));
        },
        [from, to, y],
      );
    };
    await swipe(300, 100);
    await expect(page.getByTestId("stage-title")).toHaveText("Scale ÷√d_k");
    await swipe(100, 300);
    await expect(page.getByTestId("stage-title")).toHaveText("Scores QₕKₕᵀ");
    // A short move is no swipe.
    await swipe(200, 170);
    await expect(page.getByTestId("stage-title")).toHaveText("Scores QₕKₕᵀ");
  });

  test("the tip under the stage names the swipe, not the arrow keys", async ({ app, page }) => {
    await app.goto("./#v=1&stage=scores");
    await expect
      .poll(() => page.getByTestId("step-tip").innerText())
      .toBe("Tip: swipe across the stage to step through the stages.");
  });

  test("a tap that closes a menu does nothing else", async ({ app, page }) => {
    await app.goto("./#v=1&stage=softmax");
    await app.openPlace("share");
    await page.getByTestId("export-menu").tap();
    await expect(page.getByTestId("export-scenario")).toBeVisible();
    // The tap lands on a heatmap cell: it closes the menu and picks nothing.
    const canvas = page.getByTestId("canvas-weights-h0");
    await canvas.scrollIntoViewIfNeeded();
    const cell = await cellBox(canvas, 1, 1);
    await page.touchscreen.tap(cell.x + cell.width / 2, cell.y + cell.height / 2);
    await expect(page.getByTestId("export-scenario")).toBeHidden();
    await expect(page.getByTestId("explain-title")).toHaveCount(0);
    // The next tap picks the cell.
    await page.touchscreen.tap(cell.x + cell.width / 2, cell.y + cell.height / 2);
    await expect(page.getByTestId("explain-title")).toContainText("A₁[am, am]");
  });
});

for (const size of [
  { width: 1280, height: 800 },
  { width: 375, height: 812 },
]) {
  test(`at ${size.width}×${size.height} the head learns on screen together with its loss curve`, async ({ app, page }) => {
    await page.setViewportSize(size);
    await app.goto("./#v=1&s=the%20cat%20sat%20on%20a%20mat&causal=1");
    await app.openPlace("train");
    await page.getByTestId("train-step").click();
    await expect(page.getByTestId("train-status")).toContainText("After 1 step");
    const head = page.getByTestId("canvas-train-weights-h0");
    const lines = page.getByTestId("train-lines-h0");
    const curve = page.getByTestId("loss-curve");
    await expect(head).toHaveAttribute("data-drawn", "true");
    // The head's top just below what covers the window's top (a phone's bar of places).
    await page.getByTestId("training-head").evaluate((h) => {
      const bar = document.querySelector(".topbar")!.getBoundingClientRect();
      const covered = getComputedStyle(document.querySelector(".topbar")!).position === "sticky" ? bar.bottom : 0;
      window.scrollBy(0, h.getBoundingClientRect().top - covered - 8);
    });
    for (const [what, it] of [["Aₕ", head], ["its lines", lines], ["the loss curve", curve]] as const) {
      await expect(it, `${what} is on screen`).toBeInViewport();
    }
    if (size.width > 960) {
      // Side by side: the head and the curve share a row.
      const [h, c] = [await box(head), await box(curve)];
      expect(c.x, "the curve is beside the head").toBeGreaterThan(h.x + h.width);
      expect(c.y, "on the same row").toBeLessThan(h.y + h.height);
    }
    // The head's picture follows the run: its weights change as it trains.
    const weights = () =>
      page
        .getByTestId("table-train-weights-h0")
        .locator("tbody:not([data-stale]) td[data-value]")
        .evaluateAll((cells) => cells.map((c) => c.getAttribute("data-value")).join(","));
    await expect.poll(weights).not.toBe("");
    const before = await weights();
    await page.getByTestId("train-step").click();
    await expect(page.getByTestId("train-status")).toContainText("After 2 steps");
    await expect.poll(weights).not.toBe(before);
    await app.screenshot(`training-head-${size.width}x${size.height}`);
  });
}

test("while a head trains, its table for screen readers follows the run at least once a second", async ({ app, page }) => {
  await app.goto("./#v=1&s=the%20cat%20sat%20on%20a%20mat&causal=1");
  await app.openPlace("train");
  const table = page.getByTestId("table-train-weights-h0").locator("tbody");
  const cells = () => table.locator("td[data-value]").evaluateAll((tds) => tds.map((c) => c.getAttribute("data-value")).join(","));
  await expect.poll(cells).not.toBe("");
  const run = page.getByTestId("train-run");
  await run.click();
  await expect(run).toHaveText("Pause");
  // The run never pauses its edits, yet the table is written anew while it goes on.
  const seen = new Set<string>([await cells()]);
  for (let i = 0; i < 3; i++) {
    await page.waitForTimeout(1200);
    seen.add(await cells());
  }
  await expect(run).toHaveText("Pause");
  expect(seen.size, "the table's numbers while training").toBeGreaterThanOrEqual(3);
  await run.click();
});

test("typing one's own sentence says whom the weights were made for and offers to teach a head", async ({ app, page }) => {
  test.setTimeout(60_000);
  await app.goto("./");
  await app.openPlace("inputs");
  await expect(page.getByTestId("own-sentence")).toHaveCount(0);
  await page.getByTestId("sentence-input").fill("the animal did not cross the street because it was tired");
  await expect(page.getByTestId("own-sentence")).toContainText("came with “I am hungry”");
  await page.getByTestId("teach-head").click();
  await expect(page.getByTestId("place-train")).toHaveAttribute("aria-expanded", "true");
  await expect(page.getByTestId("training")).toBeInViewport();
  // The default goal needs positions on this sentence (it repeats "the"), and at d_model = 4
  // the encoding blurs 11 positions: one button sets both.
  await expect(page.getByTestId("positions-note")).toContainText("widens the model to d_model = 8");
  // A button that reads as one, under the note: not squeezed beside it into a column of words.
  const on = await box(page.getByTestId("positions-on"));
  const note = await box(page.getByTestId("positions-note").locator("p"));
  expect(on.y, "the button under the note").toBeGreaterThanOrEqual(note.y + note.height - 1);
  expect(on.height, "the button's label on one or two lines").toBeLessThanOrEqual(70);
  await page.getByTestId("positions-on").click();
  await expect(page.getByTestId("positions-note")).toHaveCount(0);
  await expect(page.getByTestId("positional")).toBeChecked();
  await expect(page.getByTestId("d-model")).toHaveValue("8");
  // Once a step has trained them, the weights are the learner's own: the line goes.
  await page.getByTestId("train-step").click();
  await expect(page.getByTestId("own-sentence")).toHaveCount(0);
  // And the head learns the goal: at d_model = 4 the loss stalls near 1.6.
  const run = page.getByTestId("train-run");
  await run.click();
  const loss = async () => Number((await page.getByTestId("train-status").innerText()).match(/loss L ≈ ([\d.]+)/)?.[1] ?? NaN);
  await expect.poll(loss, { timeout: 20_000 }).toBeLessThan(0.3);
  if ((await run.innerText()) === "Pause") await run.click();
  // The default model's weights are random, and the line says so.
  await app.goto("./#v=1");
  await app.openPlace("inputs");
  await page.getByTestId("sentence-input").fill("a b c");
  await expect(page.getByTestId("own-sentence")).toContainText("random");
  await app.openPlace("train");
  await expect(page.getByTestId("positions-note")).toBeVisible();
  // Rotary positions tell a head where each token stands: no note that it cannot.
  await app.goto("./#v=1&rope=10000");
  await app.openPlace("train");
  await expect(page.getByTestId("train-status")).toBeAttached();
  await expect(page.getByTestId("positions-note")).toHaveCount(0);
});

test("sharing sets the embed's colours, quiz, cell and stage, and previews it", async ({ app, page, context }) => {
  await context.grantPermissions(["clipboard-read", "clipboard-write"]);
  await app.goto("./");
  await app.openPlace("share");
  const code = async () => {
    await page.getByTestId("copy-embed").click();
    await expect(page.getByTestId("share-status")).toHaveText("Embed code copied.");
    const text = await page.evaluate(() => navigator.clipboard.readText());
    return new URL(text.match(/src="([^"]+)"/)![1].replaceAll("&amp;", "&"));
  };
  // By default: compact, following the reader's colours, on the stage and cell on screen.
  let src = await code();
  expect(src.search).toBe("?embed=1&controls=0");
  expect(src.hash).toContain("stage=softmax");
  expect(src.hash).toContain("cell=weights-h0.2.0");
  await page.getByTestId("embed-theme").selectOption("dark");
  await page.getByTestId("embed-quiz").check();
  await page.getByTestId("embed-cell").uncheck();
  src = await code();
  expect(src.search).toBe("?embed=1&controls=0&theme=dark&quiz=1");
  expect(src.hash).toContain("stage=softmax");
  expect(src.hash).not.toContain("cell=");
  await page.getByTestId("embed-start").check();
  src = await code();
  expect(src.hash).not.toContain("stage=");
  // The preview shows the embed as a reader will see it: dark, from the first stage, a quiz,
  // over the page, in a post's column as wide as the one chosen, as tall as the embed asks.
  await page.getByTestId("embed-preview").click();
  const dialog = page.getByTestId("embed-preview-dialog");
  await expect(dialog).toBeVisible();
  const frame = page.frameLocator('[data-testid="embed-preview-frame"]');
  await expect(frame.getByTestId("stage-title")).toHaveText("Input X");
  await expect(frame.getByTestId("quiz-prompt")).not.toBeEmpty();
  await expect(frame.locator("html")).toHaveAttribute("data-theme", "dark");
  const element = page.getByTestId("embed-preview-frame");
  for (const column of [400, 700]) {
    await page.getByTestId(`embed-preview-${column}`).click();
    await expect(page.getByTestId(`embed-preview-${column}`)).toHaveAttribute("aria-pressed", "true");
    await expect.poll(async () => Math.round((await box(element)).width)).toBe(column);
    // The frame is as tall as the embed's content: nothing scrolls inside it.
    await expect
      .poll(() => frame.locator("html").evaluate((el) => el.scrollHeight - el.clientHeight))
      .toBeLessThanOrEqual(1);
  }
  await page.keyboard.press("Escape");
  await expect(dialog).toBeHidden();
  await expect(page.getByTestId("embed-preview-frame")).toHaveCount(0);
  // Close leaves it too.
  await page.getByTestId("embed-preview").click();
  await expect(dialog).toBeVisible();
  await page.getByTestId("embed-preview-close").click();
  await expect(dialog).toBeHidden();
});

test("on a phone the embed's preview says the screen narrows the column, and shows it as wide as that", async ({ app, page }) => {
  await page.setViewportSize({ width: 375, height: 812 });
  await app.goto();
  await app.openPlace("share");
  await page.getByTestId("embed-preview").click();
  const note = page.getByTestId("embed-preview-room");
  await expect(note).toHaveText(/^This screen is narrower: the column is \d+ px wide\.$/);
  const said = Number((await note.textContent())!.match(/\d+/)![0]);
  await expect.poll(async () => Math.round((await box(page.getByTestId("embed-preview-frame"))).width)).toBe(said);
  await page.getByTestId("embed-preview-close").click();
  await expect(page.getByTestId("embed-preview-dialog")).toBeHidden();
});

test("on a phone the Previous / Next bar rests at the window's foot at the page's end, under the open explanation", async ({ app, page }) => {
  await page.setViewportSize({ width: 360, height: 640 });
  await app.goto("./");
  const sheet = page.getByTestId("explain-panel");
  await expect(sheet).toHaveClass(/active/);
  for (const folded of [false, true]) {
    if (folded) await page.getByTestId("explain-fold").click();
    await page.evaluate(() => window.scrollTo(0, document.scrollingElement!.scrollHeight));
    await expect(async () => {
      const bar = await box(page.locator(".stage-area > .stage-controls"));
      expect(bar.y + bar.height, "the bar's foot").toBeCloseTo(640, 0);
      expect((await box(sheet)).y + (await box(sheet)).height, "the sheet above the bar").toBeLessThanOrEqual(bar.y + 1);
      // The stage's last words are above the sheet.
      const last = await box(page.locator(".stage").last());
      expect(last.y + last.height).toBeLessThanOrEqual((await box(sheet)).y + 1);
    }).toPass({ timeout: 3000 });
  }
});

test("a bare address in presenter mode or an embed opens on the first look's numbers, at the input", async ({ app, page }) => {
  // The address carries what a bare one opened on: the same model, wherever it opened.
  const model = () =>
    page.evaluate(() => location.hash.slice(1).split("&").filter((p) => !/^(stage|head|cell|row)=/.test(p)).join("&"));
  await app.goto("./");
  await expect(page).toHaveURL(/#v=1/);
  const first = await model();
  expect(first).toContain("e=I:1,0,0,0;am:0,1,0,0;hungry:0,0,1,0");
  for (const query of ["?present=1", "?embed=1&controls=0"]) {
    await app.goto(`./${query}`);
    await expect(page).toHaveURL(/#v=1/);
    expect(await model(), query).toBe(first);
  }
  // They start at the input, where a lecture does, with no cell explained.
  for (const query of ["?present=1", "?embed=1&controls=0"]) {
    await app.goto(`./${query}`);
    await expect(page.getByTestId("stage-title"), query).toHaveText("Input X");
    await expect(page.getByTestId("explain-title"), query).toHaveCount(0);
  }
});

/**
 * Opens the bare address with the module held back until the returned function is called: the
 * page shows what it shows before the app mounts.
 */
async function beforeTheModule(page: Page, address = "./"): Promise<() => void> {
  let release = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  await page.route("**/*.wasm", async (route) => {
    await released;
    await route.continue();
  });
  await page.goto(address);
  return release;
}

/** SHA-256 digests of the pixels of each heatmap: the app's canvases, or the picture's drawings. */
async function drawings(page: Page, picture: boolean): Promise<string[]> {
  return page.evaluate(async (picture) => {
    const hex = async (data: Uint8ClampedArray) =>
      Array.from(new Uint8Array(await crypto.subtle.digest("SHA-256", data)))
        .map((b) => b.toString(16).padStart(2, "0"))
        .join("");
    const canvases = Array.from(
      document.querySelectorAll<HTMLCanvasElement>(picture ? ".prerendered canvas" : "body > :not(.prerendered) canvas"),
    );
    const digests: string[] = [];
    for (const canvas of canvases) {
      const out = document.createElement("canvas");
      out.width = canvas.width;
      out.height = canvas.height;
      const context = out.getContext("2d")!;
      if (picture) {
        const image = new Image();
        image.src = getComputedStyle(canvas).backgroundImage.slice(5, -2);
        await image.decode();
        context.drawImage(image, 0, 0);
      } else {
        context.drawImage(canvas, 0, 0);
      }
      digests.push(await hex(context.getImageData(0, 0, out.width, out.height).data));
    }
    return digests;
  }, picture);
}

test("until the module has loaded, a bare address shows a picture of the app's first screen, which the app replaces unchanged, on a laptop and on a phone", async ({ browser, baseURL }) => {
  const { PICTURE_WINDOWS, contextFor, openAtFirstPaint, markup, holdTimeouts } = await import("./first-screen-picture.mjs");
  expect(PICTURE_WINDOWS.map((w: { viewport: object }) => w.viewport)).toEqual([
    { width: 1280, height: 800 },
    { width: 390, height: 844 },
  ]);
  for (const window of PICTURE_WINDOWS) {
    const name = window.name;
    // The app's own first screen, held at its first paint.
    const own = await (await browser.newContext({ ...contextFor(window), baseURL })).newPage();
    await openAtFirstPaint(own, "./");
    const appMarkup = await markup(own, "body");
    const appDrawings = await drawings(own, false);
    await own.context().close();
    expect(appDrawings, name).toHaveLength(4);

    const context = await browser.newContext({ ...contextFor(window), baseURL });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on("console", (m) => m.type() === "error" && problems.push(m.text()));
    page.on("pageerror", (e) => problems.push(e.message));
    // This page too stays at the app's first paint once the module comes.
    await page.addInitScript(holdTimeouts);
    const release = await beforeTheModule(page);
    const picture = page.locator(".prerendered");
    await expect(picture, `${name}: one picture is shown`).toHaveCount(1);
    await expect(picture).toHaveCSS("display", "contents");
    await expect(picture.locator("canvas").first()).toBeVisible();
    expect(
      await markup(page, ".prerendered"),
      `${name}: the picture is the app's first screen; run scripts/prerender.sh after changing it`,
    ).toBe(appMarkup);
    expect(await drawings(page, true), `${name}: the picture's heatmaps are the app's; run scripts/prerender.sh`).toEqual(appDrawings);
    // It answers nothing: Next waits for the app.
    const next = picture.locator("[data-testid=next]");
    await expect(next).toBeVisible();
    await next.click({ trial: true, timeout: 500 }).then(
      () => { throw new Error(`${name}: Next in the picture took a click`); },
      () => {},
    );
    expect(await page.evaluate(() => performance.getEntriesByName("al-mount-start").length)).toBe(0);

    release();
    await page.waitForFunction(() => performance.getEntriesByName("al-first-heatmap").length > 0);
    expect(await page.locator(".prerendered").count(), `${name}: the app took the picture away`).toBe(0);
    await expect(page.locator("[data-testid=app]")).toHaveCount(1);
    expect(await markup(page, "body"), `${name}: the app painted what the picture showed`).toBe(appMarkup);
    expect(await drawings(page, false)).toEqual(appDrawings);
    expect(problems, name).toEqual([]);
    await context.close();
  }
});

test("the pictures wait in templates: the page as parsed holds no second app for a script or a test to find", async ({ page, request }) => {
  // An embed, a link or a test that looks while the page is still being parsed must not find the
  // pictures' Next buttons and heatmaps beside the app's.
  const html = await (await request.get("./")).text();
  const parsed = await page.evaluate((html) => {
    const doc = new DOMParser().parseFromString(html, "text/html");
    return {
      templates: doc.querySelectorAll("template.first-screen").length,
      inTemplates: Array.from(doc.querySelectorAll("template.first-screen"), (t) => t.content.querySelectorAll("[data-testid]").length),
      outside: doc.querySelectorAll("[data-testid], canvas, button").length,
    };
  }, html);
  expect(parsed.templates).toBe(2);
  for (const count of parsed.inTemplates) expect(count).toBeGreaterThan(10);
  expect(parsed.outside, "elements of a picture outside its template").toBe(0);
});

for (const [name, size, address, scheme] of [
  ["a projector's 1920×1080", { width: 1920, height: 1080 }, "./", "light"],
  ["a small phone's 360×640", { width: 360, height: 640 }, "./", "light"],
  ["a tablet's 768×1024", { width: 768, height: 1024 }, "./", "light"],
  ["a link to a stage", { width: 1280, height: 800 }, "./#v=1&stage=scores", "light"],
  ["an embed", { width: 1280, height: 800 }, "./?embed=1", "light"],
  ["a dark theme", { width: 1280, height: 800 }, "./", "dark"],
  ["a dark theme on a phone", { width: 390, height: 844 }, "./", "dark"],
] as const) {
  test(`the picture of the first screen is left out for ${name}, where the app's first screen differs`, async ({ page }) => {
    await page.setViewportSize(size);
    await page.emulateMedia({ colorScheme: scheme });
    const release = await beforeTheModule(page, address);
    await expect(page.locator(".prerendered")).toHaveCount(0);
    await expect(page.locator("canvas")).toHaveCount(0);
    release();
    await expect(page.locator("canvas").first()).toBeVisible();
  });
}

test("the picture of the first screen is left out when the module's bytes have come before it could show: it would only hold the app up", async ({ page }) => {
  // The page's script waits for the style sheet, which waits here until the module's bytes have
  // come; the app's JavaScript waits until the picture's fate is settled.
  let releaseScript = () => {};
  const scriptReleased = new Promise<void>((resolve) => (releaseScript = resolve));
  const wasmDone = page.waitForEvent("requestfinished", (request) => request.url().endsWith(".wasm"));
  await page.route("**/*.css", async (route) => {
    await wasmDone;
    await route.continue();
  });
  await page.route("**/*.js", async (route) => {
    await scriptReleased;
    await route.continue();
  });
  await page.goto("./", { waitUntil: "commit" });
  await wasmDone;
  await page.waitForFunction(() => document.readyState !== "loading");
  await page.waitForTimeout(300);
  await expect(page.locator(".prerendered")).toHaveCount(0);
  releaseScript();
  await expect(page.getByTestId("stage-title")).toHaveText("Softmax");
});

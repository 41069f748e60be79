// The app without a mouse: every control is reachable with Tab, shows where the focus is, and
// lets go of it again; every heatmap has a text alternative that does not rely on colour.
import type { Page } from "@playwright/test";
import { test, expect, STAGES, STAGE_TITLES } from "./fixtures";


/** What has the focus, and how it shows: enough to recognise it and to judge its indicator. */
interface Focused {
  /** data-testid, id, or tag and class, whichever comes first. */
  key: string;
  tag: string;
  outline: string;
  boxShadow: string;
  textDecoration: string;
}

interface FocusProbe {
  describeFocus: (el: Element | null) => Focused | null;
  /** Every element that took the focus, in order, described as it took it. */
  focusTrail: Focused[];
}

/** Installs `describeFocus` and the focus trail in every page the test opens. */
test.beforeEach(async ({ page }) => {
  await page.addInitScript(() => {
    const probe = window as unknown as FocusProbe;
    probe.describeFocus = (el) => {
      if (!el || el === document.body || el === document.documentElement) return null;
      const style = getComputedStyle(el);
      const testId = el.getAttribute("data-testid");
      return {
        key: testId ?? (el.id ? `#${el.id}` : `${el.tagName.toLowerCase()}.${el.getAttribute("class") ?? ""}`),
        tag: el.tagName.toLowerCase(),
        outline: `${style.outlineStyle} ${style.outlineWidth}`,
        boxShadow: style.boxShadow,
        textDecoration: style.textDecorationLine,
      };
    };
    probe.focusTrail = [];
    document.addEventListener("focusin", (event) => {
      const described = probe.describeFocus(event.target as Element);
      if (described) probe.focusTrail.push(described);
    });
  });
});

async function focused(page: Page): Promise<Focused | null> {
  return page.evaluate(() => (window as unknown as FocusProbe).describeFocus(document.activeElement));
}

/** Empties the focus trail and returns what it held. */
async function takeTrail(page: Page): Promise<Focused[]> {
  return page.evaluate(() => (window as unknown as FocusProbe).focusTrail.splice(0));
}

/** Whether the focused element's indicator can be seen: an outline, a ring, or for SVG text an underline. */
function hasVisibleIndicator(f: Focused): boolean {
  const [outlineStyle, outlineWidth] = f.outline.split(" ");
  const outline = outlineStyle !== "none" && parseFloat(outlineWidth) > 0;
  const ring = f.boxShadow !== "none" && f.boxShadow !== "";
  const underline = f.tag === "text" && f.textDecoration.includes("underline");
  return outline || ring || underline;
}

/** Presses `key` (Tab or Shift+Tab) until the element with `testId` has the focus. */
async function tabTo(page: Page, testId: string, key = "Tab", limit = 150): Promise<void> {
  for (let i = 0; i < limit; i++) {
    await page.keyboard.press(key);
    if ((await focused(page))?.key === testId) return;
  }
  throw new Error(`${key} never reached ${testId} in ${limit} presses`);
}

async function expectFocusVisible(page: Page): Promise<void> {
  const f = await focused(page);
  expect(f, "something has the focus").not.toBeNull();
  expect(hasVisibleIndicator(f!), `${f!.key} shows its focus (${JSON.stringify(f)})`).toBe(true);
}

test.describe.configure({ mode: "parallel" });

test("the whole stepper works from the keyboard alone", async ({ app, page }) => {
  // It steps through every stage of the rail.
  test.slow();
  await app.goto();
  await app.openPlace("inputs");

  // The sentence box.
  await tabTo(page, "sentence-input");
  await expectFocusVisible(page);
  await page.keyboard.press("ControlOrMeta+A");
  await page.keyboard.type("the cat sat down");
  await expect(app.tokens).toHaveText(["the", "cat", "sat", "down"]);

  // The editor tabs are one tab stop; the arrows choose among them.
  await tabTo(page, "editor-tab-w_q");
  await expectFocusVisible(page);
  await page.keyboard.press("ArrowLeft");
  await expect(page.getByTestId("editor-tab-x")).toBeFocused();
  await expect(page.getByTestId("editor-tab-x")).toHaveAttribute("aria-selected", "true");
  await page.keyboard.press("ArrowRight");
  await expect(page.getByTestId("editor-tab-w_q")).toBeFocused();
  await expect(page.getByTestId("editor-tab-w_q")).toHaveAttribute("aria-selected", "true");
  await page.keyboard.press("Tab");
  const cell = page.getByTestId("cell-w_q-0-0");
  await expect(cell).toBeFocused();
  await expectFocusVisible(page);
  await page.keyboard.press("ControlOrMeta+A");
  await page.keyboard.type("0.9");
  await expect(cell).toHaveValue("0.9");
  await expect(page.getByTestId("editor-error-w_q")).toBeEmpty();

  // The rail is one stop for Tab, on the current stage: → steps along it and the focus
  // follows; Enter (or Space) on a stage opens it.
  await tabTo(page, "stage-input");
  await expectFocusVisible(page);
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("stage-title")).toHaveText(STAGE_TITLES[0]);
  for (let i = 1; i < STAGES.length; i++) {
    await page.keyboard.press("ArrowRight");
    await expect(app.stage(STAGES[i])).toBeFocused();
    await page.keyboard.press(i % 2 ? "Enter" : "Space");
    await expect(page.getByTestId("stage-title")).toHaveText(STAGE_TITLES[i]);
    await expect(app.stage(STAGES[i])).toHaveAttribute("aria-current", "step");
    if (STAGES[i] === "projection") {
      // The edited weight is the one the projection uses.
      expect((await app.tableCells("w_q"))[0][0]).toBe("0.9");
    }
  }

  // Outside a field the arrow keys step through the stages.
  await page.keyboard.press("ArrowLeft");
  await expect(page.getByTestId("stage-title")).toHaveText(STAGE_TITLES[8]);
  await page.keyboard.press("ArrowLeft");
  await page.keyboard.press("ArrowLeft");
  await expect(page.getByTestId("stage-title")).toHaveText("Softmax");

  // A heatmap takes the focus, and the arrows move its selected cell.
  await tabTo(page, "canvas-weights-h0");
  await expectFocusVisible(page);
  const canvas = page.getByTestId("canvas-weights-h0");
  await expect(canvas).toHaveAttribute("data-highlight", /^cell:0,0;/);
  await expect(page.getByTestId("explain-title")).toContainText("the");
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("ArrowRight");
  await expect(canvas).toHaveAttribute("data-highlight", /^cell:1,1;/);
  await expect(page.getByTestId("explain-title")).toContainText("cat");
  await expect(page.getByTestId("explain-expansion")).toContainText("exp(");
  await page.keyboard.press("End");
  await expect(canvas).toHaveAttribute("data-highlight", /^cell:1,3;/);
  // The heatmap keeps the arrows: the stage did not change.
  await expect(page.getByTestId("stage-title")).toHaveText("Softmax");

  // Shift+Tab goes back the way it came.
  await tabTo(page, "stage-softmax", "Shift+Tab");
  await page.keyboard.press("ArrowRight");
  await expect(page.getByTestId("stage-title")).toHaveText(STAGE_TITLES[7]);
});

test("Tab visits every control once, shows where it is, and comes back round", async ({ app, page }) => {
  await app.goto("./#v=1&causal=1&stage=softmax");
  await app.openPlace("inputs");
  await app.openPlace("share");
  await app.openPlace("lab");
  await expect(page.getByTestId("stage-title")).toHaveText("Softmax");
  await expect(page.getByTestId("causal")).toBeChecked();

  // Tab starts from the top of the page, not from the last place opened.
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.mouse.click(2, 2);
  // The trail records each focus as it happens, so the presses need no round trip each.
  await takeTrail(page);
  const trail: Focused[] = [];
  let seen: Focused[] = [];
  for (let presses = 0; presses < 400; presses += 20) {
    for (let i = 0; i < 20; i++) await page.keyboard.press("Tab");
    trail.push(...(await takeTrail(page)));
    const again = trail.findIndex((f, i) => i > 0 && f.key === trail[0].key);
    if (again > 0) {
      seen = trail.slice(0, again);
      break;
    }
  }
  const keys = seen.map((f) => f.key);
  expect(keys.length, "Tab came back to the first control").toBeGreaterThan(0);
  expect(keys[0], "the first stop is the skip link").toBe("skip-link");
  // Everything the tests drive by keyboard is in the cycle.
  for (const id of [
    "export-menu",
    "present",
    "sentence-input",
    "d-model",
    "n-heads",
    "causal",
    "cross",
    "block",
    "editor-tab-w_q",
    "cell-w_q-0-0",
    // The rail is one stop, on the current stage.
    "stage-softmax",
    "next",
    "play",
    "canvas-masked-h0",
    "canvas-weights-h0",
    "line-query-0-0",
    "whatif-no_scaling",
    "canvas-whatif-shown",
  ]) {
    expect(keys, `Tab reaches ${id}`).toContain(id);
  }
  expect(new Set(keys).size, "no control is visited twice").toBe(keys.length);
  const invisible = seen.filter((f) => !hasVisibleIndicator(f));
  expect(invisible, "controls whose focus cannot be seen").toEqual([]);

  // Shift+Tab walks the same cycle backwards, across the start of the page too.
  let at = keys.indexOf(trail[trail.length - 1].key);
  const steps = at + 10;
  for (let i = 0; i < steps; i++) await page.keyboard.press("Shift+Tab");
  const back = (await takeTrail(page)).map((f) => f.key);
  const expected: string[] = [];
  for (let i = 0; i < steps; i++) {
    at = (at - 1 + keys.length) % keys.length;
    expected.push(keys[at]);
  }
  expect(back, "Shift+Tab retraces Tab").toEqual(expected);
});

test("presenter mode starts, steps and ends from the keyboard", async ({ app, page }) => {
  await app.goto();
  await app.openPlace("share");
  await tabTo(page, "present");
  await expectFocusVisible(page);
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("presenter-progress")).toBeVisible();
  await page.keyboard.press("Space");
  await expect(page.getByTestId("stage-title")).toHaveText(STAGE_TITLES[1]);
  await tabTo(page, "leave-presenter");
  await expectFocusVisible(page);
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("presenter-progress")).toHaveCount(0);
  await expect(app.stage("input")).toBeVisible();
});

test("tables shown for everyone scroll from the keyboard on a narrow screen", async ({ app, page }) => {
  await page.setViewportSize({ width: 375, height: 700 });
  await app.goto("./#v=1&d=8&stage=projection");
  // Sharing, in the bar of places, opens from the keyboard.
  await tabTo(page, "place-share");
  await page.keyboard.press("Enter");
  await tabTo(page, "show-tables");
  await page.keyboard.press("Space");
  await expect(page.getByTestId("show-tables")).toBeChecked();
  // From the top of the page, Shift+Tab comes in at the bottom: the lab, then V = X·W_v.
  const wrap = page.getByTestId("tablewrap-v");
  await tabTo(page, "tablewrap-v", "Shift+Tab", 60);
  await expectFocusVisible(page);
  const overflow = await wrap.evaluate((el) => el.scrollWidth - el.clientWidth);
  expect(overflow, "the table is wider than the screen").toBeGreaterThan(0);
  // The arrows scroll the focused table; they do not step to another stage.
  await page.keyboard.press("ArrowRight");
  await expect.poll(() => wrap.evaluate((el) => el.scrollLeft)).toBeGreaterThan(0);
  await expect(page.getByTestId("stage-title")).toHaveText(STAGE_TITLES[1]);
  // Hidden again, the tables leave the tab order.
  await tabTo(page, "show-tables", "Tab", 60);
  await page.keyboard.press("Space");
  await expect(wrap).not.toHaveAttribute("tabindex", /./);
});

test("every heatmap is an image with a description and a table of its numbers", async ({ app, page }) => {
  await app.goto();
  await app.openPlace("inputs");
  await page.getByTestId("causal").check();
  for (const key of STAGES) {
    await app.openStage(key);
    await expect(app.stage(key)).toHaveAttribute("aria-current", "step");
    const canvases = page.locator("canvas[data-testid^='canvas-']");
    await expect(canvases.first()).toHaveAttribute("data-drawn", "true");
    const found = await canvases.evaluateAll((elements) =>
      elements.map((el) => {
        const name = el.getAttribute("data-testid")!.replace(/^canvas-/, "");
        const wrap = document.querySelector(`[data-testid="tablewrap-${name}"]`);
        const table = wrap?.querySelector(`[data-testid="table-${name}"]`);
        return {
          name,
          role: el.getAttribute("role"),
          label: el.getAttribute("aria-label") ?? "",
          rows: table ? table.querySelectorAll("tbody tr").length : -1,
        };
      }),
    );
    expect(found.length, `${key} has heatmaps`).toBeGreaterThan(0);
    for (const f of found) {
      expect(f.role, `${f.name} is an image`).toBe("img");
      expect(f.label, `${f.name} describes itself`).toMatch(/^Heatmap of .+ rows .+ columns/);
      expect(f.rows, `${f.name} has a table alternative`).toBeGreaterThan(0);
    }
  }
});

test("masked cells say −∞ in words and are hatched, not only coloured", async ({ app, page }) => {
  await app.goto();
  await app.openPlace("inputs");
  await page.getByTestId("causal").check();
  await app.openStage("mask");
  const canvas = page.getByTestId("canvas-masked-h0");
  await expect(canvas).toHaveAttribute("data-drawn", "true");

  // I, am, hungry: the three cells above the diagonal are masked.
  await expect(canvas).toHaveAttribute("aria-label", /3 cells are masked \(−∞\)/);
  const table = app.table("masked-h0");
  const text = await table.locator("tbody tr").evaluateAll((rows) =>
    rows.map((row) => Array.from(row.querySelectorAll("td"), (td) => td.textContent?.trim())),
  );
  text.forEach((row, i) =>
    row.forEach((cell, j) => expect(cell === "−∞", `table cell ${i},${j}`).toBe(j > i)),
  );

  // Along a line near the top of a cell, away from its number, a masked cell alternates
  // between the hatch and its fill; a plain cell is one flat colour.
  const colourChanges = (row: number, col: number) =>
    canvas.evaluate(
      (el, [r, c]) => {
        const cv = el as HTMLCanvasElement;
        const [gx, gy, cw, ch] = el.getAttribute("data-grid")!.split(",").map(Number);
        const k = cv.width / Number(cv.dataset.width);
        const y = Math.round((gy + r * ch + Math.min(4, ch / 6)) * k);
        const x0 = Math.round((gx + c * cw + 3) * k);
        const x1 = Math.round((gx + (c + 1) * cw - 3) * k);
        const data = cv.getContext("2d")!.getImageData(x0, y, x1 - x0, 1).data;
        let changes = 0;
        for (let i = 4; i < data.length; i += 4) {
          if (data[i] !== data[i - 4] || data[i + 1] !== data[i - 3] || data[i + 2] !== data[i - 2]) changes++;
        }
        return changes;
      },
      [row, col],
    );
  expect(await colourChanges(0, 2), "masked cell (0, 2) is hatched").toBeGreaterThanOrEqual(4);
  expect(await colourChanges(2, 0), "unmasked cell (2, 0) is flat").toBe(0);
});

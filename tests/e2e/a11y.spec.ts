// Accessibility: axe-core finds no serious or critical problem on any stage, in either colour
// scheme, embedded, presenting, with a lab mistake on or with a cell explained.
//
// axe-core is loaded from node_modules into the page; nothing is fetched from elsewhere.
import type { Page } from "@playwright/test";
import { test, expect, STAGES, BACKWARD_STAGES } from "./fixtures";

const AXE_SCRIPT = require.resolve("axe-core/axe.min.js");

interface AxeNode {
  target: unknown[];
  html: string;
  failureSummary?: string;
}

interface AxeViolation {
  id: string;
  impact?: string | null;
  help: string;
  helpUrl: string;
  nodes: AxeNode[];
}

/** The violations as a list a person can act on: rule, impact, and each offending element. */
function readable(violations: AxeViolation[]): string {
  return violations
    .map((v) => {
      const nodes = v.nodes
        .slice(0, 5)
        .map((n) => {
          const summary = (n.failureSummary ?? "").replace(/\s+/g, " ").trim();
          return `    ${JSON.stringify(n.target)}\n      ${n.html.slice(0, 160)}\n      ${summary}`;
        })
        .join("\n");
      const more = v.nodes.length > 5 ? `\n    … and ${v.nodes.length - 5} more` : "";
      return `  [${v.impact}] ${v.id}: ${v.help} (${v.helpUrl})\n${nodes}${more}`;
    })
    .join("\n");
}

/** Runs axe on the whole page and fails on any serious or critical violation. */
async function expectNoSeriousViolations(page: Page, where: string): Promise<void> {
  const loaded = await page.evaluate(() => "axe" in window);
  if (!loaded) await page.addScriptTag({ path: AXE_SCRIPT });
  const violations = (await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (...args: unknown[]) => Promise<{ violations: unknown[] }> } }).axe;
    const result = await axe.run(document, { resultTypes: ["violations"] });
    return result.violations;
  })) as AxeViolation[];
  const serious = violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  expect(
    serious.map((v) => `${v.impact} ${v.id}`),
    `serious or critical accessibility violations (${where}):\n${readable(serious)}`,
  ).toEqual([]);
}

/**
 * Opens every stage in turn and audits each one: with the rail, or, in a compact embed that
 * has none, with Next.
 */
async function auditEveryStage(page: Page, mode: string): Promise<void> {
  const rail = (await page.locator(".rail").count()) > 0;
  for (const [i, key] of STAGES.entries()) {
    if (rail) {
      await page.getByTestId(`stage-${key}`).click();
      await expect(page.getByTestId(`stage-${key}`)).toHaveAttribute("aria-current", "step");
    } else {
      if (i > 0) await page.getByTestId("next").click();
      await expect(page.getByTestId("progress")).toHaveText(`Stage ${i + 1} of ${STAGES.length}`);
    }
    await expectDrawn(page);
    await expectNoSeriousViolations(page, `${mode}, stage ${key}`);
  }
}

/** Waits until the stage's heatmaps are drawn, so the audit sees the settled page. */
async function expectDrawn(page: Page): Promise<void> {
  const canvases = page.locator(".stage canvas[data-testid^='canvas-']");
  await expect(canvases.first()).toHaveAttribute("data-drawn", "true");
}

/** The page background of each theme (`--bg` in the style sheet). */
const BACKGROUND = { light: "rgb(246, 247, 249)", dark: "rgb(15, 17, 20)" };

async function expectTheme(page: Page, theme: keyof typeof BACKGROUND): Promise<void> {
  await expect(page.locator("body")).toHaveCSS("background-color", BACKGROUND[theme]);
}

test.describe.configure({ mode: "parallel" });

for (const scheme of ["light", "dark"] as const) {
  test(`every stage in the ${scheme} colour scheme`, async ({ app, page }) => {
    await page.emulateMedia({ colorScheme: scheme });
    await app.goto();
    await expectTheme(page, scheme);
    await auditEveryStage(page, `${scheme} scheme`);
  });
}

test("every stage with ?theme=dark on a light system", async ({ app, page }) => {
  await page.emulateMedia({ colorScheme: "light" });
  await app.goto("./?theme=dark");
  await expect(page.locator("html")).toHaveAttribute("data-theme", "dark");
  await expectTheme(page, "dark");
  await auditEveryStage(page, "theme=dark");
});

for (const query of ["?embed=1", "?embed=1&controls=0"]) {
  test(`every stage embedded with ${query}`, async ({ app, page }) => {
    await app.goto(`./${query}`);
    await expect(page.locator(".embed-bar")).toBeVisible();
    await auditEveryStage(page, query);
  });
}

test("every stage in presenter mode", async ({ app, page }) => {
  await app.goto();
  await app.openPlace("train");
  await app.openPlace("share");
  await page.getByTestId("present").click();
  const progress = page.getByTestId("presenter-progress").locator("li");
  // A dot for every forward and every backward stage; the backward ones are audited above.
  await expect(progress).toHaveCount(STAGES.length + BACKWARD_STAGES.length);
  for (let i = 0; i < STAGES.length; i++) {
    await app.presentStage(i);
    await expect(progress.nth(i)).toHaveAttribute("aria-current", "step");
    await expectDrawn(page);
    await expectNoSeriousViolations(page, `presenter, stage ${STAGES[i]}`);
  }
});

test("a phone-sized screen with the number tables shown", async ({ app, page }) => {
  await page.setViewportSize({ width: 375, height: 700 });
  await app.goto("./#v=1&d=8&causal=1");
  await app.openPlace("share");
  await app.openActionsMenu();
  await page.getByTestId("show-tables").check();
  await page.getByTestId("place-share").click();
  for (const key of ["projection", "softmax", "output"] as const) {
    await app.openStage(key);
    await expectDrawn(page);
    await expectNoSeriousViolations(page, `375 px with tables, stage ${key}`);
  }
});

test("the what-if lab with a mistake switched on", async ({ app, page }) => {
  await app.goto();
  await app.openPlace("lab");
  await page.getByTestId("whatif-no_causal_mask").click();
  await expect(page.getByTestId("whatif-no_causal_mask")).toHaveAttribute("aria-pressed", "true");
  await expect(page.getByTestId("whatif-summary")).not.toBeEmpty();
  await expectNoSeriousViolations(page, "lab, no causal mask");
  await page.getByTestId("whatif-temperature").click();
  await expect(page.getByTestId("whatif-temperature-slider")).toBeVisible();
  await expectNoSeriousViolations(page, "lab, temperature");
});

test("the explain panel with a cell selected, and the tables shown", async ({ app, page }) => {
  await app.goto();
  await app.openPlace("inputs");
  await app.openPlace("share");
  await page.getByTestId("causal").check();
  await app.openStage("softmax");
  await page.getByTestId("canvas-weights-h0").focus();
  await page.keyboard.press("ArrowDown");
  await expect(page.getByTestId("explain-title")).toBeVisible();
  await expectNoSeriousViolations(page, "explain panel");
  await page.getByTestId("show-tables").check();
  await expectNoSeriousViolations(page, "explain panel with tables shown");
});

test("the block's stages, with a source sentence, and their new controls", async ({ app, page }) => {
  await app.goto();
  await app.openPlace("inputs");
  await page.getByTestId("cross").check();
  await page.getByTestId("block").check();
  for (const key of ["residual-1", "norm-1", "ffn-hidden", "activation", "ffn-out", "residual-2", "norm-2"]) {
    await page.getByTestId(`stage-${key}`).click();
    await expect(page.getByTestId(`stage-${key}`)).toHaveAttribute("aria-current", "step");
    await expectDrawn(page);
    await expectNoSeriousViolations(page, `block stage ${key}`);
  }
  // The switches and their fields work from the keyboard.
  await page.getByTestId("block").focus();
  await page.keyboard.press("Space");
  await expect(page.getByTestId("block")).not.toBeChecked();
  await page.keyboard.press("Space");
  await expect(page.getByTestId("block")).toBeChecked();
  // The switch's one-line help comes next, then the block's first menu.
  await page.keyboard.press("Tab");
  await expect(page.locator(":focus")).toHaveAccessibleName(/^About /);
  await page.keyboard.press("Tab");
  await expect(page.getByTestId("norm")).toBeFocused();
  await expect(page.getByTestId("source")).toHaveAccessibleName("Source sentence (keys and values)");
  await expect(page.getByTestId("d-ff")).toHaveAccessibleName("d_ff");
});

test("the quiz, asking and answered, at every stage", async ({ app, page }) => {
  // Twenty audits: twice the stages.
  test.setTimeout(90_000);
  await app.goto("./#v=1&quiz=1");
  for (const [i, key] of STAGES.entries()) {
    await page.getByTestId(`stage-${key}`).click();
    await expect(page.getByTestId("quiz-prompt")).not.toHaveText("");
    await expectNoSeriousViolations(page, `quiz asking, stage ${key}`);
    // Any answer reveals the stage: check with nothing picked or typed, then pick if asked.
    const number = page.getByTestId("quiz-number");
    if (await number.count()) await number.fill("0");
    else if ((await page.locator("[data-testid^='quiz-choice-'][type='radio']").count()) > 0)
      await page.getByTestId("quiz-choice-0").check();
    await page.getByTestId("quiz-check").click();
    await expect(page.getByTestId("quiz-tally")).toContainText(`${i + 1} answered`);
    await expectDrawn(page);
    await expectNoSeriousViolations(page, `quiz answered, stage ${key}`);
  }
});

test("the whole worked example, ready to print", async ({ app, page }) => {
  await page.addInitScript(() => {
    window.print = () => {};
  });
  await app.goto("./#v=1&blk=1");
  await app.openPlace("share");
  await app.openExportMenu();
  await page.getByTestId("export-print").click();
  // The block's 17 forward stages and the 8 backward ones.
  await expect(page.locator("article.print-stage")).toHaveCount(25);
  await expect(page.getByTestId("handout-title")).toBeFocused();
  await expectNoSeriousViolations(page, "handout");
});

for (const scheme of ["light", "dark"] as const) {
  test(`every backward stage in the ${scheme} colour scheme, for a pattern goal`, async ({ app, page }) => {
    await page.emulateMedia({ colorScheme: scheme });
    await app.goto("./#v=1&causal=1");
    await app.openPlace("train");
    for (const key of BACKWARD_STAGES) {
      await page.getByTestId(`stage-${key}`).click();
      await expect(page.getByTestId(`stage-${key}`)).toHaveAttribute("aria-current", "step");
      if ((await page.getByTestId("unreached").count()) === 0) await expectDrawn(page);
      await expectNoSeriousViolations(page, `${scheme} scheme, stage ${key}`);
    }
  });
}

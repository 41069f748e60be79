// Shared fixtures for the end-to-end specs: import `test` and `expect` from here, not from
// @playwright/test.
//
// Every test gets a guard that fails it when the page logs a console error, throws an uncaught
// exception (a Rust panic surfaces as both), gets an HTTP error response, or sends a request to
// any origin other than the app's. `app` is a page object for the UI's data-testid contract.

import {
  test as base,
  expect,
  type BrowserContext,
  type Download,
  type FrameLocator,
  type Locator,
  type Page,
  type Request,
} from "@playwright/test";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";

export { expect };

const REPO_ROOT = path.resolve(__dirname, "../..");

/** Where tests write screenshots meant for the docs; E2E_SCREENSHOT_DIR overrides it. */
export const SCREENSHOT_DIR =
  process.env.E2E_SCREENSHOT_DIR ?? path.join(REPO_ROOT, "docs", "screenshots");

/** The stage keys of the stage rail, in order. */
export const STAGES = [
  "input",
  "projection",
  "split",
  "scores",
  "scale",
  "mask",
  "softmax",
  "weighted-sum",
  "concat",
  "output",
] as const;
export type StageKey = (typeof STAGES)[number];

/** The backward stages' keys, in the order the gradient flows. */
export const BACKWARD_STAGES = [
  "back-loss",
  "back-output",
  "back-weighted-sum",
  "back-softmax",
  "back-scale",
  "back-scores",
  "back-projection",
  "back-input",
] as const;

/** The title each stage shows with the default settings (the mask off), in the order of `STAGES`. */
export const STAGE_TITLES = [
  "Input X",
  "Projections Q, K, V",
  "Split into heads",
  "Scores QₕKₕᵀ",
  "Scale ÷√d_k",
  "Causal mask: off",
  "Softmax",
  "Weighted sum AₕVₕ",
  "Concatenate heads",
  "Output projection",
] as const;

/** A matrix as the CLI writes it: rows of numbers, `null` for a masked entry. */
export type Matrix = (number | null)[][];

/** One head of the CLI's JSON trace. */
export interface HeadTrace {
  q: Matrix;
  k: Matrix;
  v: Matrix;
  scores: Matrix;
  scaled: Matrix;
  masked: Matrix;
  weights: Matrix;
  context: Matrix;
}

/** The JSON written by `attention-lens trace --format json`. */
export interface Trace {
  tokens: string[];
  x: Matrix;
  q: Matrix;
  k: Matrix;
  v: Matrix;
  heads: HeadTrace[];
  concat: Matrix;
  output: Matrix;
}

/** The native CLI, built by scripts/test.sh before the browser tests; E2E_CLI overrides it. */
export const CLI = process.env.E2E_CLI ?? path.join(REPO_ROOT, "target", "debug", "attention-lens");

/** What the CLI prints for `args`. */
export function runCli(args: string[]): string {
  return execFileSync(CLI, args, { encoding: "utf8" });
}

/** Reads the default scenario's trace that scripts/test.sh writes before the browser tests. */
export function loadTrace(file = process.env.E2E_TRACE): Trace {
  const tracePath = file ?? path.join(REPO_ROOT, "target", "e2e", "default-trace.json");
  return JSON.parse(readFileSync(tracePath, "utf8")) as Trace;
}

/** Parses a number written with Rust's `{}` for f64, including `inf`, `-inf` and `NaN`. */
export function parseRustFloat(text: string): number {
  switch (text.trim()) {
    case "inf":
      return Infinity;
    case "-inf":
      return -Infinity;
    case "NaN":
      return NaN;
    default:
      return text.trim() === "" ? NaN : Number(text);
  }
}

/**
 * Asserts that two matrices have the same shape and agree entry by entry within `tolerance`.
 * A masked entry (`null` in `expected`) matches `null` or minus infinity in `actual`.
 */
export function expectMatrixClose(
  actual: Matrix,
  expected: Matrix,
  tolerance: number,
  label = "matrix",
): void {
  expect(actual.length, `${label}: number of rows`).toBe(expected.length);
  expected.forEach((row, i) => {
    expect(actual[i].length, `${label}: number of columns in row ${i}`).toBe(row.length);
    row.forEach((want, j) => {
      const got = actual[i][j];
      const where = `${label}[${i}][${j}]`;
      if (want === null) {
        expect(got === null || got === -Infinity, `${where}: got ${got}, want masked`).toBe(true);
      } else if (got === null) {
        expect(got, `${where}: got masked, want ${want}`).toBe(want);
      } else {
        expect(Math.abs(got - want), `${where}: got ${got}, want ${want}`).toBeLessThanOrEqual(
          tolerance,
        );
      }
    });
  });
}

/** A box in CSS pixels, as getBoundingClientRect gives it. */
export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** The box of `locator`'s element. */
export async function box(locator: Locator): Promise<Box> {
  return locator.evaluate((el) => {
    const r = el.getBoundingClientRect();
    return { x: r.x, y: r.y, width: r.width, height: r.height };
  });
}

/** Asserts that `b` lies inside a window of `viewport`'s size. */
export function expectInside(b: Box, viewport: { width: number; height: number }, what: string): void {
  expect(b.width, `${what} has a size`).toBeGreaterThan(0);
  expect(b.y, `${what}: top inside the window`).toBeGreaterThanOrEqual(0);
  expect(b.x, `${what}: left inside the window`).toBeGreaterThanOrEqual(0);
  expect(b.y + b.height, `${what}: bottom inside the window`).toBeLessThanOrEqual(viewport.height + 0.5);
  expect(b.x + b.width, `${what}: right inside the window`).toBeLessThanOrEqual(viewport.width + 0.5);
}

/** The CSS-pixel box of cell (`row`, `col`) of a drawn heatmap canvas. */
export async function cellBox(canvas: Locator, row: number, col: number): Promise<Box> {
  await expect(canvas).toHaveAttribute("data-drawn", "true");
  return canvas.evaluate(
    (el, [r, c]) => {
      const [gx, gy, cw, ch] = el.getAttribute("data-grid")!.split(",").map(Number);
      const rect = el.getBoundingClientRect();
      const k = rect.width / Number(el.getAttribute("data-width"));
      return { x: rect.x + (gx + c * cw) * k, y: rect.y + (gy + r * ch) * k, width: cw * k, height: ch * k };
    },
    [row, col],
  );
}

/** Whether two boxes share any area. */
export function overlaps(a: Box, b: Box): boolean {
  return a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
}

/** True for URLs that never reach the network, such as an inline favicon. */
function isLocalOnly(url: URL): boolean {
  return url.protocol === "data:" || url.protocol === "blob:";
}

/** The URLs of `requests` that are not under `base` (an absolute URL ending in `/`). */
export function requestsOutside(requests: Request[], base: string): string[] {
  return requests
    .map((request) => request.url())
    .filter((url) => !isLocalOnly(new URL(url)) && !url.startsWith(base));
}

/** A page object for the app, written against its data-testid contract. */
export class AppPage {
  constructor(
    readonly page: Page,
    /** Every request the page has sent so far, in order. */
    readonly requests: Request[],
  ) {}

  /**
   * Opens the app at `path` (relative to the base URL) and waits until it has mounted. The
   * default, `#v=1`, is the link of the default model at the input stage; a bare address opens
   * on the first screen's scenario instead.
   */
  async goto(path = "./#v=1"): Promise<void> {
    await this.page.goto(path);
    // The wasm module mounts the app into the <body>, taking away the picture of the first
    // screen that the page may show until then.
    await this.page.waitForFunction(
      () =>
        document.querySelector(".prerendered") === null &&
        document.querySelector("body > :not(script, style, link)") !== null,
    );
  }

  /** Opens the place `key` (inputs, train, lab, share) from the top bar, if it is not open. */
  async openPlace(key: "inputs" | "train" | "lab" | "share"): Promise<void> {
    const button = this.page.getByTestId(`place-${key}`);
    if ((await button.getAttribute("aria-expanded")) !== "true") await button.click();
    await expect(button).toHaveAttribute("aria-expanded", "true");
    await expect(this.page.getByTestId(`place-body-${key}`)).toBeVisible();
  }

  /** Opens the sharing place, which holds the actions (links, export, presenting, the quiz). */
  async openActionsMenu(): Promise<void> {
    await this.openPlace("share");
    await expect(this.page.getByTestId("show-tables")).toBeVisible();
  }

  /** The token chips, in sentence order. */
  get tokens(): Locator {
    return this.page.getByTestId("token");
  }

  /** The stage rail button for `key`. */
  stage(key: StageKey): Locator {
    return this.page.getByTestId(`stage-${key}`);
  }

  /** Clicks the stage rail button for `key`. */
  async openStage(key: StageKey): Promise<void> {
    await this.stage(key).click();
  }

  /** The accessible table showing the matrix `name`, e.g. `output`. */
  table(name: string): Locator {
    return this.page.getByTestId(`table-${name}`);
  }

  /** The `data-value` attributes of a table's body cells: one array per row, row-major. */
  async tableCells(name: string): Promise<string[][]> {
    const table = this.table(name);
    await expect(table).toBeVisible();
    // A hidden table is rewritten once edits pause; until then its body is marked stale.
    await expect(table.locator("tbody[data-stale]")).toHaveCount(0);
    return table.evaluate((element) =>
      Array.from(element.querySelectorAll("tr"))
        .map((row) =>
          Array.from(row.querySelectorAll("td[data-value]")).map(
            (cell) => cell.getAttribute("data-value") ?? "",
          ),
        )
        .filter((row) => row.length > 0),
    );
  }

  /** A table's body cells as numbers, full precision. */
  async tableValues(name: string): Promise<number[][]> {
    const cells = await this.tableCells(name);
    return cells.map((row) => row.map(parseRustFloat));
  }

  /**
   * In presenter mode, presses → until stage `index` (from 0) is shown, waiting for each step:
   * a stage with several heads takes one step per head.
   */
  async presentStage(index: number): Promise<void> {
    const bar = this.page.getByTestId("presenter-bar");
    const target = this.page.getByTestId("presenter-progress").locator("li").nth(index);
    for (let presses = 0; presses < 64; presses++) {
      if ((await target.getAttribute("aria-current")) === "step") return;
      const before = (await bar.getAttribute("data-step")) ?? "";
      await this.page.keyboard.press("ArrowRight");
      await expect(bar).not.toHaveAttribute("data-step", before);
    }
    await expect(target).toHaveAttribute("aria-current", "step");
  }

  /** Opens the export menu, if it is not open already. */
  async openExportMenu(): Promise<void> {
    const menu = this.page.getByTestId("export-menu");
    const open = await menu.evaluate((el) => (el.parentElement as HTMLDetailsElement).open);
    if (!open) await menu.click();
  }

  /** Runs `click` and returns the file it made the page download: its name and its bytes. */
  async downloaded(click: () => Promise<void>): Promise<{ name: string; bytes: Buffer }> {
    const [download] = (await Promise.all([this.page.waitForEvent("download"), click()])) as [Download, unknown];
    return { name: download.suggestedFilename(), bytes: readFileSync((await download.path())!) };
  }

  /** Saves a screenshot of the window (or with `fullPage`, the whole page) to
   * docs/screenshots/`name`.png. */
  async screenshot(name: string, fullPage = false): Promise<void> {
    await this.page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}.png`), fullPage });
  }
}

interface Fixtures {
  /** Problems seen on the page; the test fails in teardown if there are any. */
  pageProblems: string[];
  /** Every request the page sent. */
  requests: Request[];
  /** The page object. */
  app: AppPage;
}

export const test = base.extend<Fixtures>({
  requests: async ({ page }, use) => {
    const requests: Request[] = [];
    page.on("request", (request) => requests.push(request));
    await use(requests);
  },

  pageProblems: [
    async ({ page, baseURL, requests }, use) => {
      const problems: string[] = [];
      const appOrigin = new URL(baseURL ?? "http://127.0.0.1/").origin;
      page.on("console", (message) => {
        if (message.type() === "error") problems.push(`console error: ${message.text()}`);
      });
      page.on("pageerror", (error) => problems.push(`uncaught exception: ${error.message}`));
      page.on("response", (response) => {
        if (response.status() >= 400) {
          problems.push(`HTTP ${response.status()} for ${response.url()}`);
        }
      });

      await use(problems);

      for (const request of requests) {
        const url = new URL(request.url());
        if (!isLocalOnly(url) && url.origin !== appOrigin) {
          problems.push(`request outside ${appOrigin}: ${request.method()} ${request.url()}`);
        }
      }
      expect(problems, "console errors, page errors, HTTP errors or foreign requests").toEqual(
        [],
      );
    },
    { auto: true },
  ],

  app: async ({ page, requests }, use) => {
    await use(new AppPage(page, requests));
  },
});

/** Clicks cell (row, col) of a heatmap canvas, using the grid geometry the canvas reports. */
export async function clickCell(page: Page, testId: string, row: number, col: number): Promise<void> {
  const canvas = page.getByTestId(testId);
  await expect(canvas).toHaveAttribute("data-grid", /\d/);
  // The picture is fitted to its box over a frame or two after a stage opens; aim at the grid only
  // once it has stayed the same size across two frames, or a click lands on a neighbouring cell.
  const settled = () =>
    canvas.evaluate(
      (el) =>
        new Promise<string>((done) =>
          requestAnimationFrame(() =>
            requestAnimationFrame(() => {
              const box = el.getBoundingClientRect();
              done([el.getAttribute("data-grid"), el.getAttribute("data-width"), box.width, box.height].join("|"));
            }),
          ),
        ),
    );
  let seen = await settled();
  for (let tries = 0; tries < 20; tries++) {
    const now = await settled();
    if (now === seen) break;
    seen = now;
  }
  const [grid, width, css] = seen.split("|");
  const [gx, gy, cw, ch] = grid.split(",").map(Number);
  const k = Number(css) / Number(width);
  await canvas.click({ position: { x: (gx + (col + 0.5) * cw) * k, y: (gy + (row + 0.5) * ch) * k } });
}

/** Opens `link` and copies its embed code from the Share menu, as a blogger does. */
export async function copiedEmbed(page: Page, context: BrowserContext, link: string): Promise<string> {
  await context.grantPermissions(["clipboard-read", "clipboard-write"]);
  await page.goto(link);
  await page.getByTestId("place-share").click();
  await page.getByTestId("copy-embed").click();
  await expect(page.getByTestId("share-status")).toHaveText("Embed code copied.");
  return page.evaluate(() => navigator.clipboard.readText());
}

/** A post's narrow column (400 px in a 420 px window) with `code` pasted between its words. */
export async function narrowHost(context: BrowserContext, code: string): Promise<{ host: Page; inner: FrameLocator }> {
  const host = await context.newPage();
  await host.setViewportSize({ width: 420, height: 760 });
  await host.setContent(`<!doctype html><html><body style="margin:0"><article style="max-width:400px;margin:0 auto;padding:0 10px">
    <p style="height:200px">Before.</p>${code}<p style="height:1200px">After.</p></article></body></html>`);
  return { host, inner: host.frameLocator("iframe.attention-lens") };
}

/** The height, in CSS pixels, of a cell of `canvas` as drawn. */
export async function cellHeight(canvas: Locator): Promise<number> {
  return canvas.evaluate((el) => {
    const cell = Number((el.getAttribute("data-grid") ?? "").split(",")[3]);
    return (cell * el.getBoundingClientRect().width) / Number(el.getAttribute("data-width"));
  });
}

/**
 * Steps presenter mode with PageDown from where it is until the step `last` (at most `max`
 * steps), checking at each that nothing scrolls and every heatmap is on the screen; the steps
 * passed, by their `data-step`.
 */
export async function presentOnScreen(
  page: Page,
  viewport: { width: number; height: number },
  last: string,
  max: number,
): Promise<string[]> {
  const bar = page.getByTestId("presenter-bar");
  const steps: string[] = [];
  for (let i = 0; i < max; i++) {
    const step = (await bar.getAttribute("data-step"))!;
    steps.push(step);
    // The step is laid out over a few frames after it appears: the page is read once settled.
    await expect
      .poll(() => page.evaluate(() => document.scrollingElement!.scrollHeight - window.innerHeight), {
        message: `${step}: the page scrolls`,
      })
      .toBeLessThanOrEqual(1);
    for (const canvas of await page.locator(".stage canvas").all()) {
      expectInside(await box(canvas), viewport, `${step}: a heatmap`);
    }
    if (step === last) break;
    await page.keyboard.press("PageDown");
    await expect(bar).not.toHaveAttribute("data-step", step);
  }
  return steps;
}

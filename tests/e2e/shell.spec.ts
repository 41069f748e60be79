// Checks of the built page itself, whatever the UI shows: document metadata, assets served with
// the right types, and relative URLs that keep working under a sub-path.
import { test, expect, requestsOutside } from "./fixtures";

test("the page has its title, language and viewport, and the app mounts", async ({ app, page }) => {
  await app.goto();
  await expect(page).toHaveTitle("attention-lens");
  await expect(page.locator("html")).toHaveAttribute("lang", "en");
  await expect(page.locator('meta[name="viewport"]')).toHaveAttribute("content", /width=device-width/);
});

test("the stylesheet applies and the wasm module is served as application/wasm", async ({ app, page }) => {
  const wasmResponse = page.waitForResponse((response) => response.url().endsWith(".wasm"));
  await app.goto();
  expect((await wasmResponse).headers()["content-type"]).toBe("application/wasm");
  const sheets = await page.evaluate(() => Array.from(document.styleSheets, (sheet) => sheet.href));
  expect(sheets.some((href) => href !== null && href.endsWith(".css"))).toBe(true);
});

test("the page preloads the wasm module, so it downloads while the script starts", async ({ app, page }) => {
  await app.goto();
  const preload = page.locator('link[rel="preload"][as="fetch"][type="application/wasm"]');
  await expect(preload).toHaveCount(1);
  expect(await preload.getAttribute("href")).toMatch(/_bg\.wasm$/);
});

test("the build works from a sub-path, using only relative URLs", async ({ app, requests }) => {
  await app.goto("sub/path/");
  const base = new URL("sub/path/", test.info().project.use.baseURL).href;
  expect(requestsOutside(requests, base), `requests outside ${base}`).toEqual([]);
});

test("what the first screen does not show mounts after the first picture", async ({ app, page }) => {
  // Counted at the moment the first heatmap is drawn, inside the task that draws it.
  await page.addInitScript(() => {
    const mark = performance.mark.bind(performance);
    performance.mark = (name: string, options?: PerformanceMarkOptions) => {
      const entry = mark(name, options);
      if (name === "al-first-heatmap") {
        const count = (selector: string) => document.querySelectorAll(selector).length;
        (window as unknown as { atFirstHeatmap: Record<string, number> }).atFirstHeatmap = {
          heatmaps: count(".stage canvas"),
          exportEntries: count(".export-menu .menu-body button"),
          presets: count('[data-testid="preset"] option'),
          editors: count('[data-testid^="cell-"]'),
          lab: count('[data-testid="whatif-lab"]'),
        };
      }
      return entry;
    };
  });
  await app.goto();
  await expect(page.locator(".stage canvas").first()).toHaveAttribute("data-drawn", "true");
  const atFirst = await page.evaluate(() => (window as unknown as { atFirstHeatmap: Record<string, number> }).atFirstHeatmap);
  expect(atFirst.heatmaps).toBeGreaterThan(0);
  expect(atFirst).toMatchObject({ exportEntries: 0, presets: 0, editors: 0, lab: 0 });
  // A place mounts what it holds when it is first opened, and they are all there.
  await expect(page.getByTestId("whatif-lab")).toHaveCount(0);
  await app.openPlace("inputs");
  await app.openPlace("lab");
  await app.openPlace("share");
  await expect(page.getByTestId("whatif-lab")).toBeAttached();
  expect(await page.locator(".export-menu .menu-body button").count()).toBe(7);
  expect(await page.getByTestId("preset").locator("option").count()).toBeGreaterThan(1);
  expect(await page.locator('[data-testid^="cell-"]').count()).toBeGreaterThan(0);
});

test("on a phone the places are on the first screen and sharing mounts when first opened", async ({ app, page }) => {
  await page.setViewportSize({ width: 360, height: 640 });
  await app.goto();
  await expect(page.locator(".stage canvas").first()).toHaveAttribute("data-drawn", "true");
  await expect(page.getByTestId("place-share")).toBeInViewport();
  await expect(page.getByTestId("present")).toHaveCount(0);
  await app.openActionsMenu();
  await expect(page.getByTestId("present")).toBeVisible();
});

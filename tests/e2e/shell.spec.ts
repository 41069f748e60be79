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

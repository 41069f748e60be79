// The smoke test: the default scenario in the release build matches the native CLI's trace.
import { test, expect, expectMatrixClose, loadTrace, requestsOutside } from "./fixtures";

const DEFAULT_TOKENS = ["I", "am", "hungry"];

test("the default sentence shows its tokens and an output equal to the CLI trace", async ({ app }) => {
  const trace = loadTrace();
  expect(trace.tokens).toEqual(DEFAULT_TOKENS);

  await app.goto();
  await app.openPlace("inputs");
  await expect(app.tokens).toHaveText(DEFAULT_TOKENS);

  await app.openStage("output");
  await expect(app.table("output")).toBeVisible();
  const output = await app.tableValues("output");
  expectMatrixClose(output, trace.output, 1e-9, "output");

  await app.screenshot("output-stage");
});

test("the app loads from a sub-path and sends nothing outside it", async ({ app, requests }) => {
  await app.goto("sub/path/");
  await app.openPlace("inputs");
  await expect(app.tokens).toHaveText(DEFAULT_TOKENS);
  const base = new URL("sub/path/", test.info().project.use.baseURL).href;
  expect(requestsOutside(requests, base), `requests outside ${base}`).toEqual([]);
});

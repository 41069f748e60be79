// The scenarios the browser figures edit (tests/perf/measure.mjs, tests/perf/profile.mjs).

/** 32 words: the most tokens a sentence may have. */
export const LONGEST_SENTENCE = "the quick brown fox jumps over the lazy dog "
  .repeat(4)
  .trim()
  .split(" ")
  .slice(0, 32)
  .join(" ");

/**
 * Sets up `scenario` on the Scores stage and returns the number of canvases shown. The default
 * scenario has 2 heads and shows both; the largest has 8, so "Compare all heads" is switched on
 * to show every head's scores at once.
 */
export async function prepare(page, scenario) {
  const largest = scenario.startsWith("largest");
  // The inputs are one of the places of the top bar, mounted when first opened.
  const inputs = page.getByTestId("place-inputs");
  if ((await inputs.getAttribute("aria-expanded")) !== "true") await inputs.click();
  // Llama's attention and block: the Llama-style preset (pre-norm RMSNorm, SwiGLU, rotary
  // positions, a window), grown to 8 heads sharing 2 key/value heads.
  if (scenario.endsWith("-llama")) await page.getByTestId("preset").selectOption("llama");
  if (largest) {
    await page.getByTestId("sentence-input").fill(LONGEST_SENTENCE);
    await page.getByTestId("d-model").selectOption("16");
    await page.getByTestId("n-heads").selectOption("8");
    const tokens = await page.getByTestId("token").count();
    if (tokens !== 32) throw new Error(`the largest scenario has ${tokens} tokens, not 32`);
  }
  if (scenario.endsWith("-llama")) {
    await page.getByTestId("kv-heads").selectOption("2");
    if ((await page.getByTestId("stage-rotary").count()) !== 1) {
      throw new Error("the Llama scenario has no rotary stage");
    }
  }
  if (scenario.endsWith("-block")) {
    await page.getByTestId("block").check();
    if (largest) {
      await page.getByTestId("d-ff").fill("64");
      await page.getByTestId("d-ff").press("Enter");
      await page.getByTestId("cross").check();
      await page.getByTestId("source").fill(LONGEST_SENTENCE);
    }
  }
  await page.getByTestId("stage-scores").click();
  if (largest) {
    const compare = page.getByTestId("compare-heads");
    if ((await compare.getAttribute("aria-pressed")) !== "true") await compare.click();
  }
  await page.getByTestId("editor-tab-w_q").click();
  await page.getByTestId("cell-w_q-0-0").focus();
  // Let every canvas of the new view be drawn before the first edit.
  await page.evaluate(
    () => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))),
  );
  return page.evaluate(() => document.querySelectorAll("canvas").length);
}

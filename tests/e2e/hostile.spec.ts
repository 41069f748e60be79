// Hostile and odd input: the page says what is wrong, keeps its last valid state, never runs
// text it was given as code, and never panics (the shared fixture fails a test on any console
// error or uncaught exception).
import type { Page } from "@playwright/test";
import { test as base, expect, type AppPage } from "./fixtures";

/** Payloads short enough to stay under the 32-token limit, so the page really shows them. */
const SCRIPT_TAG = "<script>alert(1)</script>";
const IMG_ONERROR = '"><img src=x onerror=alert(1)>';
const SVG_ONLOAD = "<svg onload=window.__pwned=true>";

interface Guard {
  /** Messages of any alert, confirm or prompt the page opened. */
  dialogs: string[];
}

/**
 * Every test here also fails if the page opened a dialog, if `window.__pwned` was set, or if the
 * DOM ends up holding an image or any inline event handler.
 */
const test = base.extend<{ guard: Guard }>({
  guard: [
    async ({ page }, use) => {
      const guard: Guard = { dialogs: [] };
      page.on("dialog", (dialog) => {
        guard.dialogs.push(`${dialog.type()}: ${dialog.message()}`);
        void dialog.dismiss();
      });
      await page.addInitScript(() => {
        (window as unknown as { __pwned: boolean }).__pwned = false;
      });
      await use(guard);
      expect(guard.dialogs, "dialogs opened by the page").toEqual([]);
      if (!page.isClosed()) {
        const state = await page.evaluate(() => ({
          pwned: (window as unknown as { __pwned?: boolean }).__pwned,
          images: document.querySelectorAll("img").length,
          handlers: Array.from(document.querySelectorAll("*")).flatMap((el) =>
            Array.from(el.attributes)
              .filter((a) => a.name.toLowerCase().startsWith("on"))
              .map((a) => `<${el.tagName.toLowerCase()} ${a.name}="${a.value}">`),
          ),
        }));
        expect(state.pwned, "a payload ran").toBe(false);
        expect(state.images, "img elements in the page").toBe(0);
        expect(state.handlers, "inline event handlers in the page").toEqual([]);
      }
    },
    { auto: true },
  ],
});

test.describe.configure({ mode: "parallel" });

/** Saves the heatmap `name` as SVG and parses the downloaded file as XML in the page. */
async function savedSvg(app: AppPage, page: Page, name: string) {
  await app.openPlace("share");
  const file = await app.downloaded(() => page.getByTestId(`export-svg-${name}`).click());
  return page.evaluate((text) => {
    const doc = new DOMParser().parseFromString(text, "image/svg+xml");
    return {
      error: doc.querySelector("parsererror")?.textContent ?? null,
      scripts: doc.querySelectorAll("script, foreignObject").length,
      handlers: Array.from(doc.querySelectorAll("*")).filter((el) =>
        Array.from(el.attributes).some((a) => a.name.startsWith("on")),
      ).length,
      text: doc.documentElement.textContent ?? "",
    };
  }, file.bytes.toString("utf8"));
}

/** The output matrix as the page shows it, to compare before and after. */
async function output(app: AppPage): Promise<string[][]> {
  return app.tableCells("output");
}

test("an empty sentence is refused with a message and the last sentence stays", async ({ app, page }) => {
  await app.goto();
  await app.openPlace("inputs");
  await app.openStage("output");
  const before = await output(app);
  const input = page.getByTestId("sentence-input");
  await input.fill("");
  await expect(page.getByTestId("sentence-error")).toContainText("at least one word");
  await expect(input).toHaveAttribute("aria-invalid", "true");
  await expect(app.tokens).toHaveText(["I", "am", "hungry"]);
  expect(await output(app)).toEqual(before);
});

test("10 000 characters: too many words and an overlong word are refused, a long word is shown without breaking the page", async ({ app, page }) => {
  await app.goto();
  await app.openPlace("inputs");
  await app.openStage("output");
  const before = await output(app);
  const input = page.getByTestId("sentence-input");

  await input.fill("ab ".repeat(3333) + "a");
  await expect(page.getByTestId("sentence-error")).toContainText("at most 32");
  await expect(app.tokens).toHaveText(["I", "am", "hungry"]);
  expect(await output(app)).toEqual(before);

  await input.fill("x".repeat(10_000));
  await expect(page.getByTestId("sentence-error")).toContainText("10000 Unicode characters long");
  await expect(app.tokens).toHaveText(["I", "am", "hungry"]);
  expect(await output(app)).toEqual(before);

  const word = "x".repeat(64);
  await input.fill(word);
  await expect(page.getByTestId("sentence-error")).toBeEmpty();
  await expect(app.tokens).toHaveText([word]);
  await app.openStage("softmax");
  await expect(page.getByTestId("canvas-weights-h0")).toHaveAttribute("data-drawn", "true");
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  expect(overflow, "no horizontal scroll").toBeLessThanOrEqual(0);
});

test("emoji, combining characters and right-to-left text become whole tokens", async ({ app, page }) => {
  await app.goto();
  await app.openPlace("inputs");
  const input = page.getByTestId("sentence-input");

  await input.fill("👩‍👩‍👧 café e\u0301");
  await expect(app.tokens).toHaveText(["👩‍👩‍👧", "café", "e\u0301"]);
  await app.openStage("scores");
  await expect(app.table("scores-h0").locator("tbody th")).toHaveText(["👩‍👩‍👧", "café", "e\u0301"]);

  await input.fill("שלום עולם");
  await expect(app.tokens).toHaveText(["שלום", "עולם"]);
  // Each token is isolated, so right-to-left words do not reorder their neighbours.
  await expect(page.getByTestId("tokens").locator("bdi")).toHaveCount(2);

  await input.fill("مرحبا بالعالم");
  await expect(app.tokens).toHaveText(["مرحبا", "بالعالم"]);
  await expect(page.getByTestId("canvas-scores-h0")).toHaveAttribute("data-drawn", "true");
  await expect(page.getByTestId("sentence-error")).toBeEmpty();
});

test("markup typed as a sentence is shown as text, in the page, the link and the SVG export", async ({ app, page }) => {
  await app.goto();
  await app.openPlace("inputs");
  const input = page.getByTestId("sentence-input");
  for (const payload of [SCRIPT_TAG, IMG_ONERROR, SVG_ONLOAD]) {
    await input.fill(payload);
    await expect(page.getByTestId("sentence-error")).toBeEmpty();
    await expect(app.tokens.first()).toHaveText(payload[0]);
    expect((await app.tokens.allTextContents()).join("")).toBe(payload.replace(/\s/g, ""));
  }

  // The same sentence restored from its own link.
  await app.openStage("softmax");
  await expect(page).toHaveURL(/#v=1&s=/);
  await page.reload();
  await app.openPlace("inputs");
  await expect(page.getByTestId("sentence-input")).toHaveValue(SVG_ONLOAD);
  await expect(page.getByTestId("stage-title")).toHaveText("Softmax");

  // A heatmap saved as SVG escapes the labels: it parses, and holds no script or handler.
  const parsed = await savedSvg(app, page, "weights-h0");
  expect(parsed.error, "the SVG is well-formed").toBeNull();
  expect(parsed.scripts).toBe(0);
  expect(parsed.handlers).toBe(0);
  expect(parsed.text).toContain("onload");
});

test("control characters in the sentence leave every SVG export well-formed XML", async ({ app, page }) => {
  // Characters XML 1.0 cannot hold at all: C0 controls other than tab, newline and return.
  // Like punctuation, each one is a token of its own.
  const sentence = "a\u0001 b\u0008 \u001fd\u007f";
  await app.goto(`./#v=1&s=${encodeURIComponent(sentence)}`);
  await app.openPlace("inputs");
  await expect(app.tokens).toHaveCount(7);
  for (const [stage, name] of [
    ["input", "x"],
    ["scores", "scores-h0"],
    ["softmax", "weights-h1"],
  ] as const) {
    await app.openStage(stage);
    const parsed = await savedSvg(app, page, name);
    expect(parsed.error, `the SVG of ${name} is well-formed`).toBeNull();
    // Each control character is drawn as its visible "control picture" (U+2400 + code).
    for (const picture of ["\u2401", "\u2408", "\u241f", "\u2421"]) {
      expect(parsed.text, `the SVG of ${name} shows ${picture}`).toContain(picture);
    }
  }
});

test("markup in the query string is ignored and the page opens normally", async ({ app, page }) => {
  for (const query of [
    `?stage=${SCRIPT_TAG}`,
    `?stage=${encodeURIComponent(SCRIPT_TAG)}`,
    `?theme=${encodeURIComponent(IMG_ONERROR)}&present=${encodeURIComponent(SCRIPT_TAG)}`,
    `?embed=1&controls=${encodeURIComponent(IMG_ONERROR)}&stage=${encodeURIComponent(SVG_ONLOAD)}`,
  ]) {
    // The default model's link: a bare address would open on the first screen's scenario.
    await app.goto(`./${query}#v=1`);
    await expect(page.getByTestId("stage-title"), query).toHaveText("Input X");
    await expect(app.table("x").locator("tbody th"), query).toHaveText(["I", "am", "hungry"]);
    await expect(page.getByTestId("presenter-progress"), query).toHaveCount(0);
    await expect(page.locator("html"), query).not.toHaveAttribute("data-theme", /./);
  }
});

test("markup in the link fragment is read as text or refused with a notice", async ({ app, page }) => {
  await app.goto("./#v=1&s=%22%3E%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E");
  await app.openPlace("inputs");
  await expect(page.getByTestId("sentence-input")).toHaveValue(IMG_ONERROR);
  await expect(app.tokens.first()).toHaveText('"');
  await expect(page.getByTestId("canvas-x")).toHaveAttribute("data-drawn", "true");

  const links = [
    `#v=1&stage=${encodeURIComponent(SCRIPT_TAG)}&cell=${encodeURIComponent(IMG_ONERROR)}.0.0`,
    `#v=1&s=${encodeURIComponent(SVG_ONLOAD)}&wq=${encodeURIComponent(SCRIPT_TAG)}&${encodeURIComponent(IMG_ONERROR)}=1`,
  ];
  for (const link of links) {
    await page.goto("about:blank");
    await app.goto(`./${link}`);
    await app.openPlace("inputs");
    await expect(page.getByTestId("notice").first(), link).toBeVisible();
    await expect(page.getByTestId("stage-title"), link).toHaveText("Input X");
    await expect(page.getByTestId("canvas-x"), link).toHaveAttribute("data-drawn", "true");
  }
  // A notice quotes what it refused as text, never as markup.
  await expect(page.getByTestId("sentence-input")).toHaveValue(SVG_ONLOAD);
  await expect(page.getByTestId("notice").filter({ hasText: "<img src=x onerror" })).not.toHaveCount(0);
});

test("non-numbers and out-of-range numbers in a matrix cell are refused with a reason", async ({ app, page }) => {
  await app.goto();
  await app.openPlace("inputs");
  await app.openStage("projection");
  const before = await app.tableCells("w_q");
  await page.getByTestId("editor-tab-w_q").click();
  const cell = page.getByTestId("cell-w_q-0-0");
  const error = page.getByTestId("editor-error-w_q");

  for (const [text, message] of [
    ["NaN", "finite"],
    ["inf", "finite"],
    ["-Infinity", "finite"],
    ["1e308", "1,000,000"],
    ["١٢", "digits 0–9"],
    [SCRIPT_TAG, "Not a number"],
    ["", ""],
  ]) {
    await cell.fill(text);
    await expect(cell, text).toHaveAttribute("aria-invalid", "true");
    await expect(error, text).toContainText(message);
    await expect(error, text).toContainText("last valid value");
    expect(await app.tableCells("w_q"), text).toEqual(before);
  }

  // Minus zero is a number: it is taken, and shown as plain 0.
  await cell.fill("-0");
  await expect(cell).toHaveAttribute("aria-invalid", "false");
  await expect(error).toBeEmpty();
  await expect.poll(async () => (await app.tableCells("w_q"))[0][0]).toBe("0");
  await expect(page.getByTestId("trace-error")).toBeEmpty();
});

test("a bad temperature is refused with a message", async ({ app, page }) => {
  await app.goto();
  await app.openPlace("inputs");
  await app.openStage("softmax");
  const before = await app.tableCells("weights-h0");
  const field = page.getByTestId("temperature");
  for (const text of ["NaN", "0", "-1", "1e308", "inf"]) {
    await field.fill(text);
    await field.press("Enter");
    await expect(page.getByTestId("temperature-error"), text).not.toBeEmpty();
    await expect(field, text).toHaveAttribute("aria-invalid", "true");
    expect(await app.tableCells("weights-h0"), text).toEqual(before);
  }
  // The message gives the range, and its examples lie in it: never a negative temperature.
  for (const text of ["abc", ""]) {
    await field.fill(text);
    await field.press("Enter");
    await expect(page.getByTestId("temperature-error"), text).toContainText("between 0.01 and 100");
    await expect(page.getByTestId("temperature-error"), text).not.toContainText("-");
  }
});

test("only head counts that divide d_model can be chosen, and a link cannot force another", async ({ app, page }) => {
  await app.goto();
  await app.openPlace("inputs");
  const widths = await page
    .getByTestId("d-model")
    .locator("option")
    .evaluateAll((els) => els.map((el) => (el as HTMLOptionElement).value));
  expect(widths.length).toBeGreaterThan(0);
  for (const d of widths) {
    await page.getByTestId("d-model").selectOption(d);
    const heads = await page
      .getByTestId("n-heads")
      .locator("option")
      .evaluateAll((els) => els.map((el) => Number((el as HTMLOptionElement).value)));
    expect(heads.length, `d_model ${d} offers heads`).toBeGreaterThan(0);
    for (const h of heads) expect(Number(d) % h, `${h} heads for d_model ${d}`).toBe(0);
  }

  // Opened fresh, and pasted into the address bar of the open page.
  await page.goto("about:blank");
  for (const [link, width] of [
    ["#v=1&d=6&h=4", 6],
    ["#v=1&d=8&h=3&stage=output", 8],
  ] as const) {
    await app.goto(`./${link}`);
    await app.openPlace("inputs");
    await expect(page.getByTestId("notice"), link).toHaveCount(1);
    await expect(page.getByTestId("notice"), link).toContainText(/heads/);
    await expect(page.getByTestId("d-model"), link).toHaveValue(String(width));
    const h = Number(await page.getByTestId("n-heads").inputValue());
    expect(width % h, `${link}: the page settled on ${h} heads for d_model ${width}`).toBe(0);
    await app.openStage("output");
    const out = await app.tableValues("output");
    expect(out, link).toHaveLength(3);
    for (const row of out) {
      expect(row, link).toHaveLength(width);
      for (const v of row) expect(Number.isFinite(v), link).toBe(true);
    }
    await expect(page.getByTestId("trace-error"), link).toBeEmpty();
  }
});

test("a 5 MB scenario file is refused before it is read", async ({ app, page }) => {
  await app.goto();
  await app.openPlace("inputs");
  await app.openPlace("share");
  await app.openStage("output");
  const before = await output(app);
  await app.openExportMenu();
  const big = Buffer.alloc(5 * 1024 * 1024, " ");
  Buffer.from('{"version": 1, "sentence": "too big to read"}').copy(big);
  await page.getByTestId("import-file").setInputFiles({
    name: "huge.json",
    mimeType: "application/json",
    buffer: big,
  });
  const report = page.getByTestId("import-report");
  await expect(report).toContainText("5.0 MB");
  await expect(report).toContainText("at most 1 MB");
  await expect(report).toContainText("Nothing was changed");
  await expect(app.tokens).toHaveText(["I", "am", "hungry"]);
  expect(await output(app)).toEqual(before);
});

test("scenarios with wrong shapes or bad values name the field and change nothing", async ({ app, page }) => {
  await app.goto();
  await app.openPlace("inputs");
  await app.openPlace("share");
  await app.openStage("output");
  const before = await output(app);
  await app.openExportMenu();
  const report = page.getByTestId("import-report");

  const sentence = "I am hungry";
  const cases: [string, unknown, RegExp][] = [
    ["ragged w_q", { version: 1, sentence, w_q: [[1, 2, 3, 4], [1, 2]] }, /w_q/],
    ["3 × 3 w_k for d_model 4", { version: 1, sentence, w_k: [[1, 0, 0], [0, 1, 0], [0, 0, 1]] }, /w_k/],
    ["embeddings for too few tokens", { version: 1, sentence, embeddings: [[1, 2, 3, 4]] }, /embeddings/],
    ["heads that do not divide d_model", { version: 1, sentence, d_model: 6, n_heads: 4 }, /n_heads/],
    ["an empty sentence", { version: 1, sentence: "" }, /sentence/],
    ["a sentence of 55 tokens of markup", { version: 1, sentence: SCRIPT_TAG.repeat(5) }, /sentence/],
    ["a string where a matrix belongs", { version: 1, sentence, w_o: SCRIPT_TAG }, /not a valid scenario/],
    ["a future version", { version: 99, sentence }, /version/i],
  ];
  for (const [what, scenario, field] of cases) {
    await page.getByTestId("import-file").setInputFiles({
      name: "scenario.json",
      mimeType: "application/json",
      buffer: Buffer.from(JSON.stringify(scenario)),
    });
    await expect(report, what).toContainText(field);
    await expect(report, what).toContainText("Nothing was changed");
    await expect(app.tokens, what).toHaveText(["I", "am", "hungry"]);
    expect(await output(app), what).toEqual(before);
    await report.getByRole("button", { name: "Dismiss" }).click();
    await expect(report).toHaveCount(0);
  }

  await page.getByTestId("import-file").setInputFiles({
    name: "not-json.json",
    mimeType: "application/json",
    buffer: Buffer.from(IMG_ONERROR),
  });
  await expect(report).toContainText("not a valid scenario");
  await expect(report).toContainText("Nothing was changed");
  expect(await output(app)).toEqual(before);
});

test("a link with broken block and source parts opens with notices and what it could use", async ({ app, page }) => {
  await app.goto("./#v=1&src=%ZZ&blk=1&norm=sideways&act=tanh&dff=999&w1=abc&g2=1,2&stage=norm-2");
  const notices = page.getByTestId("notice");
  await expect(notices.filter({ hasText: "source sentence in the link is damaged" })).toHaveCount(1);
  await expect(notices.filter({ hasText: "is not post or pre" })).toHaveCount(1);
  await expect(notices.filter({ hasText: "is not relu or gelu" })).toHaveCount(1);
  await expect(notices.filter({ hasText: "d_ff is “999”" })).toHaveCount(1);
  await expect(notices.filter({ hasText: "W_1 has 1 number, but it needs 64 (4 × 16)" })).toHaveCount(1);
  await expect(notices.filter({ hasText: "γ_2 has 2 numbers, but it needs 4 (1 × 4)" })).toHaveCount(1);
  // The block itself was readable: it is on, on the stage the link names.
  await expect(page.getByTestId("stage-norm-2")).toHaveAttribute("aria-current", "step");
  await expect(page.getByTestId("canvas-norm_2")).toHaveAttribute("data-drawn", "true");
  // A block stage in a link without the block falls back to the first stage, with a notice.
  await app.goto("./#v=1&stage=ffn-hidden");
  await expect(notices.filter({ hasText: "belongs to the transformer block" })).toHaveCount(1);
  await expect(page.getByTestId("stage-input")).toHaveAttribute("aria-current", "step");
});

// Sharing, embedding, presenting, exporting and importing.
import type { Page } from "@playwright/test";
import { test, expect, expectMatrixClose, loadTrace, runCli, type Matrix } from "./fixtures";

test("opening Share & present shows Present and Quiz me first, in sight above the explanation", async ({ app, page }) => {
  for (const [width, height] of [[1280, 800], [1366, 768], [360, 640]]) {
    await page.setViewportSize({ width, height });
    // A fresh page at each size: the same address again would keep the place open.
    await page.goto("about:blank");
    // The bare address: its explained cell takes the column's foot.
    await app.goto("./");
    await expect(page.getByTestId("explain-panel")).toHaveClass(/active/);
    await app.openPlace("share");
    for (const id of ["present", "quiz-me"]) {
      const button = page.getByTestId(id);
      await expect(button, `${width}×${height}: ${id}`).toBeInViewport({ ratio: 1 });
      // Nothing over it: the point at its middle is the button itself.
      const hit = await button.evaluate((b) => {
        const r = b.getBoundingClientRect();
        return b.contains(document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2));
      });
      expect(hit, `${width}×${height}: ${id} is not covered`).toBe(true);
    }
  }
});

test("a permalink restores the exact state", async ({ app, page, context }) => {
  await app.goto();
  await app.openPlace("inputs");
  await page.getByTestId("sentence-input").fill("the cat sat");
  await page.getByTestId("causal").check();
  await page.getByTestId("editor-tab-w_q").click();
  await page.getByTestId("cell-w_q-1-2").fill("0.75");
  await app.openStage("softmax");
  const canvas = page.getByTestId("canvas-weights-h1");
  await canvas.focus();
  await page.keyboard.press("ArrowDown");
  await expect(canvas).toHaveAttribute("data-highlight", /^cell:1,0;/);
  const weights = await app.tableValues("weights-h1");
  // Fine adjustments such as a selection reach the address once they pause.
  await expect(page).toHaveURL(/#v=1.*&cell=weights-h1\.1\.0/);
  const url = page.url();

  const other = await context.newPage();
  await other.goto(url);
  await other.getByTestId("place-inputs").click();
  await expect(other.getByTestId("token")).toHaveText(["the", "cat", "sat"]);
  await expect(other.getByTestId("causal")).toBeChecked();
  await expect(other.getByTestId("stage-title")).toHaveText("Softmax");
  await other.getByTestId("editor-tab-w_q").click();
  await expect(other.getByTestId("cell-w_q-1-2")).toHaveValue("0.75");
  await expect(other.getByTestId("canvas-weights-h1")).toHaveAttribute("data-highlight", /^cell:1,0;/);
  await expect(other.getByTestId("explain-title")).toContainText("cat");
  await expect(other.locator("tbody[data-stale]")).toHaveCount(0);
  const restored = await other.getByTestId("table-weights-h1").evaluate((el) =>
    Array.from(el.querySelectorAll("tbody tr")).map((tr) =>
      Array.from(tr.querySelectorAll("td[data-value]")).map((td) => Number(td.getAttribute("data-value"))),
    ),
  );
  expectMatrixClose(restored, weights, 0, "restored weights");
  await expect(other.getByTestId("notice")).toHaveCount(0);
  await other.close();
});

test("a link whose cell is not on its stage highlights nothing and says why", async ({ app, page }) => {
  await app.goto("./#v=1&stage=scores&cell=weights-h0.1.1");
  await expect(page.getByTestId("stage-title")).toContainText("Scores");
  await expect(page.getByTestId("notice")).toContainText("a cell of A₁, which this stage does not draw");
  await expect(page.getByTestId("explain-title")).toHaveCount(0);
  await expect(page).not.toHaveURL(/cell=/);
  // The same cell on its own stage is explained.
  await app.goto("./#v=1&stage=softmax&cell=weights-h0.1.1");
  await expect(page.getByTestId("explain-title")).toContainText("am");
  await expect(page.getByTestId("notice")).toHaveCount(0);
  // A cell of a head or a part not shown at first opens that head or part.
  await app.goto("./#v=1&h=4&d=8&stage=softmax&cell=weights-h3.1.1");
  await expect(page.getByTestId("head-3")).toHaveAttribute("aria-pressed", "true");
  await expect(page.getByTestId("canvas-weights-h3")).toHaveAttribute("data-highlight", /^cell:1,1;/);
  await expect(page.getByTestId("notice")).toHaveCount(0);
  await app.goto("./?present=1#v=1&stage=projection&cell=v.0.0");
  await expect(page.getByTestId("presenter-bar")).toHaveAttribute("data-step", "projection-2");
  await expect(page.getByTestId("canvas-v")).toHaveAttribute("data-highlight", /^cell:0,0;/);
  await expect(page.getByTestId("notice")).toHaveCount(0);
});

test("Back and Forward move between meaningful states", async ({ app, page }) => {
  await app.goto();
  await app.openStage("scores");
  await app.openStage("softmax");
  await page.goBack();
  await expect(page.getByTestId("stage-title")).toHaveText("Scores QₕKₕᵀ");
  await page.goForward();
  await expect(page.getByTestId("stage-title")).toHaveText("Softmax");
});

test("Back past a preset's load takes its caption away, and Forward brings it back", async ({ app, page }) => {
  await app.goto("./#v=1&s=I%20am%20hungry&stage=scores");
  await app.openPlace("inputs");
  await page.getByTestId("preset").selectOption("pronoun");
  const caption = page.getByTestId("preset-caption-text");
  await expect(caption).toContainText("sushi");
  const input = page.getByTestId("sentence-input");
  await input.fill("my dog chased the ball because it was bored");
  await expect(page.getByTestId("caption-broken")).toBeVisible();
  // Back to the preset as loaded: its caption, its claims holding.
  await page.goBack();
  await expect(input).toHaveValue(/sushi/);
  await expect(caption).toContainText("sushi");
  await expect(page.getByTestId("caption-broken")).toHaveCount(0);
  // Back to the page before it: no preset's caption, and the menu names none.
  await page.goBack();
  await expect(input).toHaveValue("I am hungry");
  await expect(page.getByTestId("preset-caption")).toHaveCount(0);
  await expect(page.getByTestId("preset")).toHaveValue("");
  await page.goForward();
  await expect(caption).toContainText("sushi");
  await expect(page.getByTestId("preset")).toHaveValue("pronoun");
});

test("every switch is a Back step: the source, the block and the block's menus", async ({ app, page }) => {
  await app.goto();
  await app.openPlace("inputs");
  const steps: [string, () => Promise<void>, () => Promise<void>][] = [
    ["cross", () => page.getByTestId("cross").check(), () => expect(page.getByTestId("cross")).not.toBeChecked()],
    ["block", () => page.getByTestId("block").check(), () => expect(page.getByTestId("block")).not.toBeChecked()],
    ["norm", () => page.getByTestId("norm").selectOption("pre").then(() => {}), () => expect(page.getByTestId("norm")).toHaveValue("post")],
    ["activation", () => page.getByTestId("activation").selectOption("gelu").then(() => {}), () => expect(page.getByTestId("activation")).toHaveValue("relu")],
  ];
  for (const [name, act] of steps) {
    const before = page.url();
    await act();
    await expect(page, `${name} changes the link`).not.toHaveURL(before);
  }
  for (const [name, , undone] of steps.reverse()) {
    await page.goBack();
    await undone();
    await expect(page.getByTestId("token").first(), `Back from ${name} stays in the app`).toBeVisible();
  }
  await expect(page.getByTestId("block")).not.toBeChecked();
  await expect(page.getByTestId("cross")).not.toBeChecked();
});

test("an embed never adds to its host page's history", async ({ page, baseURL }) => {
  await page.setContent(`<iframe id="al" style="width:700px;height:700px;border:0" src="${new URL("./?embed=1&controls=0", baseURL).href}"></iframe>`);
  const frame = page.frameLocator("#al");
  await expect(frame.getByTestId("stage-title")).toHaveText("Input X");
  const length = await page.evaluate(() => history.length);
  await frame.getByTestId("next").click();
  await frame.getByTestId("next").click();
  await expect(frame.getByTestId("stage-title")).toHaveText("Split into heads");
  expect(await page.evaluate(() => history.length)).toBe(length);
});

test("a corrupt or future link loads what it can and says so", async ({ app, page }) => {
  await app.goto("./#v=9&s=the%20dog&d=99&wq=abc,1&stage=nope&cell=zzz&bogus=1");
  await app.openPlace("inputs");
  await expect(page.getByTestId("notice").first()).toBeVisible();
  await expect(page.getByTestId("notice")).not.toHaveCount(0);
  await expect(app.tokens).toHaveText(["the", "dog"]);
  await expect(page.getByTestId("stage-title")).toHaveText("Input X");
  const count = await page.getByTestId("notice").count();
  await page.getByTestId("dismiss-notice").first().click();
  await expect(page.getByTestId("notice")).toHaveCount(count - 1);

  await app.goto("./#%E0%A4%A&s=%3Cscript%3Ealert(1)%3C%2Fscript%3E");
  await expect(app.tokens.first()).toHaveText("<");
  // The page's own two inline scripts (the module's loader and the first screen's picture's),
  // and none from the link.
  const inline = await page.evaluate(() => Array.from(document.querySelectorAll("script:not([src])"), (s) => s.textContent ?? ""));
  expect(inline.filter((text) => text.includes("alert"))).toEqual([]);
  expect(inline.length).toBeLessThanOrEqual(2);
});

test("an embed's Open full view opens where the reader is, not where the embed started", async ({ page, context }) => {
  await page.goto("./?embed=1&controls=0#v=1&stage=softmax");
  await expect(page.getByTestId("stage-title")).toHaveText("Softmax");
  await page.getByTestId("next").click();
  await expect(page.getByTestId("stage-title")).toContainText("Weighted sum");
  const [opened] = await Promise.all([context.waitForEvent("page"), page.getByTestId("open-full-view").click()]);
  await opened.waitForLoadState();
  const url = new URL(opened.url());
  expect(url.search, "the full view has no embed options").toBe("");
  expect(url.hash).toContain("stage=weighted-sum");
  await expect(opened.getByTestId("stage-title")).toContainText("Weighted sum");
  await opened.close();
});

test("leaving presenter mode takes present=1 out of the address, so a reload opens the page as it is", async ({ app, page }) => {
  await app.goto("./?present=1&quiz=1#v=1&stage=scores");
  await expect(page.getByTestId("presenter-bar")).toBeVisible();
  await page.keyboard.press("Escape");
  await expect(page.getByTestId("presenter-bar")).toHaveCount(0);
  await expect.poll(() => new URL(page.url()).search).toBe("?quiz=1");
  expect(new URL(page.url()).hash).toContain("stage=scores");
  await page.reload();
  await expect(page.getByTestId("stage-title")).toContainText("Scores");
  await expect(page.getByTestId("presenter-bar")).toHaveCount(0);
});

test("Back after leaving presenter mode keeps the address and the page in step", async ({ app, page }) => {
  await app.goto("./?present=1#v=1&stage=scores");
  const bar = page.getByTestId("presenter-bar");
  await expect(bar).toHaveAttribute("data-step", /^scores-/);
  await page.keyboard.press("PageDown");
  await page.keyboard.press("PageDown");
  await page.keyboard.press("PageDown");
  await expect(bar).not.toHaveAttribute("data-step", /^scores-/);
  await expect.poll(() => new URL(page.url()).hash).not.toContain("stage=scores");
  await page.keyboard.press("Escape");
  await expect(bar).toHaveCount(0);
  await page.goBack();
  // An address written while presenting: the page does not present, so the address says so too,
  // and a reload opens it as it is.
  await expect.poll(() => new URL(page.url()).search).not.toContain("present=1");
  await expect(bar).toHaveCount(0);
  await page.reload();
  await expect(page.getByTestId("stage-title")).toBeVisible();
  await expect(bar).toHaveCount(0);
});

test("embed mode at 320 px has no chrome, no horizontal scroll, and posts its height", async ({ page, baseURL }) => {
  await page.setViewportSize({ width: 320, height: 640 });
  await page.goto("./?embed=1&controls=0&stage=softmax&theme=dark");
  await expect(page.getByTestId("stage-title")).toHaveText("Softmax");
  await expect(page.locator(".topbar")).toHaveCount(0);
  await expect(page.getByTestId("open-full-view")).toHaveAttribute("href", /#/);
  await expect(page.getByTestId("sentence-input")).toHaveCount(0);
  await expect(page.locator("html")).toHaveAttribute("data-theme", "dark");
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  expect(overflow, "no horizontal scroll").toBeLessThanOrEqual(0);

  await page.setViewportSize({ width: 800, height: 900 });
  await page.setContent(`<iframe id="al" style="width:320px;height:300px;border:0"></iframe>
    <script>window.heights = []; addEventListener("message", (e) => {
      if (e.data && e.data.type === "attention-lens:height") window.heights.push(e.data.height);
    });</script>`);
  await page.evaluate((src) => ((document.getElementById("al") as HTMLIFrameElement).src = src), `${baseURL}?embed=1`);
  await expect.poll(() => page.evaluate(() => (window as unknown as { heights: number[] }).heights.length)).toBeGreaterThan(0);
  const heights = await page.evaluate(() => (window as unknown as { heights: number[] }).heights);
  expect(Math.max(...heights)).toBeGreaterThan(300);
});

test("presenter mode steps with clicker keys and leaves with Escape", async ({ app, page }) => {
  await app.goto();
  await app.openPlace("share");
  await page.getByTestId("present").click();
  await expect(page.getByTestId("presenter-progress")).toBeVisible();
  await expect(page.getByTestId("stage-input")).toHaveCount(0);
  await expect(page.locator(".controls")).toBeHidden();
  await page.keyboard.press("Space");
  await expect(page.getByTestId("stage-title")).toHaveText("Projections Q, K, V");
  // Q, K and V are three steps, each drawn large.
  const head = page.getByTestId("presenter-head");
  await expect(head).toHaveText("Queries: Q = X·W_q");
  await page.keyboard.press("PageDown");
  await expect(head).toHaveText("Keys: K = X·W_k");
  await page.keyboard.press("PageDown");
  await expect(head).toHaveText("Values: V = X·W_v");
  await expect(page.locator(".stage canvas:not(.given canvas)")).toHaveCount(1);
  await page.keyboard.press("PageDown");
  await expect(page.getByTestId("stage-title")).toHaveText("Split into heads");
  await page.keyboard.press("PageUp");
  await expect(page.getByTestId("stage-title")).toHaveText("Projections Q, K, V");
  await expect(head).toHaveText("Values: V = X·W_v");
  await page.keyboard.press("ArrowRight");
  await expect(page.getByTestId("presenter-progress").locator("li.current")).toHaveCount(1);
  await page.keyboard.press("f");
  await expect.poll(() => page.evaluate(() => document.fullscreenElement !== null)).toBe(true);
  await page.keyboard.press("f");
  await expect.poll(() => page.evaluate(() => document.fullscreenElement === null)).toBe(true);
  await page.keyboard.press("Escape");
  await expect(page.getByTestId("presenter-progress")).toHaveCount(0);
  await expect(page.getByTestId("stage-input")).toBeVisible();
});

test("exports produce the trace, the handout, the scenario and both image formats", async ({ app, page }) => {
  const trace = loadTrace();
  await app.goto();
  await app.openPlace("share");
  await app.openExportMenu();
  const json = await app.downloaded(() => page.getByTestId("export-trace-json").click());
  expect(json.name).toBe("i-am-hungry-trace.json");
  const parsed = JSON.parse(json.bytes.toString("utf8"));
  expect(parsed.tokens).toEqual(trace.tokens);
  expectMatrixClose(parsed.output as Matrix, trace.output, 0, "exported output");
  expectMatrixClose(parsed.heads[1].masked as Matrix, trace.heads[1].masked, 0, "exported masked");

  await app.openExportMenu();
  const csv = (await app.downloaded(() => page.getByTestId("export-trace-csv").click())).bytes.toString("utf8");
  expect(csv.split("\n")[0]).toBe("matrix,head,row,row_token,col,col_label,value");
  await app.openExportMenu();
  const md = (await app.downloaded(() => page.getByTestId("export-markdown").click())).bytes.toString("utf8");
  for (const stage of ["Input X", "Softmax", "Output projection"]) expect(md).toContain(stage);
  await app.openExportMenu();
  const scenario = JSON.parse((await app.downloaded(() => page.getByTestId("export-scenario").click())).bytes.toString("utf8"));
  expect(scenario.sentence).toBe("I am hungry");
  expect(scenario.w_q).toHaveLength(4);

  const canvas = page.getByTestId("canvas-x");
  const cssWidth = Number(await canvas.getAttribute("data-width"));
  const png = await app.downloaded(() => page.getByTestId("export-png-x").click());
  expect(png.name).toBe("heatmap-x.png");
  expect([...png.bytes.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  expect(png.bytes.readUInt32BE(16), "PNG width is twice the heatmap's").toBe(cssWidth * 2);
  const svg = (await app.downloaded(() => page.getByTestId("export-svg-x").click())).bytes.toString("utf8");
  expect(svg).toContain("<svg");
  for (const token of trace.tokens) expect(svg).toContain(token);
});

/** Decodes a PNG in the page: its size, whether every pixel is opaque, and its top-left pixel. */
async function decodePng(page: Page, bytes: Buffer) {
  return page.evaluate(async (base64) => {
    const data = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
    const bitmap = await createImageBitmap(new Blob([data], { type: "image/png" }));
    const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
    const context = canvas.getContext("2d")!;
    context.drawImage(bitmap, 0, 0);
    const pixels = context.getImageData(0, 0, bitmap.width, bitmap.height).data;
    let transparent = 0;
    for (let i = 3; i < pixels.length; i += 4) if (pixels[i] !== 255) transparent += 1;
    return { width: bitmap.width, height: bitmap.height, transparent, corner: [...pixels.subarray(0, 3)] };
  }, bytes.toString("base64"));
}

for (const theme of ["light", "dark"] as const) {
  test(`a PNG export is opaque, at twice the heatmap's size, on the ${theme} theme's background`, async ({ app, page }) => {
    await app.goto(`./?theme=${theme}`);
    await app.openStage("softmax");
    const canvas = page.getByTestId("canvas-weights-h0");
    await expect(canvas).toHaveAttribute("data-drawn", "true");
    const box = await canvas.evaluate((el) => {
      const rect = el.getBoundingClientRect();
      return [rect.width, rect.height];
    });
    await app.openPlace("share");
    const png = await app.downloaded(() => page.getByTestId("export-png-weights-h0").click());
    expect(png.name).toBe("heatmap-weights-h0.png");
    const image = await decodePng(page, png.bytes);
    expect([image.width, image.height], "twice the CSS size").toEqual(box.map((side) => Math.round(side * 2)));
    expect(image.transparent, "pixels that are not fully opaque").toBe(0);
    // The heatmap is drawn on the theme's surface colour, which the page's panels also use.
    const surface = await page.evaluate(() => {
      const probe = document.createElement("div");
      probe.style.color = "var(--surface)";
      document.body.append(probe);
      const rgb = getComputedStyle(probe).color.match(/\d+/g)!.map(Number);
      probe.remove();
      return rgb;
    });
    expect(image.corner, "the top-left pixel is the theme's background").toEqual(surface);
    expect(surface, "the two themes differ").toEqual(theme === "light" ? [255, 255, 255] : [0x16, 0x19, 0x1d]);
  });
}

test("importing a broken file names the problem and leaves the page unchanged", async ({ app, page }) => {
  await app.goto();
  await app.openPlace("inputs");
  await app.openPlace("share");
  await app.openStage("output");
  const before = await app.tableValues("output");
  await app.openExportMenu();
  await page.getByTestId("import-file").setInputFiles({
    name: "broken.json",
    mimeType: "application/json",
    buffer: Buffer.from(JSON.stringify({ version: 1, sentence: "a b", w_q: [[1, 2], [3]] })),
  });
  await expect(page.getByTestId("import-report")).toContainText("w_q");
  await expect(page.getByTestId("import-report")).toContainText("Nothing was changed");
  await expect(app.tokens).toHaveText(["I", "am", "hungry"]);
  expect(await app.tableValues("output")).toEqual(before);

  await page.getByTestId("import-file").setInputFiles({
    name: "good.json",
    mimeType: "application/json",
    buffer: Buffer.from(JSON.stringify({ version: 1, sentence: "you are kind", causal: true })),
  });
  await expect(app.tokens).toHaveText(["you", "are", "kind"]);
  await expect(page.getByTestId("causal")).toBeChecked();
});

test("copy link and copy embed code put the current state on the clipboard", async ({ app, page, context }) => {
  await context.grantPermissions(["clipboard-read", "clipboard-write"]);
  await app.goto();
  await app.openPlace("share");
  await app.openStage("mask");
  await page.getByTestId("copy-link").click();
  await expect(page.getByTestId("share-status")).toHaveText("Link copied.");
  const link = await page.evaluate(() => navigator.clipboard.readText());
  expect(link).toContain("#v=1");
  expect(link).toContain("stage=mask");
  await page.getByTestId("copy-embed").click();
  await expect(page.getByTestId("share-status")).toHaveText("Embed code copied.");
  const code = await page.evaluate(() => navigator.clipboard.readText());
  // Compact by default: no editors, and a script that fits the frame's height.
  expect(code).toMatch(/^<iframe class="attention-lens" src="[^"]*\?embed=1&amp;controls=0#v=1&amp;stage=mask"/);
  expect(code).toMatch(/<\/iframe>\n<script>[^]*attention-lens:height[^]*<\/script>$/);
  await page.getByTestId("embed-editors").check();
  await page.getByTestId("copy-embed").click();
  await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toMatch(/\?embed=1#v=1&amp;stage=mask"/);
});

test("a burst of nudges rewrites the address once, and a link copied at once is current", async ({ app, page, context }) => {
  await context.grantPermissions(["clipboard-read", "clipboard-write"]);
  await page.addInitScript(() => {
    const w = window as unknown as { replaces: number };
    w.replaces = 0;
    const replace = history.replaceState.bind(history);
    history.replaceState = (...args: Parameters<History["replaceState"]>) => {
      w.replaces += 1;
      replace(...args);
    };
  });
  await app.goto();
  await app.openPlace("inputs");
  await app.openPlace("share");
  await page.getByTestId("editor-tab-w_q").click();
  const cell = page.getByTestId("cell-w_q-0-0");
  const start = Number(await cell.inputValue());
  await page.waitForTimeout(400);
  const [entries, replaces] = await page.evaluate(() => [history.length, (window as unknown as { replaces: number }).replaces]);
  // Ten nudges in one go, as a held key or a drag would send them.
  await cell.evaluate((input) => {
    for (let i = 0; i < 10; i++) {
      input.dispatchEvent(new KeyboardEvent("keydown", { key: "ArrowUp", altKey: true, bubbles: true }));
    }
  });
  const end = Number(await cell.inputValue());
  expect(end).toBeGreaterThan(start);
  await page.getByTestId("copy-link").click();
  const link = await page.evaluate(() => navigator.clipboard.readText());
  const wq = new URLSearchParams(new URL(link).hash.slice(1)).get("wq")!;
  expect(Number(wq.split(",")[0]), "the copied link has the last nudge").toBeCloseTo(end, 10);
  await page.waitForTimeout(600);
  const after = await page.evaluate(() => [history.length, (window as unknown as { replaces: number }).replaces]);
  expect(after[0], "nudges replace the history entry").toBe(entries);
  expect(after[1] - replaces, "one address rewrite for the burst").toBe(1);
  const hash = new URLSearchParams(new URL(page.url()).hash.slice(1)).get("wq")!;
  expect(Number(hash.split(",")[0])).toBeCloseTo(end, 10);
});

test("dropping a scenario file on the page imports it", async ({ app, page }) => {
  await app.goto();
  await app.openPlace("inputs");
  const json = JSON.stringify({ version: 1, sentence: "drop it here", positional_encoding: true });
  await page.evaluate((text) => {
    const transfer = new DataTransfer();
    transfer.items.add(new File([text], "dropped.json", { type: "application/json" }));
    window.dispatchEvent(new DragEvent("drop", { dataTransfer: transfer, bubbles: true, cancelable: true }));
  }, json);
  await expect(app.tokens).toHaveText(["drop", "it", "here"]);
  await expect(page.getByTestId("positional")).toBeChecked();
});

test("the worksheet and its answer key download for the current state and match the CLI", async ({ app, page }) => {
  const run = (args: string[]) => runCli(["worksheet", ...args]).trimEnd();
  await app.goto();
  await app.openPlace("share");
  await app.openExportMenu();
  const sheet = (await app.downloaded(() => page.getByTestId("export-worksheet").click()));
  expect(sheet.name).toMatch(/worksheet\.md$/);
  const text = sheet.bytes.toString("utf8");
  expect(text.startsWith("# Worksheet: I am hungry")).toBe(true);
  expect(text.split("Answer: ____________").length - 1).toBe(10);
  // The app's seed is 42: the CLI with the same seed prints the same sheet and key.
  expect(text.trimEnd()).toBe(run(["--seed", "42"]));
  await app.openExportMenu();
  const key = (await app.downloaded(() => page.getByTestId("export-answer-key").click())).bytes.toString("utf8");
  expect(key.trimEnd()).toBe(run(["--seed", "42", "--answers"]));
  expect(key.split("**Answer:**").length - 1).toBe(10);
});

test("a worksheet whose goal the settings refuse says why it asks nothing on the way back", async ({ app, page }) => {
  await app.goto();
  await app.openPlace("inputs");
  await app.openPlace("share");
  await app.openPlace("train");
  await page.getByTestId("training").scrollIntoViewIfNeeded();
  await page.getByTestId("train-goal").selectOption("next");
  await page.getByTestId("causal").check();
  await app.openExportMenu();
  const key = (await app.downloaded(() => page.getByTestId("export-answer-key").click())).bytes.toString("utf8");
  expect(key).toContain(
    "## Goal\n\nThe sheet asks nothing about the backward stages: the goal “Pattern: each token looks at the key one position after it (the last at itself)” is refused",
  );
  expect(key).toContain("The `next` target puts weight on a key the causal mask hides");
  expect(key).not.toContain("∂L/∂");
  expect(key.split("**Answer:**").length - 1).toBe(10);
});

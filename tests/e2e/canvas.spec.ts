// The canvas in the page and the SVG export are drawn by the same plot code; on the canvas the
// cell colours go down as one scaled image. Both must show the same colour in every cell.
import { readFileSync } from "node:fs";
import type { Download } from "@playwright/test";
import { test, expect } from "./fixtures";

test.use({ deviceScaleFactor: 2 });

test("every canvas cell has the colour of the same cell in the SVG export", async ({ app, page }) => {
  await app.goto();
  await app.openPlace("inputs");
  await page.getByTestId("sentence-input").fill("one two three four five six seven eight nine ten eleven twelve");
  await expect(app.tokens).toHaveCount(12);
  await app.openStage("scores");
  const canvas = page.getByTestId("canvas-scores-h0");
  await expect(canvas).toHaveAttribute("data-drawn", "true");
  const [gx, gy, cw, ch] = (await canvas.getAttribute("data-grid"))!.split(",").map(Number);

  await app.openPlace("share");
  const [download] = (await Promise.all([
    page.waitForEvent("download"),
    page.getByTestId("export-svg-scores-h0").click(),
  ])) as [Download, unknown];
  const svg = readFileSync((await download.path())!, "utf8");
  const fills = new Map<string, string>();
  for (const m of svg.matchAll(/<rect x="(\d+)" y="(\d+)" width="(\d+)" height="(\d+)"[^>]*fill="#([0-9a-fA-F]{6})"/g)) {
    const [x, y, w, h] = m.slice(1, 5).map(Number);
    if (w !== cw || h !== ch || (x - gx) % cw !== 0 || (y - gy) % ch !== 0) continue;
    fills.set(`${(y - gy) / ch},${(x - gx) / cw}`, m[5].toLowerCase());
  }
  expect(fills.size, "the SVG has one rectangle per cell").toBe(144);

  // A pixel just inside each cell's top-left corner, clear of grid lines and numbers.
  const onCanvas = await canvas.evaluate(
    (el, [gx, gy, cw, ch]) => {
      const cv = el as HTMLCanvasElement;
      const k = cv.width / Number(cv.dataset.width);
      const data = cv.getContext("2d")!.getImageData(0, 0, cv.width, cv.height).data;
      const out: Record<string, string> = {};
      for (let r = 0; r < 12; r++) {
        for (let c = 0; c < 12; c++) {
          const x = Math.round((gx + c * cw + 3) * k);
          const y = Math.round((gy + r * ch + 3) * k);
          const i = (y * cv.width + x) * 4;
          out[`${r},${c}`] = [data[i], data[i + 1], data[i + 2]].map((v) => v.toString(16).padStart(2, "0")).join("");
        }
      }
      return out;
    },
    [gx, gy, cw, ch],
  );
  for (const [cell, fill] of fills) expect(onCanvas[cell], `cell ${cell}`).toBe(fill);
  // The scores differ, so the cells are not all one colour.
  expect(new Set(fills.values()).size).toBeGreaterThan(10);
});

test("an edit redraws a heatmap's numbers and colours, not its labels, and it looks as a fresh page draws it", async ({ app, page, context }) => {
  await app.goto();
  await app.openPlace("inputs");
  await app.openStage("scores");
  const ids = ["canvas-q-h0", "canvas-scores-h0"];
  const canvases = ids.map((id) => page.getByTestId(id));
  for (const c of canvases) await expect(c).toHaveAttribute("data-drawn", "true");
  const frames = await Promise.all(canvases.map((c) => c.getAttribute("data-frame")));
  // A digest of each canvas's pixels, short enough to read in a failure.
  const pixels = (p: typeof page) =>
    Promise.all(
      ids.map((id) =>
        p.getByTestId(id).evaluate(async (el) => {
          const png = new TextEncoder().encode((el as HTMLCanvasElement).toDataURL());
          const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", png));
          return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
        }),
      ),
    );
  const before = await pixels(page);
  await page.getByTestId("editor-tab-w_q").click();
  const cell = page.getByTestId("cell-w_q-0-0");
  const start = await cell.inputValue();
  await cell.focus();
  for (let i = 0; i < 3; i++) await page.keyboard.press("Alt+ArrowUp");
  await expect(cell).not.toHaveValue(start);
  // Heatmaps are drawn in the task of the edit; two frames later they are all on the canvas.
  await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
  const after = await pixels(page);
  for (let i = 0; i < ids.length; i++) {
    expect(after[i], `${ids[i]} shows the new numbers`).not.toBe(before[i]);
    // The same frame: the edit drew the body alone.
    await expect(canvases[i]).toHaveAttribute("data-frame", frames[i]!);
  }
  // The address follows the edits once they pause (250 to 500 ms after the last); a fresh page
  // opened on it draws every heatmap whole, and pixel for pixel the same. On a busy machine a
  // pause can fall between two presses, so the link is read once it has stayed the same for
  // longer than that.
  let link = "";
  await expect
    .poll(async () => {
      const seen = page.url();
      await page.waitForTimeout(700);
      link = page.url();
      return seen === link && link.includes("wq=");
    })
    .toBe(true);
  const fresh = await context.newPage();
  await fresh.goto(link);
  for (const id of ids) await expect(fresh.getByTestId(id)).toHaveAttribute("data-drawn", "true");
  // Drawn first at its own size, the page is laid out in its box in the frames after: what it
  // settles on is compared.
  await expect.poll(() => pixels(fresh)).toEqual(after);
  await fresh.close();
});

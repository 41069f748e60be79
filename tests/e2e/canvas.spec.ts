// The canvas in the page and the SVG export are drawn by the same plot code; on the canvas the
// cell colours go down as one scaled image. Both must show the same colour in every cell.
import { readFileSync } from "node:fs";
import type { Download } from "@playwright/test";
import { test, expect } from "./fixtures";

test.use({ deviceScaleFactor: 2 });

test("every canvas cell has the colour of the same cell in the SVG export", async ({ app, page }) => {
  await app.goto();
  await page.getByTestId("sentence-input").fill("one two three four five six seven eight nine ten eleven twelve");
  await expect(app.tokens).toHaveCount(12);
  await app.openStage("scores");
  const canvas = page.getByTestId("canvas-scores-h0");
  await expect(canvas).toHaveAttribute("data-drawn", "true");
  const [gx, gy, cw, ch] = (await canvas.getAttribute("data-grid"))!.split(",").map(Number);

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

// The pictures of the first screen that the page shows while the module loads
// (assets/first-screen.html): the app's own first screen in a laptop's and a phone's window,
// taken in Chromium at the moment the browser first paints it, with each heatmap's drawing kept
// as the canvas's background.
//
//   node tests/e2e/first-screen-picture.mjs --base URL --out FILE
//
// takes them from the release build served at URL (scripts/prerender.sh builds and serves it).
// It also finds the windows each picture is shown in: those around the one it was taken in where
// the app's first screen is laid out exactly as in the picture (the same zoom, rows and classes),
// so the app replaces it without moving anything. `first-screen.spec.ts` checks the file against the
// app it is built into.

import { createRequire } from "node:module";
import { promises as fs } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The windows the pictures are taken in: a laptop's, and a phone's (touch). */
export const PICTURE_WINDOWS = [
  { name: "a laptop's", viewport: { width: 1280, height: 800 }, touch: false },
  { name: "a phone's", viewport: { width: 390, height: 844 }, touch: true },
];

/** Browser context options for a window of `PICTURE_WINDOWS` at `viewport`. */
export function contextFor(window, viewport = window.viewport) {
  return { viewport, deviceScaleFactor: 1, hasTouch: window.touch, isMobile: window.touch };
}

/**
 * An init script that keeps the app at its first painted screen: the timeouts set once it has
 * started to mount never run, so what it mounts in the tasks after the first frame (the
 * explanation, the places) never comes.
 */
export function holdTimeouts() {
  const timeout = window.setTimeout.bind(window);
  window.setTimeout = (...args) =>
    performance.getEntriesByName("al-mount-start").length > 0 ? 0 : timeout(...args);
}

/** Opens `url` in `page` and waits until the app's first screen has been painted. */
export async function openAtFirstPaint(page, url) {
  await page.addInitScript(holdTimeouts);
  await page.goto(url);
  await page.waitForFunction(() => performance.getEntriesByName("al-first-heatmap").length > 0);
  await page.evaluate(
    () => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))),
  );
}

/**
 * The markup under `selector` in the page, without the page's own scripts and picture: comments
 * left out, attributes sorted and styles normalised, and each canvas's background (the picture's drawings)
 * and `elementtiming` taken off, so the app and the picture compare equal when they are laid out
 * alike. With `drawings`, each canvas gets its drawing as its background instead, a lossless
 * WebP image (PNG where WebP would change a pixel).
 */
export async function markup(page, selector, drawings = false) {
  return page.evaluate(
    async ({ selector, drawings }) => {
      const root = document.querySelector(selector);
      const copy = root.cloneNode(true);
      // The page's own parts of the body, which the app leaves in place.
      for (const element of copy.querySelectorAll(":scope > script, :scope > style, :scope > template, .prerendered")) {
        element.remove();
      }
      const comments = document.createTreeWalker(copy, NodeFilter.SHOW_COMMENT);
      const found = [];
      while (comments.nextNode()) found.push(comments.currentNode);
      for (const comment of found) comment.remove();
      // Styles as the browser reads them, numbers as numbers, and every element's attributes in
      // the order of their names: the release build minifies the page, which writes them so.
      for (const element of copy.querySelectorAll("*")) {
        if (element.hasAttribute("style")) {
          const style = element.style;
          const declarations = [];
          for (let i = 0; i < style.length; i++) {
            const value = style.getPropertyValue(style[i]).trim()
              .replace(/-?(\d+\.?\d*|\.\d+)(e-?\d+)?/g, (number) => String(Number(number)));
            declarations.push(`${style[i]}: ${value};`);
          }
          element.setAttribute("style", declarations.join(" "));
        }
        const attributes = [...element.attributes].map((a) => [a.name, a.value]);
        for (const [name] of attributes) element.removeAttribute(name);
        attributes.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
        for (const [name, value] of attributes) element.setAttribute(name, value);
      }
      const live = [...root.querySelectorAll("canvas")];
      const copies = [...copy.querySelectorAll("canvas")];
      const pixels = (source, width, height) => {
        const canvas = document.createElement("canvas");
        canvas.width = width;
        canvas.height = height;
        const context = canvas.getContext("2d");
        context.drawImage(source, 0, 0);
        return context.getImageData(0, 0, width, height).data;
      };
      const decoded = (url) =>
        new Promise((resolve, reject) => {
          const image = new Image();
          image.onload = () => resolve(image);
          image.onerror = reject;
          image.src = url;
        });
      for (let i = 0; i < copies.length; i++) {
        const canvas = copies[i];
        for (const name of ["background", "background-image", "background-size",
          "background-position", "background-repeat"]) {
          canvas.style.removeProperty(name);
        }
        canvas.removeAttribute("elementtiming");
        if (!drawings) continue;
        const { width, height } = live[i];
        const want = pixels(live[i], width, height);
        let url = live[i].toDataURL("image/webp", 1);
        const got = pixels(await decoded(url), width, height);
        if (got.length !== want.length || got.some((v, j) => v !== want[j])) {
          url = live[i].toDataURL("image/png");
        }
        canvas.style.background = `url("${url}") 0 0 / 100% 100% no-repeat`;
        // The browser reports when the first drawing is painted (Element Timing).
        if (i === 0) canvas.setAttribute("elementtiming", "al-prerendered-heatmap");
      }
      return copy.innerHTML;
    },
    { selector, drawings },
  );
}

/**
 * The app's first screen as the picture must match it: its markup (without drawings), and where
 * the page is scrolled to (a phone's page may open scrolled, to show its explained cell).
 */
async function firstScreen(page) {
  return `${await markup(page, "body")}\nscrolled to ${await page.evaluate(() => scrollY)}`;
}

/** The app's first screen at `size` in windows like `window` (its markup, without drawings). */
async function layoutAt(browser, url, window, size) {
  const context = await browser.newContext(contextFor(window, size));
  try {
    const page = await context.newPage();
    await openAtFirstPaint(page, url);
    return await firstScreen(page);
  } finally {
    await context.close();
  }
}

/**
 * The last value from `from` towards `to` (by `step`, then to the pixel) where `same` holds,
 * given it holds at `from`.
 */
async function edge(from, to, step, same) {
  const sign = Math.sign(to - from);
  let good = from;
  for (;;) {
    const probe = good + sign * step;
    if (sign * (to - probe) < 0) return good;
    if (!(await same(probe))) {
      let bad = probe;
      while (Math.abs(bad - good) > 1) {
        const middle = Math.round((good + bad) / 2);
        if (await same(middle)) good = middle;
        else bad = middle;
      }
      return good;
    }
    good = probe;
  }
}

/**
 * The picture of the app at `url` in `window`, and the windows it is shown in: those around it
 * where the app's first screen has the same markup.
 */
async function take(browser, url, window) {
  const context = await browser.newContext(contextFor(window));
  const page = await context.newPage();
  await openAtFirstPaint(page, url);
  const picture = await markup(page, "body", true);
  const base = await firstScreen(page);
  await context.close();

  const { width, height } = window.viewport;
  const same = (size) => async (value) =>
    (await layoutAt(browser, url, window, size(value))) === base;
  const left = await edge(width, 240, 16, same((w) => ({ width: w, height })));
  const right = await edge(width, 3840, 32, same((w) => ({ width: w, height })));
  // The heights at the widths' edges too: whether a phone's sheet covers its cell, and so
  // opens folded, depends on both.
  const tops = [];
  const bottoms = [];
  for (const w of [width, left, right]) {
    tops.push(await edge(height, 400, 32, same((h) => ({ width: w, height: h }))));
    bottoms.push(await edge(height, 2160, 32, same((h) => ({ width: w, height: h }))));
  }
  const top = Math.max(...tops);
  const bottom = Math.min(...bottoms);
  for (const [w, h] of [[left, top], [left, bottom], [right, top], [right, bottom]]) {
    if ((await layoutAt(browser, url, window, { width: w, height: h })) !== base) {
      throw new Error(`the first screen at ${w} × ${h} is laid out unlike at ${width} × ${height}`);
    }
  }
  const windows =
    `(min-width: ${left}px) and (max-width: ${right}px) and ` +
    `(min-height: ${top}px) and (max-height: ${bottom}px)`;
  return (
    `<!-- The app's first screen in ${window.name} window, ${width} × ${height}. -->\n` +
    `<template class="first-screen" data-windows="${windows}"><div class="prerendered" inert>${picture}</div></template>\n`
  );
}

/** Takes the pictures from the app at `url` and writes them to `out`. */
async function write(url, out) {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const { chromium } = createRequire(path.join(here, "package.json"))("playwright-core");
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    args: ["--no-sandbox"],
  });
  try {
    let file =
      "<!-- Pictures of the app's first screen, written by scripts/prerender.sh: index.html shows " +
      "the first whose data-windows match while the module loads. -->\n";
    for (const window of PICTURE_WINDOWS) {
      const picture = await take(browser, url, window);
      console.log(picture.split("\n")[1].match(/data-windows="[^"]*"/)[0]);
      file += picture;
    }
    await fs.writeFile(out, file);
    console.log(`wrote ${out}: ${(file.length / 1024).toFixed(1)} kB`);
  } finally {
    await browser.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const option = (name) => {
    const at = args.indexOf(name);
    return at >= 0 ? args[at + 1] : undefined;
  };
  const url = option("--base");
  const out = option("--out");
  if (!url || !out) {
    console.error("usage: node tests/e2e/first-screen-picture.mjs --base URL --out FILE");
    process.exit(2);
  }
  await write(url, out);
}

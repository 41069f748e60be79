// The app works offline once loaded: in every page mode and at every stage it requests nothing
// but its own files, from its own origin (and, under a sub-path, from under that path).
import type { Request } from "@playwright/test";
import { test, expect, requestsOutside, STAGES, type AppPage } from "./fixtures";

interface Mode {
  name: string;
  /** Where to open the app, relative to the base URL. */
  path: string;
  /** The prefix every request must start with, relative to the base URL. */
  base: string;
  /** Presenter mode has no rail: the stages are stepped with the arrow keys. */
  presenting?: boolean;
}

const MODES: Mode[] = [
  { name: "the default page", path: "./", base: "./" },
  { name: "the page under a sub-path", path: "sub/path/", base: "sub/path/" },
  { name: "embed mode", path: "./?embed=1", base: "./" },
  { name: "embed mode without controls", path: "./?embed=1&controls=0", base: "./" },
  { name: "presenter mode", path: "./?present=1", base: "./", presenting: true },
  { name: "the dark theme", path: "./?theme=dark", base: "./" },
  {
    name: "a permalink",
    path: "./#v=1&s=the%20cat%20sat&d=6&h=3&causal=1&stage=softmax&cell=weights-h0.1.0",
    base: "./",
  },
  {
    name: "an embedded permalink under a sub-path",
    path: "sub/path/?embed=1&stage=mask#v=1&causal=1",
    base: "sub/path/",
  },
];

function listed(requests: Request[]): string {
  return requests.map((r) => `  ${r.method()} ${r.url()}`).join("\n");
}

/** Shows every stage in turn and waits until its heatmaps are drawn. */
async function visitEveryStage(app: AppPage, presenting: boolean): Promise<void> {
  const page = app.page;
  if (presenting) await expect(page.getByTestId("presenter-progress")).toBeVisible();
  for (let i = 0; i < STAGES.length; i++) {
    if (presenting) {
      await app.presentStage(i);
      await expect(page.getByTestId("presenter-progress").locator("li").nth(i)).toHaveClass(/current/);
    } else if ((await page.locator(".rail").count()) === 0) {
      // A compact embed has no rail: it steps with Next.
      if (i > 0) await page.getByTestId("next").click();
      await expect(page.getByTestId("progress")).toHaveText(`Stage ${i + 1} of ${STAGES.length}`);
    } else {
      await page.getByTestId(`stage-${STAGES[i]}`).click();
      await expect(page.getByTestId(`stage-${STAGES[i]}`)).toHaveAttribute("aria-current", "step");
    }
    await expect(page.locator(".stage canvas").first()).toHaveAttribute("data-drawn", "true");
  }
}

test.describe.configure({ mode: "parallel" });

for (const mode of MODES) {
  test(`${mode.name} requests nothing outside its own origin`, async ({ app, page, baseURL, requests }) => {
    await app.goto(mode.path);
    await visitEveryStage(app, mode.presenting ?? false);
    await page.waitForLoadState("networkidle");

    const origin = new URL(baseURL!).origin;
    const base = new URL(mode.base, baseURL).href;
    const foreign = requests.filter((r) => new URL(r.url()).origin !== origin && !/^(data|blob):/.test(r.url()));
    expect(foreign.map((r) => r.url()), `requests to other origins:\n${listed(requests)}`).toEqual([]);
    expect(requestsOutside(requests, base), `requests outside ${base}:\n${listed(requests)}`).toEqual([]);

    // The listing is real: the page, its script, its module and its style sheet are in it.
    const paths = requests.map((r) => new URL(r.url()).pathname);
    for (const ext of [".js", ".wasm", ".css"]) {
      expect(paths.some((p) => p.endsWith(ext)), `a ${ext} file was requested:\n${listed(requests)}`).toBe(true);
    }
  });
}

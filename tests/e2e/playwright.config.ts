import { defineConfig } from "@playwright/test";

// scripts/test.sh builds the app, starts serve-dist.mjs on a free port and passes its address in
// E2E_BASE_URL. Without it, Playwright starts the same server itself on a fixed port, so
// `npx playwright test` also works after a `trunk build --release`.
const fallbackPort = 4173;
const baseURL = process.env.E2E_BASE_URL ?? `http://127.0.0.1:${fallbackPort}/`;

export default defineConfig({
  testDir: ".",
  testMatch: "*.spec.ts",
  outputDir: "test-results",
  reporter: "list",
  workers: 2,
  retries: 0,
  forbidOnly: !!process.env.CI,
  timeout: 30_000,
  expect: { timeout: 10_000 },
  use: {
    baseURL,
    browserName: "chromium",
    viewport: { width: 1280, height: 800 },
    deviceScaleFactor: 1,
    screenshot: "only-on-failure",
    trace: "retain-on-failure",
    launchOptions: {
      executablePath: process.env.E2E_CHROMIUM ?? "/usr/bin/chromium",
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--no-first-run",
        "--disable-sync",
        "--disable-quic",
      ],
    },
  },
  webServer: process.env.E2E_BASE_URL
    ? undefined
    : {
        command: `node serve-dist.mjs --port ${fallbackPort}`,
        url: baseURL,
        reuseExistingServer: false,
      },
});

// Opens a page in headless Chromium (Debian's /usr/bin/chromium, driven by playwright-core;
// no browser is downloaded), checks its first chart drew lines, zooms it by a drag and by
// setScale, and saves a screenshot. Prints one JSON object for tests/test_charts_browser.py.
//   node tests/browser/check_charts.js PAGE.html SCREENSHOT.png
"use strict";
const fs = require("fs");
const os = require("os");
const path = require("path");
const { chromium } = require("playwright-core");

const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
const ARGS = [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
];

// Counts the canvas's pixels that are neither transparent nor white: lines, axes, grid.
function inkedPixels(canvas) {
  const data = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
  let inked = 0;
  for (let i = 0; i < data.length; i += 4) {
    const white = data[i] > 250 && data[i + 1] > 250 && data[i + 2] > 250;
    if (data[i + 3] > 0 && !white) inked += 1;
  }
  return inked;
}

async function main() {
  const [page_file, screenshot] = process.argv.slice(2);
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "tcpeval-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    args: ARGS,
    headless: true,
    viewport: { width: 1280, height: 900 },
  });
  try {
    const page = await context.newPage();
    const errors = [];
    page.on("pageerror", (error) => errors.push(String(error)));
    // Offline: the page must need nothing but itself.
    await page.route(/^(?!file:)/, (route) => { errors.push(`fetched ${route.request().url()}`); route.abort(); });
    await page.goto("file://" + path.resolve(page_file));
    await page.waitForFunction(() => document.querySelector(".chart") && document.querySelector(".chart").uplot);
    const before = await page.evaluate(() => {
      const u = document.querySelector(".chart").uplot;
      return {
        charts: document.querySelectorAll(".chart canvas").length,
        series: u.series.length - 1,
        x: [u.scales.x.min, u.scales.x.max],
        showing: document.querySelector(".chart").dataset.showing,
      };
    });
    before.inked = await page.evaluate(`(${inkedPixels})(document.querySelector(".chart canvas"))`);
    // A drag across the middle fifth of the plot area, as a user zooms.
    await page.locator(".chart").first().scrollIntoViewIfNeeded();
    const over = await page.locator(".chart .u-over").first().boundingBox();
    const y = over.y + over.height / 2;
    await page.mouse.move(over.x + over.width * 0.4, y);
    await page.mouse.down();
    await page.mouse.move(over.x + over.width * 0.6, y, { steps: 5 });
    await page.mouse.up();
    await page.waitForTimeout(100); // uPlot commits a change in a microtask, the data swap after it
    const dragged = await page.evaluate(() => {
      const u = document.querySelector(".chart").uplot;
      return { x: [u.scales.x.min, u.scales.x.max], showing: document.querySelector(".chart").dataset.showing };
    });
    await page.evaluate(() => {
      const u = document.querySelector(".chart").uplot;
      const { min, max } = u.scales.x;
      u.setScale("x", { min: min, max: min + (max - min) / 10 });
    });
    await page.waitForTimeout(100);
    const scaled = await page.evaluate(() => {
      const u = document.querySelector(".chart").uplot;
      return { x: [u.scales.x.min, u.scales.x.max], showing: document.querySelector(".chart").dataset.showing };
    });
    await page.locator(".chart").first().screenshot({ path: screenshot });
    console.log(JSON.stringify({ before, dragged, scaled, errors }));
  } finally {
    await context.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
}

main().catch((error) => { console.error(String(error)); process.exit(1); });

// Loads one profile into Coz's own viewer (Debian coz-profiler,
// /usr/share/coz-profiler/viewer/index.htm) in headless Chromium, the way a
// user does it: "Load a Profile", choose the file, "Open". Then reads what the
// viewer drew and checks it against expectations.
//
// usage: node viewer_check.js --playwright DIR --chromium PATH --viewer DIR
//          --profile FILE --out DIR --name NAME [--min-points N]
//          [--expect-plots N] [--expect-plot SUFFIX]... [--expect-point SUFFIX]...
//          [--expect-warning TEXT]
//
//   --playwright     directory holding node_modules/playwright-core
//   --min-points     the viewer's "Minimum Points" slider (default: leave at 10)
//   --expect-plots   exact number of plots (one per selected line)
//   --expect-plot    a plot whose full name (title attribute) ends with SUFFIX
//   --expect-point   a legend entry (progress point) whose name ends with SUFFIX
//   --expect-warning the viewer must show a warning containing TEXT (negative
//                    control); without it any viewer warning is a failure
//
// Fails on: console errors or warnings, uncaught page errors, any request that
// is not a file:// URL (the viewer must work offline), failed loads, viewer
// warnings ("Invalid Profile", "Empty Profile", ...), a plot without points.
// Prints one line per finding, a JSON summary, and "artifact: <png>".
// Exit status: 0 pass, 1 fail.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');

function parseArgs(argv) {
  const args = {expectPlot: [], expectPoint: [], minPoints: null, expectPlots: null};
  const lists = {'--expect-plot': 'expectPlot', '--expect-point': 'expectPoint'};
  const single = {
    '--playwright': 'playwright', '--chromium': 'chromium', '--viewer': 'viewer',
    '--profile': 'profile', '--out': 'out', '--name': 'name', '--min-points': 'minPoints',
    '--expect-plots': 'expectPlots', '--expect-warning': 'expectWarning'
  };
  for (let i = 2; i < argv.length; i++) {
    const flag = argv[i];
    if (i + 1 >= argv.length || !(flag in lists || flag in single))
      throw new Error('bad argument ' + flag + ' (see the usage at the top of viewer_check.js)');
    const value = argv[++i];
    if (flag in lists)
      args[lists[flag]].push(value);
    else
      args[single[flag]] = value;
  }
  for (const required of ['playwright', 'chromium', 'viewer', 'profile', 'out', 'name'])
    if (!args[required]) throw new Error('--' + required + ' is required');
  return args;
}

async function main() {
  const args = parseArgs(process.argv);
  const {chromium} = require(path.join(path.resolve(args.playwright), 'node_modules',
                                       'playwright-core'));
  const failures = [];
  const fail = (text) => failures.push(text);
  const userData = fs.mkdtempSync(path.join(os.tmpdir(), 'coz-viewer-profile-'));
  const context = await chromium.launchPersistentContext(userData, {
    executablePath: args.chromium,
    headless: true,
    viewport: {width: 1280, height: 900},
    args: [
      '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run',
      '--no-default-browser-check', '--disable-extensions',
      '--host-resolver-rules=MAP * ~NOTFOUND'
    ],
  });
  try {
    const page = context.pages()[0] || await context.newPage();
    page.on('console', (msg) => {
      if (msg.type() === 'error' || msg.type() === 'warning')
        fail('console ' + msg.type() + ': ' + msg.text());
    });
    page.on('pageerror', (error) => fail('page error: ' + error.message));
    page.on('requestfailed',
            (request) => fail('failed load: ' + request.url() + ' (' +
                              (request.failure() ? request.failure().errorText : '?') + ')'));
    await page.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith('file://') || url.startsWith('data:'))
        return route.continue();
      fail('network request (the viewer must work offline): ' + url);
      return route.abort();
    });

    const index = path.join(path.resolve(args.viewer), 'index.htm');
    await page.goto('file://' + index, {waitUntil: 'load'});
    // Record every warning the viewer shows (they fade out after 5 s).
    await page.evaluate(() => {
      window.__viewerWarnings = [];
      const original = window.display_warning;
      window.display_warning = function(title, text) {
        window.__viewerWarnings.push(title + ': ' + text);
        return original.apply(this, arguments);
      };
    });
    if (args.minPoints !== null) {
      await page.$eval('#minpoints_field', (slider, value) => {
        slider.value = value;
        slider.dispatchEvent(new Event('input'));
      }, String(args.minPoints));
    }

    // The user's path: Load a Profile -> choose the file -> Open.
    await page.click('#load-profile-btn');
    await page.waitForSelector('#load-profile-dlg', {state: 'visible'});
    await page.setInputFiles('#load-profile-file', path.resolve(args.profile));
    await page.waitForSelector('#load-profile-open-btn:not(.disabled)');
    await page.click('#load-profile-open-btn');
    await page.waitForSelector('#load-profile-dlg', {state: 'hidden'});
    // Loaded when the "Getting Started" text is gone: plots or "No Data to Plot".
    await page.waitForFunction(() => !document.querySelector('#plot-message h1') ||
                                     document.querySelector('#plot-message h1').textContent !==
                                         'Getting Started');
    // Plots fade in (0.2 s delay + 0.4 s transition).
    await page.waitForFunction(
        () => Array.from(document.querySelectorAll('#plot-area div.plot'))
                  .every((plot) => getComputedStyle(plot).opacity === '1'),
        null, {timeout: 10000});

    const seen = await page.evaluate(() => {
      const fullName = (element) => element.getAttribute('title') || element.textContent;
      const plots = Array.from(document.querySelectorAll('#plot-area div.plot')).map((plot) => ({
        name: fullName(plot.querySelector('.plot-title')),
        shown: plot.querySelector('.plot-title').textContent,
        circles: plot.querySelectorAll('circle').length,
        curves: plot.querySelectorAll('g.series path').length,
      }));
      const points = Array.from(document.querySelectorAll('#legend p.legend-entry span'))
                         .map((span) => fullName(span));
      const message = document.querySelector('#plot-message').textContent.trim();
      return {plots, points, message, warnings: window.__viewerWarnings};
    });

    for (const plot of seen.plots)
      console.log('plot %s (shown as %s): %d point(s), %d curve(s)', plot.name, plot.shown,
                  plot.circles, plot.curves);
    for (const point of seen.points)
      console.log('legend: progress point %s', point);
    for (const warning of seen.warnings)
      console.log('viewer warning: %s', warning.replace(/<[^>]*>/g, ''));
    if (seen.message)
      console.log('viewer message: %s', seen.message);

    if (args.expectPlots !== null && seen.plots.length !== Number(args.expectPlots))
      fail(seen.plots.length + ' plot(s) drawn, expected ' + args.expectPlots);
    for (const suffix of args.expectPlot)
      if (!seen.plots.some((plot) => plot.name.endsWith(suffix)))
        fail('no plot for a line ending with "' + suffix + '"');
    for (const suffix of args.expectPoint)
      if (!seen.points.some((point) => point.endsWith(suffix)))
        fail('no progress point ending with "' + suffix + '" in the legend');
    for (const plot of seen.plots)
      if (plot.circles === 0)
        fail('plot ' + plot.name + ' has no points drawn');
    if (args.expectWarning) {
      if (!seen.warnings.some((warning) => warning.includes(args.expectWarning)))
        fail('expected a viewer warning containing "' + args.expectWarning + '"');
    } else {
      for (const warning of seen.warnings)
        fail('viewer warning: ' + warning.replace(/<[^>]*>/g, ''));
    }

    fs.mkdirSync(args.out, {recursive: true});
    const shot = path.join(path.resolve(args.out), args.name + '.png');
    await page.screenshot({path: shot, fullPage: true});
    if (fs.existsSync(shot) && fs.statSync(shot).size > 1000)
      console.log('artifact: ' + shot);
    else
      fail('no screenshot written');
    console.log('summary: ' + JSON.stringify({
      name: args.name, plots: seen.plots.length, points: seen.points.length,
      circles: seen.plots.reduce((sum, plot) => sum + plot.circles, 0),
      warnings: seen.warnings.length, failures: failures.length
    }));
  } finally {
    await context.close();
    fs.rmSync(userData, {recursive: true, force: true});
  }
  for (const failure of failures)
    console.log('FAIL: ' + args.name + ': ' + failure);
  return failures.length ? 1 : 0;
}

main().then((status) => process.exit(status), (error) => {
  console.log('FAIL: ' + (error && error.stack ? error.stack : error));
  process.exit(1);
});

// Drives headless Chromium through the real Firefox Profiler front-end and reports what a
// person would see, read from the front-end's own state (window.getState() and
// window.selectors), as one JSON object on stdout.
//
//   node driver.mjs check URL FUNCTION   for tests/browser.rs: waits until symbolication is
//       done, reports the call tree and the selected thread's native frames, then
//       double-clicks FUNCTION's call tree row and reports the source view.
//   node driver.mjs times                for scripts/bench-frontend: launches the browser,
//       prints {"ready": true}, reads the URL as one line on stdin (so the caller can
//       start its server only once the browser is up), then reports wall-clock times
//       (ms since the epoch) of opening the URL, the first named native frame and the
//       end of symbolication.
//
// Everything is bounded by DRIVER_TIMEOUT_MS (default 60 000): past it the driver closes
// the browser and exits with status 2. Errors go to stderr, exit status 1.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import puppeteer from 'puppeteer-core';

const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const TIMEOUT_MS = Number(process.env.DRIVER_TIMEOUT_MS || 60000);
const started = Date.now();

let browser = null;
// A fresh profile folder per run: no cache, service worker or state from an earlier run.
const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'profiler-browser-'));

async function cleanup() {
  if (browser) {
    const b = browser;
    browser = null;
    await b.close().catch(() => {});
  }
  fs.rmSync(userDataDir, { recursive: true, force: true });
}

// The one bound over the whole run: whatever hangs (the page, the protocol, stdin), the
// browser is closed and the caller gets an answer.
const deadline = setTimeout(async () => {
  process.stderr.write(`driver: no result within ${TIMEOUT_MS} ms\n`);
  await cleanup();
  process.exit(2);
}, TIMEOUT_MS);

async function launch() {
  browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    userDataDir,
    // Over a pipe, not a WebSocket: Chromium exits when the pipe closes, so even a driver
    // killed with SIGKILL leaves no browser behind.
    pipe: true,
    protocolTimeout: TIMEOUT_MS,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
    ],
  });
  const page = await browser.newPage();
  page.setDefaultTimeout(TIMEOUT_MS);
  page.on('pageerror', (e) => process.stderr.write(`page error: ${e.message}\n`));
  return page;
}

// In the page: true once the profile is loaded and its symbolication has finished
// (meta.symbolicated is set by DONE_SYMBOLICATING; the status alone is "DONE" also before
// symbolication starts).
function symbolicationDone() {
  const S = window.selectors;
  if (!window.getState || !S) return false;
  const st = window.getState();
  // The profile could not be loaded (e.g. its URL is unreachable): nothing more will come.
  if (S.app.getView(st).phase === 'FATAL_ERROR') return true;
  const profile = S.profile.getProfileOrNull(st);
  return (
    profile !== null &&
    profile.meta.symbolicated === true &&
    S.profile.getSymbolicationStatus(st) === 'DONE'
  );
}

// In the page: the first native frame (one with an address in a library) of the
// selected thread's call tree that has a name rather than its address. Defined as a
// string so that both modes can install it.
const FIRST_NAMED = `(() => {
  const S = window.selectors;
  if (!window.getState || !S) return null;
  const st = window.getState();
  if (S.profile.getProfileOrNull(st) === null) return null;
  const t = S.selectedThread.getFilteredThread(st);
  const strings = S.profile.getStringTable(st);
  const { stackTable, frameTable, funcTable } = t;
  for (let s = 0; s < stackTable.length; s++) {
    const f = stackTable.frame[s];
    if (frameTable.address[f] === -1 || frameTable.lib[f] === -1 || frameTable.lib[f] === null) continue;
    const name = strings.getString(funcTable.name[frameTable.func[f]]);
    if (!/^0x[0-9a-f]+$/i.test(name)) return name;
  }
  return null;
})()`;

// In the page: the front-end's fatal error, if it has shown one.
function fatalError() {
  const view = window.selectors.app.getView(window.getState());
  return view.phase === 'FATAL_ERROR' ? String(view.error?.message ?? view.error) : null;
}

async function check(url, func) {
  const page = await launch();
  await page.goto(url);
  await page.waitForFunction(symbolicationDone, { polling: 20 });
  const fatal = await page.evaluate(fatalError);
  if (fatal !== null) throw new Error(`the front-end failed: ${fatal}`);
  const symbolicatedMs = Date.now() - started;
  const report = await page.evaluate(() => {
    const S = window.selectors;
    const st = window.getState();
    const strings = S.profile.getStringTable(st);
    const str = (i) => (i === null || i === undefined || i < 0 ? null : strings.getString(i));
    const t = S.selectedThread.getFilteredThread(st);
    const { stackTable, frameTable, funcTable } = t;
    const sources = S.profile.getSourceTable(st);
    // The call tree as drawn: name, origin annotation (file), the "(inlined)" badge.
    const tree = S.selectedThread.getCallTree(st);
    const rows = [];
    const walk = (n, depth) => {
      const d = tree.getDisplayData(n);
      rows.push({ depth, name: d.name, origin: d.lib, inlined: d.badge?.name === 'inlined' });
      for (const c of tree.getChildren(n)) walk(c, depth + 1);
    };
    for (const r of tree.getRoots()) walk(r, 0);
    // Every native frame the stacks use: its address in the library (what the
    // front-end asks the symbol server about), inline depth, function, file and line.
    const used = new Set();
    for (let s = 0; s < stackTable.length; s++) used.add(stackTable.frame[s]);
    const frames = [];
    for (const f of [...used].sort((a, b) => a - b)) {
      const lib = frameTable.lib[f];
      if (lib === null || lib === -1 || frameTable.address[f] === -1) continue;
      const fn = frameTable.func[f];
      const src = funcTable.source[fn];
      frames.push({
        address: frameTable.address[f],
        inlineDepth: frameTable.inlineDepth[f],
        name: str(funcTable.name[fn]),
        file: src === null || src === undefined ? null : str(sources.filename[src]),
        line: frameTable.line[f],
      });
    }
    return {
      status: S.profile.getSymbolicationStatus(st),
      symbolicated: S.profile.getProfile(st).meta.symbolicated,
      rows,
      frames,
    };
  });
  report.symbolicatedMs = symbolicatedMs;

  // Open the source view as a person does: a double-click on the function's row.
  const row = await page.evaluateHandle((name) => {
    for (const r of document.querySelectorAll('.treeViewRowScrolledColumns')) {
      const col = r.querySelector('.treeViewMainColumn.name');
      // The column's own text is the name; an "(inlined)" badge is an element inside it.
      const own = col && [...col.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE);
      if (own && own.map((n) => n.textContent).join('') === name) return r;
    }
    return null;
  }, func);
  if (await row.evaluate((r) => r === null)) {
    // Said in the report, not thrown: the caller's checks of the names say why.
    report.source = { error: `no call tree row for ${func}` };
    return report;
  }
  await row.asElement().click({ count: 2 });
  await page.waitForFunction(
    () => {
      const c = window.selectors.code.getSourceViewCode(window.getState());
      const shown = document.querySelector('.sourceView .cm-content');
      return c && c.type !== 'LOADING' && (c.type !== 'AVAILABLE' || (shown && shown.innerText.trim() !== ''));
    },
    { polling: 20 },
  );
  report.source = await page.evaluate(() => {
    const S = window.selectors;
    const st = window.getState();
    return {
      open: S.urlState.getIsBottomBoxOpen(st),
      file: S.profile.getSourceViewFile(st),
      code: S.code.getSourceViewCode(st),
      // What is drawn: CodeMirror renders the lines in view.
      shown: document.querySelector('.sourceView .cm-content')?.innerText ?? null,
    };
  });
  report.elapsedMs = Date.now() - started;
  return report;
}

async function times() {
  const page = await launch();
  // Installed before the front-end's scripts run: checks the state every 20 ms from the
  // page's own timer, so a slow round trip to the driver does not delay the timestamps.
  await page.evaluateOnNewDocument(`
    window.__times = { firstNamed: null, done: null, name: null };
    const __check = ${symbolicationDone.toString()};
    const __timer = setInterval(() => {
      try {
        if (window.__times.firstNamed === null) {
          const name = ${FIRST_NAMED};
          if (name !== null) { window.__times.firstNamed = Date.now(); window.__times.name = name; }
        }
        if (window.__times.done === null && __check()) window.__times.done = Date.now();
        if (window.__times.firstNamed !== null && window.__times.done !== null) clearInterval(__timer);
      } catch (e) { /* the store is not ready yet */ }
    }, 20);
  `);
  process.stdout.write(JSON.stringify({ ready: true }) + '\n');
  const rl = readline.createInterface({ input: process.stdin });
  const url = await new Promise((resolve, reject) => {
    rl.once('line', (l) => resolve(l.trim()));
    rl.once('close', () => reject(new Error('stdin closed before a URL')));
  });
  rl.close();
  const open = Date.now();
  await page.goto(url);
  // Names come with the end of symbolication at the latest: once it is done, a frame not
  // named yet never will be (firstNamed stays null), so there is nothing more to wait for.
  await page.waitForFunction(() => window.__times && window.__times.done !== null, { polling: 50 });
  const fatal = await page.evaluate(fatalError);
  if (fatal !== null) throw new Error(`the front-end failed: ${fatal}`);
  const t = await page.evaluate(`(() => {
    const t = window.__times;
    if (t.firstNamed === null) {
      const name = ${FIRST_NAMED};
      if (name !== null) { t.firstNamed = t.done; t.name = name; }
    }
    return t;
  })()`);
  return { open, firstNamed: t.firstNamed, done: t.done, firstName: t.name };
}

try {
  const [mode, url, func] = process.argv.slice(2);
  let out;
  if (mode === 'check' && url && func) out = await check(url, func);
  else if (mode === 'times') out = await times();
  else throw new Error('usage: driver.mjs check URL FUNCTION | driver.mjs times');
  await cleanup();
  clearTimeout(deadline);
  process.stdout.write(JSON.stringify(out) + '\n');
} catch (e) {
  process.stderr.write(`driver: ${e.stack || e}\n`);
  await cleanup();
  process.exit(1);
}

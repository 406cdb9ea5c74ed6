#!/usr/bin/env node
// Real-browser test of the page that `attn serve` serves at GET / (src/serve/web/index.html).
//
//   cd tests/serve/browser && npm ci
//   node page_test.mjs --attn build/src/attn --model en-es=runs/en-es/model --screenshot /tmp/page.png \
//        [--chromium /usr/bin/chromium] [--page src/serve/web/index.html] [--text "..."] [--timeout 120]
//
// Starts `attn serve --port 0`, drives Debian's Chromium (headless, through puppeteer-core, which never
// downloads a browser) to translate a sentence, checks the translation, the tokens' highlight on hover,
// the heatmap, the layer/head controls, the alignment lines, the n-best list and an API error, saves a
// full-page screenshot, checks that the page asked nothing of any host but 127.0.0.1, then stops the
// server with SIGTERM and checks that it exits with status 0. Exit status 0: every check passed;
// 1: a check failed, something needed is missing (Chromium, puppeteer-core), or the run took too long.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';

const USAGE = 'usage: node page_test.mjs --attn ATTN --model SRC-TGT=DIR [--model ...] --screenshot OUT.png ' +
  '[--chromium /usr/bin/chromium] [--page FILE] [--text SENTENCE] [--timeout SECONDS]';

// ---- arguments -----------------------------------------------------------------------------------
function parseArgs(argv) {
  const opts = { models: [], chromium: '/usr/bin/chromium', timeout: 120,
                 text: 'In the beginning God created the heaven and the earth.' };
  const names = { '--attn': 'attn', '--model': 'model', '--screenshot': 'screenshot', '--chromium': 'chromium',
                  '--page': 'page', '--text': 'text', '--timeout': 'timeout' };
  for (let k = 0; k < argv.length; k++) {
    let flag = argv[k], value;
    const eq = flag.indexOf('=');
    if (flag.startsWith('--') && eq > 0) { value = flag.slice(eq + 1); flag = flag.slice(0, eq); }
    if (flag === '-h' || flag === '--help') { console.log(USAGE); process.exit(0); }
    const name = names[flag];
    if (!name) throw new Error('unknown argument ' + argv[k] + '\n' + USAGE);
    if (value === undefined) {
      if (k + 1 >= argv.length) throw new Error(flag + ' needs a value\n' + USAGE);
      value = argv[++k];
    }
    if (name === 'model') opts.models.push(value);
    else if (name === 'timeout') opts.timeout = Number(value);
    else opts[name] = value;
  }
  if (!opts.attn) throw new Error('--attn is required\n' + USAGE);
  if (!opts.models.length) throw new Error('--model is required\n' + USAGE);
  if (!opts.screenshot) throw new Error('--screenshot is required\n' + USAGE);
  if (!(opts.timeout > 0)) throw new Error('--timeout must be a positive number of seconds');
  for (const m of opts.models)
    if (!/^[^=]+-[^=]+=.+$/.test(m)) throw new Error('--model must be SRC-TGT=DIR, not ' + m);
  return opts;
}

// ---- state for clean-up --------------------------------------------------------------------------
let server = null, serverExit = null, browser = null, profileDir = null, serverLog = '';
const started = Date.now();

function log(message) {
  console.log('page_test [' + ((Date.now() - started) / 1000).toFixed(1) + ' s] ' + message);
}

function cleanUp() {
  if (browser) {
    const p = browser.process();
    if (p && p.exitCode === null) { try { p.kill('SIGKILL'); } catch (_) { /* gone */ } }
    browser = null;
  }
  if (server && server.exitCode === null && server.signalCode === null) {
    try { server.kill('SIGKILL'); } catch (_) { /* gone */ }
  }
  if (profileDir) { try { fs.rmSync(profileDir, { recursive: true, force: true }); } catch (_) { /* ignore */ } }
  profileDir = null;
}

function fail(message) {
  console.error('\npage_test: FAIL: ' + message);
  if (serverLog.trim()) console.error('--- attn serve stderr (last 3000 characters) ---\n' + serverLog.slice(-3000));
  cleanUp();
  process.exit(1);
}

function loud(message) {
  const bar = '!'.repeat(100);
  console.error('\n' + bar + '\n!!! page_test CANNOT RUN: ' + message + '\n' + bar + '\n');
  cleanUp();
  process.exit(1);
}

function check(condition, message) {
  if (!condition) throw new Error(message);
  log('ok: ' + message);
}

// ---- the server ----------------------------------------------------------------------------------
function startServer(opts) {
  const args = ['serve'];
  for (const m of opts.models) args.push('--model', m);
  args.push('--port', '0');
  if (opts.page) args.push('--page', opts.page);
  log('starting ' + [opts.attn, ...args].join(' '));
  server = spawn(opts.attn, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  serverExit = new Promise((resolve) => server.on('exit', (code, signal) => resolve({ code, signal })));
  server.stderr.setEncoding('utf8');
  server.stderr.on('data', (d) => { serverLog = (serverLog + d).slice(-20000); });
  return new Promise((resolve, reject) => {
    server.on('error', (err) => reject(new Error('cannot start ' + opts.attn + ': ' + err.message)));
    const lines = readline.createInterface({ input: server.stdout });
    let first = true;
    lines.on('line', (line) => {
      if (!first) return;  // keep reading, so that the pipe never fills
      first = false;
      const m = /^listening on (http:\/\/127\.0\.0\.1:(\d+))\s*$/.exec(line);
      if (m && Number(m[2]) > 0) resolve(m[1]);
      else reject(new Error('the first line of attn serve\'s standard output is "' + line +
                            '", not "listening on http://127.0.0.1:PORT"'));
    });
    serverExit.then(({ code, signal }) => reject(new Error('attn serve exited (status ' + code + ', signal ' +
                                                          signal + ') before it listened')));
  });
}

// ---- the browser ---------------------------------------------------------------------------------
async function loadPuppeteer() {
  try {
    return (await import('puppeteer-core')).default;
  } catch (err) {
    loud('the npm package puppeteer-core is not installed (' + err.message.split('\n')[0] + ').\n' +
         '!!! Install it: cd ' + path.dirname(new URL(import.meta.url).pathname) + ' && npm ci');
  }
  return null;
}

function checkChromium(file) {
  try {
    fs.accessSync(file, fs.constants.X_OK);
  } catch (_) {
    loud('no Chromium at ' + file + ' (install it: apt-get install chromium; or give --chromium FILE)');
  }
}

const isLocal = (u) => {
  if (/^(data|blob|about):/.test(u)) return true;
  try {
    const url = new URL(u);
    return ['http:', 'https:', 'ws:', 'wss:'].includes(url.protocol) && url.hostname === '127.0.0.1';
  } catch (_) {
    return false;
  }
};

async function run(opts) {
  const puppeteer = await loadPuppeteer();
  checkChromium(opts.chromium);
  try { fs.accessSync(opts.attn, fs.constants.X_OK); } catch (_) { fail('no executable attn at ' + opts.attn); }
  const modelId = opts.models[0].split('=')[0];

  const base = await startServer(opts);
  log('attn serve listens on ' + base);

  profileDir = fs.mkdtempSync(path.join(os.tmpdir(), 'attn-page-test-'));
  browser = await puppeteer.launch({
    executablePath: opts.chromium,
    headless: true,  // puppeteer-core adds --headless=new
    args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
           '--disable-background-networking', '--disable-component-update', '--disable-sync',
           '--disable-default-apps', '--disable-extensions', '--no-default-browser-check',
           '--user-data-dir=' + profileDir],
    defaultViewport: { width: 1280, height: 900, deviceScaleFactor: 1 },
    timeout: 30000,
  });
  log('Chromium ' + (await browser.version()));
  const page = await browser.newPage();
  page.setDefaultTimeout(30000);

  const outside = [], httpErrors = [], pageErrors = [], consoleErrors = [];
  page.on('request', (req) => { if (!isLocal(req.url())) outside.push(req.method() + ' ' + req.url()); });
  page.on('response', (res) => { if (res.status() >= 400) httpErrors.push(res.status() + ' ' + res.url()); });
  page.on('pageerror', (err) => pageErrors.push(String(err && err.message ? err.message : err)));
  page.on('console', (msg) => { if (msg.type() === 'error') consoleErrors.push(msg.text()); });

  const response = await page.goto(base + '/', { waitUntil: 'load' });
  check(response && response.status() === 200, 'GET / answers 200');
  check(/text\/html/.test(response.headers()['content-type'] || ''), 'GET / is text/html');

  // The directions come from GET /v1/models.
  await page.waitForFunction(() => document.querySelector('#direction').options.length > 0, { timeout: 15000 })
    .catch(() => { throw new Error('#direction got no options from GET /v1/models'); });
  const options = await page.$$eval('#direction option', (os) => os.map((o) => [o.value, o.textContent]));
  check(options.some(([v]) => v === modelId), '#direction offers ' + modelId + ' (' +
        options.map(([v, t]) => v + ': "' + t + '"').join(', ') + ')');
  await page.select('#direction', modelId);

  await page.click('#source');
  await page.type('#source', opts.text);
  log('typed "' + opts.text + '"');
  await page.click('#translate');

  const outcome = await page.waitForFunction(() => {
    const e = document.getElementById('error');
    if (e && !e.hidden && e.textContent.trim()) return { error: e.textContent.trim() };
    const t = document.getElementById('translation').textContent.trim();
    const cells = document.querySelectorAll('#heatmap rect.cell').length;
    return t && cells ? { translation: t, cells } : false;
  }, { timeout: 60000, polling: 100 }).then((h) => h.jsonValue())
    .catch((err) => { throw new Error('no translation and heatmap within 60 s (' + err.message + ')'); });
  if (outcome.error) throw new Error('the page shows an error: ' + outcome.error);
  check(outcome.translation.length > 0, 'a translation: "' + outcome.translation + '"');

  // Tokens, and the heatmap's size.
  const toks = await page.evaluate(() => ({
    src: [...document.querySelectorAll('#src-tokens .tok')].map((e) => e.textContent),
    tgt: [...document.querySelectorAll('#tgt-tokens .tok')].map((e) => e.textContent),
  }));
  check(toks.src.length > 1 && toks.src[toks.src.length - 1] === '</s>',
        'source tokens, ending with </s>: ' + JSON.stringify(toks.src));
  check(toks.tgt.length > 1 && toks.tgt[toks.tgt.length - 1] === '</s>',
        'target tokens, ending with </s>: ' + JSON.stringify(toks.tgt));
  check(outcome.cells === toks.src.length * toks.tgt.length,
        'the heatmap has target × source = ' + toks.tgt.length + ' × ' + toks.src.length + ' cells (' +
        outcome.cells + ')');
  const labels = await page.$$eval('#heatmap text.lbl', (ts) => ts.length);
  check(labels === toks.src.length + toks.tgt.length, 'the heatmap labels every row and column (' + labels + ')');

  // Layer and head controls.
  const controls = await page.evaluate(() => ({
    layers: [...document.querySelectorAll('#layer option')].map((o) => o.value),
    layer: document.getElementById('layer').value,
    heads: [...document.querySelectorAll('#head option')].map((o) => o.value),
    head: document.getElementById('head').value,
  }));
  check(controls.layers.length > 0 && controls.layer === controls.layers[controls.layers.length - 1],
        '#layer offers layers ' + controls.layers.join(',') + ' and shows the last');
  check(controls.heads[0] === 'mean' && controls.heads.length > 1 && controls.head === 'mean',
        '#head offers ' + controls.heads.join(',') + ' and shows the mean');
  const fills = () => page.$$eval('#heatmap rect.cell', (rs) => rs.map((r) => r.getAttribute('fill')).join(';'));
  const meanFills = await fills();
  await page.select('#head', controls.heads[1]);
  check((await fills()) !== meanFills, 'choosing head ' + controls.heads[1] + ' redraws the heatmap');
  if (controls.layers.length > 1) {
    await page.select('#layer', controls.layers[0]);
    check((await fills()) !== meanFills, 'choosing layer ' + controls.layers[0] + ' redraws the heatmap');
    await page.select('#layer', controls.layer);
  }
  await page.select('#head', 'mean');
  check((await fills()) === meanFills, 'back to the mean of the last layer');

  // Hovering a target token highlights source tokens.
  // (The page fades colours in over 0.12 s: read them once that is over.)
  const settle = () => new Promise((r) => setTimeout(r, 300));
  const srcLook = () => settle().then(() => page.$$eval('#src-tokens .tok', (es) => es.map((e) =>
    getComputedStyle(e).backgroundColor + (e.classList.contains('hl') ? ' hl' : ''))));
  const before = await srcLook();
  const hovered = Math.min(3, toks.tgt.length - 2);
  await page.hover('#tgt-tokens .tok[data-i="' + hovered + '"]');
  const during = await srcLook();
  const changed = during.filter((b, k) => b !== before[k]).length;
  check(changed > 0 && during.some((b) => b.endsWith(' hl')),
        'hovering target token "' + toks.tgt[hovered] + '" changes the background of ' + changed +
        ' source tokens and highlights some');
  const band = await page.$eval('#heatmap .band', (b) => b.getAttribute('visibility'));
  check(band === 'visible', 'hovering a target token marks its row in the heatmap');
  await page.hover('#heatmap rect.cell[data-r="0"][data-c="0"]');
  const rowActive = await page.$eval('#tgt-tokens .tok[data-i="0"]', (e) => e.classList.contains('active'));
  check(rowActive, 'hovering a heatmap row highlights its target token');
  await page.mouse.move(5, 5);
  check(JSON.stringify(await srcLook()) === JSON.stringify(before), 'leaving the token clears the highlight');
  // A click pins the selection; the screenshot shows it.
  await page.click('#tgt-tokens .tok[data-i="' + hovered + '"]');
  await page.mouse.move(5, 5);
  const pinned = await srcLook();
  check(pinned.some((b) => b.endsWith(' hl')) && JSON.stringify(pinned) !== JSON.stringify(before),
        'a click pins the highlight (it stays when the mouse leaves)');

  // Alignment and n-best.
  const links = await page.$$eval('#alignment path.link, #alignment line', (ls) => ls.length);
  const words = await page.$$eval('#alignment .word', (ws) => ws.length);
  check(links > 0 && words > 0, '#alignment draws ' + links + ' links between ' + words + ' words');
  const nbest = await page.$$eval('#nbest li', (ls) => ls.map((l) => l.textContent.replace(/\s+/g, ' ').trim()));
  check(nbest.length > 0 && nbest.every((t) => /-?\d+\.\d\d/.test(t)),
        '#nbest lists ' + nbest.length + ' hypotheses with scores: ' + JSON.stringify(nbest));
  const errorHidden = await page.$eval('#error', (e) => e.hidden || getComputedStyle(e).display === 'none');
  check(errorHidden, 'no error shown');

  fs.mkdirSync(path.dirname(path.resolve(opts.screenshot)), { recursive: true });
  await page.screenshot({ path: opts.screenshot, fullPage: true });
  log('saved the screenshot ' + opts.screenshot);

  // An API error is shown: a text over the server's default --max-chars (5000).
  await page.$eval('#source', (e) => { e.value = 'a '.repeat(3000); });
  await page.click('#translate');
  const shown = await page.waitForFunction(() => {
    const e = document.getElementById('error');
    return e && !e.hidden && getComputedStyle(e).display !== 'none' && e.textContent.trim();
  }, { timeout: 30000, polling: 100 }).then((h) => h.jsonValue())
    .catch(() => { throw new Error('a text of 6000 characters showed no error in #error'); });
  check(/limit|long|exceed/i.test(shown), '#error shows the API\'s error: "' + shown + '"');
  // That request's 400 was expected.
  const unexpected = httpErrors.filter((e) => !/^400 .*\/v1\/translate$/.test(e));

  check(pageErrors.length === 0, 'no script errors on the page' + (pageErrors.length ? ': ' + pageErrors.join(' | ') : ''));
  check(unexpected.length === 0, 'no failed requests but the expected 400' +
        (unexpected.length ? ': ' + unexpected.join(', ') : ''));
  if (consoleErrors.length) log('console errors (the expected 400 is one): ' + consoleErrors.join(' | '));
  check(outside.length === 0, 'the page asked nothing of any host but 127.0.0.1' +
        (outside.length ? ': ' + outside.join(', ') : ''));

  await browser.close();
  browser = null;

  log('sending SIGTERM to attn serve');
  server.kill('SIGTERM');
  const exit = await Promise.race([serverExit, new Promise((r) => setTimeout(() => r(null), 20000))]);
  if (!exit) throw new Error('attn serve did not exit within 20 s of SIGTERM');
  check(exit.code === 0 && exit.signal === null, 'attn serve exits with status 0 on SIGTERM (status ' + exit.code +
        ', signal ' + exit.signal + ')');
}

let opts;
try {
  opts = parseArgs(process.argv.slice(2));
} catch (err) {
  console.error('page_test: ' + err.message);
  process.exit(1);
}
const timer = setTimeout(() => fail('the test took more than ' + opts.timeout + ' s'), opts.timeout * 1000);
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => fail('interrupted (' + sig + ')'));
run(opts).then(() => {
  clearTimeout(timer);
  cleanUp();
  console.log('\npage_test: PASS (' + ((Date.now() - started) / 1000).toFixed(1) + ' s)');
  process.exit(0);
}, (err) => fail(err && err.message ? err.message : String(err)));

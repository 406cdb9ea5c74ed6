#!/usr/bin/env node
// Real-browser test of the page that `attn serve` serves at GET / (src/serve/web/index.html).
//
//   cd tests/serve/browser && npm ci
//   node page_test.mjs --attn build/src/attn --model en-es=runs/en-es/model --screenshot /tmp/page.png \
//        [--chromium /usr/bin/chromium] [--page src/serve/web/index.html] [--text "..."] [--timeout 120]
//        [--paragraph "..." --paragraph "..."] [--html "<p>...</p>"]
//
// Starts `attn serve --port 0`, drives Debian's Chromium (headless, through puppeteer-core, which never
// downloads a browser) and checks, each against what the service answers when asked directly (each
// sentence alone, in the "lines" format), never against the page itself:
// - a sentence (--text) in the default Text mode: the translation, the tokens' highlight on hover, the
//   heatmap, the layer/head controls, the alignment lines, the n-best card;
// - Lines mode: two lines, each line's translation, the Line selector, the n-best list of several;
// - HTML mode (--html): the translated HTML shown as text parses with as many <b> as the source, its
//   text is the sentence's translation, and the preview is a sandboxed iframe (nothing put into the page);
// - a .txt file through the file input, and one dropped on the text box: a download link named after
//   the file whose content is the translated document; an unsupported file: the API's error;
// - at 800 pixels wide, a long sentence: the heatmap and the alignment scroll inside their cards, the
//   page never wider than the window;
// - Text mode with the paragraphs (--paragraph, one sentence each; a blank line between them): each
//   sentence's translation in the pane, the blank line kept, the Sentence selector, the heatmap
//   redrawn for the chosen sentence; the full-page screenshot is taken there;
// - an API error in #error; no script errors; nothing asked of any host but 127.0.0.1;
// then stops the server with SIGTERM and checks that it exits with status 0. Exit status 0: every
// check passed; 1: a check failed, something needed is missing (Chromium, puppeteer-core), or the run
// took too long.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';

const USAGE = 'usage: node page_test.mjs --attn ATTN --model SRC-TGT=DIR [--model ...] --screenshot OUT.png ' +
  '[--chromium /usr/bin/chromium] [--page FILE] [--text SENTENCE] [--paragraph SENTENCE --paragraph SENTENCE] ' +
  '[--html HTML] [--timeout SECONDS]';
// The paragraphs and the HTML are words of the service tests' model (tests/serve/make_test_model.cpp);
// give others for another model. Each paragraph must be one sentence: with no sentence punctuation,
// lines that go on in lower case are one sentence wrapped, so the paragraphs are separated by a blank
// line.
const PARAGRAPHS = ['alpha beta gamma delta', 'kappa lambda sigma omega'];
// The image is on a host that is never asked: the preview must block it (TEST-NET-1, RFC 5737).
const HTML = '<p>alpha <b>beta</b> gamma delta</p><img src="http://192.0.2.1/attn-page-test.png" alt="">';

// ---- arguments -----------------------------------------------------------------------------------
function parseArgs(argv) {
  const opts = { models: [], chromium: '/usr/bin/chromium', timeout: 120,
                 text: 'In the beginning God created the heaven and the earth.', paragraphs: [], html: HTML };
  const names = { '--attn': 'attn', '--model': 'model', '--screenshot': 'screenshot', '--chromium': 'chromium',
                  '--page': 'page', '--text': 'text', '--timeout': 'timeout', '--paragraph': 'paragraph',
                  '--html': 'html' };
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
    else if (name === 'paragraph') opts.paragraphs.push(value);
    else if (name === 'timeout') opts.timeout = Number(value);
    else opts[name] = value;
  }
  if (!opts.attn) throw new Error('--attn is required\n' + USAGE);
  if (!opts.models.length) throw new Error('--model is required\n' + USAGE);
  if (!opts.screenshot) throw new Error('--screenshot is required\n' + USAGE);
  if (!(opts.timeout > 0)) throw new Error('--timeout must be a positive number of seconds');
  if (!opts.paragraphs.length) opts.paragraphs = PARAGRAPHS;
  if (opts.paragraphs.length < 2 || opts.paragraphs.some((p) => !p.trim() || /\n/.test(p)))
    throw new Error('give --paragraph at least twice, each one line of text');
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

// ---- the service, asked directly (the truth the page is checked against) ---------------------------
async function answer(res, what) {
  const text = await res.text();
  let data = null;
  try { data = JSON.parse(text); } catch (_) { data = null; }
  if (!res.ok || data === null) throw new Error(what + ' answered ' + res.status + ': ' + text.slice(0, 300));
  return data;
}
async function postJson(base, where, body) {
  const res = await fetch(base + where, { method: 'POST', headers: { 'Content-Type': 'application/json' },
                                          body: JSON.stringify(body) });
  return answer(res, 'POST ' + where);
}
async function getJson(base, where) { return answer(await fetch(base + where), 'GET ' + where); }

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

  // A request to another host counts unless the browser blocked it by a content security policy
  // (the HTML preview's): Chromium reports those as requests too, that fail before any network.
  const outside = new Map(), blocked = [], httpErrors = [], pageErrors = [], consoleErrors = [];
  const cdp = await page.createCDPSession();
  await cdp.send('Network.enable');
  cdp.on('Network.requestWillBeSent', (e) => {
    if (!isLocal(e.request.url)) outside.set(e.requestId, e.request.method + ' ' + e.request.url);
  });
  cdp.on('Network.loadingFailed', (e) => {
    if (e.blockedReason === 'csp' && outside.has(e.requestId)) {
      blocked.push(outside.get(e.requestId));
      outside.delete(e.requestId);
    }
  });
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

  // The truth: each sentence translated alone, asked of the service directly, in the "lines" format
  // (with the page's beam).
  const truth = async (sentences) => {
    const data = await postJson(base, '/v1/translate', { model: modelId, q: sentences, beam: 4 });
    return data.translations.map((t) => t.text);
  };

  // The input formats, and files if the server takes them.
  const formats = await page.$$eval('#format option', (os) => os.map((o) => o.value));
  check(JSON.stringify(formats) === '["text","html","lines"]' && (await page.$eval('#format', (s) => s.value)) === 'text',
        '#format offers ' + formats.join(', ') + ' and starts in text');
  const settings = await getJson(base, '/frontend/settings');
  await page.waitForFunction(() => !document.getElementById('file-button').hidden, { timeout: 15000 })
    .catch(() => { throw new Error('#file-button stays hidden (GET /frontend/settings lists files)'); });
  const accept = await page.$eval('#file', (e) => e.getAttribute('accept'));
  check(accept === settings.supportedFilesFormat.join(','), 'the file input accepts the server\'s formats: ' + accept);

  // Clears what a translation writes, so that a wait sees the next one (the page keeps the last).
  const translateAndWait = async (ready, what) => {
    await page.evaluate(() => {
      document.getElementById('translation').replaceChildren();
      for (const r of document.querySelectorAll('#heatmap rect.cell')) r.remove();
    });
    await page.click('#translate');
    const got = await page.waitForFunction((ready) => {
      const e = document.getElementById('error');
      if (e && !e.hidden && e.textContent.trim()) return { error: e.textContent.trim() };
      return new Function('return (' + ready + ')()')();  // eslint-disable-line no-new-func
    }, { timeout: 60000, polling: 100 }, ready.toString()).then((h) => h.jsonValue())
      .catch((err) => { throw new Error('no ' + what + ' within 60 s (' + err.message + ')'); });
    if (got.error) throw new Error('the page shows an error after ' + what + ': ' + got.error);
    return got;
  };
  const setSource = (text) => page.$eval('#source', (e, v) => { e.value = v; e.dispatchEvent(new Event('input')); }, text);
  const fills = () => page.$$eval('#heatmap rect.cell', (rs) => rs.map((r) => r.getAttribute('fill')).join(';'));
  const settle = () => new Promise((r) => setTimeout(r, 300));

  // ---- one sentence, in the default mode (Text) ---------------------------------------------------
  await page.click('#source');
  await page.type('#source', opts.text);
  log('typed "' + opts.text + '"');
  const outcome = await translateAndWait(() => {
    const t = document.getElementById('translation').textContent.trim();
    const cells = document.querySelectorAll('#heatmap rect.cell').length;
    return t && cells ? { translation: t, cells } : false;
  }, 'translation and heatmap');
  const [textTruth] = await truth([opts.text]);
  check(outcome.translation === textTruth.trim(), 'the translation is the sentence\'s alone: "' + outcome.translation + '"');

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
  await page.click('#tgt-tokens .tok[data-i="' + hovered + '"]');
  await page.mouse.move(5, 5);
  const pinned = await srcLook();
  check(pinned.some((b) => b.endsWith(' hl')) && JSON.stringify(pinned) !== JSON.stringify(before),
        'a click pins the highlight (it stays when the mouse leaves)');

  // Alignment and the n-best card (in Text mode: the sentence's one translation, and a note).
  const links = await page.$$eval('#alignment path.link, #alignment line', (ls) => ls.length);
  const words = await page.$$eval('#alignment .word', (ws) => ws.length);
  check(links > 0 && words > 0, '#alignment draws ' + links + ' links between ' + words + ' words');
  const nbest = await page.$$eval('#nbest li', (ls) => ls.map((l) => l.textContent.replace(/\s+/g, ' ').trim()));
  const note = await page.$eval('#nbest-note', (e) => !e.hidden);
  check(nbest.length === 1 && /-?\d+\.\d\d/.test(nbest[0]) && nbest[0].includes(textTruth.trim()) && note,
        '#nbest shows the sentence\'s translation with its score, and says where n-best lists are: ' +
        JSON.stringify(nbest));
  const errorHidden = await page.$eval('#error', (e) => e.hidden || getComputedStyle(e).display === 'none');
  check(errorHidden, 'no error shown');

  // ---- Lines mode: a sentence a line, n-best lists -------------------------------------------------
  const twoLines = [opts.text, opts.paragraphs[1]];
  await page.select('#format', 'lines');
  await setSource(twoLines.join('\n'));
  await translateAndWait(() => document.querySelectorAll('#translation .tline.multi').length === 2 &&
                               document.querySelectorAll('#heatmap rect.cell').length > 0, 'two translated lines');
  const linesTruth = await truth(twoLines);
  const shownLines = await page.$$eval('#translation .tline .text', (es) => es.map((e) => e.textContent));
  check(JSON.stringify(shownLines) === JSON.stringify(linesTruth),
        'Lines: each line\'s translation, as each line alone: ' + JSON.stringify(shownLines));
  const lineBox = await page.evaluate(() => ({ label: document.getElementById('line-label').textContent,
    n: document.querySelectorAll('#line option').length, hidden: document.getElementById('line-box').hidden }));
  check(lineBox.label === 'Line' && lineBox.n === 2 && !lineBox.hidden, 'Lines: a "Line" selector with 2 entries');
  const nbestLines = await page.$$eval('#nbest li', (ls) => ls.length);
  const noteLines = await page.$eval('#nbest-note', (e) => e.hidden);
  check(nbestLines > 1 && nbestLines <= 4 && noteLines, 'Lines: #nbest lists ' + nbestLines + ' hypotheses');
  const line1Fills = await fills();
  await page.click('#translation .tline[data-i="1"]');
  check((await page.$eval('#line', (s) => s.value)) === '1' && (await fills()) !== line1Fills,
        'Lines: clicking the second line selects it and redraws the heatmap');

  // ---- HTML mode ------------------------------------------------------------------------------------
  await page.select('#format', 'html');
  await setSource(opts.html);
  await translateAndWait(() => !!document.querySelector('#translation pre.doc') &&
                               !!document.querySelector('#translation iframe') &&
                               document.querySelectorAll('#heatmap rect.cell').length > 0, 'translated HTML');
  const html = await page.evaluate((source) => {
    const parse = (s) => new DOMParser().parseFromString(s, 'text/html');
    const shown = document.querySelector('#translation pre.doc').textContent;
    const frame = document.querySelector('#translation iframe');
    const src = parse(source), out = parse(shown);
    const norm = (s) => s.replace(/\s+/g, ' ').trim();
    return { shown, sourceB: src.querySelectorAll('b').length, shownB: out.querySelectorAll('b').length,
             sourceText: norm(src.body.textContent), shownText: norm(out.body.textContent),
             bText: out.querySelector('b') ? norm(out.querySelector('b').textContent) : '',
             sandbox: frame.getAttribute('sandbox'), srcdoc: frame.getAttribute('srcdoc') || '',
             injected: document.querySelectorAll('#translation b, #translation p').length };
  }, opts.html);
  const [htmlTruth] = await truth([html.sourceText]);
  check(html.shownB === html.sourceB && html.shownB === 1 && html.bText.length > 0,
        'HTML: the translated HTML parses with exactly one <b> ("' + html.bText + '"): ' + JSON.stringify(html.shown));
  check(html.shownText === htmlTruth.replace(/\s+/g, ' ').trim(),
        'HTML: its text is the translation of the source\'s text alone: "' + html.shownText + '"');
  check(html.sandbox === '' && html.srcdoc.includes(html.shown) && html.injected === 0,
        'HTML: the preview is an iframe with sandbox="" and the translation as srcdoc; none of it is in the page');
  const previewFrame = page.frames().find((f) => f.parentFrame() === page.mainFrame() && f.url() === 'about:srcdoc');
  if (!previewFrame) throw new Error('HTML: no preview frame (about:srcdoc) in the page');
  await previewFrame.waitForFunction(() => document.readyState === 'complete', { timeout: 10000 });
  const rendered = await previewFrame.evaluate(() => ({ b: document.querySelectorAll('b').length,
    text: document.body.textContent.replace(/\s+/g, ' ').trim() }));
  check(rendered.b === 1 && rendered.text === html.shownText,
        'HTML: the preview renders the translation: one <b>, the text "' + rendered.text + '"');
  if (/192\.0\.2\.1/.test(html.shown)) {
    await settle();
    check(blocked.some((r) => r.includes('192.0.2.1')) && ![...outside.values()].some((r) => r.includes('192.0.2.1')),
          'HTML: the preview\'s image on another host was blocked, not asked for');
  }

  // ---- files ----------------------------------------------------------------------------------------
  const fileDir = fs.mkdtempSync(path.join(os.tmpdir(), 'attn-page-file-'));
  const paragraphsTruth = await truth(opts.paragraphs);
  try {
    const content = opts.paragraphs.join('\n\n') + '\n', expected = paragraphsTruth.join('\n\n') + '\n';
    const file = path.join(fileDir, 'page-test.txt');
    fs.writeFileSync(file, content);
    await page.evaluate(() => document.getElementById('translation').replaceChildren());
    const input = await page.$('#file');
    await input.uploadFile(file);
    const link = await page.waitForFunction(() => {
      const e = document.getElementById('error');
      if (e && !e.hidden && e.textContent.trim()) return { error: e.textContent.trim() };
      const a = document.querySelector('#translation a#download');
      const doc = document.querySelector('#translation .doc');
      return a && doc ? { href: a.href, download: a.getAttribute('download'), text: a.textContent, shown: doc.textContent }
        : false;
    }, { timeout: 60000, polling: 100 }).then((h) => h.jsonValue())
      .catch((err) => { throw new Error('no download link within 60 s of choosing a file (' + err.message + ')'); });
    if (link.error) throw new Error('the page shows an error after a file: ' + link.error);
    check(link.download === 'page-test.txt' && link.text.includes('page-test.txt') && link.href.startsWith(base + '/'),
          'a file: a download link named page-test.txt, on this server: ' + link.href);
    const res = await fetch(link.href);
    const body = await res.text();
    check(res.status === 200 && /filename="?page-test\.txt"?/.test(res.headers.get('content-disposition') || ''),
          'the link serves an attachment named page-test.txt');
    check(body === expected, 'the file is the paragraphs\' translations, a blank line between them: ' +
          JSON.stringify(body));
    check(link.shown === expected, 'the translation pane shows the translated file\'s text');

    // A file dropped on the text box, and one the server does not take.
    const drop = (name, text) => page.evaluate((name, text) => {
      const dt = new DataTransfer();
      dt.items.add(new File([text], name, { type: 'text/plain' }));
      const box = document.getElementById('source');
      for (const type of ['dragenter', 'dragover', 'drop'])
        box.dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }));
    }, name, text);
    await page.evaluate(() => document.getElementById('translation').replaceChildren());
    await drop('dropped.txt', opts.paragraphs[0] + '\n');
    const dropped = await page.waitForFunction(() => {
      const a = document.querySelector('#translation a#download');
      const doc = document.querySelector('#translation .doc');
      return a && doc ? { download: a.getAttribute('download'), shown: doc.textContent } : false;
    }, { timeout: 60000, polling: 100 }).then((h) => h.jsonValue())
      .catch(() => { throw new Error('a dropped file gave no download link within 60 s'); });
    check(dropped.download === 'dropped.txt' && dropped.shown === paragraphsTruth[0] + '\n',
          'a file dropped on the text box is translated: "' + dropped.shown.trim() + '"');
    await drop('page-test.pdf', '%PDF-1.4');
    const refused = await page.waitForFunction(() => {
      const e = document.getElementById('error');
      return e && !e.hidden && e.textContent.trim();
    }, { timeout: 30000, polling: 100 }).then((h) => h.jsonValue())
      .catch(() => { throw new Error('a .pdf file showed no error in #error'); });
    check(/page-test\.pdf/.test(refused) && /support/i.test(refused), '#error shows the API\'s error for a .pdf: "' + refused + '"');
  } finally {
    fs.rmSync(fileDir, { recursive: true, force: true });
  }

  // ---- a narrow window and a long sentence: figures scroll inside their cards -------------------------
  const pool = opts.text.split(/\s+/).concat(opts.paragraphs.join(' ').split(/\s+/));
  const long = Array.from({ length: 40 }, (_, k) => pool[(k * 5) % pool.length]).join(' ');
  await page.setViewport({ width: 800, height: 900, deviceScaleFactor: 1 });
  await page.select('#format', 'text');
  await setSource(long);
  await translateAndWait(() => document.querySelectorAll('#alignment .word').length > 0 &&
                               document.querySelectorAll('#heatmap rect.cell').length > 0, 'a long sentence\'s figures');
  await settle();
  const widths = await page.evaluate(() => {
    const box = (id) => {
      const svg = document.getElementById(id), scroll = svg.parentElement, card = svg.closest('.card');
      return { svg: Number(svg.getAttribute('width')), client: scroll.clientWidth, scroll: scroll.scrollWidth,
               right: scroll.getBoundingClientRect().right, cardRight: card.getBoundingClientRect().right };
    };
    return { page: document.documentElement.scrollWidth, body: document.body.scrollWidth, window: window.innerWidth,
             alignment: box('alignment'), heatmap: box('heatmap') };
  });
  const a = widths.alignment, h = widths.heatmap;
  check(a.svg > a.client, 'at 800 px the long sentence\'s alignment (' + a.svg + ' px) is wider than its card (' +
        a.client + ' px): the check below means something');
  check(a.scroll > a.client && a.right <= a.cardRight && h.right <= h.cardRight,
        'the alignment scrolls sideways inside its card (' + a.scroll + ' px in ' + a.client + '), the heatmap\'s box ' +
        'ends inside its card');
  check(widths.page <= widths.window && widths.body <= widths.window,
        'the page is no wider than the 800 px window (' + widths.page + ' px)');
  await page.setViewport({ width: 1280, height: 900, deviceScaleFactor: 1 });

  // ---- Text mode: paragraphs, their layout, a sentence at a time --------------------------------------
  await page.select('#format', 'text');
  const doc = opts.paragraphs.join('\n\n');
  await setSource(doc);
  await translateAndWait(() => !!document.querySelector('#translation .doc') &&
                               document.querySelectorAll('#heatmap rect.cell').length > 0, 'a translated document');
  const shownDoc = await page.evaluate(() => ({
    text: document.querySelector('#translation .doc').textContent,
    lines: document.querySelector('#translation .doc').innerText.split('\n'),
    sents: [...document.querySelectorAll('#translation .doc .sent')].map((e) => e.textContent),
    label: document.getElementById('line-label').textContent,
    options: [...document.querySelectorAll('#line option')].map((o) => o.textContent),
  }));
  const expectedDoc = paragraphsTruth.join('\n\n');
  check(shownDoc.text === expectedDoc, 'Text: the pane shows each paragraph\'s translation, a blank line between: ' +
        JSON.stringify(shownDoc.text));
  check(shownDoc.lines.length === 2 * opts.paragraphs.length - 1 && shownDoc.lines.every((l, k) => (k % 2 ? l === '' :
        l === paragraphsTruth[k / 2])), 'Text: as lines on the screen: ' + JSON.stringify(shownDoc.lines));
  check(JSON.stringify(shownDoc.sents) === JSON.stringify(paragraphsTruth),
        'Text: each sentence\'s translation is a span of its own');
  check(shownDoc.label === 'Sentence' && shownDoc.options.length === opts.paragraphs.length &&
        shownDoc.options.every((o, k) => {
          const full = (k + 1) + ': ' + opts.paragraphs[k];  // (a long one is cut, with an ellipsis)
          return o === full || (o.endsWith('…') && full.startsWith(o.slice(0, -1)));
        }),
        'Text: a "Sentence" selector with the ' + opts.paragraphs.length + ' sentences: ' + JSON.stringify(shownDoc.options));
  const sent0 = await fills();
  const srcOf = () => page.$$eval('#src-tokens .tok', (es) => es.map((e) => e.textContent).join(' '));
  await page.select('#line', '1');
  const sent1Tokens = await srcOf();
  check((await fills()) !== sent0 && (await page.$eval('#translation .sent[data-i="1"]', (e) => e.classList.contains('selected'))),
        'Text: choosing sentence 2 redraws the heatmap and marks its translation');
  check(sent1Tokens.replace(/ ?<\/s>$/, '').replace(/\s+/g, '') === opts.paragraphs[1].replace(/\s+/g, ''),
        'Text: the tokens are the second sentence\'s: ' + sent1Tokens);
  await page.click('#translation .sent[data-i="0"]');
  check((await page.$eval('#line', (s) => s.value)) === '0' && (await fills()) === sent0,
        'Text: clicking the first sentence\'s translation selects it again');
  // The screenshot: the second sentence chosen from the pane, a target token pinned.
  await page.click('#translation .sent[data-i="1"]');
  await page.click('#tgt-tokens .tok[data-i="0"]');
  await page.mouse.move(5, 5);
  await settle();

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
  // That request's 400, and the .pdf's, were expected.
  const unexpected = httpErrors.filter((e) => !/^400 .*\/(v1\/translate|translate_file)$/.test(e));

  check(pageErrors.length === 0, 'no script errors on the page' + (pageErrors.length ? ': ' + pageErrors.join(' | ') : ''));
  check(unexpected.length === 0, 'no failed requests but the expected 400s' +
        (unexpected.length ? ': ' + unexpected.join(', ') : ''));
  if (consoleErrors.length) log('console errors (the expected 400s are some): ' + consoleErrors.join(' | '));
  if (blocked.length) log('blocked by the page\'s content security policy: ' + blocked.join(', '));
  check(outside.size === 0, 'the page asked nothing of any host but 127.0.0.1' +
        (outside.size ? ': ' + [...outside.values()].join(', ') : ''));
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
// An error thrown in an event handler must not leave the server running.
process.on('uncaughtException', (err) => fail('uncaught: ' + (err && err.stack ? err.stack : err)));
process.on('unhandledRejection', (err) => fail('unhandled rejection: ' + (err && err.stack ? err.stack : err)));
run(opts).then(() => {
  clearTimeout(timer);
  cleanUp();
  console.log('\npage_test: PASS (' + ((Date.now() - started) / 1000).toFixed(1) + ' s)');
  process.exit(0);
}, (err) => fail(err && err.message ? err.message : String(err)));

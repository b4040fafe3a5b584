// The attention explorer pages (--html) and --svg pictures, opened in a real browser: Debian's chromium,
// driven by playwright-core (both installed by scripts/browser-deps.sh). For each page: no console
// errors, the DOM holds the tokens, heads, lines and heatmaps the JSON says, hovering a token shows
// exactly the JSON's weights, and a screenshot is not blank.
//
//   node tests/browser/explorer.test.mjs --attnlab build/attnlab --fixture build/tests/explorer_fixture \
//        --modules .cache/browser/npm/node_modules --work build/tests/browser [--screenshots docs/images]
//
// Exit 0: passed; 1: failed; 77: skipped because chromium cannot start here (never under CI=true).
import { execFileSync, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const args = Object.fromEntries(process.argv.slice(2).reduce((acc, a, i, all) => {
  if (a.startsWith('--')) acc.push([a.slice(2), all[i + 1]]);
  return acc;
}, []));
for (const need of ['attnlab', 'fixture', 'modules', 'work']) {
  if (!args[need]) { console.error(`explorer.test: --${need} is required`); process.exit(2); }
}
const CI = /^(1|true|yes)$/i.test(process.env.CI || '');
function skip(why) {
  if (CI) { console.error(`explorer.test: FAILED: ${why} (CI must run the browser tests: bash scripts/browser-deps.sh)`); process.exit(1); }
  console.log(`skipped: ${why}`);
  process.exit(77);
}

let failures = 0, checks = 0;
function check(cond, what) {
  checks++;
  if (!cond) { failures++; console.error(`FAIL: ${what}`); }
}
const close = (a, b, tol = 1e-12) => Math.abs(a - b) <= tol;

// ---- make the pages ------------------------------------------------------------------------------
const work = path.resolve(args.work);
fs.mkdirSync(work, { recursive: true });
const bin = path.resolve(args.attnlab);
const env = { ...process.env, NO_COLOR: '1' };
function attnlab(...a) { return execFileSync(bin, a, { env, encoding: 'utf8', maxBuffer: 256 << 20 }); }
const P = (f) => path.join(work, f);
const coref = "The animal didn't cross the street because it was too tired.";
const wide = "The animal didn't cross the street because it was too wide.";
attnlab('attend', coref, '--vectors', '--html', P('attend.html'));
const attendJson = JSON.parse(attnlab('attend', coref, '--vectors', '--format', 'json'));
attnlab('translate', wide, '--html', P('translate.html'));
const translateJson = JSON.parse(attnlab('translate', wide, '--show-attention', '--format', 'json'));
attnlab('lesson', '9', '--html', P('lesson9.html'));
const lessonJson = JSON.parse(attnlab('lesson', '9', '--format', 'json'));
attnlab('tour', '--html', P('tour.html'));
const tourJson = JSON.parse(attnlab('tour', '--format', 'json'));
attnlab('generate', 'Your journey starts with one step', '-t', '0', '--max-new', '8', '--html', P('generate.html'));
const generateJson = JSON.parse(attnlab('generate', 'Your journey starts with one step', '-t', '0', '--max-new', '8', '--format', 'json', '--show-attention'));
attnlab('attend', coref, '--focus', 'it', '--svg', P('focus.svg'));
attnlab('translate', wide, '--svg', P('cross.svg'), '--layer', '1', '--head', '3');
execFileSync(path.resolve(args.fixture), [work], { encoding: 'utf8' });
// A training timeline (train --snapshots): a tiny run, its page and its JSON.
fs.rmSync(P('timeline-run'), { recursive: true, force: true });
attnlab('train', '--config', 'tiny-test', '--out', P('timeline-run'),
        '--snapshots', '3');
attnlab('timeline', '--model', P('timeline-run'), '--html', P('timeline.html'));
const timelineJson = JSON.parse(attnlab('timeline', '--model', P('timeline-run'), '--format', 'json'));

// The page must hold the model's own weights: the explorer's set (rounded to 6 decimals) against
// the unrounded weights attend has always printed.
{
  const set = attendJson.attention[0];
  let worst = 0;
  attendJson.layers.forEach((heads, l) => heads.forEach((h) => {
    h.weights.forEach((row, i) => row.forEach((w, j) => { worst = Math.max(worst, Math.abs(w - set.weights[l][h.head][i][j])); }));
  }));
  check(worst <= 5e-7, `attend: the explorer's weights differ from the model's by ${worst} (> 5e-7)`);
}

// ---- the browser ---------------------------------------------------------------------------------
let chromium;
try {
  chromium = createRequire(path.join(path.resolve(args.modules), 'x.js'))('playwright-core').chromium;
} catch (e) {
  skip(`playwright-core is not installed in ${args.modules} (${e.code || e.message})`);
}
if (!fs.existsSync('/usr/bin/chromium')) skip('/usr/bin/chromium is not installed');
let browser;
try {
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'], timeout: 60000 });
} catch (e) {
  skip(`chromium cannot start: ${String(e.message).split('\n')[0]}`);
}

const shots = args.screenshots ? path.resolve(args.screenshots) : null;
if (shots) fs.mkdirSync(shots, { recursive: true });

async function open(file, viewport = { width: 1280, height: 900 }) {
  const page = await browser.newPage({ viewport });
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('request', (r) => { if (!r.url().startsWith('file:') && !r.url().startsWith('data:')) errors.push(`network request: ${r.url()}`); });
  const t0 = Date.now();
  await page.goto(pathToFileURL(P(file)).href);
  if (file.endsWith('.html')) await page.waitForSelector('body[data-ready="1"]', { timeout: 20000 });
  return { page, errors, ms: Date.now() - t0 };
}

// A screenshot is "not blank" when it has many colours and a fair share of non-white pixels: decoded
// by the browser itself (an <img> drawn on a canvas), so no PNG decoder is needed here.
async function screenshotCheck(page, name, opts = {}) {
  const png = await page.screenshot(opts);
  if (shots && opts.keep) fs.writeFileSync(path.join(shots, opts.keep), png);
  const blank = await browser.newPage();
  const stats = await blank.evaluate(async (b64) => {
    const img = new Image();
    img.src = `data:image/png;base64,${b64}`;
    await img.decode();
    const c = document.createElement('canvas');
    c.width = img.width; c.height = img.height;
    const g = c.getContext('2d');
    g.drawImage(img, 0, 0);
    const d = g.getImageData(0, 0, c.width, c.height).data;
    const colours = new Set();
    let nonWhite = 0, n = 0;
    for (let i = 0; i < d.length; i += 4 * 7) {
      n++;
      colours.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
      if (d[i] < 235 || d[i + 1] < 235 || d[i + 2] < 235) nonWhite++;
    }
    return { colours: colours.size, nonWhite: nonWhite / n, width: c.width, height: c.height };
  }, png.toString('base64'));
  await blank.close();
  check(stats.colours >= 20 && stats.nonWhite >= 0.03,
        `${name}: screenshot looks blank (${stats.colours} colours, ${(100 * stats.nonWhite).toFixed(1)} % non-white)`);
  return stats;
}

// The neuron view of the query, key and head its menus show, in layer index L of `set` (which has
// "vectors", from --vectors): the bars hold exactly the JSON's q and k; every number printed (product,
// sum, score, the row's scores, max, exp, sum, weight) equals what this test computes from q and k on
// its own (to 1e-12, and its text to the digits printed); and softmax of the row, computed here,
// reproduces the weights the model reported (6 decimals in the JSON).
async function checkNeuron(page, name, set, L) {
  const at = await page.evaluate(() => ({ q: Number(document.querySelector('#nv-query').value), k: Number(document.querySelector('#nv-key').value),
                                          h: Number(document.querySelector('#nv-head').value) }));
  const vec = set.vectors, dk = vec.d_k, i = at.q, j = at.k, h = at.h;
  const q = vec.q[L][h][i], k = vec.k[L][h][j];
  const near = (a, b, tol = 1e-12) => Math.abs(a - b) <= tol * Math.max(1, Math.abs(b));
  // Kahan summation: a different order of rounding from the page's plain loop.
  const ksum = (xs) => { let sum = 0, c = 0; for (const x of xs) { const y = x - c, t = sum + y; c = (t - sum) - y; sum = t; } return sum; };
  const bar = (cls) => page.$$eval(`#neuron svg.bars-${cls} rect.bar`, (e) => e.map((r) => Number(r.dataset.v)));
  const bq = await bar('q'), bk = await bar('k'), bp = await bar('prod');
  check(bq.length === dk && bq.every((v, d) => v === q[d]), `${name}: neuron q bars ≠ the JSON's q of row ${i}, head ${h}`);
  check(bk.length === dk && bk.every((v, d) => v === k[d]), `${name}: neuron k bars ≠ the JSON's k of column ${j}, head ${h}`);
  check(bp.length === dk && bp.every((v, d) => near(v, q[d] * k[d])), `${name}: neuron q × k bars`);
  const causal = set.kind === 'causal';
  const scores = set.columns.map((_, c) => (causal && c > i ? -Infinity : ksum(q.map((x, d) => x * vec.k[L][h][c][d])) / Math.sqrt(dk)));
  const max = Math.max(...scores);
  const exps = scores.map((x) => (x === -Infinity ? 0 : Math.exp(x - max)));
  const sum = ksum(exps);
  const want = { 'nv-dot': scores[j] * Math.sqrt(dk), 'nv-score': scores[j], 'nv-max': max, 'nv-sum': sum, 'nv-sum2': sum,
                 'nv-exp': exps[j], 'nv-weight': exps[j] / sum, 'nv-model-weight': set.weights[L][h][i][j] };
  const nums = await page.$$eval('#neuron .nv-num', (e) => e.map((x) => ({ cls: [...x.classList].find((c) => c !== 'nv-num' && c !== 'chosen') || '',
    row: x.closest('tr')?.className || '', d: x.closest('tr')?.dataset.d, c: x.dataset.c, v: Number(x.dataset.v), text: x.textContent })));
  let seen = 0;
  for (const n of nums) {
    // The text says the value to the digits it prints.
    const shown = Number(n.text);
    const fixed = /^-?\d+\.\d{4}$/.test(n.text);
    check(fixed ? Math.abs(shown - n.v) <= 0.5e-4 + 1e-12 : Math.abs(shown - n.v) <= 1e-3 * Math.abs(n.v), `${name}: "${n.text}" printed for ${n.v}`);
    let expect;
    if (n.cls in want) expect = want[n.cls];
    else if (n.cls === 'nv-q') expect = q[Number(n.d)];
    else if (n.cls === 'nv-k') expect = k[Number(n.d)];
    else if (n.cls === 'nv-prod') expect = q[Number(n.d)] * k[Number(n.d)];
    else if (n.row === 'nv-scores') expect = scores[Number(n.c)];
    else if (n.row === 'nv-shifted') expect = scores[Number(n.c)] - max;
    else if (n.row === 'nv-exps') expect = exps[Number(n.c)];
    else if (n.row === 'nv-weights') expect = exps[Number(n.c)] / sum;
    check(expect !== undefined && near(n.v, expect, 1e-9), `${name}: neuron number ${n.cls || n.row} ${n.d ?? n.c ?? ''} is ${n.v}, computed here ${expect}`);
    seen++;
  }
  const visible = set.columns.filter((_, c) => !(causal && c > i)).length;
  check(seen === Object.keys(want).length + 3 * dk + 4 * visible, `${name}: ${seen} numbers in the neuron view, expected ${Object.keys(want).length + 3 * dk + 4 * visible}`);
  // softmax(q·k/√d_k), computed here, is the model's weight: the vectors are the ones behind the weights.
  let worst = 0;
  set.weights[L][h][i].forEach((w, c) => { worst = Math.max(worst, Math.abs(exps[c] / sum - w)); });
  check(worst <= 2e-6, `${name}: softmax of q·k/√d_k differs from the JSON's weights of row ${i}, head ${h} by ${worst}`);
  const scoreLine = await page.$eval('#neuron .nvscore', (e) => e.textContent);
  check(scoreLine.includes(`÷ √${dk} = ${Math.sqrt(dk)}: score`), `${name}: the scaling reads "${scoreLine}"`);
  const masked = await page.$$eval('#neuron tr.nv-scores td.masked', (e) => e.length);
  check(masked === set.columns.length - visible, `${name}: ${masked} masked scores shown, expected ${set.columns.length - visible}`);
  const chosen = await page.$eval('#neuron table.nvsoftmax th.chosen', (e) => e.textContent);
  check(chosen === set.columns[j], `${name}: the chosen key column is "${chosen}", expected "${set.columns[j]}"`);
  return { i, j, h };
}

// What a reader sees of the layout, on every page: no label of a heatmap, the head view or the neuron
// view's bars outside its picture (the last token's label clipped); every picture either fits its box or
// is in a box that scrolls to its last column (never cut); the page itself never wider than the window;
// no paragraph, list item, heading or cell whose text overflows its box; every number printed on a cell
// (heatmaps, the readout) at a WCAG contrast of at least 4.5 : 1 with the cell's colour.
async function layoutChecks(page, name) {
  const r = await page.evaluate(() => {
    const lum = (fill) => {
      if (/^#[0-9a-f]{3}$/i.test(fill)) fill = '#' + [...fill.slice(1)].map((x) => x + x).join('');
      const m = /^#([0-9a-f]{6})$/i.exec(fill);
      const c = m ? [0, 2, 4].map((k) => parseInt(m[1].slice(k, k + 2), 16)) : fill.match(/\d+(\.\d+)?/g).slice(0, 3).map(Number);
      const lin = c.map((x) => { x /= 255; return x <= 0.04045 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4; });
      return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2];
    };
    const contrast = (a, b) => { const x = lum(a), y = lum(b); return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); };
    const out = { pageWider: document.scrollingElement.scrollWidth - innerWidth, clipped: [], cut: [], lowContrast: [], overflow: [], pictures: 0, values: 0 };
    for (const svg of document.querySelectorAll('svg.heatmap, #headsvg, svg.bars')) {
      out.pictures++;
      const sr = svg.getBoundingClientRect();
      for (const t of svg.querySelectorAll('text')) {
        const tr = t.getBoundingClientRect();
        if (tr.width && (tr.left < sr.left - 0.5 || tr.right > sr.right + 0.5 || tr.top < sr.top - 0.5 || tr.bottom > sr.bottom + 0.5)) out.clipped.push(t.textContent);
      }
      for (let a = svg.parentElement; a && a !== document.documentElement; a = a.parentElement) {
        const cs = getComputedStyle(a);
        if (cs.overflowX === 'visible') continue;
        const ar = a.getBoundingClientRect();
        const scrolls = cs.overflowX === 'auto' || cs.overflowX === 'scroll';
        if (sr.right > ar.left + (scrolls ? a.scrollWidth - a.scrollLeft : ar.width) + 1) out.cut.push(`${svg.getAttribute('aria-label')} in ${a.className || a.tagName}`);
        break;
      }
      if (svg.classList.contains('heatmap')) {
        const cells = [...svg.querySelectorAll('rect.cell')];
        const values = [...svg.querySelectorAll('text.value')];
        const cols = Number(svg.dataset.cols);
        values.forEach((t, k) => {
          out.values++;
          const c = contrast(t.getAttribute('fill'), cells[k].getAttribute('fill'));
          if (c < 4.5) out.lowContrast.push(`${t.textContent} on ${cells[k].getAttribute('fill')}: ${c.toFixed(2)}`);
        });
        if (values.length && values.length !== cells.length) out.lowContrast.push(`${values.length} values for ${cells.length} cells (${cols} columns)`);
      }
    }
    for (const td of document.querySelectorAll('#row-readout td')) {
      out.values++;
      const cs = getComputedStyle(td), c = contrast(cs.color, cs.backgroundColor);
      if (c < 4.5) out.lowContrast.push(`readout ${td.textContent}: ${c.toFixed(2)}`);
    }
    for (const e of document.querySelectorAll('p, li, pre, h1, h2, h3, figcaption, label, summary')) {
      if (e.closest('[hidden]') || e.closest('details:not([open])') && e.tagName !== 'SUMMARY') continue;
      if (e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX === 'visible') out.overflow.push(e.textContent.slice(0, 50));
    }
    return out;
  });
  check(r.pageWider <= 0, `${name}: the page is ${r.pageWider} px wider than the window`);
  check(r.clipped.length === 0, `${name}: ${r.clipped.length} labels outside their picture: ${r.clipped.slice(0, 5).join(', ')}`);
  check(r.cut.length === 0, `${name}: pictures cut off: ${r.cut.slice(0, 5).join(' | ')}`);
  check(r.lowContrast.length === 0, `${name}: numbers hard to read on their cells: ${r.lowContrast.slice(0, 5).join(' | ')}`);
  check(r.overflow.length === 0, `${name}: text overflows its box: ${r.overflow.slice(0, 3).join(' | ')}`);
  return r;
}

// The keyboard's path through a page: from the first control, Tab reaches every control that can be
// used (inputs, menus, buttons, the head view's tokens, the neuron view's keys, the model view's maps),
// each once, in the order of the page, and that order runs sentence box → model menu → Show → set tabs →
// layer → heads → model-view row → head-view tokens → neuron view → model view; Shift+Tab goes back.
async function focusOrder(page, name, { neuron = true } = {}) {
  const groups = ['live', 'tabs', 'controls', 'headsvg', 'neuron', 'modelview'];
  const want = await page.evaluate((groups) => {
    const all = [...document.querySelectorAll('input, select, button, summary, textarea, a[href], [tabindex]')]
      .filter((e) => e.tabIndex >= 0 && !e.disabled && !e.closest('[hidden]') && e.getClientRects().length > 0);
    return all.map((e, k) => {
      e.dataset.fo = k;
      const g = groups.findIndex((id) => e.closest(`#${id}, .${id}`));
      return { k, g, what: `${e.tagName.toLowerCase()}${e.id ? '#' + e.id : ''}${e.className?.baseVal ?? e.className ? '.' + String(e.className?.baseVal ?? e.className).split(' ')[0] : ''}` };
    });
  }, groups);
  await page.focus('[data-fo="0"]');
  const seen = [0];
  for (let t = 1; t < want.length; t++) {
    await page.keyboard.press('Tab');
    const at = await page.evaluate(() => { const e = document.activeElement; return e?.dataset?.fo ?? `${e?.tagName}.${e?.className}#${e?.id}`; });
    seen.push(Number.isNaN(Number(at)) ? at : Number(at));
  }
  const inOrder = seen.every((k, t) => k === t);
  check(inOrder, `${name}: Tab visits ${JSON.stringify(seen.map((k) => want[k]?.what ?? k).slice(0, 60))}, not the ${want.length} controls in page order`);
  const ranks = want.map((w) => w.g);
  check(ranks.every((g) => g >= 0) && ranks.every((g, t) => t === 0 || g >= ranks[t - 1]),
        `${name}: controls in an odd order: ${JSON.stringify(want.map((w) => `${groups[w.g] ?? '?'}:${w.what}`))}`);
  for (const g of ['controls', 'headsvg', ...(neuron ? ['neuron'] : []), 'modelview'])
    check(ranks.includes(groups.indexOf(g)), `${name}: Tab never reaches the ${g}`);
  await page.keyboard.down('Shift');
  await page.keyboard.press('Tab');
  await page.keyboard.up('Shift');
  const back = Number(await page.evaluate(() => document.activeElement?.dataset?.fo ?? -1));
  check(back === want.length - 2, `${name}: Shift+Tab from the last control went to ${back}, not ${want.length - 2}`);
  return want.length;
}

// Checks one attention set as the page shows it: tokens, lines, the hovered row's weights, the grid.
async function checkAttentionSet(page, name, set, hoverRow) {
  const left = await page.$$eval('#headsvg text.tok.left', (e) => e.map((t) => t.textContent));
  const right = await page.$$eval('#headsvg text.tok.right', (e) => e.map((t) => t.textContent));
  check(JSON.stringify(left) === JSON.stringify(set.rows), `${name}: left tokens ${JSON.stringify(left)} ≠ rows ${JSON.stringify(set.rows)}`);
  check(JSON.stringify(right) === JSON.stringify(set.columns), `${name}: right tokens ≠ columns`);
  const lineMin = Number(await page.$eval('#headsvg', (s) => s.dataset.lineMin));
  let expected = 0;
  set.weights[0].forEach((m) => m.forEach((row) => row.forEach((w) => { if (w >= lineMin) expected++; })));
  const lines = await page.$$eval('#headsvg line.edge', (e) => e.length);
  check(lines === expected, `${name}: ${lines} lines drawn, ${expected} weights ≥ ${lineMin} in layer ${set.layers[0]}`);
  const heads = await page.$$eval('.controls input[type=checkbox][data-head]', (e) => e.length);
  check(heads === set.heads.length, `${name}: ${heads} head toggles for ${set.heads.length} heads`);
  const cells = await page.$$eval('.gridcell canvas.thumb', (e) => e.length);
  check(cells === set.layers.length * set.heads.length, `${name}: model view has ${cells} maps, expected ${set.layers.length * set.heads.length}`);

  // Hover a token: its lines stay, every other line hides, and the readout holds the JSON's weights.
  await page.hover(`#headsvg text.tok.left[data-i="${hoverRow}"]`);
  const visible = await page.$$eval('#headsvg line.edge', (e) => e.filter((l) => getComputedStyle(l).display !== 'none').map((l) => Number(l.dataset.i)));
  check(visible.length > 0 && visible.every((i) => i === hoverRow), `${name}: hovering row ${hoverRow} left other rows' lines visible`);
  const table = await page.$$eval('#row-readout table.rowtable tr[data-head]', (trs) =>
    trs.map((tr) => ({ head: Number(tr.dataset.head), w: [...tr.querySelectorAll('td')].map((td) => Number(td.dataset.w)) })));
  check(table.length === set.heads.length, `${name}: readout has ${table.length} head rows, expected ${set.heads.length}`);
  for (const r of table) {
    const want = set.weights[0][set.heads.indexOf(r.head)][hoverRow];
    check(r.w.length === want.length && r.w.every((w, j) => close(w, want[j])),
          `${name}: hovered row ${hoverRow}, head ${r.head}: readout ${JSON.stringify(r.w)} ≠ JSON ${JSON.stringify(want)}`);
    const sum = r.w.reduce((a, b) => a + b, 0);
    check(set.kind !== 'self' || close(sum, 1, 1e-4), `${name}: head ${r.head} row sums to ${sum}`);
  }
  // The readout's printed percentages are the JSON's weights × 100, to the 0.1 printed.
  const pct = await page.$$eval('#row-readout tr[data-head]', (trs) => trs.map((tr) => ({ head: Number(tr.dataset.head), t: [...tr.querySelectorAll('td')].map((td) => td.textContent) })));
  for (const r of pct) {
    const want = set.weights[0][set.heads.indexOf(r.head)][hoverRow];
    check(r.t.every((t, j) => Math.abs(Number(t) - 100 * want[j]) <= 0.05 + 1e-9), `${name}: readout percentages ${r.t.join(' ')} for head ${r.head}`);
  }

  // The model view's colour scale, and a map read by hovering it: the cell under the pointer named by its
  // tokens and weight. The last map, its last row and last column (the corner most easily cut off).
  const legendText = await page.$$eval('.modelkey svg.legend text', (e) => e.map((t) => t.textContent));
  check(JSON.stringify(legendText) === '["0.000","1.000"]', `${name}: the model view's scale reads ${JSON.stringify(legendText)}`);
  const lastL = set.layers.length - 1, lastH = set.heads.length - 1, n = set.rows.length, m = set.columns.length;
  for (const [i, j] of [[0, 0], [n - 1, m - 1]]) {
    const thumb = await page.$(`.gridcell canvas.thumb[data-layer="${set.layers[lastL]}"][data-head="${set.heads[lastH]}"]`);
    await thumb.scrollIntoViewIfNeeded();
    const box = await thumb.boundingBox();
    await page.mouse.move(box.x + ((j + 0.5) / m) * box.width, box.y + ((i + 0.5) / n) * box.height);
    const ro = await page.$eval('#model-readout', (e) => ({ ...e.dataset, text: e.textContent }));
    const w = set.weights[lastL][lastH][i][j];
    check(Number(ro.i) === i && Number(ro.j) === j && Number(ro.w) === w && ro.text.includes(`"${set.rows[i]}" → "${set.columns[j]}"`) &&
          Math.abs(Number(ro.text.split(': ').pop()) - w) <= 0.0005 + 1e-9,
          `${name}: hovering map L${set.layers[lastL]} H${set.heads[lastH]} at (${i}, ${j}) reads "${ro.text}" (${ro.i}, ${ro.j}), JSON ${w}`);
  }

  // Click a map of the model view: it opens large, one cell per weight.
  await page.click('.gridcell[data-layer] >> nth=0');
  const big = await page.$$eval('#modal:not([hidden]) svg.heatmap rect.cell', (e) => e.length);
  check(big === set.rows.length * set.columns.length, `${name}: the opened map has ${big} cells, expected ${set.rows.length * set.columns.length}`);
  await page.keyboard.press('Escape');
  check(await page.$eval('#modal', (m) => m.hidden), `${name}: Escape did not close the large map`);
}

try {
  // attend: where "it" looks.
  {
    const { page, errors } = await open('attend.html');
    const set = attendJson.attention[0];
    const it = set.rows.indexOf('it');
    check(it >= 0, 'attend: "it" is a token');
    await checkAttentionSet(page, 'attend', set, it);
    // The model view on one row: each map labels the word "it" gives most weight to, as the JSON says.
    await page.selectOption('#focus', String(it));
    const tops = await page.$$eval('.gridcell', (e) => e.map((c) => ({ l: Number(c.dataset.layer), h: Number(c.dataset.head), top: c.querySelector('.top')?.textContent || '' })));
    for (const t of tops) {
      const row = set.weights[set.layers.indexOf(t.l)][set.heads.indexOf(t.h)][it];
      const best = row.indexOf(Math.max(...row));
      check(t.top.startsWith(`${set.columns[best]} `) && Math.abs(Number(t.top.match(/(\d+)%$/)[1]) - 100 * row[best]) <= 0.5 + 1e-9,
            `attend: layer ${t.l} head ${t.h} labelled "${t.top}", expected "${set.columns[best]} ${(100 * row[best]).toFixed(1)}%"`);
    }
    // The neuron view: "it" (pinned by a click in the head view) and the key it weights most in head 0,
    // then another key, head and layer chosen from the menus.
    await page.click(`#headsvg text.tok.left[data-i="${it}"]`);
    let nv = await checkNeuron(page, 'attend neuron', set, 0);
    check(nv.i === it, `attend: pinning "it" did not make it the neuron view's query (${nv.i})`);
    const animal = set.columns.indexOf('animal');
    await page.selectOption('#layer', '1');
    await page.selectOption('#nv-key', String(animal));
    await page.selectOption('#nv-head', '2');
    nv = await checkNeuron(page, 'attend neuron L1', set, 1);
    check(nv.j === animal && nv.h === 2, `attend: the neuron view shows key ${nv.j}, head ${nv.h}`);
    await screenshotCheck(page, 'attend neuron', { keep: shots ? 'explorer-neuron.png' : undefined, clip: await page.$eval('#neuron', (e) => {
      const r = e.getBoundingClientRect(); return { x: 0, y: r.top + window.scrollY - 70, width: 1280, height: Math.min(900, r.height + 80) }; }), fullPage: true });
    await layoutChecks(page, 'attend');
    await page.selectOption('#layer', '0');
    await page.hover(`#headsvg text.tok.left[data-i="${it}"]`);
    await screenshotCheck(page, 'attend', { fullPage: true, keep: 'explorer-attend.png' });
    check(errors.length === 0, `attend: console errors: ${errors.join(' | ')}`);
    await page.close();
  }
  // translate: three sets, on tabs.
  {
    const { page, errors } = await open('translate.html');
    const tabs = await page.$$eval('.tab', (e) => e.map((t) => t.textContent));
    check(JSON.stringify(tabs) === JSON.stringify(translateJson.attention.map((s) => s.name)), `translate: tabs ${JSON.stringify(tabs)}`);
    check(JSON.stringify(tabs) === JSON.stringify(['encoder self-attention', 'decoder self-attention', 'cross-attention']), 'translate: encoder, decoder and cross sets');
    for (let k = 0; k < tabs.length; k++) {
      await page.click(`.tab[data-set="${k}"]`);
      const set = translateJson.attention[k];
      const row = set.kind === 'cross' ? set.rows.findIndex((t) => t === 'elle' || t === 'il') : Math.min(2, set.rows.length - 1);
      await checkAttentionSet(page, `translate/${set.name}`, set, row);
      if (set.kind === 'causal') {  // the masked half draws no lines
        const above = await page.$$eval('#headsvg line.edge', (e) => e.filter((l) => Number(l.dataset.j) > Number(l.dataset.i)).length);
        check(above === 0, `translate/decoder: ${above} lines to words not yet written`);
      }
      await layoutChecks(page, `translate/${set.name}`);
      if (set.kind === 'cross') await screenshotCheck(page, 'translate', { fullPage: true, keep: 'explorer-translate-cross.png' });
    }
    await focusOrder(page, 'translate', { neuron: false });  // no vectors here: the neuron view is a note
    const note = await page.$eval('#neuron', (e) => e.textContent);
    check(note.includes('--vectors') && await page.$$eval('#neuron svg.bars', (e) => e.length) === 0,
          `translate: a page without vectors says how to get the neuron view ("${note}")`);
    check(errors.length === 0, `translate: console errors: ${errors.join(' | ')}`);
    await page.close();
  }
  // timeline: the curves, and the step slider showing each snapshot's own weights.
  {
    const { page, errors } = await open('timeline.html');
    const snaps = timelineJson.snapshots;
    check(await page.$eval('#step-slider', (e) => Number(e.max)) === snaps.length - 1, `timeline: the slider has ${snaps.length} positions`);
    const curves = await page.$$eval('#timeline-curves polyline.curve', (e) => e.map((p) => p.getAttribute('points').trim().split(/\s+/).length));
    check(curves.length === 2 && curves[0] === snaps.filter((s) => typeof s.loss === 'number').length && curves[1] === snaps.length,
          `timeline: curves with ${JSON.stringify(curves)} points`);
    for (let i = 0; i < snaps.length; i++) {
      await page.$eval('#step-slider', (e, v) => { e.value = String(v); e.dispatchEvent(new Event('input')); }, i);
      const readout = await page.$eval('#step-readout', (e) => e.textContent);
      check(readout.startsWith(`step ${snaps[i].step} `) && readout.endsWith(snaps[i].translation || '(nothing)'),
            `timeline: snapshot ${i}: readout "${readout}"`);
      check(await page.$eval('#timeline', (e) => e.dataset.step) === String(snaps[i].step), `timeline: snapshot ${i}: data-step`);
      await checkAttentionSet(page, `timeline step ${snaps[i].step}`, snaps[i].attention[0], 0);
    }
    await screenshotCheck(page, 'timeline', { fullPage: true });
    check(errors.length === 0, `timeline: console errors: ${errors.join(' | ')}`);
    await page.close();
  }
  // lesson 9: every matrix of every step as a heatmap; hover shows its value.
  {
    const { page, errors } = await open('lesson9.html');
    const want = [];
    for (const l of lessonJson.lessons) for (const s of l.steps) for (const b of s.blocks) if (b.type === 'show') for (const m of b.matrices) want.push(m);
    const figs = await page.$$eval('figure.figure svg.heatmap', (e) => e.map((s) => ({ r: Number(s.dataset.rows), c: Number(s.dataset.cols), cells: s.querySelectorAll('rect.cell').length })));
    check(figs.length === want.length, `lesson 9: ${figs.length} heatmaps, the JSON has ${want.length} matrices`);
    figs.forEach((f, k) => {
      const m = want[k];
      check(m && f.r === m.rows && f.c === m.cols && f.cells === m.rows * m.cols, `lesson 9: heatmap ${k} is ${f.r}×${f.c} with ${f.cells} cells`);
    });
    // Every cell holds the JSON's value, every number printed on a cell says it to its 2 decimals (0 past
    // 100), and every colour scale's ends are the matrix's range (0 to 1 for weights; ±the largest
    // magnitude, centred on 0, for values of both signs).
    const drawn = await page.$$eval('figure.figure', (fs) => fs.map((f) => ({
      v: [...f.querySelectorAll('svg.heatmap rect.cell')].map((r) => r.dataset.v),
      t: [...f.querySelectorAll('svg.heatmap text.value')].map((t) => t.textContent),
      legend: [...f.querySelectorAll('svg.legend text')].map((t) => t.textContent) })));
    let badCells = 0, badText = 0, badLegend = 0;
    drawn.forEach((f, k) => {
      const m = want[k], flat = [].concat(...m.data);
      flat.forEach((x, c) => { if (String(x) !== f.v[c] && !(typeof x === 'number' && Number(f.v[c]) === x)) badCells++; });
      f.t.forEach((t, c) => {
        const x = flat[c];
        if (typeof x !== 'number') { if (!['∞', '−∞', 'NaN'].includes(t)) badText++; return; }
        if (Math.abs(Number(t) - x) > (Math.abs(x) >= 100 ? 0.5 : 0.005) + 1e-9) badText++;
      });
      const fin = flat.filter((x) => typeof x === 'number' && Number.isFinite(x));
      let lo = Math.min(...fin), hi = Math.max(...fin);
      if (!fin.length || m.kind === 'weights') { lo = 0; hi = 1; }
      if (lo < 0 && hi > 0) { hi = Math.max(-lo, hi); lo = -hi; }
      const near3 = (t, x) => Math.abs(Number(t) - x) <= 0.0005 + 1e-3 * Math.abs(x);
      if (f.legend.length !== 2 || !near3(f.legend[0], lo) || !near3(f.legend[1], hi)) badLegend++;
    });
    check(badCells === 0, `lesson 9: ${badCells} cells differ from the JSON`);
    check(badText === 0 && drawn.some((f) => f.t.length > 0), `lesson 9: ${badText} printed cell values differ from the JSON`);
    check(badLegend === 0, `lesson 9: ${badLegend} colour scales whose ends are not the matrix's range`);
    const steps = await page.$$eval('section.step', (e) => e.length);
    check(steps === lessonJson.lessons[0].steps.length, `lesson 9: ${steps} steps shown, ${lessonJson.lessons[0].steps.length} in the JSON`);
    const cell = await page.$('figure.figure svg.heatmap rect.cell[data-r="1"][data-c="0"]');
    await cell.hover();
    const v = Number(await cell.getAttribute('data-v'));
    check(close(v, want[0].data[1][0]), `lesson 9: first heatmap's cell (1,0) holds ${v}, the JSON ${want[0].data[1][0]}`);
    const readout = await page.$eval('figure.figure .readout-line', (p) => p.textContent);
    check(readout.includes('→') && readout.includes(v.toFixed(3).slice(0, 4)), `lesson 9: hovering a cell shows "${readout}"`);
    await layoutChecks(page, 'lesson 9');
    await page.evaluate(() => document.querySelector('section.step[data-step="2"]').scrollIntoView());
    await screenshotCheck(page, 'lesson 9', { keep: 'explorer-lesson9.png' });
    check(errors.length === 0, `lesson 9: console errors: ${errors.join(' | ')}`);
    await page.close();
  }
  // tour: all lessons on one page, including the lessons' labelled non-finite demonstrations ("-inf", "nan").
  {
    const { page, errors } = await open('tour.html');
    let want = 0, nonFinite = 0;
    for (const l of tourJson.lessons) for (const s of l.steps) for (const b of s.blocks) if (b.type === 'show')
      for (const m of b.matrices) { want++; for (const r of m.data) for (const v of r) if (typeof v === 'string') nonFinite++; }
    const lessons = await page.$$eval('article.lesson', (e) => e.length);
    check(lessons === tourJson.lessons.length, `tour: ${lessons} lessons shown, ${tourJson.lessons.length} in the JSON`);
    const maps = await page.$$eval('svg.heatmap', (e) => e.length);
    check(maps === want, `tour: ${maps} heatmaps, the JSON has ${want} matrices`);
    const grey = await page.$$eval('rect.cell', (e) => e.filter((r) => ['inf', '-inf', 'nan'].includes(r.dataset.v)).length);
    check(nonFinite > 0 && grey === nonFinite, `tour: ${grey} cells spelled as non-finite, the JSON has ${nonFinite}`);
    const lay = await layoutChecks(page, 'tour');
    check(lay.values > 1000, `tour: only ${lay.values} printed values checked for contrast`);
    // The widest heatmap (a d_model-wide matrix) scrolls: scrolled to its end, its last column is in view.
    const wide = await page.evaluate(() => {
      const svg = [...document.querySelectorAll('svg.heatmap')].sort((a, b) => b.width.baseVal.value - a.width.baseVal.value)[0];
      let box = svg.parentElement;
      while (box && getComputedStyle(box).overflowX === 'visible') box = box.parentElement;
      box.scrollLeft = box.scrollWidth;
      const cells = svg.querySelectorAll('rect.cell'), last = cells[cells.length - 1].getBoundingClientRect(), b = box.getBoundingClientRect();
      const label = [...svg.querySelectorAll('text.collabel')].pop().getBoundingClientRect();
      return { width: svg.width.baseVal.value, box: b.width, lastRight: last.right, labelRight: label.right, boxRight: b.right, scrolled: box.scrollLeft };
    });
    check(wide.width > 2 * wide.box && wide.scrolled > 0 && wide.lastRight <= wide.boxRight + 1 && wide.labelRight <= wide.boxRight + 1,
          `tour: the widest heatmap (${wide.width} px in a ${wide.box} px box) does not scroll to its last column: ${JSON.stringify(wide)}`);
    await page.evaluate(() => [...document.querySelectorAll('svg.heatmap')].sort((a, b) => b.width.baseVal.value - a.width.baseVal.value)[0].scrollIntoView());
    await screenshotCheck(page, 'tour (wide heatmap scrolled)', {});
    check(errors.length === 0, `tour: console errors: ${errors.join(' | ')}`);
    await page.close();
  }
  // generate: the language model's causal attention over prompt and continuation.
  {
    const { page, errors } = await open('generate.html');
    await checkAttentionSet(page, 'generate', generateJson.attention[0], 3);
    await layoutChecks(page, 'generate');
    check(errors.length === 0, `generate: console errors: ${errors.join(' | ')}`);
    await page.close();
  }
  // 40 tokens, 6 layers × 8 heads: still usable (draws quickly, every map present, hover works).
  {
    const { page, errors, ms } = await open('big.html');
    const html = fs.readFileSync(P('big.html'), 'utf8');
    const set = JSON.parse(html.match(/<script id="attnlab-data" type="application\/json">(.*?)<\/script>/s)[1]).attention[0];
    check(set.rows.length === 40 && set.layers.length === 6 && set.heads.length === 8, 'big: the fixture is 40 tokens, 6 × 8');
    await checkAttentionSet(page, 'big', set, 39);
    await layoutChecks(page, 'big');
    check(ms < 10000, `big: the page took ${ms} ms to load and draw`);
    await screenshotCheck(page, 'big', { fullPage: false });
    check(errors.length === 0, `big: console errors: ${errors.join(' | ')}`);
    await page.close();
  }
  // Tokens that try to end the script or style element, markup, invalid UTF-8, a fully masked row.
  {
    const { page, errors } = await open('odd.html');
    check(await page.evaluate(() => window.broken === undefined), 'odd: a token ran as script');
    const left = await page.$$eval('#headsvg text.tok.left', (e) => e.map((t) => t.textContent));
    check(left[0] === '</script><script>window.broken=1</script>' && left[1] === '"quoted" & <b>bold</b>', `odd: tokens shown as text: ${JSON.stringify(left)}`);
    check(left[2] === 'bad\ufffdutf8', `odd: invalid UTF-8 shown as U+FFFD: ${JSON.stringify(left[2])}`);
    await page.hover('#headsvg text.tok.left[data-i="1"]');
    const zero = await page.$$eval('#row-readout td', (e) => e.map((td) => Number(td.dataset.w)));
    check(zero.length === 6 && zero.slice(0, 3).every((w) => w === 0), `odd: the masked row reads ${JSON.stringify(zero)}`);
    check(errors.length === 0, `odd: console errors: ${errors.join(' | ')}`);
    await page.close();
  }
  // --svg files: well-formed, one cell per weight, labelled, drawn.
  for (const [file, rows, cols, label] of [
    ['focus.svg', attendJson.attention[0].layers.length * attendJson.attention[0].heads.length, attendJson.tokens.length, 'L0 H0'],
    ['cross.svg', translateJson.attention[2].rows.length, translateJson.attention[2].columns.length, 'elle'],
  ]) {
    const { page, errors } = await open(file, { width: 1280, height: 760 });
    const cells = await page.$$eval('rect.cell', (e) => e.length);
    check(cells === rows * cols, `${file}: ${cells} cells, expected ${rows}×${cols}`);
    const text = await page.$$eval('text', (e) => e.map((t) => t.textContent));
    check(text.includes(label), `${file}: no label "${label}"`);
    // (a full-page screenshot of a bare SVG document never settles in chromium: the viewport is sized instead)
    await screenshotCheck(page, file, { keep: file === 'cross.svg' && shots ? 'heatmap-cross.png' : undefined });
    check(errors.length === 0, `${file}: console errors: ${errors.join(' | ')}`);
    await page.close();
  }
  // The live page of `attnlab serve`: the box, the model menu, redraws that keep the reader's choices.
  await checkLivePage();
} finally {
  await browser.close();
}

// Starts `attnlab serve --port 0` (stdout's first line names the URL) and drives its page: the first
// drawing is the default model's translation; a layer, heads and a token are chosen; a new sentence
// typed with Enter redraws with those kept and the weights of `attnlab translate --format json`; the
// model menu switched to lm-english draws `attnlab attend --format json`'s; SIGTERM then exits 0.
async function checkLivePage() {
  const server = spawn(bin, ['serve', '--port', '0'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise((resolve) => server.on('exit', (code, signal) => resolve(code ?? signal)));
  let url;
  try {
    url = await new Promise((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`no URL within 60 s: ${out}`)), 60000);
      server.stdout.on('data', (d) => {
        out += d;
        const m = out.match(/http:\/\/127\.0\.0\.1:\d+\//);
        if (m) { clearTimeout(timer); resolve(m[0]); }
      });
    });
  } catch (e) {
    check(false, `serve: ${e.message}`);
    server.kill();
    return;
  }
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('request', (r) => { if (!r.url().startsWith(url)) errors.push(`request outside the server: ${r.url()}`); });
  try {
    await page.goto(url);
    await page.waitForSelector('body[data-ready="1"]', { timeout: 30000 });
    const models = await (await fetch(url + 'api/models')).json();
    const menu = await page.$$eval('#live-model option', (e) => e.map((o) => o.value));
    check(JSON.stringify(menu) === JSON.stringify(models.models.map((m) => m.name)), `live: model menu ${JSON.stringify(menu)}`);
    check(await page.$eval('#live', (f) => !f.hidden), 'live: the sentence box is hidden on the served page');
    const subtitle = await page.$eval('.subtitle', (e) => e.textContent);
    check(subtitle.startsWith('Model: translate-wide (') && !subtitle.includes('/'), `live: subtitle "${subtitle}" does not name the model by its name`);

    // Choose layer 1, heads 1 and 3 only, and pin token 2 in the encoder set.
    await page.selectOption('#layer', '1');
    for (const k of [0, 2]) await page.uncheck(`.controls input[data-head="${k}"]`);
    await page.click('#headsvg text.tok.left[data-i="2"]');
    const sentence = 'The girl sees the old dog near the river.';
    await page.fill('#live-sentence', sentence);
    await page.press('#live-sentence', 'Enter');
    await page.waitForSelector('body[data-ready="1"]', { timeout: 30000 });
    const want = JSON.parse(attnlab('translate', sentence, '--show-attention', '--format', 'json'));
    const status = await page.$eval('#live-status', (e) => e.textContent);
    check(status === `→ ${want.translation}`, `live: status "${status}", expected the translation "${want.translation}"`);
    const set = want.attention[0];
    const left = await page.$$eval('#headsvg text.tok.left', (e) => e.map((t) => t.textContent));
    check(JSON.stringify(left) === JSON.stringify(set.rows), `live: tokens ${JSON.stringify(left)} ≠ ${JSON.stringify(set.rows)}`);
    check(await page.$eval('#layer', (e) => e.value) === '1', 'live: the layer was not kept');
    const heads = await page.$$eval('.controls input[data-head]', (e) => e.filter((b) => b.checked).map((b) => Number(b.dataset.head)));
    check(JSON.stringify(heads) === '[1,3]', `live: heads ${JSON.stringify(heads)} kept, expected [1,3]`);
    const lineMin = Number(await page.$eval('#headsvg', (e) => e.dataset.lineMin));
    let expected = 0;
    for (const k of [1, 3]) set.weights[1][k].forEach((row) => row.forEach((w) => { if (w >= lineMin) expected++; }));
    const lines = await page.$$eval('#headsvg line.edge', (e) => e.length);
    check(lines === expected, `live: ${lines} lines drawn, the JSON has ${expected} weights ≥ ${lineMin} in layer 1, heads 1 and 3`);
    const table = await page.$$eval('#row-readout table.rowtable', (t) => t.map((x) => Number(x.dataset.row)));
    check(JSON.stringify(table) === '[2]', `live: the pinned token 2 was not kept (readout rows ${JSON.stringify(table)})`);
    const readout = await page.$$eval('#row-readout tr[data-head] td', (e) => e.map((td) => Number(td.dataset.w)));
    const wantRow = [...set.weights[1][1][2], ...set.weights[1][3][2]];
    check(readout.length === wantRow.length && readout.every((w, j) => close(w, wantRow[j])), `live: readout ${JSON.stringify(readout)} ≠ JSON ${JSON.stringify(wantRow)}`);
    // The neuron view on the live answer (the page asks with vectors=1): the pinned token 2 is its query.
    const wantV = JSON.parse(attnlab('translate', sentence, '--show-attention', '--vectors', '--format', 'json'));
    let nv = await checkNeuron(page, 'live neuron', wantV.attention[0], 1);
    check(nv.i === 2, `live: the neuron view shows query ${nv.i}; expected the pinned token 2`);
    // From the keyboard: the key menu with an arrow key, then a key's ↑ button with Enter.
    await page.focus('#nv-key');
    await page.keyboard.press(nv.j === 0 ? 'ArrowDown' : 'ArrowUp');
    const moved = await checkNeuron(page, 'live neuron (arrow key)', wantV.attention[0], 1);
    check(moved.j === (nv.j === 0 ? 1 : nv.j - 1), `live: an arrow key on the key menu chose key ${moved.j} (was ${nv.j})`);
    await page.focus('#neuron button.nvkey[data-c="0"]');
    await page.keyboard.press('Enter');
    nv = await checkNeuron(page, 'live neuron (button)', wantV.attention[0], 1);
    check(nv.j === 0 && await page.evaluate(() => document.activeElement?.dataset?.c) === '0', `live: Enter on key 0's button chose key ${nv.j}`);
    await layoutChecks(page, 'live');
    await page.evaluate(() => window.scrollTo(0, 0));
    await screenshotCheck(page, 'live', { fullPage: true, keep: shots ? 'explorer-live.png' : undefined });

    // Another model: lm-english, drawn from /api/attend.
    await page.selectOption('#live-model', 'lm-english');
    await page.waitForFunction(() => document.body.dataset.ready === '1' && document.querySelector('.tab')?.textContent === 'causal self-attention', null, { timeout: 30000 });
    const lm = JSON.parse(attnlab('attend', sentence, '--model', 'data/models/lm-english', '--format', 'json'));
    const lmLeft = await page.$$eval('#headsvg text.tok.left', (e) => e.map((t) => t.textContent));
    check(JSON.stringify(lmLeft) === JSON.stringify(lm.attention[0].rows), `live lm-english: tokens ${JSON.stringify(lmLeft)}`);
    const lmReadout = await page.$$eval('#row-readout tr[data-head] td', (e) => e.map((td) => Number(td.dataset.w)));
    const lmWant = [...lm.attention[0].weights[1][1][2], ...lm.attention[0].weights[1][3][2]];
    check(lmReadout.length === lmWant.length && lmReadout.every((w, j) => close(w, lmWant[j])), 'live lm-english: the readout is not the JSON\'s row 2 of layer 1, heads 1 and 3');
    const lmV = JSON.parse(attnlab('attend', sentence, '--model', 'data/models/lm-english', '--vectors', '--format', 'json'));
    await page.selectOption('#nv-query', '3');
    await page.selectOption('#nv-key', '1');
    await page.selectOption('#nv-head', '2');
    const lnv = await checkNeuron(page, 'live lm-english neuron', lmV.attention[0], 1);
    check(lnv.i === 3 && lnv.j === 1 && lnv.h === 2, `live lm-english: neuron view at ${JSON.stringify(lnv)}`);
    check(await page.$eval('#nv-key option[value="4"]', (o) => o.disabled), 'live lm-english: a key after the query is not masked in the menu');
    const stops = await focusOrder(page, 'live lm-english');
    check(stops > 30, `live lm-english: only ${stops} controls for the keyboard`);
    const lmSubtitle = await page.$eval('.subtitle', (e) => e.textContent);
    check(lmSubtitle.startsWith('Model: lm-english ('), `live lm-english: subtitle "${lmSubtitle}"`);


    // One head alone, then the keyboard: a token reached by focus and pinned with Enter, Tab to the next
    // token, a model-view map opened with Enter and closed with Escape.
    await page.click('button[data-solo="0"]');
    const solo = await page.$$eval('.controls input[data-head]', (e) => e.filter((b) => b.checked).map((b) => Number(b.dataset.head)));
    check(JSON.stringify(solo) === '[0]', `live: "alone" on head 0 left heads ${JSON.stringify(solo)} checked`);
    check(await page.$eval('#nv-head', (e) => e.value) === '0', 'live: "alone" on head 0 did not show head 0 in the neuron view');
    const soloHeads = await page.$$eval('#headsvg line.edge', (e) => [...new Set(e.map((l) => Number(l.dataset.head)))]);
    let soloLines = 0;
    lm.attention[0].weights[1][0].forEach((row) => row.forEach((w) => { if (w >= lineMin) soloLines++; }));
    check(JSON.stringify(soloHeads) === '[0]' && await page.$$eval('#headsvg line.edge', (e) => e.length) === soloLines,
          `live: head 0 alone drew heads ${JSON.stringify(soloHeads)}, expected only head 0 with ${soloLines} lines`);
    await page.focus('#headsvg text.tok.left[data-i="4"]');
    await page.keyboard.press('Enter');
    check(JSON.stringify(await page.$$eval('#row-readout table.rowtable', (t) => t.map((x) => Number(x.dataset.row)))) === '[4]',
          'live: Enter on token 4 did not show its row');
    await page.keyboard.press('Tab');
    check(await page.evaluate(() => document.activeElement?.dataset?.i) === '5', 'live: Tab from token 4 did not reach token 5');
    check(JSON.stringify(await page.$$eval('#row-readout table.rowtable', (t) => t.map((x) => Number(x.dataset.row)))) === '[5]',
          'live: the focused token 5 does not show its row');
    await page.focus('#live-sentence');  // the focus leaves the tokens: the row pinned with Enter stays
    check(JSON.stringify(await page.$$eval('#row-readout table.rowtable', (t) => t.map((x) => Number(x.dataset.row)))) === '[4]',
          'live: Enter did not pin token 4 (its row is gone when the focus leaves)');
    await page.focus('.gridcell[data-layer] >> nth=0');
    await page.keyboard.press('Enter');
    check(await page.$eval('#modal', (m) => !m.hidden) && await page.evaluate(() => document.activeElement?.className) === 'close',
          'live: Enter on a map did not open it with the focus on Close');
    await page.keyboard.press('Escape');
    check(await page.$eval('#modal', (m) => m.hidden), 'live: Escape did not close the map');
    check(errors.length === 0, `live: console errors: ${errors.join(' | ')}`);
    errors.length = 0;

    // A sentence the server refuses (the browser logs the 400 itself): its message in the status line.
    await page.fill('#live-sentence', '   ');
    await page.press('#live-sentence', 'Enter');
    await page.waitForSelector('body[data-ready="1"]', { timeout: 30000 });
    const refused = await page.$eval('#live-status', (e) => e.textContent);
    check(refused.startsWith('sentence: empty'), `live: an empty sentence gave "${refused}"`);
    check(errors.every((e) => e.includes('status of 400')), `live: console errors: ${errors.join(' | ')}`);
  } finally {
    await page.close();
    server.kill('SIGTERM');
    const code = await exited;
    check(code === 0, `serve: SIGTERM ended it with ${code}, expected exit 0`);
  }
}

console.log(`explorer.test: ${checks - failures}/${checks} checks passed${shots ? `; screenshots in ${shots}` : ''}`);
process.exit(failures ? 1 : 0);

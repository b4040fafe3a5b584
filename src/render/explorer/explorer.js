// The attention explorer: turns the JSON that an attnlab command prints with --format json into a page.
// attnlab inlines this file, explorer.css and the command's JSON into one HTML file (render/html_page.cpp),
// so the page works from a file URL with no network. Plain DOM and SVG, no library: the page needs lines,
// rectangles and text, which the browser draws directly, and a library would add a build step and size.
//
// Two kinds of document:
//   {"attention": [SET, ...], ...}   from attend, translate --show-attention and generate --show-attention,
//       SET = {"name", "description", "kind": "self"|"causal"|"cross", "rows", "columns", "row_title", "column_title",
//              "layers": [ids], "heads": [ids], "weights": [layer][head][row][column]}
//   {"lessons": [LESSON, ...]}       from lesson N and tour: steps of text and "show" blocks of matrices.
//   {"snapshots": [SNAP, ...]}       from timeline: SNAP = {"step", "loss", "translation", "attention": [SET, ...],
//       "summary": {"alignment_error": {"rate"}, ...}}; a step slider over the attention view, and the curves.
'use strict';

(function () {
  let doc = JSON.parse(document.getElementById('attnlab-data').textContent);
  const meta = JSON.parse(document.getElementById('attnlab-meta').textContent);
  const SVG = 'http://www.w3.org/2000/svg';
  const app = document.getElementById('app');

  // ---- small helpers -------------------------------------------------------------------------------
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === 'class') e.className = v;
      else if (k === 'text') e.textContent = v;
      else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v);
    }
    for (const c of children) if (c != null) e.append(c);
    return e;
  }
  function sv(tag, attrs) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === 'text') e.textContent = v;
      else e.setAttribute(k, v);
    }
    return e;
  }
  // Lesson matrices spell non-finite values as strings ("-inf" for a masked score, "nan" in a lesson's
  // demonstration of a broken softmax): kept as such, drawn grey and labelled.
  const num = (v) => (typeof v === 'number' ? v : v === 'inf' ? Infinity : v === '-inf' ? -Infinity : NaN);
  const spell = (v, f) => (typeof v === 'number' && Number.isFinite(v) ? f(v) : { inf: '∞', '-inf': '−∞' }[v] || 'NaN');
  const fmt = (x) => (Math.abs(x) >= 1000 || (Math.abs(x) < 0.001 && x !== 0) ? x.toExponential(2) : x.toFixed(3));

  // Colour scales: the stops come from attnlab (render/colormap.cpp), the same ones its SVG files use.
  // Viridis (perceptually uniform, readable with colour vision deficiency) for values of one sign; a
  // blue–white–orange diverging scale, centred on 0, for signed values.
  function ramp(stops, t) {
    t = Math.min(1, Math.max(0, Number.isFinite(t) ? t : 0));
    const x = t * (stops.length - 1), i = Math.min(stops.length - 2, Math.floor(x)), f = x - i;
    const a = stops[i], b = stops[i + 1];
    const c = [0, 1, 2].map((k) => Math.round(a[k] + (b[k] - a[k]) * f));
    return `rgb(${c[0]},${c[1]},${c[2]})`;
  }
  // Black or white, whichever contrasts more with an rgb(…) or #rrggbb fill (WCAG's relative luminance
  // and contrast ratio): at least 4.58 : 1 on any colour, so a number is readable on every cell.
  function luminance(fill) {
    const m = /^#([0-9a-f]{6})$/i.exec(fill);
    const c = m ? [0, 2, 4].map((k) => parseInt(m[1].slice(k, k + 2), 16)) : (fill.match(/\d+/g) || [255, 255, 255]).slice(0, 3).map(Number);
    const lin = c.map((x) => { x /= 255; return x <= 0.04045 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2];
  }
  const inkOn = (fill) => { const y = luminance(fill); return (y + 0.05) / 0.05 >= 1.05 / (y + 0.05) ? '#000' : '#fff'; };
  // A scale for a set of values: [colour(v), text colour(v), legend description].
  function scaleFor(values, isWeights) {
    let lo = Infinity, hi = -Infinity;
    for (const v of values) if (Number.isFinite(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
    if (!Number.isFinite(lo)) { lo = 0; hi = 1; }
    if (isWeights) { lo = 0; hi = 1; }
    if (lo < 0 && hi > 0) {
      const m = Math.max(-lo, hi);
      return { colour: (v) => ramp(meta.diverging, (v / m + 1) / 2), ink: (v) => inkOn(ramp(meta.diverging, (v / m + 1) / 2)),
               lo: -m, hi: m, stops: meta.diverging };
    }
    const span = hi - lo || 1;
    return { colour: (v) => ramp(meta.viridis, (v - lo) / span), ink: (v) => inkOn(ramp(meta.viridis, (v - lo) / span)),
             lo, hi, stops: meta.viridis };
  }
  function legend(scale) {
    const w = 160, h = 10, x0 = 64, s = sv('svg', { class: 'legend', width: w + x0 + 70, height: h + 16, role: 'img',
                                           'aria-label': `colour scale from ${fmt(scale.lo)} to ${fmt(scale.hi)}` });
    const n = 32;
    for (let i = 0; i < n; i++) s.append(sv('rect', { x: x0 + (i * w) / n, y: 2, width: w / n + 0.5, height: h, fill: ramp(scale.stops, i / (n - 1)) }));
    s.append(sv('text', { x: x0 - 4, y: h + 1, 'text-anchor': 'end', class: 'small', text: fmt(scale.lo) }));
    s.append(sv('text', { x: x0 + 4 + w, y: h + 1, class: 'small', text: fmt(scale.hi) }));
    return s;
  }

  // A labelled heatmap as SVG: one <rect class="cell"> per entry with data-r, data-c, data-v; values
  // printed in the cells when they fit; hovering a cell names its row, column and value.
  function heatmap(m, opts) {
    const rows = m.rows, cols = m.cols, data = m.data;
    const flat = [].concat(...data).map(num);
    const scale = scaleFor(flat, opts.weights);
    const rowLab = m.row_labels || [], colLab = m.col_labels || [];
    const longest = (a) => a.reduce((x, s) => Math.max(x, String(s).length), 1);
    const cut = (t) => (String(t).length > 24 ? `${String(t).slice(0, 23)}…` : String(t));  // the whole label is in the cell's tooltip
    const cell = opts.cell || (cols <= 12 ? 44 : cols <= 24 ? 26 : 18);
    // Column labels are turned 50°: a label of c characters (about 7.5 px each) rises c·7.5·sin 50° above
    // its column and reaches c·7.5·cos 50° to its right (up to 9 px a character for < and >), so the last one needs room right of the map.
    const lc = Math.min(24, longest(colLab)), lr = Math.min(24, longest(rowLab));
    const left = 12 + 9 * lr, top = 18 + 7 * lc;  // DejaVu Sans at 12 px: up to 9 px a character (< and > are the widest)
    const width = Math.ceil(left + cols * cell + Math.max(4, 5.8 * lc - cell / 2 + 6)), height = Math.ceil(top + rows * cell + 4);
    const svg = sv('svg', { class: 'heatmap', width, height, viewBox: `0 0 ${width} ${height}`, role: 'img',
                            'aria-label': m.title || 'heatmap', 'data-rows': rows, 'data-cols': cols });
    const readout = opts.readout;
    for (let j = 0; j < cols; j++) {
      const x = left + j * cell + cell / 2;
      svg.append(sv('text', { class: 'collabel', x, y: top - 6, transform: `rotate(-50 ${x} ${top - 6})`, text: cut(colLab[j] ?? j) }));
    }
    for (let i = 0; i < rows; i++) {
      svg.append(sv('text', { class: 'rowlabel', x: left - 6, y: top + i * cell + cell / 2 + 4, 'text-anchor': 'end', text: cut(rowLab[i] ?? i) }));
      for (let j = 0; j < cols; j++) {
        const raw = data[i][j], v = num(raw), finite = Number.isFinite(v);
        const r = sv('rect', { class: 'cell', x: left + j * cell, y: top + i * cell, width: cell - 1, height: cell - 1,
                                fill: finite ? scale.colour(v) : '#bdbdbd', 'data-r': i, 'data-c': j, 'data-v': raw });
        const t = sv('title', { text: `${rowLab[i] ?? i} → ${colLab[j] ?? j}: ${spell(raw, String)}` });
        r.append(t);
        if (readout) r.addEventListener('mouseenter', () => { readout.textContent = `${rowLab[i] ?? i} → ${colLab[j] ?? j}: ${spell(raw, fmt)}`; });
        svg.append(r);
        if (cell >= 40) {
          svg.append(sv('text', { class: 'value', x: left + j * cell + cell / 2, y: top + i * cell + cell / 2 + 4, 'text-anchor': 'middle',
                                  fill: finite ? scale.ink(v) : '#000', text: spell(raw, (x) => (Math.abs(x) >= 100 ? x.toFixed(0) : x.toFixed(2))) }));
        }
      }
    }
    const wrap = el('figure', { class: 'figure' });
    if (m.title) wrap.append(el('figcaption', { text: m.title }));
    wrap.append(svg, legend(scale));
    return wrap;
  }

  // ---- attention sets: head view and model view ----------------------------------------------------
  const HEAD_COLOURS = meta.head_colours;
  const headColour = (h) => HEAD_COLOURS[h % HEAD_COLOURS.length];
  const LINE_MIN = meta.line_min;  // weights below this draw no line (they would be invisible anyway)

  // What the reader picked (set, layer, heads, pinned token, model-view row), kept when a live page
  // draws a new sentence or model: the same set by name (else the first), and the same layer, heads and
  // token where the new one has them.
  let kept = null;
  function attentionView(sets) {
    // nq, nk, nh: the neuron view's query row, key column and head (indices), −1 until chosen.
    const state = { set: 0, layer: 0, heads: new Set(), pinned: null, focus: -1, nq: -1, nk: -1, nh: -1 };
    let restoreFocus = false;
    if (kept) {
      const k = Math.max(0, sets.findIndex((s) => s.name === kept.setName));
      {
        const s = sets[k];
        state.set = k;
        state.layer = kept.layer < s.layers.length ? kept.layer : 0;
        for (const h of kept.heads) if (h < s.heads.length) state.heads.add(h);
        state.pinned = kept.pinned !== null && kept.pinned < s.rows.length ? kept.pinned : null;
        if (kept.focus < s.rows.length) { state.focus = kept.focus; restoreFocus = true; }
        if (kept.nq < s.rows.length) state.nq = kept.nq;
        if (kept.nk < s.columns.length) state.nk = kept.nk;
        if (kept.nh < s.heads.length) state.nh = kept.nh;
      }
    }
    const keep = () => { kept = { setName: sets[state.set].name, layer: state.layer, heads: [...state.heads], pinned: state.pinned, focus: state.focus,
                                  nq: state.nq, nk: state.nk, nh: state.nh }; };
    const root = el('section', { id: 'attention' });
    const tabs = el('nav', { class: 'tabs', role: 'tablist' });
    const controls = el('div', { class: 'controls' });
    const headView = el('div', { class: 'headview' });
    const readout = el('div', { id: 'row-readout', class: 'readout', 'aria-live': 'polite' });
    const modelView = el('div', { class: 'modelview' });
    const neuron = el('div', { id: 'neuron', class: 'neuron' });
    const modelReadout = el('span', { id: 'model-readout', class: 'readout-line', 'aria-live': 'polite' });
    const modal = el('div', { id: 'modal', class: 'modal', hidden: '' });
    root.append(tabs, controls,
                el('h2', { text: 'Head view' }),
                el('p', { class: 'hint', text: 'Lines join each token on the left (the one attending) to the tokens on the right it attends to; thicker and darker means more weight, one colour per head. Hover a token on the left to see only its row, click it to keep it.' }),
                el('div', { class: 'headwrap' }, headView, readout),
                el('h2', { text: 'Neuron view' }),
                el('p', { class: 'hint', text: 'One weight explained end to end: the query vector q of one token and the key vector k of another, in one head, multiplied element by element and summed (q·k), divided by √d_k (the score), and that score among its row\u2019s scores through softmax (subtract the row\u2019s largest score, exponentiate, divide by the sum) to the weight.' }),
                neuron,
                el('h2', { text: 'Model view' }),
                el('p', { class: 'hint', text: 'Every layer (rows) and head (columns) at once. Pick a token to see only its row in each; click a map to open it large.' }),
                modelView, modal);

    sets.forEach((s, k) => {
      tabs.append(el('button', { class: 'tab', role: 'tab', 'data-set': k, 'aria-selected': k === 0 ? 'true' : 'false',
                                 onclick: () => { state.set = k; state.layer = 0; state.pinned = null; state.heads = new Set(); state.nq = state.nk = state.nh = -1; renderAll(); },
                                 text: s.name }));
    });
    if (sets.length < 2) tabs.hidden = true;
    const set = () => sets[state.set];
    function focusIndex(s) {  // the row that doc.focus names, if this set's rows hold it
      if (!doc.focus) return -1;
      const p = doc.focus.position;
      return s.kind !== 'cross' && Number.isInteger(p) && p < s.rows.length ? p : -1;
    }

    function renderControls() {
      const s = set();
      controls.replaceChildren();
      const layerSel = el('select', { id: 'layer', 'aria-label': 'layer',
                                      onchange: (e) => { state.layer = Number(e.target.value); renderHeadView(); } });
      s.layers.forEach((l, k) => layerSel.append(el('option', { value: k, text: `layer ${l}` })));
      layerSel.value = String(state.layer);
      controls.append(el('label', {}, 'Layer ', layerSel));
      const heads = el('span', { class: 'heads' }, 'Heads ');
      if (state.heads.size === 0) s.heads.forEach((_, k) => state.heads.add(k));
      s.heads.forEach((h, k) => {
        const box = el('input', { type: 'checkbox', 'data-head': k, onchange: (e) => {
          if (e.target.checked) state.heads.add(k); else state.heads.delete(k);
          renderHeadView();
        } });
        box.checked = state.heads.has(k);
        heads.append(el('label', { class: 'headbox' }, box, el('span', { class: 'swatch', style: `background:${headColour(h)}` }), `H${h}`));
        // One head alone: all heads drawn at once hide each other where their lines cross.
        heads.append(el('button', { type: 'button', class: 'solo', 'data-solo': k, 'aria-label': `show head ${h} alone`, text: 'alone',
                                    onclick: () => { state.heads = new Set([k]); state.nh = k; renderControls(); renderHeadView(); } }));  // the neuron view follows
      });
      if (s.heads.length > 1) {
        heads.append(el('button', { type: 'button', class: 'solo', 'data-solo': 'all', text: 'all heads',
                                    onclick: () => { state.heads = new Set(s.heads.map((_, k) => k)); renderControls(); renderHeadView(); } }));
      }
      controls.append(heads);
      const tokSel = el('select', { id: 'focus', 'aria-label': 'token row shown in the model view',
                                    onchange: (e) => { state.focus = Number(e.target.value); renderModelView(); } });
      tokSel.append(el('option', { value: -1, text: 'every row' }));
      s.rows.forEach((t, i) => tokSel.append(el('option', { value: i, text: `${i}: ${t}` })));
      tokSel.value = String(state.focus);
      controls.append(el('label', {}, 'Model view shows ', tokSel));
      const note = el('p', { class: 'setnote' });
      note.textContent = `${s.name}: ${s.description || ''}` + (s.kind === 'causal' ? ' Each token sees only itself and the tokens before it (the rest is masked: exactly 0).' : '');
      controls.append(note);
    }

    function renderHeadView() {
      keep();
      const s = set(), L = state.layer, n = s.rows.length, m = s.columns.length;
      const lh = 20, longest = (a) => a.reduce((x, t) => Math.max(x, String(t).length), 1);
      // Room for the longest token or the column's title, whichever is wider.
      const lw = Math.min(220, 12 + 7.5 * Math.max(longest(s.rows), 0.85 * String(s.row_title || '').length));
      const rw = Math.min(220, 12 + 7.5 * Math.max(longest(s.columns), 0.85 * String(s.column_title || '').length));
      const gap = 220, width = lw + gap + rw, height = Math.max(n, m) * lh + 30;
      const svg = sv('svg', { id: 'headsvg', width, height, viewBox: `0 0 ${width} ${height}`, role: 'img',
                              'aria-label': `${s.name}, layer ${s.layers[L]}`, 'data-line-min': LINE_MIN });
      svg.append(sv('text', { x: lw - 6, y: 12, 'text-anchor': 'end', class: 'small', text: s.row_title || 'attending' }));
      svg.append(sv('text', { x: lw + gap + 6, y: 12, class: 'small', text: s.column_title || 'attended to' }));
      const y = (i) => 30 + i * lh;
      const lines = sv('g', { class: 'lines' });
      svg.append(lines);
      for (const k of state.heads) {
        const W = s.weights[L][k], h = s.heads[k];
        for (let i = 0; i < n; i++) for (let j = 0; j < m; j++) {
          const w = W[i][j];
          if (!(w >= LINE_MIN)) continue;
          lines.append(sv('line', { class: 'edge', x1: lw, y1: y(i) - 4, x2: lw + gap, y2: y(j) - 4, stroke: headColour(h),
                                    'stroke-opacity': Math.min(1, 0.15 + 0.85 * w), 'stroke-width': 0.5 + 4 * w,
                                    'data-head': h, 'data-i': i, 'data-j': j, 'data-w': w }));
        }
      }
      const show = (i) => {
        for (const e of lines.children) e.classList.toggle('dim', i >= 0 && Number(e.dataset.i) !== i);
        for (const t of svg.querySelectorAll('text.left')) t.classList.toggle('active', Number(t.dataset.i) === i);
        renderReadout(i);
      };
      for (let i = 0; i < n; i++) {
        // A token is also a button for the keyboard: Tab reaches it (and shows its row), Enter or Space pins it.
        const t = sv('text', { class: 'tok left', x: lw - 6, y: y(i), 'text-anchor': 'end', 'data-i': i, text: s.rows[i],
                               tabindex: 0, role: 'button', 'aria-label': `${s.rows[i]} (row ${i}): show what it attends to` });
        const pin = () => {
          state.pinned = state.pinned === i ? null : i;
          keep();
          show(state.pinned ?? -1);
          if (state.pinned !== null && state.pinned !== state.nq) { state.nq = state.pinned; state.nk = -1; renderNeuron(); }  // the neuron view follows
        };
        t.addEventListener('mouseenter', () => show(i));
        t.addEventListener('mouseleave', () => show(state.pinned ?? -1));
        t.addEventListener('focus', () => show(i));
        t.addEventListener('blur', () => show(state.pinned ?? -1));
        t.addEventListener('click', pin);
        t.addEventListener('keydown', (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); pin(); } });
        svg.append(t);
      }
      for (let j = 0; j < m; j++) svg.append(sv('text', { class: 'tok right', x: lw + gap + 6, y: y(j), 'data-j': j, text: s.columns[j] }));
      headView.replaceChildren(svg);
      const start = state.pinned ?? focusIndex(s);
      if (start >= 0 && state.pinned === null && doc.focus) state.pinned = start;
      show(start);
      renderNeuron();
    }

    // ---- the neuron view: one weight from q and k ------------------------------------------------
    // Every number printed here is computed from the set's "vectors" (q and k as the model computed
    // them, attend/translate --vectors) and carries its unrounded value in data-v; the weight the model
    // itself reported (the set's "weights") is printed beside the one computed here.
    const f4 = (x) => (x === 0 || (Math.abs(x) >= 0.001 && Math.abs(x) < 1e5) ? x.toFixed(4) : x.toExponential(3));
    const numEl = (tag, cls, v, attrs) => el(tag, { class: `nv-num ${cls}`, 'data-v': v, text: f4(v), ...(attrs || {}) });
    // q, k or their product as a bar chart: one bar per dimension, up from 0 for a positive value and
    // down for a negative one, on a scale shared by the charts given the same `span`.
    function bars(name, label, values, span, colour) {
      const n = values.length, bw = Math.max(4, Math.min(14, Math.floor(640 / n))), h = 44, left = 120;
      const width = left + n * bw + 8, height = 2 * h + 20;
      const svg = sv('svg', { class: `bars bars-${name}`, width, height, viewBox: `0 0 ${width} ${height}`, role: 'img',
                              'aria-label': `${label}: ${n} numbers, from ${f4(Math.min(...values))} to ${f4(Math.max(...values))}` });
      svg.append(sv('text', { x: left - 8, y: h + 4, 'text-anchor': 'end', text: label }));
      svg.append(sv('line', { x1: left, x2: left + n * bw, y1: h + 0.5, y2: h + 0.5, stroke: '#888' }));
      values.forEach((v, d) => {
        const bh = span > 0 ? Math.min(h, (Math.abs(v) / span) * h) : 0;
        const r = sv('rect', { class: 'bar', x: left + d * bw, y: v >= 0 ? h - bh : h + 1, width: bw - 1, height: Math.max(0.5, bh),
                               fill: colour(v), 'data-d': d, 'data-v': v });
        r.append(sv('title', { text: `${label}, dimension ${d}: ${f4(v)}` }));
        svg.append(r);
      });
      for (let d = 0; d < n; d += 8) svg.append(sv('text', { class: 'small', x: left + d * bw, y: 2 * h + 14, text: d }));
      return svg;
    }

    function renderNeuron() {
      const s = set(), L = state.layer, vec = s.vectors;
      neuron.replaceChildren();
      if (!vec) {
        neuron.append(el('p', { class: 'note', text: meta.live
          ? 'This answer has no query and key vectors.'
          : 'This page has no query and key vectors: make it with --vectors (e.g. attnlab attend "…" --vectors --html page.html) to see one weight explained from q and k.' }));
        return;
      }
      const n = s.rows.length, m = s.columns.length, dk = vec.d_k;
      if (state.nq < 0 || state.nq >= n) state.nq = state.pinned ?? (focusIndex(s) >= 0 ? focusIndex(s) : Math.min(n - 1, 1));
      if (state.nh < 0 || state.nh >= s.heads.length) state.nh = state.heads.size ? Math.min(...state.heads) : 0;
      const causal = s.kind === 'causal';
      const visible = (j) => !causal || j <= state.nq;
      const W = s.weights[L][state.nh][state.nq];
      if (state.nk < 0 || state.nk >= m || !visible(state.nk)) {
        let best = 0;
        W.forEach((w, j) => { if (w > W[best]) best = j; });
        state.nk = best;
      }
      keep();
      const i = state.nq, j = state.nk, k = state.nh, h = s.heads[k];
      const q = vec.q[L][k][i], kv = vec.k[L][k][j];

      // The three choices; the layer is the head view's.
      const pick = (id, label, options, value, onchange) => {
        const sel = el('select', { id, 'aria-label': label, onchange: (e) => { onchange(Number(e.target.value)); renderNeuron(); } });
        options.forEach(([v, t, dis]) => { const o = el('option', { value: v, text: t }); if (dis) o.disabled = true; sel.append(o); });
        sel.value = String(value);
        return el('label', {}, `${label} `, sel);
      };
      neuron.append(el('div', { class: 'nvcontrols' },
        pick('nv-query', 'Query token', s.rows.map((t, r) => [r, `${r}: ${t}`]), i, (v) => { state.nq = v; if (!visible(state.nk)) state.nk = -1; }),
        pick('nv-key', 'Key token', s.columns.map((t, c) => [c, `${c}: ${t}` + (causal && c > i ? ' (masked)' : ''), causal && c > i]), j, (v) => { state.nk = v; }),
        pick('nv-head', 'Head', s.heads.map((hh, kk) => [kk, `H${hh}`]), k, (v) => { state.nh = v; }),
        el('span', { class: 'small', text: `layer ${s.layers[L]} (the head view's layer); d_k = ${dk}` })));

      // q, k and q⊙k as bars.
      const prod = q.map((x, d) => x * kv[d]);
      const span = Math.max(...q.map(Math.abs), ...kv.map(Math.abs));
      const pspan = Math.max(...prod.map(Math.abs));
      const div = () => (v) => (v >= 0 ? '#e08214' : '#8073ac');  // PuOr's two ends: the sign, the height the size
      const qLabel = `q of "${s.rows[i]}"`, kLabel = `k of "${s.columns[j]}"`;
      neuron.append(el('div', { class: 'nvbars' }, bars('q', qLabel, q, span, div(span)), bars('k', kLabel, kv, span, div(span)),
                       bars('prod', 'q × k', prod, pspan, div(pspan))));
      // The same numbers as a table, for reading and for the keyboard (the bars are pictures).
      const tbl = el('table', { class: 'nvtable' }, el('tr', {}, el('th', { text: 'dimension' }), el('th', { text: 'q' }), el('th', { text: 'k' }), el('th', { text: 'q × k' })));
      q.forEach((x, d) => tbl.append(el('tr', { 'data-d': d }, el('th', { text: d }), numEl('td', 'nv-q', x), numEl('td', 'nv-k', kv[d]), numEl('td', 'nv-prod', prod[d]))));
      neuron.append(el('details', { class: 'nvnumbers' }, el('summary', { text: `the ${dk} numbers of q, k and q × k` }), tbl));

      // The score: Σ (q × k), then ÷ √d_k.
      const scoreOf = (c) => {
        let dot = 0;
        const kc = vec.k[L][k][c];
        for (let d = 0; d < dk; d++) dot += q[d] * kc[d];
        return dot / Math.sqrt(dk);
      };
      let dot = 0;
      for (const x of prod) dot += x;
      const score = dot / Math.sqrt(dk);
      neuron.append(el('p', { class: 'nvscore' }, 'q · k = sum of the products = ', numEl('b', 'nv-dot', dot),
                       `; ÷ √${dk} = ${Math.sqrt(dk)}: score = `, numEl('b', 'nv-score', score)));

      // Where the score lands in its row's softmax.
      const scores = s.columns.map((_, c) => (visible(c) ? scoreOf(c) : -Infinity));
      let max = -Infinity;
      for (const x of scores) max = Math.max(max, x);
      const exps = scores.map((x) => (Number.isFinite(x) ? Math.exp(x - max) : 0));
      let sum = 0;
      for (const e of exps) sum += e;
      const row = el('table', { class: 'nvsoftmax', 'data-row': i, 'data-head': h, 'data-layer': s.layers[L] });
      row.append(el('tr', {}, el('th', { text: 'key' }), ...s.columns.map((t, c) => el('th', { class: c === j ? 'chosen' : '', text: t }))));
      const line = (title, cls, vals, spellMasked) => el('tr', { class: cls }, el('th', { text: title }), ...vals.map((v, c) => {
        if (!visible(c)) return el('td', { class: c === j ? 'chosen masked' : 'masked', 'data-c': c, text: spellMasked });
        return numEl('td', c === j ? 'chosen' : '', v, { 'data-c': c });
      }));
      row.append(line('score', 'nv-scores', scores, '−∞ (masked)'),
                 line('score − max', 'nv-shifted', scores.map((x) => x - max), '−∞'),
                 line('exp(score − max)', 'nv-exps', exps, '0'),
                 line('weight = exp ÷ sum', 'nv-weights', exps.map((e) => e / sum), '0'));
      // A column's key can be chosen from the table too (a button per key, reachable with Tab).
      row.append(el('tr', { class: 'nv-choose' }, el('th', { text: '' }), ...s.columns.map((t, c) => el('td', {},
        visible(c) ? el('button', { type: 'button', class: 'nvkey', 'data-c': c, 'aria-label': `explain the weight on key ${c}: ${t}`, text: '↑',
                                    onclick: () => { state.nk = c; renderNeuron(); neuron.querySelector(`button.nvkey[data-c="${c}"]`)?.focus(); } }) : ''))));
      const weight = exps[j] / sum;
      neuron.append(el('div', { class: 'nvrow' }, row));
      neuron.append(el('p', { class: 'nvsum' }, 'row maximum = ', numEl('b', 'nv-max', max), '; sum of exp = ', numEl('b', 'nv-sum', sum),
                       `; weight of "${s.rows[i]}" on "${s.columns[j]}" = `, numEl('b', 'nv-exp', exps[j]), ' ÷ ', numEl('b', 'nv-sum2', sum),
                       ' = ', numEl('b', 'nv-weight', weight), '; the model reported ', numEl('b', 'nv-model-weight', W[j]),
                       ` (H${h}, layer ${s.layers[L]}; weights are stored with 6 decimals).`));
    }

    // The highlighted row, as numbers: one table row per selected head, one cell per column token, each
    // cell carrying its exact weight in data-w (the value in the JSON).
    function renderReadout(i) {
      const s = set(), L = state.layer;
      readout.replaceChildren();
      if (i < 0) { readout.append(el('p', { class: 'hint', text: 'Hover a token on the left.' })); return; }
      readout.append(el('p', { class: 'rowtitle', text: `"${s.rows[i]}" (row ${i}), layer ${s.layers[L]}` }));
      const table = el('table', { class: 'rowtable', 'data-row': i, 'data-layer': s.layers[L] });
      const head = el('tr', {}, el('th', { text: '' }));
      s.columns.forEach((c) => head.append(el('th', { text: c })));
      table.append(head);
      for (const k of [...state.heads].sort((a, b) => a - b)) {
        const h = s.heads[k];
        const tr = el('tr', { 'data-head': h }, el('th', {}, el('span', { class: 'swatch', style: `background:${headColour(h)}` }), `H${h}`));
        s.weights[L][k][i].forEach((w, j) => {
          const td = el('td', { 'data-j': j, 'data-w': w, text: (w * 100).toFixed(1) });
          td.style.background = ramp(meta.viridis, w);
          td.style.color = inkOn(ramp(meta.viridis, w));
          tr.append(td);
        });
        table.append(tr);
      }
      readout.append(table, el('p', { class: 'small', text: 'percent of the row’s attention; each row sums to 100' }));
    }

    function thumb(s, L, k, size) {
      const n = s.rows.length, m = s.columns.length, W = s.weights[L][k];
      const c = el('canvas', { class: 'thumb', width: size, height: size, 'data-layer': s.layers[L], 'data-head': s.heads[k],
                               'aria-label': `layer ${s.layers[L]} head ${s.heads[k]}`, role: 'img' });
      // Hovering a map names the cell under the pointer: its row and column tokens and its weight.
      c.addEventListener('mousemove', (e) => {
        const r = c.getBoundingClientRect(), j = Math.min(m - 1, Math.floor(((e.clientX - r.left) / r.width) * m));
        const i = state.focus >= 0 ? state.focus : Math.min(n - 1, Math.floor(((e.clientY - r.top) / r.height) * n));
        if (i < 0 || j < 0) return;
        modelReadout.dataset.layer = s.layers[L]; modelReadout.dataset.head = s.heads[k];
        modelReadout.dataset.i = i; modelReadout.dataset.j = j; modelReadout.dataset.w = W[i][j];
        modelReadout.textContent = `layer ${s.layers[L]} head ${s.heads[k]}: "${s.rows[i]}" → "${s.columns[j]}": ${W[i][j].toFixed(3)}`;
        c.title = modelReadout.textContent;
      });
      const g = c.getContext('2d');
      g.fillStyle = '#fff';
      g.fillRect(0, 0, size, size);
      if (state.focus >= 0) {  // one row, drawn as a bar per column, tallest where the token looks
        const i = state.focus, bw = size / m;
        for (let j = 0; j < m; j++) {
          const w = W[i][j];
          g.fillStyle = ramp(meta.viridis, w);
          g.fillRect(j * bw, size * (1 - w), Math.max(1, bw - 1), size * w);
        }
      } else {
        const cw = size / m, ch = size / n;
        for (let i = 0; i < n; i++) for (let j = 0; j < m; j++) {
          g.fillStyle = ramp(meta.viridis, W[i][j]);
          g.fillRect(j * cw, i * ch, Math.ceil(cw), Math.ceil(ch));
        }
      }
      return c;
    }

    function renderModelView() {
      keep();
      const s = set();
      modelView.replaceChildren(el('div', { class: 'modelkey' }, el('span', { class: 'small', text: 'weight' }), legend(scaleFor([], true)), modelReadout));
      modelReadout.textContent = 'Hover a map to read a cell: its tokens and weight.';
      for (const a of ['layer', 'head', 'i', 'j', 'w']) delete modelReadout.dataset[a];
      const size = s.heads.length > 8 ? 80 : 110;
      const grid = el('div', { class: 'grid', style: `grid-template-columns: 4em repeat(${s.heads.length}, ${size + 8}px)` });
      grid.append(el('div', {}));
      s.heads.forEach((h) => grid.append(el('div', { class: 'gridhead' }, el('span', { class: 'swatch', style: `background:${headColour(h)}` }), `H${h}`)));
      s.layers.forEach((l, L) => {
        grid.append(el('div', { class: 'gridhead', text: `L${l}` }));
        s.heads.forEach((h, k) => {
          const cellDiv = el('button', { class: 'gridcell', 'data-layer': l, 'data-head': h, 'aria-label': `layer ${l} head ${h}: open it large, with its labels`,
                                         onclick: () => openLarge(L, k) });
          cellDiv.addEventListener('focus', () => { modelReadout.textContent = `layer ${l} head ${h}: Enter opens it large, with its labels`; });
          cellDiv.append(thumb(s, L, k, size));
          if (state.focus >= 0) {
            const row = s.weights[L][k][state.focus];
            let best = 0;
            row.forEach((w, j) => { if (w > row[best]) best = j; });
            cellDiv.append(el('span', { class: 'top', 'data-j': best, 'data-w': row[best], text: `${s.columns[best]} ${(row[best] * 100).toFixed(0)}%` }));
          }
          grid.append(cellDiv);
        });
      });
      modelView.append(grid);
    }

    function openLarge(L, k) {
      const s = set();
      const readoutLine = el('p', { class: 'readout-line', text: 'Hover a cell for its value.' });
      const m = { rows: s.rows.length, cols: s.columns.length, data: s.weights[L][k], row_labels: s.rows, col_labels: s.columns,
                  title: `${s.name}, layer ${s.layers[L]} head ${s.heads[k]} (rows attend to columns)` };
      const close = el('button', { class: 'close', text: 'Close', onclick: () => { modal.hidden = true; } });
      modal.replaceChildren(el('div', { class: 'modalbox', role: 'dialog', 'aria-label': m.title }, close,
                               heatmap(m, { weights: true, readout: readoutLine }), readoutLine));
      modal.hidden = false;
      close.focus();  // for the keyboard: Enter or Escape closes it
    }
    modal.addEventListener('click', (e) => { if (e.target === modal) modal.hidden = true; });
    document.addEventListener('keydown', (e) => { if (e.key === 'Escape') modal.hidden = true; });

    function renderAll() {
      for (const b of tabs.children) b.setAttribute('aria-selected', Number(b.dataset.set) === state.set ? 'true' : 'false');
      if (!restoreFocus) state.focus = focusIndex(set());
      restoreFocus = false;
      renderControls();
      renderHeadView();
      renderModelView();
    }
    renderAll();
    return root;
  }

  // ---- lessons -------------------------------------------------------------------------------------
  // The lesson's Markdown-ish text: paragraphs, "- " lists and `code`; everything else as plain text.
  function prose(text) {
    const out = el('div', { class: 'prose' });
    const inline = (s) => {
      const p = el('span');
      s.split(/(`[^`]+`)/).forEach((part) => {
        if (part.startsWith('`') && part.endsWith('`') && part.length > 1) p.append(el('code', { text: part.slice(1, -1) }));
        else p.append(part);
      });
      return p;
    };
    for (const para of text.split(/\n\s*\n/)) {
      const lines = para.split('\n').filter((l) => l.trim() !== '');
      if (lines.length === 0) continue;
      if (lines.every((l) => /^\s*([-*]|\d+\.)\s/.test(l))) {
        const ul = el('ul');
        lines.forEach((l) => ul.append(el('li', {}, inline(l.replace(/^\s*([-*]|\d+\.)\s/, '')))));
        out.append(ul);
      } else if (lines.every((l) => /^ {2,}/.test(l))) {
        out.append(el('pre', { text: lines.join('\n') }));
      } else {
        out.append(el('p', {}, inline(lines.join(' '))));
      }
    }
    return out;
  }

  function lessonView(lessons) {
    const root = el('section', { id: 'lessons' });
    const toc = el('nav', { class: 'toc' });
    root.append(toc);
    lessons.forEach((lesson) => {
      const id = `lesson-${lesson.number}`;
      toc.append(el('a', { href: `#${id}`, text: `${lesson.number}. ${lesson.title}` }));
      const sec = el('article', { class: 'lesson', id, 'data-lesson': lesson.number });
      sec.append(el('h2', { text: `Lesson ${lesson.number}: ${lesson.title}` }));
      if (lesson.status) sec.append(el('pre', { class: 'status', text: lesson.status }));
      for (const b of lesson.intro || []) if (b.type === 'text') sec.append(prose(b.text));
      (lesson.steps || []).forEach((step, si) => {
        const st = el('section', { class: 'step', 'data-step': si + 1 });
        st.append(el('h3', { text: `Step ${si + 1}: ${step.title}` }));
        const body = el('div', { class: 'stepbody' });
        const words = el('div', { class: 'stepwords' }), figs = el('div', { class: 'stepfigs' });
        for (const b of step.blocks || []) {
          if (b.type === 'text') { words.append(prose(b.text)); continue; }
          if (b.type !== 'show') continue;
          for (const m of b.matrices || []) {
            const readoutLine = el('p', { class: 'readout-line', text: '' });
            const fig = heatmap(m, { weights: m.kind === 'weights', readout: readoutLine });
            fig.setAttribute('data-key', m.key);
            fig.append(readoutLine);
            figs.append(fig);
          }
          const lines = (b.lines || []).filter((l) => l !== '');
          if (lines.length) figs.append(el('pre', { class: 'lines', text: (b.lines || []).join('\n') }));
        }
        body.append(words, figs);
        st.append(body);
        sec.append(st);
      });
      root.append(sec);
    });
    return root;
  }

  // ---- the page ------------------------------------------------------------------------------------
  // The live box: a sentence and a model, sent to the `attnlab serve` that served the page (its
  // /api/attend for a language model, /api/translate?attention=1 for a translation model); the answer
  // is drawn in place of the document. A page written with --html has the same box, hidden.
  const subtitle = el('p', { class: 'subtitle', text: meta.subtitle || '' });
  if (!meta.subtitle) subtitle.hidden = true;
  const modelName = (d) => (d && d.model && typeof d.model === 'object' ? d.model : null);
  const sentence = el('input', { id: 'live-sentence', type: 'text', size: 60, 'aria-label': 'sentence',
                                 value: 'The animal did not cross the street because it was too tired.' });
  const modelSel = el('select', { id: 'live-model', 'aria-label': 'model' });
  const status = el('span', { id: 'live-status', class: 'small', 'aria-live': 'polite' });
  const modelInfo = el('p', { id: 'live-model-info', class: 'small' });
  const form = el('form', { id: 'live', class: 'live' },
                  el('label', {}, 'Sentence ', sentence), ' ', el('label', {}, 'Model ', modelSel), ' ',
                  el('button', { type: 'submit', id: 'live-go', text: 'Show' }), ' ', status, modelInfo);
  if (!meta.live) form.hidden = true;
  const content = el('div', { id: 'content' });
  const footer = el('footer', { text: meta.live
    ? `Served by attnlab ${meta.version} (\`${meta.command}\`): each drawing is the JSON of the server's /api/attend or /api/translate, the same as attnlab attend or translate prints with --format json.`
    : `Made by attnlab ${meta.version} from the JSON of \`${meta.command}\` (embedded in this file).` });
  document.title = meta.title;
  app.append(el('header', {}, el('h1', { text: meta.title }), subtitle,
                ...(meta.notes || []).map((n) => el('p', { class: 'note', text: n })), form),
             content, footer);

  // ---- a training timeline: the curves, and a step slider over the attention of each snapshot -------
  function timelineView(snaps) {
    const root = el('section', { id: 'timeline' });
    const n = snaps.length;
    const W = 640, H = 150, pad = 34;
    const x = (i) => pad + (n > 1 ? (i * (W - 2 * pad)) / (n - 1) : (W - 2 * pad) / 2);
    const svg = sv('svg', { id: 'timeline-curves', viewBox: `0 0 ${W} ${H + 38}`, width: W, height: H + 38, role: 'img',
                            'aria-label': 'training loss and alignment error against the step' });
    const series = [
      { name: 'training loss', colour: '#1f77b4', get: (s) => s.loss },
      { name: 'alignment error', colour: '#d62728',
        get: (s) => (s.summary && s.summary.alignment_error ? s.summary.alignment_error.rate : null) },
    ];
    series.forEach((se, k) => {
      const vals = snaps.map(se.get);
      const nums = vals.filter((v) => typeof v === 'number');
      if (!nums.length) return;
      const lo = Math.min(...nums), hi = Math.max(...nums);
      const y = (v) => (hi > lo ? pad / 2 + ((hi - v) * (H - pad)) / (hi - lo) : H / 2);
      const pts = vals.map((v, i) => (typeof v === 'number' ? `${x(i)},${y(v)}` : null)).filter(Boolean);
      svg.append(sv('polyline', { points: pts.join(' '), fill: 'none', stroke: se.colour, 'stroke-width': 2, class: 'curve',
                                  'data-series': se.name }));
      vals.forEach((v, i) => { if (typeof v === 'number') svg.append(sv('circle', { cx: x(i), cy: y(v), r: 3, fill: se.colour })); });
      const t = sv('text', { x: pad + k * 200, y: H + 34, fill: se.colour, 'font-size': 12 });
      t.textContent = `${se.name} (${lo.toFixed(3)} to ${hi.toFixed(3)})`;
      svg.append(t);
    });
    snaps.forEach((s, i) => svg.append(sv('text', { x: x(i), y: H + 14, 'font-size': 10, 'text-anchor': 'middle', class: 'steplabel',
                                                    fill: '#555', text: String(s.step) })));
    const cursor = sv('line', { id: 'timeline-cursor', y1: 0, y2: H, stroke: '#888', 'stroke-dasharray': '3 3' });
    svg.append(cursor);
    const slider = el('input', { id: 'step-slider', type: 'range', min: 0, max: n - 1, step: 1, value: n - 1,
                                 'aria-label': 'snapshot', style: `width: ${W - 2 * pad}px` });
    const readout = el('p', { id: 'step-readout', 'aria-live': 'polite' });
    const view = el('div', { id: 'timeline-attention' });
    function show(i) {
      const s = snaps[i];
      cursor.setAttribute('x1', x(i));
      cursor.setAttribute('x2', x(i));
      const loss = typeof s.loss === 'number' ? s.loss.toFixed(4) : '–';
      readout.textContent = `step ${s.step} (snapshot ${i + 1} of ${n}) · loss ${loss} · translation: ${s.translation || '(nothing)'}`;
      root.setAttribute('data-step', String(s.step));
      view.replaceChildren(Array.isArray(s.attention) && s.attention.length ? attentionView(s.attention)
                                                                           : el('p', { class: 'note', text: 'No attention in this snapshot.' }));
    }
    slider.addEventListener('input', () => show(Number(slider.value)));
    root.append(el('h2', { text: 'How attention formed during training' }), svg,
                el('div', { class: 'controls' }, el('label', { for: 'step-slider', text: 'Step ' }), slider), readout, view);
    show(n - 1);
    return root;
  }

  function draw(d) {
    doc = d;
    if (Array.isArray(doc.snapshots) && doc.snapshots.length) content.replaceChildren(timelineView(doc.snapshots));
    else if (Array.isArray(doc.attention) && doc.attention.length) content.replaceChildren(attentionView(doc.attention));
    else if (Array.isArray(doc.lessons)) content.replaceChildren(lessonView(doc.lessons));
    else content.replaceChildren(el('p', { class: 'note', text: meta.live ? 'Type a sentence and press Enter.' : 'This JSON has no attention weights or lessons to show.' }));
  }

  let models = [];
  let asked = 0;  // the latest request: an older answer arriving late is not drawn over a newer one
  async function ask() {
    const m = models.find((x) => x.name === modelSel.value);
    if (!m) return;
    const api = m.task === 'translation' ? 'translate' : 'attend';
    const q = new URLSearchParams({ sentence: sentence.value, model: m.name });
    if (api === 'translate') q.set('attention', '1');
    q.set('vectors', '1');  // the neuron view's q and k
    const mine = ++asked;
    status.textContent = 'working…';
    document.body.removeAttribute('data-ready');
    try {
      const r = await fetch(`/api/${api}`, { method: 'POST', headers: { 'Content-Type': 'application/json' },
                                             body: JSON.stringify(Object.fromEntries(q)) });
      const d = await r.json();
      if (mine !== asked) return;
      if (!r.ok) { status.textContent = d.error || `HTTP ${r.status}`; return; }
      draw(d);
      const shown = modelName(d);
      subtitle.textContent = shown ? `Model: ${shown.name} (${shown.description})` : '';
      subtitle.hidden = !shown;
      status.textContent = api === 'translate' ? `→ ${d.translation}` : '';
      document.title = `attnlab: ${sentence.value}`;
    } catch (e) {
      if (mine === asked) status.textContent = `no answer from attnlab serve (${e.message})`;
    } finally {
      if (mine === asked) document.body.setAttribute('data-ready', '1');
    }
  }
  form.addEventListener('submit', (e) => { e.preventDefault(); ask(); });
  modelSel.addEventListener('change', () => {
    const m = models.find((x) => x.name === modelSel.value);
    modelInfo.textContent = m ? `${m.name}: ${m.task}; ${m.description}` : '';
    ask();
  });

  draw(doc);
  if (meta.live) {
    fetch('/api/models').then((r) => r.json()).then((list) => {
      models = list.models || [];
      for (const m of models) modelSel.append(el('option', { value: m.name, text: `${m.name} (${m.task})`, title: m.description }));
      const first = (list.defaults && list.defaults.translate) || (models[0] && models[0].name);
      if (first) modelSel.value = first;
      const m = models.find((x) => x.name === modelSel.value);
      modelInfo.textContent = m ? `${m.name}: ${m.task}; ${m.description}` : '';
      ask();
    }).catch((e) => { status.textContent = `no answer from attnlab serve (${e.message})`; document.body.setAttribute('data-ready', '1'); });
  } else {
    document.body.setAttribute('data-ready', '1');
  }
})();

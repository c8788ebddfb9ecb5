// Canvas: every memory as a dot on a 2D <canvas>. Layouts (clusters, graph with real
// repulsion, timeline, heat) ease into each other; colour by topic, agent, strength or
// heat; zoom, pan, hover, click to inspect. The time scrubber asks the server for
// `asof:` views, so memories dropped since reappear (ringed) as they were.
import { api } from './api.js';
import { AMBER, CONFLICT, GREY, LIME, ago, date, debounce, h, hashColor, num, pct, replace, strengthColor, plural, visible as visibleText } from './dom.js';
import { DotStamper, hasGpuCanvas } from './dots.js';
import * as inspector from './inspector.js';
import { ForceSim, clustersLayout, heatLayout, timelineLayout } from './layouts.js';
import { searchNotes } from './notes.js';
import { setToken } from './query.js';
import { agentColor, fail, on, searchParams, state } from './state.js';

const LIMIT = 5000;
const EASE = 0.16;
const LAYOUTS = {
  clusters: 'One disc per cluster; disc area grows with its memories. Position inside a disc means nothing.',
  graph: 'Force-directed: every memory repels every other, links and open conflicts pull pairs together, each cluster has a weak anchor.',
  timeline: 'Left to right by when it was written, one lane per cluster.',
  heat: 'Right: retrieved often. Up: strong. Bottom-left is what nobody reads and is fading.',
};
const COLOR_MODES = ['topic', 'agent', 'strength', 'heat'];
// Per-screen settings, kept while the page lives.
const local = { layout: 'clusters', color: 'topic', kind: 'claim', links: true, labels: true, minStrength: 0, minReads: 0, hidden: new Set() };

export function mount(root) {
  // ---------------------------------------------------------------- DOM
  const cv = h('canvas', { class: 'cv', 'aria-label': 'memory canvas' });
  const tip = h('div', { class: 'cv-tip', hidden: true });
  const legend = h('div', { class: 'cv-legend' });
  const note = h('div', { class: 'cv-note small dim' });
  const overlay = h('div', { class: 'cv-overlay', hidden: true });
  const controls = h('div', { class: 'cv-controls' });
  // The search box's query runs here too: its warnings go over the dots they are about.
  const notes = searchNotes('cv-search-notes');
  const stage = h('div', { class: 'cv-stage' }, cv, tip, legend, note, controls, overlay, notes.el);
  const toolbar = h('div', { class: 'cv-toolbar' });
  const zoomPct = h('span', { class: 'mono small zoom-pct', text: '100%' });
  const scrub = h('div', { class: 'scrubber' });
  root.append(h('div', { class: 'screen canvas-screen' }, toolbar, stage, scrub));
  // Without a GPU, dots are stamped into the pixel buffer (see dots.js); with one, the
  // browser's vector path is faster.
  const soft = !hasGpuCanvas();
  const ctx = cv.getContext('2d', { alpha: false, willReadFrequently: soft });
  let renderer = soft ? 'pixels' : 'vector';
  const stamper = new DotStamper();

  // ---------------------------------------------------------------- state
  let nodes = [];
  let byId = new Map();
  let links = [];
  let visible = [];
  let total = 0;
  let maxHits = 1;
  let laneInfo = null;
  let heatAxis = null; // set when the heat axes are painted (see heatAxis() below)
  let sim = null;
  let W = 0, H = 0, DPR = 1;
  const fit = { cx: 0, cy: 0, s: 1 };
  const fitTarget = { cx: 0, cy: 0, s: 1 };
  const user = { zoom: 1, panX: 0, panY: 0 };
  let hover = null;
  let focusId = null;
  let dirty = true;
  let moving = false;
  let raf = 0;
  let alive = true;
  let draws = 0;
  let timeline = null;
  let asof = null; // epoch ms, null = now
  let scrubPos = 1000;
  let playing = 0;
  let inflight = false;
  let queued = false;
  let loadSeq = 0;

  // ---------------------------------------------------------------- toolbar
  function seg(label, options, value, onpick) {
    return h('div', { class: 'seg', role: 'group', 'aria-label': label },
      h('span', { class: 'seg-label', text: label }),
      options.map(([v, text]) => h('button', { type: 'button', class: `seg-btn${v === value ? ' on' : ''}`, 'aria-pressed': v === value ? 'true' : 'false',
        dataset: { value: v }, onclick: () => onpick(v) }, text)));
  }

  function paintToolbar() {
    const strengthIn = h('input', { type: 'range', min: 0, max: 95, step: 5, value: String(local.minStrength), 'aria-label': 'minimum strength' });
    const strengthOut = h('span', { class: 'mono small', text: `≥${local.minStrength}` });
    strengthIn.addEventListener('input', () => { local.minStrength = Number(strengthIn.value); strengthOut.textContent = `≥${local.minStrength}`; applyFilters(); });
    const readsIn = h('input', { type: 'range', min: 0, max: 120, step: 4, value: String(local.minReads), 'aria-label': 'minimum reads' });
    const readsOut = h('span', { class: 'mono small', text: `≥${local.minReads}` });
    readsIn.addEventListener('input', () => { local.minReads = Number(readsIn.value); readsOut.textContent = `≥${local.minReads}`; applyFilters(); });
    replace(toolbar,
      seg('LAYOUT', Object.keys(LAYOUTS).map((k) => [k, k.toUpperCase()]), local.layout, (v) => { local.layout = v; paintToolbar(); relayout(true); }),
      seg('COLOUR', COLOR_MODES.map((k) => [k, k.toUpperCase()]), local.color, (v) => { local.color = v; paintToolbar(); recolor(); }),
      seg('SHOW', [['claim', 'CLAIMS'], ['all', 'ALL'], ['chunk', 'CHUNKS']], local.kind, (v) => { local.kind = v; paintToolbar(); load(); }),
      h('label', { class: 'slider-f' }, h('span', { class: 'seg-label', text: 'STRENGTH' }), strengthIn, strengthOut),
      h('label', { class: 'slider-f' }, h('span', { class: 'seg-label', text: 'READS' }), readsIn, readsOut));
    replace(controls,
      h('div', { class: 'seg' },
        h('button', { type: 'button', class: `seg-btn${local.links ? ' on' : ''}`, 'aria-pressed': String(local.links), onclick: () => { local.links = !local.links; paintToolbar(); dirty = true; } }, 'LINKS'),
        h('button', { type: 'button', class: `seg-btn${local.labels ? ' on' : ''}`, 'aria-pressed': String(local.labels), onclick: () => { local.labels = !local.labels; paintToolbar(); dirty = true; } }, 'LABELS')),
      h('div', { class: 'seg zoom' },
        h('button', { type: 'button', class: 'seg-btn', title: 'zoom out', 'aria-label': 'zoom out', onclick: () => zoomBy(1 / 1.4) }, '−'),
        zoomPct,
        h('button', { type: 'button', class: 'seg-btn', title: 'zoom in', 'aria-label': 'zoom in', onclick: () => zoomBy(1.4) }, '+'),
        h('button', { type: 'button', class: 'seg-btn', title: 'fit (double-click)', onclick: resetView }, 'FIT')));
    note.textContent = LAYOUTS[local.layout];
  }

  // ---------------------------------------------------------------- data
  function queryFor(at) {
    const q = state.query || '';
    return at === null ? q : setToken(q, 'asof', new Date(at).toISOString());
  }

  async function load() {
    if (inflight) { queued = true; return; }
    inflight = true;
    const mine = ++loadSeq;
    const at = asof;
    try {
      const res = await api.graph(searchParams({ q: queryFor(at), kind: local.kind, limit: LIMIT }));
      if (!alive || mine !== loadSeq) return;
      notes.show(res.warnings);
      ingest(res, at);
    } catch (e) {
      if (alive) {
        notes.clear();
        overlay.hidden = false;
        replace(overlay, h('p', { class: 'err', text: e.message }));
        if (e.kind !== 'invalid-query') fail(e);
      }
    } finally {
      inflight = false;
      if (queued && alive) { queued = false; load(); }
    }
  }

  function ingest(res, at) {
    const next = new Map();
    const list = [];
    for (const d of res.nodes) {
      let n = byId.get(d.id);
      if (n) Object.assign(n, d);
      else n = { ...d, x: NaN, y: NaN, tx: 0, ty: 0, placed: false };
      next.set(d.id, n);
      list.push(n);
    }
    nodes = list;
    byId = next;
    links = res.links.map((l) => [byId.get(l.a), byId.get(l.b), l.kind]).filter((l) => l[0] && l[1]);
    total = res.total;
    maxHits = 1;
    for (const n of nodes) if (n.hits > maxHits) maxHits = n.hits;
    for (const n of nodes) n.r = 2.2 + 4.8 * Math.sqrt(n.hits / maxHits);
    overlay.hidden = nodes.length > 0;
    if (!nodes.length) {
      replace(overlay, h('div', { class: 'empty' },
        h('div', { class: 'empty-title mono', text: at !== null ? 'NOTHING YET' : 'NOTHING MATCHES' }),
        h('p', { class: 'dim', text: at !== null ? `The store held nothing matching on ${date(at)}.` : 'Widen the search or switch SHOW to ALL.' })));
    }
    recolor(false);
    applyFilters(false);
    relayout(false);
    paintScrub();
  }

  // ---------------------------------------------------------------- filters, colour, layout
  function applyFilters(re = true) {
    // The slider's number is the strength people see (pct: 0.4999 shows as 50, so ≥50 keeps it).
    visible = nodes.filter((n) => pct(n.strength) >= local.minStrength && n.hits >= local.minReads && !local.hidden.has(n.cluster));
    for (const n of nodes) n.vis = false;
    for (const n of visible) n.vis = true;
    paintLegend();
    paintCount();
    if (re) relayout(false);
    dirty = true;
  }

  function colorOf(n) {
    switch (local.color) {
      case 'agent': return agentColor(n.writer) || hashColor(n.writer);
      case 'strength': return strengthColor(n.strength);
      case 'heat': return n.hits > 60 ? LIME : n.hits > 12 ? AMBER : GREY;
      default: return n.color;
    }
  }

  function recolor(paint = true) {
    for (const n of nodes) n.col = colorOf(n);
    if (paint) paintLegend();
    dirty = true;
  }

  function relayout(animate) {
    sim = null;
    laneInfo = null;
    const vis = visible;
    if (local.layout === 'clusters') clustersLayout(vis);
    else if (local.layout === 'timeline') laneInfo = timelineLayout(vis, [...state.clusters].sort((a, b) => (a.label < b.label ? -1 : 1)));
    else if (local.layout === 'heat') heatLayout(vis);
    else if (local.layout === 'graph') {
      const index = new Map(vis.map((n, i) => [n, i]));
      const pairs = links.filter(([a, b]) => index.has(a) && index.has(b)).map(([a, b]) => [index.get(a), index.get(b)]);
      sim = new ForceSim(vis, pairs);
      // A head start so the first frames already show structure.
      const t0 = performance.now();
      while (!sim.done && performance.now() - t0 < 30) sim.tick();
      sim.commit();
    }
    for (const n of vis) {
      if (!n.placed || !Number.isFinite(n.x)) { n.x = n.tx; n.y = n.ty; n.placed = true; }
    }
    computeFit(!animate);
    dirty = true;
  }

  function computeFit(snap) {
    let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    for (const n of visible) {
      if (n.tx < x0) x0 = n.tx; if (n.tx > x1) x1 = n.tx;
      if (n.ty < y0) y0 = n.ty; if (n.ty > y1) y1 = n.ty;
    }
    if (!Number.isFinite(x0)) { x0 = -100; x1 = 100; y0 = -100; y1 = 100; }
    if (local.layout === 'heat') { x0 = Math.min(x0, 0); x1 = Math.max(x1, 1000); y0 = Math.min(y0, (0.5 - 0.99) * 620); y1 = Math.max(y1, (0.5 - 0.15) * 620); }
    if (local.layout === 'timeline') { x0 = Math.min(x0, 0); x1 = Math.max(x1, 1100); }
    // Screen padding: room for lane labels or the strength axis on the left, the legend on
    // the right, axis captions and the layout note at the bottom.
    const padL = local.layout === 'timeline' ? 150 : local.layout === 'heat' ? 84 : 40;
    const padR = legend.offsetWidth ? legend.offsetWidth + 36 : 40;
    const padT = 40;
    const padB = local.layout === 'heat' || local.layout === 'timeline' ? 80 : 56;
    const w = Math.max(1, W - padL - padR);
    const hgt = Math.max(1, H - padT - padB);
    const s = Math.min(w / Math.max(x1 - x0, 1), hgt / Math.max(y1 - y0, 1), 6);
    fitTarget.s = s;
    // Centre of the data lands at the centre of the padded box.
    const boxCx = padL + w / 2, boxCy = padT + hgt / 2;
    fitTarget.cx = (x0 + x1) / 2 - (boxCx - W / 2) / s;
    fitTarget.cy = (y0 + y1) / 2 - (boxCy - H / 2) / s;
    if (snap || !Number.isFinite(fit.s) || fit.s === 1) Object.assign(fit, fitTarget);
  }

  // ---------------------------------------------------------------- view transform
  const sx = (x) => (x - fit.cx) * fit.s * user.zoom + W / 2 + user.panX;
  const sy = (y) => (y - fit.cy) * fit.s * user.zoom + H / 2 + user.panY;
  const wx = (px) => (px - W / 2 - user.panX) / (fit.s * user.zoom) + fit.cx;
  const wy = (py) => (py - H / 2 - user.panY) / (fit.s * user.zoom) + fit.cy;

  function zoomAt(factor, px, py) {
    const z = Math.max(0.5, Math.min(24, user.zoom * factor));
    const x = wx(px), y = wy(py);
    user.zoom = z;
    user.panX = px - W / 2 - (x - fit.cx) * fit.s * z;
    user.panY = py - H / 2 - (y - fit.cy) * fit.s * z;
    zoomPct.textContent = `${Math.round(z * 100)}%`;
    dirty = true;
  }

  function zoomBy(f) { zoomAt(f, W / 2, H / 2); }

  function resetView() {
    user.zoom = 1; user.panX = 0; user.panY = 0;
    zoomPct.textContent = '100%';
    dirty = true;
  }

  function resize() {
    const r = stage.getBoundingClientRect();
    DPR = window.devicePixelRatio || 1;
    W = Math.max(100, r.width);
    H = Math.max(100, r.height);
    cv.width = Math.round(W * DPR);
    cv.height = Math.round(H * DPR);
    cv.style.setProperty('width', `${W}px`);
    cv.style.setProperty('height', `${H}px`);
    computeFit(true);
    dirty = true;
  }

  // ---------------------------------------------------------------- drawing
  function frame() {
    if (!alive) return;
    raf = requestAnimationFrame(frame);
    if (sim && !sim.done) {
      const t0 = performance.now();
      do sim.tick(); while (!sim.done && performance.now() - t0 < 7);
      sim.commit();
      computeFit(false);
      dirty = true;
    }
    // Ease positions and the fit.
    let maxD = 0;
    for (const n of visible) {
      const dx = n.tx - n.x, dy = n.ty - n.y;
      if (dx * dx + dy * dy > 0.0025) {
        n.x += dx * EASE; n.y += dy * EASE;
        const d = Math.abs(dx) + Math.abs(dy);
        if (d > maxD) maxD = d;
      } else { n.x = n.tx; n.y = n.ty; }
    }
    const fd = Math.abs(fitTarget.s - fit.s) / fit.s + Math.abs(fitTarget.cx - fit.cx) + Math.abs(fitTarget.cy - fit.cy);
    if (fd > 1e-4) {
      fit.s += (fitTarget.s - fit.s) * EASE; fit.cx += (fitTarget.cx - fit.cx) * EASE; fit.cy += (fitTarget.cy - fit.cy) * EASE;
    }
    moving = maxD > 0 || fd > 1e-4;
    if (!(dirty || moving || api_.continuous)) return;
    dirty = false;
    draw();
  }

  function draw() {
    draws++;
    ctx.setTransform(DPR, 0, 0, DPR, 0, 0);
    ctx.fillStyle = '#0d0f14';
    ctx.fillRect(0, 0, W, H);
    drawGuides();
    const zr = Math.min(2.2, Math.max(0.75, Math.sqrt(user.zoom)));

    if (local.links && local.layout !== 'heat' && links.length) {
      ctx.lineWidth = 1;
      ctx.strokeStyle = local.layout === 'graph' ? 'rgba(150,160,185,0.32)' : local.layout === 'timeline' ? 'rgba(150,160,185,0.07)' : 'rgba(150,160,185,0.13)';
      ctx.beginPath();
      for (const [a, b, kind] of links) {
        if (!a.vis || !b.vis || kind === 'conflict') continue;
        ctx.moveTo(sx(a.x), sy(a.y)); ctx.lineTo(sx(b.x), sy(b.y));
      }
      ctx.stroke();
      ctx.strokeStyle = 'rgba(242,145,63,0.55)';
      ctx.setLineDash([4, 3]);
      ctx.beginPath();
      for (const [a, b, kind] of links) {
        if (!a.vis || !b.vis || kind !== 'conflict') continue;
        ctx.moveTo(sx(a.x), sy(a.y)); ctx.lineTo(sx(b.x), sy(b.y));
      }
      ctx.stroke();
      ctx.setLineDash([]);
    }

    if (renderer === 'pixels') drawNodesPixels(zr); else drawNodesVector(zr);

    // Rings: pinned (lime), in conflict (amber), dropped since (dashed grey).
    ring((n) => n.pinned && !n.deletedAt, LIME, 1.3, zr);
    ring((n) => n.conflict && !n.deletedAt, CONFLICT, 1.3, zr);
    ctx.setLineDash([2, 2]);
    ring((n) => !!n.deletedAt, '#e8e8e8', 1, zr);
    ctx.setLineDash([]);

    const focus = focusId && byId.get(focusId);
    if (focus && focus.vis) halo(focus, 'rgba(255,255,255,0.9)', 7, zr);
    if (hover && hover.vis) halo(hover, 'rgba(255,255,255,0.6)', 4, zr);
    if (local.labels) drawLabels();
  }

  // Nodes, batched: one path per (colour, claim/chunk).
  function drawNodesVector(zr) {
    const groups = new Map();
    for (const n of visible) {
      const key = n.kind === 'chunk' ? `c${n.col}` : `k${n.col}`;
      let g = groups.get(key);
      if (!g) groups.set(key, (g = []));
      g.push(n);
    }
    for (const [key, g] of groups) {
      ctx.globalAlpha = key[0] === 'c' ? 0.4 : 0.88;
      ctx.fillStyle = key.slice(1);
      ctx.beginPath();
      for (const n of g) {
        const x = sx(n.x), y = sy(n.y);
        if (x < -10 || y < -10 || x > W + 10 || y > H + 10) continue;
        const r = n.r * zr;
        ctx.moveTo(x + r, y);
        ctx.arc(x, y, r, 0, 6.283185307179586);
      }
      ctx.fill();
    }
    ctx.globalAlpha = 1;
  }

  // Nodes stamped into the pixels already drawn (background, guides, links): chunks
  // first, claims on top.
  function drawNodesPixels(zr) {
    const cw = cv.width, ch = cv.height;
    const img = ctx.getImageData(0, 0, cw, ch);
    const data = img.data;
    for (const chunks of [true, false]) {
      const alpha = chunks ? 0.4 : 0.88;
      for (const n of visible) {
        if ((n.kind === 'chunk') !== chunks) continue;
        const x = sx(n.x) * DPR, y = sy(n.y) * DPR;
        const r = n.r * zr * DPR;
        if (x < -r - 2 || y < -r - 2 || x > cw + r + 2 || y > ch + r + 2) continue;
        stamper.stamp(data, cw, ch, x, y, r, n.col, alpha);
      }
    }
    ctx.putImageData(img, 0, 0);
  }

  function ring(pred, color, width, zr) {
    ctx.strokeStyle = color;
    ctx.lineWidth = width;
    ctx.beginPath();
    for (const n of visible) {
      if (!pred(n)) continue;
      const x = sx(n.x), y = sy(n.y), r = n.r * zr + 2.2;
      ctx.moveTo(x + r, y);
      ctx.arc(x, y, r, 0, 6.283185307179586);
    }
    ctx.stroke();
  }

  function halo(n, color, extra, zr) {
    ctx.strokeStyle = color;
    ctx.lineWidth = 1.5;
    ctx.beginPath();
    ctx.arc(sx(n.x), sy(n.y), n.r * zr + extra, 0, 6.283185307179586);
    ctx.stroke();
  }

  function label(text, x, y, color, align = 'center') {
    text = visibleText(text); // cluster labels are stored text: drawn as the rest of the UI shows them
    ctx.font = '600 11px ui-monospace, "DejaVu Sans Mono", monospace';
    ctx.textAlign = align;
    ctx.textBaseline = 'middle';
    const w = ctx.measureText(text).width;
    const bx = align === 'center' ? x - w / 2 : align === 'right' ? x - w : x;
    ctx.fillStyle = 'rgba(13,15,20,0.78)';
    ctx.fillRect(bx - 5, y - 9, w + 10, 18);
    ctx.fillStyle = color;
    ctx.fillText(text, x, y);
  }

  function drawLabels() {
    if (local.layout === 'clusters' || local.layout === 'graph') {
      const acc = new Map();
      for (const n of visible) {
        let a = acc.get(n.cluster);
        if (!a) acc.set(n.cluster, (a = { x: 0, y: 0, top: Infinity, n: 0, label: n.clusterLabel, color: n.color }));
        a.x += n.x; a.y += n.y; a.n++;
        if (n.y < a.top) a.top = n.y;
      }
      for (const a of acc.values()) {
        if (a.n < (local.layout === 'clusters' ? 1 : 3)) continue;
        const x = sx(a.x / a.n);
        const y = local.layout === 'clusters' ? sy(a.top) - 14 : sy(a.y / a.n);
        label(`${a.label} · ${a.n}`, x, y, a.color);
      }
    }
  }

  function drawGuides() {
    ctx.font = '11px ui-monospace, "DejaVu Sans Mono", monospace';
    if (local.layout === 'timeline' && laneInfo) {
      ctx.strokeStyle = 'rgba(255,255,255,0.05)';
      ctx.lineWidth = 1;
      for (const lane of laneInfo.lanes) {
        const y = sy(lane.y);
        ctx.beginPath(); ctx.moveTo(sx(0), y); ctx.lineTo(sx(1100), y); ctx.stroke();
        if (local.labels) label(lane.label, Math.max(8, sx(0) - 14), y, lane.color, 'right');
      }
      if (Number.isFinite(laneInfo.min)) {
        const yb = sy((laneInfo.lanes.length - 1) * 58) + 34;
        ctx.fillStyle = '#6b7285';
        ctx.textAlign = 'left'; ctx.fillText(date(laneInfo.min), sx(0), yb);
        ctx.textAlign = 'right'; ctx.fillText(date(laneInfo.max), sx(1100), yb);
      }
    } else if (local.layout === 'heat') {
      ctx.strokeStyle = 'rgba(255,255,255,0.07)';
      ctx.lineWidth = 1;
      const x0 = sx(0), x1 = sx(1000), y0 = sy(0.5 * 620 - 0.04 * 620), y1 = sy((0.5 - 0.99) * 620);
      // The strength axis sits left of the leftmost dot's edge (never-read memories sit
      // at x = 0, and a dot has a radius), so no dot covers a label.
      const zr = Math.min(2.2, Math.max(0.75, Math.sqrt(user.zoom)));
      let dotsLeft = x0;
      for (const n of visible) dotsLeft = Math.min(dotsLeft, sx(n.x) - n.r * zr);
      const ax = Math.min(x0, dotsLeft) - 6;
      heatAxis = { labelRight: ax - 4, axisX: ax, dotsLeft };
      ctx.beginPath(); ctx.moveTo(x0, y0 + 14); ctx.lineTo(x1, y0 + 14); ctx.moveTo(ax, y0); ctx.lineTo(ax, y1); ctx.stroke();
      ctx.fillStyle = '#6b7285';
      ctx.textBaseline = 'top';
      ctx.textAlign = 'left'; ctx.fillText('never retrieved', x0, y0 + 20);
      ctx.textAlign = 'right'; ctx.fillText('retrieved often →', x1, y0 + 20);
      ctx.save(); ctx.translate(ax - 26, y0); ctx.rotate(-Math.PI / 2);
      ctx.textAlign = 'left'; ctx.textBaseline = 'bottom'; ctx.fillText('decaying', 0, 0);
      ctx.textAlign = 'right'; ctx.fillText('strong →', y0 - y1, 0);
      ctx.restore();
      for (const s of [0.2, 0.4, 0.7, 0.9]) {
        const y = sy((0.5 - s) * 620);
        ctx.strokeStyle = 'rgba(255,255,255,0.04)';
        ctx.beginPath(); ctx.moveTo(x0, y); ctx.lineTo(x1, y); ctx.stroke();
        ctx.textAlign = 'right'; ctx.textBaseline = 'middle'; ctx.fillStyle = '#4d5364'; ctx.fillText(String(Math.round(s * 100)), ax - 4, y);
      }
    }
  }

  // ---------------------------------------------------------------- legend, count, tooltip
  function paintLegend() {
    const counts = new Map();
    for (const n of nodes) {
      let key, lab, col;
      if (local.color === 'topic') { key = n.cluster; lab = n.clusterLabel; col = n.color; }
      else if (local.color === 'agent') { key = n.writer; lab = n.writer; col = colorOf(n); }
      else if (local.color === 'strength') { key = n.strength > 0.7 ? 'a' : n.strength > 0.4 ? 'b' : 'c'; lab = { a: 'strong > 70', b: 'middling 40–70', c: 'weak < 40' }[key]; col = colorOf(n); }
      else { key = n.hits > 60 ? 'a' : n.hits > 12 ? 'b' : 'c'; lab = { a: 'hot > 60 reads', b: 'warm 13–60', c: 'cold ≤ 12' }[key]; col = colorOf(n); }
      const e = counts.get(key) || { key, lab, col, n: 0 };
      e.n++;
      counts.set(key, e);
    }
    const entries = [...counts.values()].sort((a, b) => (local.color === 'strength' || local.color === 'heat' ? (a.key < b.key ? -1 : 1) : b.n - a.n)).slice(0, 10);
    replace(legend, entries.map((e) => {
      const off = local.color === 'topic' && local.hidden.has(e.key);
      return h('button', { type: 'button', class: `lg${off ? ' off' : ''}`, disabled: local.color !== 'topic', title: local.color === 'topic' ? (off ? 'show this cluster' : 'hide this cluster') : '',
        onclick: () => { if (local.color !== 'topic') return; off ? local.hidden.delete(e.key) : local.hidden.add(e.key); applyFilters(); } },
      h('span', { class: 'dot', style: { background: e.col } }), h('span', { class: 'lg-l', text: e.lab }), h('span', { class: 'mono small dim', text: num(e.n) }));
    }),
    h('div', { class: 'lg-rings small dim' },
      h('span', {}, h('span', { class: 'ring ring-pin' }), 'pinned'),
      h('span', {}, h('span', { class: 'ring ring-conflict' }), 'in conflict'),
      asof !== null ? h('span', {}, h('span', { class: 'ring ring-drop' }), 'dropped since') : null));
  }

  function paintCount() {
    const el = scrub.querySelector('#inview');
    if (el) el.textContent = num(visible.length);
    const dropped = visible.filter((n) => n.deletedAt).length;
    const d = scrub.querySelector('.dropped-since');
    if (d) d.textContent = asof !== null && dropped ? `· ${num(dropped)} dropped since` : '';
    const cap = scrub.querySelector('.capped');
    if (cap) cap.textContent = total > nodes.length ? `· strongest ${num(nodes.length)} of ${num(total)}` : '';
  }

  function pick(px, py) {
    let best = null, bd = 81;
    const zr = Math.min(2.2, Math.max(0.75, Math.sqrt(user.zoom)));
    for (const n of visible) {
      const dx = sx(n.x) - px, dy = sy(n.y) - py;
      const d = dx * dx + dy * dy;
      const lim = Math.max(81, (n.r * zr + 2) ** 2);
      if (d < lim && d < bd + (lim - 81)) { best = n; bd = d; }
    }
    return best;
  }

  function showTip(n, px, py) {
    if (!n) { tip.hidden = true; return; }
    replace(tip,
      h('div', { class: 'tip-text', text: n.text }),
      h('div', { class: 'tip-meta mono small' },
        h('span', { class: 'dot', style: { background: n.color } }),
        `${n.clusterLabel} · ${n.writer} · str ${pct(n.strength)} · ${plural(n.hits, 'read')} · created ${ago(n.createdAt)}`,
        n.deletedAt ? h('span', { class: 'tip-drop', text: ` · dropped ${date(n.deletedAt)}` }) : null));
    tip.hidden = false;
    const tw = tip.offsetWidth, th = tip.offsetHeight;
    tip.style.setProperty('left', `${Math.min(W - tw - 8, px + 14)}px`);
    tip.style.setProperty('top', `${py + 14 + th > H ? py - th - 10 : py + 14}px`);
  }

  // ---------------------------------------------------------------- pointer
  let drag = null;
  cv.addEventListener('pointerdown', (e) => {
    drag = { x: e.offsetX, y: e.offsetY, panX: user.panX, panY: user.panY, moved: false };
    cv.setPointerCapture(e.pointerId);
  });
  cv.addEventListener('pointermove', (e) => {
    if (drag) {
      const dx = e.offsetX - drag.x, dy = e.offsetY - drag.y;
      if (!drag.moved && dx * dx + dy * dy > 16) drag.moved = true;
      if (drag.moved) {
        user.panX = drag.panX + dx; user.panY = drag.panY + dy;
        tip.hidden = true;
        cv.classList.add('grabbing');
        dirty = true;
        return;
      }
    }
    const n = pick(e.offsetX, e.offsetY);
    if (n !== hover) { hover = n; dirty = true; }
    cv.classList.toggle('pointing', !!n);
    showTip(n, e.offsetX, e.offsetY);
  });
  cv.addEventListener('pointerup', (e) => {
    const wasDrag = drag && drag.moved;
    drag = null;
    cv.classList.remove('grabbing');
    if (wasDrag) return;
    const n = pick(e.offsetX, e.offsetY);
    if (n) { focusId = n.id; inspector.open(n.id); } else if (inspector.isOpen()) inspector.close();
    dirty = true;
  });
  cv.addEventListener('pointerleave', () => { hover = null; tip.hidden = true; dirty = true; });
  cv.addEventListener('dblclick', resetView);
  cv.addEventListener('wheel', (e) => {
    e.preventDefault();
    const unit = e.deltaMode === 1 ? 16 : e.deltaMode === 2 ? H : 1;
    const dy = e.deltaY * unit * (e.ctrlKey ? 3 : 1);
    zoomAt(Math.exp(-dy * 0.0015), e.offsetX, e.offsetY);
  }, { passive: false });

  // ---------------------------------------------------------------- scrubber
  function scrubTime(pos) {
    const start = timeline?.start ?? Date.now();
    const end = Date.now();
    return start + ((end - start) * pos) / 1000;
  }

  function setScrub(pos, fetchNow = false) {
    scrubPos = Math.max(0, Math.min(1000, pos));
    asof = scrubPos >= 1000 ? null : Math.round(scrubTime(scrubPos));
    paintScrubReadout();
    if (fetchNow) load(); else scrubLoad();
  }
  const scrubLoad = debounce(() => load(), 120);

  function paintScrubReadout() {
    const r = scrub.querySelector('.scrub-date');
    if (r) r.textContent = asof === null ? 'NOW' : date(asof);
    const input = scrub.querySelector('input[type=range]');
    if (input && Number(input.value) !== scrubPos) input.value = String(scrubPos);
    const now = scrub.querySelector('.scrub-now');
    if (now) now.disabled = asof === null;
    scrub.classList.toggle('past', asof !== null);
  }

  function paintScrub() {
    if (scrub.dataset.built) { paintCount(); paintScrubReadout(); return; }
    scrub.dataset.built = '1';
    const input = h('input', { type: 'range', min: 0, max: 1000, step: 1, value: String(scrubPos), 'aria-label': 'knowledge as of', class: 'scrub-range' });
    input.addEventListener('input', () => { stopPlay(); setScrub(Number(input.value)); });
    const hist = h('div', { class: 'scrub-hist' });
    if (timeline?.counts?.length) {
      const start = timeline.start, end = Date.now();
      const maxC = Math.max(1, ...timeline.counts);
      timeline.counts.forEach((c, i) => {
        const t0 = start + i * timeline.width;
        const left = ((t0 - start) / Math.max(1, end - start)) * 100;
        const w = (timeline.width / Math.max(1, end - start)) * 100;
        hist.append(h('span', { class: 'bar', style: { left: `${left}%`, width: `${Math.max(0.3, w)}%`, height: `${Math.max(c ? 8 : 0, (c / maxC) * 100)}%` } }));
      });
    }
    const play = h('button', { type: 'button', class: 'btn btn-quiet play', title: 'play history', 'aria-label': 'play', text: '▶' });
    play.addEventListener('click', () => (playing ? stopPlay() : startPlay(play)));
    replace(scrub,
      h('div', { class: 'scrub-left' },
        h('span', { class: 'seg-label', text: 'KNOWLEDGE AS OF' }),
        h('span', { class: 'scrub-date mono', text: 'NOW' }), play),
      h('div', { class: 'scrub-track' }, hist, input),
      h('div', { class: 'scrub-right mono small' },
        h('span', { class: 'seg-label', text: 'IN VIEW' }), h('span', { id: 'inview', class: 'mono inview', text: '0' }),
        h('span', { class: 'dropped-since dim' }), h('span', { class: 'capped dim' }),
        h('button', { type: 'button', class: 'link-btn small scrub-now', disabled: true, onclick: () => { stopPlay(); setScrub(1000, true); }, text: 'back to now' })));
    paintCount();
    paintScrubReadout();
  }

  function startPlay(btn) {
    if (scrubPos >= 1000) scrubPos = 20;
    btn.textContent = '❚❚';
    playing = setInterval(() => {
      if (inflight) return; // let the server keep up: one as-of view per step
      const next = scrubPos + 10;
      if (next >= 1000) { stopPlay(); setScrub(1000, true); return; }
      setScrub(next, true);
    }, 90);
  }

  function stopPlay() {
    if (!playing) return;
    clearInterval(playing);
    playing = 0;
    const btn = scrub.querySelector('.play');
    if (btn) btn.textContent = '▶';
  }

  // ---------------------------------------------------------------- wiring
  const ro = new ResizeObserver(resize);
  ro.observe(stage);
  const onInspect = (e) => { focusId = e.detail; dirty = true; };
  window.addEventListener('ledger:inspect', onInspect);
  const reload = debounce(load, 200);
  const offs = [on('query', reload), on('changed', load), on('lookups', () => { if (local.color === 'agent') recolor(); })];
  const api_ = {
    continuous: false,
    get draws() { return draws; },
    get nodes() { return nodes.length; },
    get visible() { return visible.length; },
    get layout() { return local.layout; },
    get asof() { return asof; },
    // True once the layout has converged and nothing is easing (tests wait on it).
    get settled() { return (!sim || sim.done) && !moving && !inflight; },
    get renderer() { return renderer; },
    set renderer(v) { renderer = v === 'pixels' ? 'pixels' : 'vector'; dirty = true; },
    setScrub: (pos) => setScrub(pos, true),
    // Screen position of the visible node nearest the middle of the canvas.
    // Heat layout: where the strength labels end and the leftmost dot begins (screen px).
    heatAxis() { return heatAxis; },
    centreNode() {
      let best = null, bd = Infinity;
      for (const n of visible) {
        const d = (sx(n.x) - W / 2) ** 2 + (sy(n.y) - H / 2) ** 2;
        if (d < bd) { bd = d; best = n; }
      }
      return best ? [sx(best.x), sy(best.y)] : null;
    },
    // Nearest-neighbour distances between visible nodes' targets, in world units.
    nearestNeighbourStats() {
      const d = visible.map((a) => {
        let m = Infinity;
        for (const b of visible) if (a !== b) m = Math.min(m, Math.hypot(a.tx - b.tx, a.ty - b.ty));
        return m;
      }).sort((x, y) => x - y);
      return { min: d[0], median: d[Math.floor(d.length / 2)], n: d.length };
    },
  };
  window.__ledgerCanvas = api_;

  paintToolbar();
  resize();
  raf = requestAnimationFrame(frame);
  api.timeline(60).then((t) => { timeline = t; delete scrub.dataset.built; paintScrub(); }).catch(() => {});
  load();

  return {
    unmount() {
      alive = false;
      cancelAnimationFrame(raf);
      stopPlay();
      ro.disconnect();
      offs.forEach((f) => f());
      reload.cancel();
      scrubLoad.cancel();
      window.removeEventListener('ledger:inspect', onInspect);
      if (window.__ledgerCanvas === api_) delete window.__ledgerCanvas;
    },
  };
}

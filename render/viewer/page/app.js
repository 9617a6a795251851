// dmx serve's page: a space-time diagram drawn on canvases from windows
// the server reads out of the trace. The page never holds a whole run: it
// keeps the window around the view (one and a half views each side) and
// asks for the next when the view nears its edge; wider views are drawn
// from per-process event counts instead of events.
'use strict';

const MAX_EVENTS = 10000;     // the most events a window the page asks for holds
const GUTTER = 92;            // room for lane labels, in CSS pixels
const RULER = 22;             // the time ruler above the lanes
// The colours are dmx's one palette (render/palette, served as
// palette.js): a type, a resource and a mark look as in dmx render's
// pictures and the HTML report. Findings are the only red.
const MSG_COLORS = PALETTE.messages;
const RES_COLORS = PALETTE.resources;
const MINOR = new Set(['internal', 'timeout', 'wait', 'start', 'stop']);
const KIND_COLORS = Object.assign({ cs_request: '#666', cs_enter: '#222', cs_exit: '#222' }, PALETTE.kinds);
const RED = PALETTE.finding;

const $ = (id) => document.getElementById(id);

// ---- state ----
const S = {
  runs: [], replay: false,
  axis: 'lamport',
  view: null,            // {lo, hi} on the axis, shared by both panes
  collapse: true,
  order: [], hidden: new Set(), // lanes: drawing order, hidden processes (of pane A; B follows)
  panes: [],
  sel: null,             // {pane, p, s, info}
  hl: new Map(),         // SQL highlights of pane A: "p#s" -> point
  hlList: [], hlAt: -1,
  findings: [], active: null,
  tabChosen: false,      // the user picked a tab: findings do not take it over
  diff: null,            // {procs: [...]} for panes A and B
  typeColor: new Map(), resColor: new Map(),
};

// ---- server ----
async function api(path, body) {
  const opts = body === undefined ? {} : { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) };
  if (path.signal) { opts.signal = path.signal; path = path.url; }
  const r = await fetch(path, opts);
  let j;
  try { j = await r.json(); } catch (e) { throw new Error(`${r.status} ${r.statusText}`); }
  if (!r.ok) { const err = new Error(j.error || `${r.status} ${r.statusText}`); err.status = r.status; throw err; }
  return j;
}
const q = (o) => Object.entries(o).filter(([, v]) => v !== undefined && v !== null && v !== '').map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&');

function status(msg, err) {
  const el = $('status');
  el.textContent = msg || '';
  el.className = err ? 'err' : '';
}

// ---- formatting ----
function fmtDur(ns) {
  const a = Math.abs(ns);
  if (a >= 1e9) return (ns / 1e9).toFixed(a >= 1e11 ? 0 : 3).replace(/\.?0+$/, '') + 's';
  if (a >= 1e6) return (ns / 1e6).toFixed(3).replace(/\.?0+$/, '') + 'ms';
  if (a >= 1e3) return (ns / 1e3).toFixed(3).replace(/\.?0+$/, '') + 'µs';
  return Math.round(ns) + 'ns';
}
function fmtKey(k) { return S.axis === 'wall' ? '+' + fmtDur(k) : String(Math.round(k)); }
function parseDur(s) {
  const m = /^\s*([0-9.]+)\s*(ns|us|µs|ms|s|m)?\s*$/.exec(s);
  if (!m) return null;
  const mult = { ns: 1, us: 1e3, 'µs': 1e3, ms: 1e6, s: 1e9, m: 60e9 }[m[2] || 'ns'];
  return Math.round(parseFloat(m[1]) * mult);
}
const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c]));
const refName = (p, s) => `P${p}#${s}`;
const key = (pt) => (S.axis === 'wall' ? pt.w : pt.l);

function typeColor(t) {
  if (t === 'heartbeat') return PALETTE.background;
  if (!S.typeColor.has(t)) S.typeColor.set(t, MSG_COLORS[S.typeColor.size % MSG_COLORS.length]);
  return S.typeColor.get(t);
}
function resColor(r) {
  if (!S.resColor.has(r)) S.resColor.set(r, RES_COLORS[S.resColor.size % RES_COLORS.length]);
  return S.resColor.get(r);
}

// ---- panes ----
class Pane {
  constructor(el, name) {
    this.el = el; this.name = name;
    this.canvas = el.querySelector('canvas');
    this.head = el.querySelector('.panehead');
    this.key = null; this.outline = null; this.ov = {}; this.ovAsked = {}; this.types = new Set();
    this.data = null;       // the window or density held
    this.inflight = null;   // {ctl, want}
    this.hits = [];         // drawn events, for clicks: {x, y, e}
    this.byRef = new Map(); // "p#s" -> drawn event
    this.laneY = new Map(); // proc -> y
    bindCanvas(this);
  }
  async load(key) {
    // Nothing of the run shown before is read or drawn for this one: a
    // window still on its way would land on the wrong run.
    if (this.inflight) this.inflight.ctl.abort();
    this.inflight = null;
    this.key = key; this.data = null; this.ov = {}; this.ovAsked = {}; this.outline = null; this.types = new Set(); this.drawn = null; this.hits = []; this.byRef = new Map();
    this.outline = await api('/api/outline?' + q({ run: key }));
    // The message types this run is known to have: the legend's.
    this.types = new Set(this.outline.types || []);
    // The colours the server gave by name (those of the static pictures)
    // win over the page's own order of first sight.
    const cols = this.outline.colors || {};
    for (const [t, c] of Object.entries(cols.types || {})) if (!S.typeColor.has(t)) S.typeColor.set(t, c);
    for (const [r, c] of Object.entries(cols.resources || {})) if (!S.resColor.has(r)) S.resColor.set(r, c);
    for (const t of this.types) typeColor(t);
    for (const r of this.outline.resources || []) resColor(r);
    const r = this.outline.run;
    this.head.textContent = `${r.algorithm} · run ${r.id} of ${r.file} · seed ${r.seed || '—'} · ${r.mode} · ${this.outline.lanes.length} processes · ${this.outline.events.toLocaleString()} events · ${r.status}`;
    // The first window does not wait for the overview (0.5 s or more on a
    // million events): until it comes, windows are sized from the view
    // alone; then what the view needs is asked again.
    this.overview().then(() => { this.need(); draw(); }).catch((err) => status(err.message, true));
  }
  // overview reads the run's overview on the current axis, once.
  overview() {
    const axis = S.axis, key = this.key;
    if (!this.ovAsked[axis]) {
      this.ovAsked[axis] = api('/api/overview?' + q({ run: key, axis })).then((ov) => {
        if (this.key === key) this.ov[axis] = ov;
        return ov;
      });
    }
    return this.ovAsked[axis];
  }
  extent() { return S.axis === 'wall' ? this.outline.wall : this.outline.lamport; }
  lanes() {
    const n = this.outline.lanes.length;
    return S.order.filter((p) => p < n && !S.hidden.has(p));
  }
  // estimate says about how many events of the shown lanes [lo, hi] holds.
  estimate(lo, hi) {
    const ov = this.ov[S.axis];
    if (!ov) return 0;
    const w = (ov.hi - ov.lo + 1) / ov.n;
    let n = 0;
    for (let b = Math.max(0, Math.floor((lo - ov.lo) / w)); b < ov.n && ov.lo + b * w <= hi; b++) {
      const b0 = ov.lo + b * w, b1 = b0 + w;
      n += ov.counts[b] * Math.max(0, Math.min(b1, hi + 1) - Math.max(b0, lo)) / w;
    }
    const all = this.outline.lanes.length;
    return n * this.lanes().length / Math.max(all, 1);
  }
  // need fetches what the view needs, unless held or asked for already.
  need() {
    if (!this.outline || !S.view) return;
    const { lo, hi } = S.view, w = hi - lo;
    const procs = this.lanes().length === this.outline.lanes.length ? '' : this.lanes().join(',');
    const [elo, ehi] = this.extent();
    const d = this.data;
    const held = d && d.axis === S.axis && d.procs === procs && d.lo <= Math.max(lo, elo) && d.hi >= Math.min(hi, ehi);
    const dense = this.estimate(lo, hi) > MAX_EVENTS * 0.8;
    // Read ahead: a pan reaching within half a view of what is held asks
    // for the next window while the held one is still drawn.
    const ahead = held && ((d.lo > lo - w * 0.5 && d.lo > elo) || (d.hi < hi + w * 0.5 && d.hi < ehi));
    if (held && !ahead && ((d.kind === 'events' && !d.more && !dense) || (d.kind === 'density' && dense && d.width >= w * 0.5 && d.width <= w * 4))) return;
    const want = { axis: S.axis, procs, kind: dense ? 'density' : 'events' };
    let wlo = Math.floor(lo - w * 1.5), whi = Math.ceil(hi + w * 1.5);
    if (!dense) {
      // As wide as the budget allows, at most 1.5 views each side.
      while (whi - wlo > w * 1.2 && this.estimate(wlo, whi) > MAX_EVENTS * 0.9) { wlo = Math.floor((wlo + lo) / 2); whi = Math.ceil((whi + hi) / 2); }
    }
    wlo = Math.max(wlo, elo); whi = Math.min(whi, ehi);
    if (whi < wlo) whi = wlo;
    want.lo = wlo; want.hi = whi;
    const f = this.inflight;
    if (f && f.want.axis === want.axis && f.want.kind === want.kind && f.want.procs === want.procs && f.want.lo <= Math.max(lo - w * 0.25, elo) && f.want.hi >= Math.min(hi + w * 0.25, ehi)) return;
    if (f) f.ctl.abort();
    const ctl = new AbortController();
    this.inflight = { ctl, want };
    const t0 = performance.now();
    const url = dense
      ? '/api/density?' + q({ run: this.key, axis: S.axis, lo: wlo, hi: whi, n: Math.max(50, Math.min(4000, Math.round(this.canvas.clientWidth * (whi - wlo) / Math.max(w, 1) / 3))), procs })
      : '/api/window?' + q({ run: this.key, axis: S.axis, lo: wlo, hi: whi, max: MAX_EVENTS, procs });
    const runKey = this.key;
    api({ url, signal: ctl.signal }).then((res) => {
      if (this.key !== runKey) return;
      if (this.inflight && this.inflight.ctl === ctl) this.inflight = null;
      res.kind = want.kind; res.procs = procs; res.width = whi - wlo;
      if (want.kind === 'events') {
        res.ids = new Set(res.events.map((e) => e.i));
        let fresh = false;
        for (const e of res.events) if (e.t && !this.types.has(e.t)) { this.types.add(e.t); typeColor(e.t); fresh = true; }
        if (fresh) legend();
      }
      this.data = res;
      this.ms = performance.now() - t0;
      draw();
      // A window with more events than it holds asks for a narrower one
      // once the overview says how narrow (until then the view holds).
      if (res.more && this.ov[S.axis]) this.need();
    }).catch((err) => {
      if (err.name === 'AbortError') return;
      if (this.inflight && this.inflight.ctl === ctl) this.inflight = null;
      status(err.message, true);
    });
  }
}

// ---- view ----
function setView(lo, hi, fromUser) {
  const pane = S.panes[0];
  if (!pane || !pane.outline) return;
  let [elo, ehi] = pane.extent();
  if (S.panes[1] && S.panes[1].outline && !S.panes[1].el.hidden) {
    const [blo, bhi] = S.panes[1].extent();
    elo = Math.min(elo, blo); ehi = Math.max(ehi, bhi);
  }
  const pad = Math.max(1, (ehi - elo) * 0.02);
  let w = Math.max(hi - lo, S.axis === 'wall' ? 1000 : 4);
  w = Math.min(w, ehi - elo + 2 * pad);
  let c = (lo + hi) / 2;
  c = Math.max(elo - pad + w / 2, Math.min(ehi + pad - w / 2, c));
  S.view = { lo: c - w / 2, hi: c + w / 2 };
  for (const p of S.panes) if (!p.el.hidden) p.need();
  draw();
  if (fromUser) saveHash();
}
function zoom(f, atX) {
  const v = S.view, at = atX === undefined ? (v.lo + v.hi) / 2 : atX;
  setView(at - (at - v.lo) * f, at + (v.hi - at) * f, true);
}
function pan(frac) { const w = S.view.hi - S.view.lo; setView(S.view.lo + w * frac, S.view.hi + w * frac, true); }
function centerOn(k, width) {
  const w = width || (S.view ? S.view.hi - S.view.lo : 100);
  setView(k - w / 2, k + w / 2, true);
}
function fitAll() {
  const [lo, hi] = S.panes[0].extent();
  setView(lo, hi, true);
}
function initialView() {
  const pane = S.panes[0];
  const [lo, hi] = pane.extent();
  if (pane.outline.events <= 600) return setView(lo, hi);
  // About 400 events from the start: a screenful one can read.
  const per = pane.outline.events / Math.max(1, hi - lo);
  setView(lo, lo + Math.max(10, 400 / per));
}

let drawQueued = false;
function draw() {
  if (drawQueued) return;
  drawQueued = true;
  requestAnimationFrame(() => {
    drawQueued = false;
    for (const p of S.panes) if (!p.el.hidden) drawPane(p);
    drawOverview();
    const p = S.panes[0];
    if (p && p.data) {
      const d = p.data;
      const n = d.kind === 'events' ? `${d.events.length.toLocaleString()} events held` : 'zoomed out: events counted per slice, zoom in to see them';
      status(`${fmtKey(S.view.lo)} … ${fmtKey(S.view.hi)} · ${n}${p.ms ? ` · last window ${Math.round(p.ms)} ms` : ''}`);
    }
  });
}

function sizeCanvas(c) {
  const dpr = window.devicePixelRatio || 1;
  const w = c.clientWidth, h = c.clientHeight;
  if (c.width !== Math.round(w * dpr) || c.height !== Math.round(h * dpr)) {
    c.width = Math.round(w * dpr); c.height = Math.round(h * dpr);
  }
  const ctx = c.getContext('2d');
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  return { ctx, w, h };
}

// xOf maps a key on the axis to a pixel.
function scale(w) {
  const { lo, hi } = S.view;
  const k = (w - GUTTER - 16) / Math.max(hi - lo, 1e-9);
  return { x: (key) => GUTTER + (key - lo) * k, k, toKey: (x) => lo + (x - GUTTER) / k };
}

function drawRuler(ctx, w, sc) {
  const { lo, hi } = S.view;
  const span = hi - lo;
  const target = span / Math.max(2, (w - GUTTER) / 110);
  const p10 = Math.pow(10, Math.floor(Math.log10(Math.max(target, 1e-9))));
  let step = p10;
  for (const m of [1, 2, 5, 10]) { if (p10 * m >= target) { step = p10 * m; break; } }
  if (S.axis === 'lamport') step = Math.max(1, Math.round(step));
  ctx.fillStyle = '#f7f7f7'; ctx.fillRect(0, 0, w, RULER);
  ctx.strokeStyle = '#ddd'; ctx.beginPath(); ctx.moveTo(0, RULER - 0.5); ctx.lineTo(w, RULER - 0.5); ctx.stroke();
  ctx.fillStyle = '#555'; ctx.font = '11px system-ui, sans-serif'; ctx.textAlign = 'center'; ctx.textBaseline = 'middle';
  ctx.strokeStyle = '#eee';
  for (let t = Math.ceil(lo / step) * step; t <= hi; t += step) {
    const x = sc.x(t);
    if (x < GUTTER) continue;
    ctx.fillText(fmtKey(t), x, RULER / 2);
    ctx.beginPath(); ctx.moveTo(x + 0.5, RULER); ctx.lineTo(x + 0.5, 100000); ctx.stroke();
  }
  ctx.textAlign = 'left';
  ctx.fillStyle = '#888';
  ctx.fillText(S.axis === 'wall' ? 'wall time' : 'Lamport', 6, RULER / 2);
}

function layoutLanes(pane, h) {
  const lanes = pane.lanes();
  const lh = Math.max(14, Math.min(100, (h - RULER - 14) / Math.max(lanes.length, 1)));
  pane.laneY = new Map();
  lanes.forEach((p, i) => pane.laneY.set(p, RULER + 10 + lh * (i + 0.5)));
  return { lanes, lh };
}

function drawLaneLabels(ctx, pane, lh) {
  ctx.textBaseline = 'middle'; ctx.textAlign = 'right';
  for (const [p, y] of pane.laneY) {
    const ln = pane.outline.lanes[p];
    ctx.fillStyle = '#202020';
    ctx.font = `600 ${Math.min(13, lh * 0.5)}px system-ui, sans-serif`;
    ctx.fillText(ln.name, GUTTER - 10, ln.role && lh > 30 ? y - 6 : y);
    if (ln.role && lh > 30) { ctx.font = '10px system-ui, sans-serif'; ctx.fillStyle = '#666'; ctx.fillText(ln.role, GUTTER - 10, y + 8); }
  }
}

function drawLanes(ctx, pane, w, lh, downs, sc) {
  for (const [p, y] of pane.laneY) {
    ctx.strokeStyle = '#9a9a9a'; ctx.lineWidth = 1.2; ctx.setLineDash([]);
    ctx.beginPath(); ctx.moveTo(GUTTER, y); ctx.lineTo(w - 8, y); ctx.stroke();
  }
  // Down times: the lane dashed and pale.
  ctx.lineWidth = 3; ctx.strokeStyle = '#fff';
  for (const d of downs) {
    const y = pane.laneY.get(d.p);
    if (y === undefined) continue;
    const x0 = Math.max(GUTTER, sc.x(key(d.crash))), x1 = Math.min(w - 8, d.until ? sc.x(key(d.until)) : w - 8);
    if (x1 <= x0) continue;
    ctx.strokeStyle = '#fff'; ctx.setLineDash([]); ctx.beginPath(); ctx.moveTo(x0, y); ctx.lineTo(x1, y); ctx.stroke();
    ctx.strokeStyle = '#c8c8c8'; ctx.lineWidth = 1.2; ctx.setLineDash([4, 3]); ctx.beginPath(); ctx.moveTo(x0, y); ctx.lineTo(x1, y); ctx.stroke();
    ctx.lineWidth = 3;
  }
  ctx.setLineDash([]); ctx.lineWidth = 1;
}

// causal says where an event stands to the selection: 'sel', 'past', 'future' or ''.
function causal(pane, p, s) {
  const sel = S.sel;
  if (!sel || sel.pane !== pane || !sel.info || !sel.info.past) return '';
  if (p === sel.p && s === sel.s) return 'sel';
  if (s <= sel.info.past[p]) return 'past';
  const f = sel.info.future[p];
  if (f && s >= f) return 'future';
  return 'other';
}

function drawPane(pane) {
  const t0 = performance.now();
  const { ctx, w, h } = sizeCanvas(pane.canvas);
  ctx.clearRect(0, 0, w, h);
  if (!pane.outline || !S.view) { pane.drawn = null; return; }
  const sc = scale(w);
  drawRuler(ctx, w, sc);
  const { lh } = layoutLanes(pane, h);
  const d = pane.data;
  pane.hits = []; pane.byRef = new Map();
  // What was drawn, for the status line and the browser test.
  pane.drawn = { mode: d ? d.kind : 'none', lanes: pane.laneY.size, events: 0, arrows: 0, sections: 0, highlighted: 0, finding: 0, waits: 0, marks: 0, groups: 0, past: 0, future: 0, diff: 0 };
  ctx.save();
  ctx.beginPath(); ctx.rect(GUTTER - 6, RULER, w - GUTTER + 6, h - RULER); ctx.clip();
  drawLanes(ctx, pane, w, lh, pane.outline.downs || [], sc);
  if (d && d.axis === S.axis && d.kind === 'density') drawDensity(ctx, pane, d, w, lh, sc);
  else if (d && d.axis === S.axis && d.kind === 'events') drawEvents(ctx, pane, d, w, lh, sc);
  else { ctx.fillStyle = '#888'; ctx.font = '13px system-ui'; ctx.textAlign = 'center'; ctx.fillText('reading…', w / 2, h / 2); }
  drawDiffFlags(ctx, pane, sc, w);
  ctx.restore();
  drawLaneLabels(ctx, pane, lh);
  if (pane.drawn) {
    pane.drawn.ms = performance.now() - t0;
    // Whether what is held covers the view: a pan that outruns the
    // server shows blank stretches.
    pane.drawn.covered = !!d && d.axis === S.axis && d.lo <= Math.max(S.view.lo, pane.extent()[0]) && d.hi >= Math.min(S.view.hi, pane.extent()[1]);
  }
}

function drawDensity(ctx, pane, d, w, lh, sc) {
  const bw = (d.hi - d.lo + 1) / d.n;
  let peak = 1;
  for (const p of pane.laneY.keys()) for (const c of d.counts[p] || []) peak = Math.max(peak, c);
  const lp = Math.log(peak + 1);
  for (const [p, y] of pane.laneY) {
    const counts = d.counts[p] || [];
    // Critical sections: bars under the lane, by resource.
    const cs = (d.cs && d.cs[p]) || {};
    for (const [res, occ] of Object.entries(cs)) {
      ctx.fillStyle = resColor(res);
      for (let b = 0; b < occ.length; b++) {
        if (!occ[b]) continue;
        const x0 = sc.x(d.lo + b * bw), x1 = sc.x(d.lo + (b + 1) * bw);
        if (x1 < GUTTER || x0 > w) continue;
        ctx.globalAlpha = Math.min(1, 0.25 + 0.75 * occ[b]);
        ctx.fillRect(x0, y + 3, Math.max(1, x1 - x0), Math.min(8, lh * 0.2));
      }
    }
    ctx.globalAlpha = 1;
    for (let b = 0; b < counts.length; b++) {
      const c = counts[b];
      if (!c) continue;
      const x0 = sc.x(d.lo + b * bw), x1 = sc.x(d.lo + (b + 1) * bw);
      if (x1 < GUTTER || x0 > w) continue;
      const a = 0.12 + 0.88 * Math.log(c + 1) / lp;
      ctx.fillStyle = `rgba(42,93,176,${a.toFixed(3)})`;
      const hh = Math.max(4, lh * 0.42);
      ctx.fillRect(x0, y - hh, Math.max(1, x1 - x0 + 0.5), hh - 1);
    }
  }
  // Findings, SQL rows and the selection as ticks on their lanes.
  const tick = (p, k, color, hgt) => {
    const y = pane.laneY.get(p);
    if (y === undefined) return;
    const x = sc.x(k);
    if (x < GUTTER || x > w) return;
    ctx.fillStyle = color; ctx.fillRect(x - 1, y - hgt, 2, hgt * 2);
  };
  if (pane === S.panes[0]) {
    for (const pt of S.hlList) tick(pt.p, key(pt), PALETTE.highlight, lh * 0.45);
    if (S.active) for (const e of S.active.events) if (e.s) tick(e.p, key(e), RED, lh * 0.5);
  }
  if (S.sel && S.sel.pane === pane && S.sel.info) tick(S.sel.p, key({ l: S.sel.info.lamport, w: S.sel.info.wall }), '#000', lh * 0.5);
  ctx.fillStyle = '#666'; ctx.font = '12px system-ui'; ctx.textAlign = 'right'; ctx.textBaseline = 'bottom';
  ctx.fillText(`zoomed out: darker = more events (up to ${peak.toLocaleString()} per slice); bars below = critical sections; zoom in to see events`, w - 12, pane.canvas.clientHeight - 4);
}

// collapsed groups runs of three or more local events of a lane that lie
// close together on screen and that nothing points at.
function collapsed(pane, evs, sc) {
  const rep = new Map();
  if (!S.collapse) return rep;
  const used = new Set();
  for (const e of evs) if (e.o) used.add(e.o.i);
  const byLane = new Map();
  for (const e of evs) {
    if (!MINOR.has(e.k) || used.has(e.i) || S.hl.has(e.p + '#' + e.s)) continue;
    if (!byLane.has(e.p)) byLane.set(e.p, []);
    byLane.get(e.p).push(e);
  }
  for (const list of byLane.values()) {
    list.sort((a, b) => a.s - b.s);
    let i = 0;
    while (i < list.length) {
      let j = i + 1;
      while (j < list.length && list[j].s === list[j - 1].s + 1 && sc.x(key(list[j])) - sc.x(key(list[i])) < 60) j++;
      if (j - i >= 3) {
        const g = { first: list[i], last: list[j - 1], n: j - i };
        for (let m = i; m < j; m++) rep.set(list[m].i, g);
      }
      i = j;
    }
  }
  return rep;
}

function arrowHead(ctx, x0, y0, x1, y1, size) {
  const a = Math.atan2(y1 - y0, x1 - x0);
  ctx.moveTo(x1, y1);
  ctx.lineTo(x1 - size * Math.cos(a - 0.4), y1 - size * Math.sin(a - 0.4));
  ctx.lineTo(x1 - size * Math.cos(a + 0.4), y1 - size * Math.sin(a + 0.4));
  ctx.closePath();
}

function drawEvents(ctx, pane, d, w, lh, sc) {
  const evs = d.events;
  const yOf = (p) => pane.laneY.get(p);
  const selOn = S.sel && S.sel.pane === pane && S.sel.info && S.sel.info.past;
  const fade = (p, s) => (selOn && causal(pane, p, s) === 'other' ? 0.18 : 1);
  // Room per event on a lane, in the view: labels and sizes follow it.
  let inView = 0;
  for (const e of evs) { const k = key(e); if (k >= S.view.lo && k <= S.view.hi) inView++; }
  const spacing = (w - GUTTER) / Math.max(1, inView / Math.max(1, pane.laneY.size));
  const r = Math.max(1.6, Math.min(4, spacing / 3));
  // Critical sections: bars along the lane, the wait before them dashed.
  for (const s of d.sections) {
    const y = yOf(s.p);
    if (y === undefined) continue;
    const col = resColor(s.r);
    const bar = Math.max(4, Math.min(9, lh * 0.18));
    if (s.q) {
      const x0 = sc.x(key(s.q)), x1 = s.e ? sc.x(key(s.e)) : (s.x ? sc.x(key(s.x)) : w);
      ctx.strokeStyle = col; ctx.globalAlpha = 0.8; ctx.setLineDash([3, 3]); ctx.lineWidth = 1.5;
      ctx.beginPath(); ctx.moveTo(x0, y + bar); ctx.lineTo(x1, y + bar); ctx.stroke(); ctx.setLineDash([]);
    }
    if (s.e) {
      const x0 = sc.x(key(s.e)), x1 = s.x ? sc.x(key(s.x)) : w;
      ctx.globalAlpha = 0.55 * fade(s.p, s.e.s); ctx.fillStyle = col;
      ctx.fillRect(x0, y - bar / 2, Math.max(2, x1 - x0), bar);
      if (s.c) { ctx.globalAlpha = 1; ctx.fillStyle = PALETTE.crash; ctx.fillRect(x1 - 1, y - bar, 2, 2 * bar); }
    }
    ctx.globalAlpha = 1;
  }
  // Messages, batched by colour.
  const lines = new Map(), heads = new Map(), labels = [];
  const add = (col, fn) => { if (!lines.has(col)) { lines.set(col, []); heads.set(col, []); } fn(lines.get(col), heads.get(col)); };
  const stubs = [];
  const pxPerEv = spacing;
  // A message sent before the view and received after it (a copy held
  // back by a partition) would run along the lanes and hide them: faint.
  const across = (xs, xr) => ((xs < GUTTER && xr > w) || (xr < GUTTER && xs > w) ? 0.25 : 1);
  for (const e of evs) {
    const y = yOf(e.p);
    if (y === undefined) continue;
    const x = sc.x(key(e));
    if (e.k === 'receive' && e.o) {
      const y0 = yOf(e.o.p);
      const x0 = sc.x(key(e.o));
      const col = typeColor(e.t);
      const a = Math.min(fade(e.p, e.s), fade(e.o.p, e.o.s), across(x0, x));
      if (y0 === undefined) { stubs.push([x - 14, y - 6, x, y, col]); continue; }
      add(col + '|' + a, (L, H) => { L.push([x0, y0, x, y]); if (Math.hypot(x - x0, y - y0) > 14) H.push([x0, y0, x, y]); });
      if (pxPerEv > 26 && e.t && e.t !== 'heartbeat') labels.push([(x0 + x) / 2, (y0 + y) / 2, e.t, col]);
    } else if (e.k === 'receive') {
      stubs.push([x - 16, y - 8, x, y, typeColor(e.t)]);
    } else if (e.k === 'send' && e.o && !d.ids.has(e.o.i)) {
      const y1 = yOf(e.o.p);
      if (y1 === undefined) { stubs.push([x, y, x + 14, y - 6, typeColor(e.t)]); continue; }
      const x1 = sc.x(key(e.o));
      const col = typeColor(e.t);
      add(col + '|' + Math.min(fade(e.p, e.s), across(x, x1)), (L, H) => { L.push([x, y, x1, y1]); H.push([x, y, x1, y1]); });
    } else if (e.k === 'send' && !e.o) {
      // Never delivered: towards its receiver, a cross where it was lost,
      // an open arrow for one still in flight at the end.
      const y1 = yOf(e.pe) !== undefined ? yOf(e.pe) : y + lh / 2;
      const x1 = x + Math.max(18, Math.min(60, pxPerEv * 1.5));
      const ym = y + (y1 - y) * 0.45;
      const col = typeColor(e.t);
      stubs.push([x, y, x1, ym, col, e.f || 'in_flight']);
    }
  }
  ctx.lineWidth = 1.1;
  for (const L of lines.values()) pane.drawn.arrows += L.length;
  pane.drawn.arrows += stubs.length;
  pane.drawn.sections = d.sections.length;
  for (const [ck, L] of lines) {
    const [col, a] = ck.split('|');
    ctx.strokeStyle = col; ctx.fillStyle = col; ctx.globalAlpha = +a;
    ctx.beginPath();
    for (const [x0, y0, x1, y1] of L) { ctx.moveTo(x0, y0); ctx.lineTo(x1, y1); }
    ctx.stroke();
    ctx.beginPath();
    for (const [x0, y0, x1, y1] of heads.get(ck)) arrowHead(ctx, x0, y0, x1 - (x1 - x0) * (r + 1) / Math.max(1, Math.hypot(x1 - x0, y1 - y0)), y1 - (y1 - y0) * (r + 1) / Math.max(1, Math.hypot(x1 - x0, y1 - y0)), 6);
    ctx.fill();
  }
  ctx.globalAlpha = 1;
  for (const [x0, y0, x1, y1, col, fate] of stubs) {
    ctx.strokeStyle = col; ctx.setLineDash(fate === 'in_flight' ? [4, 3] : []);
    ctx.beginPath(); ctx.moveTo(x0, y0); ctx.lineTo(x1, y1); ctx.stroke(); ctx.setLineDash([]);
    if (fate === 'dropped' || fate === 'lost_to_crash') {
      ctx.strokeStyle = PALETTE.lost; ctx.lineWidth = 2;
      ctx.beginPath(); ctx.moveTo(x1 - 4, y1 - 4); ctx.lineTo(x1 + 4, y1 + 4); ctx.moveTo(x1 - 4, y1 + 4); ctx.lineTo(x1 + 4, y1 - 4); ctx.stroke();
      ctx.lineWidth = 1.1;
    } else if (fate === 'in_flight') {
      ctx.beginPath(); arrowHead(ctx, x0, y0, x1, y1, 6); ctx.stroke();
    }
  }
  if (labels.length && labels.length < 400) {
    ctx.font = '10px system-ui, sans-serif'; ctx.textAlign = 'center'; ctx.textBaseline = 'bottom';
    labels.sort((a, b) => a[0] - b[0]);
    const placed = []; // boxes of the labels drawn, by left edge
    for (const [x, y, t, col] of labels) {
      if (x < GUTTER || x > w) continue;
      const tw = ctx.measureText(t).width;
      const box = [x - tw / 2 - 2, y - 12, x + tw / 2 + 2, y];
      // A label that would cover another is left out: the colour says
      // the type, the tooltip the rest.
      if (placed.some((b) => b[2] > box[0] && b[0] < box[2] && b[3] > box[1] && b[1] < box[3])) continue;
      placed.push(box);
      if (placed.length > 40) placed.shift();
      ctx.fillStyle = 'rgba(255,255,255,.8)'; ctx.fillRect(box[0] + 1, y - 11, tw + 2, 11);
      ctx.fillStyle = col; ctx.fillText(t, x, y);
    }
  }
  // Events.
  const groups = collapsed(pane, evs, sc);
  const drawnGroups = new Set();
  const marks = [];
  for (const e of evs) {
    const y = yOf(e.p);
    if (y === undefined) continue;
    const x = sc.x(key(e));
    if (x < GUTTER - 6 || x > w + 6) continue;
    const g = groups.get(e.i);
    const a = fade(e.p, e.s);
    ctx.globalAlpha = a;
    if (g) {
      if (drawnGroups.has(g)) continue;
      drawnGroups.add(g);
      pane.drawn.groups++;
      const x1 = sc.x(key(g.last));
      ctx.fillStyle = '#e3e3e3'; ctx.strokeStyle = '#9a9a9a';
      ctx.beginPath(); ctx.roundRect(x - 3, y - 5, Math.max(8, x1 - x + 6), 10, 4); ctx.fill(); ctx.stroke();
      if (x1 - x > 16) { ctx.fillStyle = '#555'; ctx.font = '9px system-ui'; ctx.textAlign = 'center'; ctx.textBaseline = 'middle'; ctx.fillText('×' + g.n, (x + x1) / 2, y); }
      const hit = { x: (x + x1) / 2, y, e: g.first, group: g };
      pane.hits.push(hit);
      continue;
    }
    const col = KIND_COLORS[e.k] || (MINOR.has(e.k) ? '#9a9a9a' : '#303030');
    ctx.fillStyle = col;
    const rr = MINOR.has(e.k) ? r * 0.75 : r;
    if (e.k === 'crash' || e.k === 'drop') {
      ctx.strokeStyle = col; ctx.lineWidth = 2.2;
      ctx.beginPath(); ctx.moveTo(x - 5, y - 5); ctx.lineTo(x + 5, y + 5); ctx.moveTo(x - 5, y + 5); ctx.lineTo(x + 5, y - 5); ctx.stroke(); ctx.lineWidth = 1;
    } else if (e.k === 'recover') {
      ctx.strokeStyle = col; ctx.lineWidth = 2; ctx.beginPath(); ctx.arc(x, y, 5, 0, 7); ctx.stroke(); ctx.lineWidth = 1;
    } else if (e.k === 'leader' || e.k === 'election_start') {
      ctx.beginPath(); ctx.moveTo(x, y - 6); ctx.lineTo(x + 6, y); ctx.lineTo(x, y + 6); ctx.lineTo(x - 6, y); ctx.closePath(); ctx.fill();
    } else {
      ctx.beginPath(); ctx.arc(x, y, rr, 0, 7); ctx.fill();
    }
    if (e.m) marks.push([x, y, e.m, col]);
    const hit = { x, y, e };
    pane.hits.push(hit);
    pane.byRef.set(e.p + '#' + e.s, hit);
  }
  ctx.globalAlpha = 1;
  pane.drawn.events = pane.hits.length;
  pane.drawn.marks = marks.length;
  if (marks.length < 300) {
    // Above the lane, or below it where the previous mark's words still
    // are; left out (the tooltip says them) where both are taken.
    ctx.font = '600 10px system-ui, sans-serif'; ctx.textAlign = 'left'; ctx.textBaseline = 'middle';
    marks.sort((a, b) => a[0] - b[0]);
    const ends = new Map();
    for (const [x, y, m, col] of marks) {
      const tw = ctx.measureText(m).width;
      const slot = ends.get(y) || [-Infinity, -Infinity];
      const i = x + 6 > slot[0] + 4 ? 0 : x + 6 > slot[1] + 4 ? 1 : -1;
      if (i < 0) continue;
      slot[i] = x + 6 + tw;
      ends.set(y, slot);
      ctx.fillStyle = col; ctx.fillText(m, x + 6, i === 0 ? y - 11 : y + 12);
    }
  }
  drawCausalRings(ctx, pane, evs, sc);
  if (pane === S.panes[0]) { drawHighlights(ctx, pane, sc); drawFinding(ctx, pane, sc, w); }
  drawSelection(ctx, pane, sc);
  if (d.more) {
    ctx.fillStyle = '#b8860b'; ctx.font = '12px system-ui'; ctx.textAlign = 'right'; ctx.textBaseline = 'bottom';
    ctx.fillText('more events than one window holds: reading a narrower one…', w - 12, pane.canvas.clientHeight - 4);
  }
}

function drawCausalRings(ctx, pane, evs, sc) {
  if (!S.sel || S.sel.pane !== pane || !S.sel.info || !S.sel.info.past) return;
  const past = [], fut = [];
  for (const hit of pane.byRef.values()) {
    const c = causal(pane, hit.e.p, hit.e.s);
    if (c === 'past') past.push(hit); else if (c === 'future') fut.push(hit);
  }
  ctx.lineWidth = 1.6;
  pane.drawn.past = past.length; pane.drawn.future = fut.length;
  for (const [list, col] of [[past, PALETTE.past], [fut, PALETTE.future]]) {
    if (list.length > 6000) continue;
    ctx.strokeStyle = col; ctx.beginPath();
    for (const h of list) { ctx.moveTo(h.x + 5, h.y); ctx.arc(h.x, h.y, 5, 0, 7); }
    ctx.stroke();
  }
  ctx.lineWidth = 1;
}

function placeOf(pane, pt) {
  const hit = pane.byRef.get(pt.p + '#' + pt.s);
  if (hit) return hit;
  const y = pane.laneY.get(pt.p);
  if (y === undefined || !pt.s) return null;
  const sc = scale(pane.canvas.clientWidth);
  return { x: sc.x(key(pt)), y };
}

function drawHighlights(ctx, pane, sc) {
  if (!S.hl.size) return;
  ctx.fillStyle = 'rgba(255, 200, 0, 0.45)'; ctx.strokeStyle = '#d49b00'; ctx.lineWidth = 1.5;
  const w = pane.canvas.clientWidth;
  const { lo, hi } = S.view;
  let n = 0;
  for (const pt of S.hlList) {
    const k = key(pt);
    if (k < lo || k > hi) continue;
    const at = placeOf(pane, pt);
    if (!at || at.x < GUTTER || at.x > w) continue;
    ctx.beginPath(); ctx.arc(at.x, at.y, 7, 0, 7); ctx.fill(); ctx.stroke();
    if (++n > 5000) break;
  }
  pane.drawn.highlighted = n;
  ctx.lineWidth = 1;
}

// drawFinding draws the finding chosen in the list: its events ringed in
// red and its structure (sections, missing orderings, wait-for edges,
// reigns, events about one thing).
function drawFinding(ctx, pane, sc, w) {
  const f = S.active;
  if (!f) return;
  let waits = 0;
  const edges = [], tags = [];
  ctx.strokeStyle = RED; ctx.fillStyle = RED; ctx.lineWidth = 2;
  for (const part of f.parts || []) {
    const at = part.events.map((e) => (e.s ? placeOf(pane, e) : null));
    if (part.role === 'section' || part.role === 'reign') {
      if (!at[0]) continue;
      const x1 = at[1] ? at[1].x : w;
      ctx.globalAlpha = 0.35; ctx.fillRect(at[0].x, at[0].y - 7, Math.max(3, x1 - at[0].x), 14); ctx.globalAlpha = 1;
      if (part.label) {
        // Below the marks' words under the lane (y + 12), on white so
        // that nothing drawn there blurs it.
        ctx.font = '600 10px system-ui'; ctx.textAlign = 'left'; ctx.textBaseline = 'top';
        const lx = Math.max(GUTTER, at[0].x + 2), ly = at[0].y + 19, tw = ctx.measureText(part.label).width;
        ctx.fillStyle = 'rgba(255,255,255,.9)'; ctx.fillRect(lx - 2, ly - 1, tw + 4, 13);
        ctx.fillStyle = RED; ctx.fillText(part.label, lx, ly);
      }
    } else if (part.role === 'not-before' && at[0] && at[1]) {
      ctx.setLineDash([6, 4]); ctx.beginPath(); ctx.moveTo(at[0].x, at[0].y); ctx.lineTo(at[1].x, at[1].y); ctx.stroke(); ctx.setLineDash([]);
      ctx.beginPath(); arrowHead(ctx, at[0].x, at[0].y, at[1].x, at[1].y, 9); ctx.fill();
      ctx.font = '600 10px system-ui'; ctx.textAlign = 'center'; ctx.textBaseline = 'bottom';
      ctx.fillText('not before', (at[0].x + at[1].x) / 2, (at[0].y + at[1].y) / 2 - 3);
    } else if (part.role === 'waits-for' && at[0]) {
      // Each edge of the wait-for graph fans out a little further right,
      // numbered; the numbers are spelled out in a box in the corner.
      const k = ++waits;
      pane.drawn.waits = k;
      const yTo = pane.laneY.get(part.to);
      const x1 = at[1] ? at[1].x : at[0].x + 30, y1 = at[1] ? at[1].y : yTo;
      if (y1 === undefined) continue;
      const mx = Math.max(at[0].x, x1) + 24 + 16 * k, my = (at[0].y + y1) / 2;
      ctx.beginPath(); ctx.moveTo(at[0].x, at[0].y); ctx.quadraticCurveTo(mx, my, x1, y1); ctx.stroke();
      ctx.beginPath(); arrowHead(ctx, mx, my, x1, y1, 9); ctx.fill();
      // The number at the curve's middle, moved down past those of the
      // edges before it where they would cover each other.
      const tx = (at[0].x + 2 * mx + x1) / 4;
      let ty = (at[0].y + 2 * my + y1) / 4;
      while (tags.some(([x, y]) => Math.abs(x - tx) < 18 && Math.abs(y - ty) < 14)) ty += 14;
      tags.push([tx, ty]);
      ctx.font = '600 10px system-ui'; ctx.textAlign = 'center'; ctx.textBaseline = 'middle';
      ctx.fillStyle = '#fff'; ctx.fillRect(tx - 8, ty - 6, 16, 12); ctx.fillStyle = RED; ctx.fillText('#' + k, tx, ty);
      edges.push(`#${k} P${part.from} waits for P${part.to}${part.label ? ': ' + part.label : ''}`);
    } else if (part.role === 'same') {
      const pts = at.filter(Boolean);
      ctx.setLineDash([2, 3]); ctx.beginPath();
      pts.forEach((a, i) => (i ? ctx.lineTo(a.x, a.y) : ctx.moveTo(a.x, a.y)));
      ctx.stroke(); ctx.setLineDash([]);
    }
  }
  for (const e of f.events) {
    const at = e.s ? placeOf(pane, e) : null;
    if (!at) continue;
    ctx.beginPath(); ctx.arc(at.x, at.y, 8, 0, 7); ctx.stroke();
    pane.drawn.finding++;
  }
  ctx.lineWidth = 1;
  if (edges.length) {
    ctx.font = '600 11px system-ui'; ctx.textAlign = 'left'; ctx.textBaseline = 'top';
    const bw = Math.max(...edges.map((t) => ctx.measureText(t).width)) + 14, bh = 16 * edges.length + 8;
    // Below the lanes where there is room, else in the top corner.
    const lastY = Math.max(...pane.laneY.values());
    const bx = w - bw - 12, by = lastY + 30 + bh < pane.canvas.clientHeight - 20 ? lastY + 30 : RULER + 6;
    ctx.fillStyle = 'rgba(255,255,255,.92)'; ctx.fillRect(bx, by, bw, bh);
    ctx.strokeStyle = RED; ctx.strokeRect(bx + 0.5, by + 0.5, bw, bh);
    ctx.fillStyle = RED;
    edges.forEach((t, i) => ctx.fillText(t, bx + 7, by + 5 + 16 * i));
  }
}

function drawSelection(ctx, pane, sc) {
  if (!S.sel || S.sel.pane !== pane) return;
  const at = placeOf(pane, { p: S.sel.p, s: S.sel.s, l: S.sel.info ? S.sel.info.lamport : 0, w: S.sel.info ? S.sel.info.wall : 0 });
  if (!at) return;
  ctx.strokeStyle = '#000'; ctx.lineWidth = 2.5;
  ctx.beginPath(); ctx.arc(at.x, at.y, 9, 0, 7); ctx.stroke(); ctx.lineWidth = 1;
}

function drawDiffFlags(ctx, pane, sc, w) {
  if (!S.diff || !S.diff.procs) return;
  const side = pane === S.panes[0] ? 'a' : 'b';
  for (const d of S.diff.procs) {
    const pt = d[side] || d[side === 'a' ? 'b' : 'a'];
    if (!pt) continue;
    const y = pane.laneY.get(d.p);
    if (y === undefined) continue;
    const x = sc.x(key(pt));
    if (x > w) continue;
    const x0 = Math.max(GUTTER, x);
    ctx.fillStyle = PALETTE.finding + '10'; ctx.fillRect(x0, y - 14, w - x0, 28);
    if (x < GUTTER) continue;
    ctx.strokeStyle = RED; ctx.fillStyle = RED; ctx.lineWidth = 2;
    ctx.beginPath(); ctx.moveTo(x, y); ctx.lineTo(x, y - 22); ctx.stroke();
    ctx.beginPath(); ctx.moveTo(x, y - 22); ctx.lineTo(x + 12, y - 18); ctx.lineTo(x, y - 14); ctx.fill();
    ctx.font = '600 10px system-ui'; ctx.textAlign = 'left'; ctx.textBaseline = 'bottom';
    ctx.fillText(`differs from here (P${d.p}#${d.seq})`, x + 14, y - 14);
    pane.drawn.diff++;
    ctx.lineWidth = 1;
  }
}

// ---- overview strip ----
function drawOverview() {
  const c = $('overview');
  const { ctx, w, h } = sizeCanvas(c);
  ctx.clearRect(0, 0, w, h);
  const pane = S.panes[0];
  if (!pane || !pane.outline) return;
  const ov = pane.ov[S.axis];
  if (!ov) {
    ctx.fillStyle = '#888'; ctx.font = '12px system-ui'; ctx.textBaseline = 'middle'; ctx.textAlign = 'left';
    ctx.fillText('counting the whole run’s events…', GUTTER, h / 2);
    return;
  }
  const x = (k) => GUTTER + (k - ov.lo) / Math.max(1, ov.hi - ov.lo + 1) * (w - GUTTER - 16);
  ctx.fillStyle = '#666'; ctx.font = '11px system-ui'; ctx.textBaseline = 'middle'; ctx.textAlign = 'left';
  ctx.fillText('whole run', 6, 14);
  ctx.fillStyle = '#999'; ctx.font = '10px system-ui'; ctx.fillText(`from ${fmtKey(ov.lo)}`, 6, 30); ctx.fillText(`to ${fmtKey(ov.hi)}`, 6, 43);
  let peak = 1;
  for (const c of ov.counts) peak = Math.max(peak, c);
  const bw = (w - GUTTER - 16) / ov.n;
  const top = 4, hh = h - 22;
  ctx.fillStyle = '#9db3d9';
  for (let b = 0; b < ov.n; b++) {
    const v = ov.counts[b] / peak * hh;
    if (v > 0) ctx.fillRect(GUTTER + b * bw, top + hh - v, Math.max(1, bw), v);
  }
  // Critical sections: one band per resource; red where more than one
  // process is inside at once.
  const res = Object.keys(ov.cs || {});
  const band = Math.min(6, 14 / Math.max(1, res.length));
  res.forEach((r, i) => {
    const occ = ov.cs[r];
    const y = h - 16 + i * band;
    for (let b = 0; b < occ.length; b++) {
      if (!occ[b]) continue;
      ctx.fillStyle = occ[b] > 1.05 ? RED : resColor(r);
      ctx.globalAlpha = Math.min(1, 0.3 + 0.7 * occ[b]);
      ctx.fillRect(GUTTER + b * bw, y, Math.max(1, bw), band - 1);
    }
  });
  ctx.globalAlpha = 1;
  // Findings and SQL rows.
  ctx.fillStyle = RED;
  for (const f of S.findings) {
    const e = f.events.find((e) => e.s);
    if (!e) continue;
    const fx = x(key(e));
    ctx.globalAlpha = f === S.active ? 1 : 0.55;
    ctx.beginPath(); ctx.moveTo(fx, top + 8); ctx.lineTo(fx - 4, top); ctx.lineTo(fx + 4, top); ctx.fill();
  }
  ctx.globalAlpha = 1;
  ctx.fillStyle = PALETTE.highlight;
  for (const pt of S.hlList.slice(0, 5000)) ctx.fillRect(x(key(pt)) - 0.5, top + 10, 1.5, 10);
  // The view.
  if (S.view) {
    const x0 = x(S.view.lo), x1 = x(S.view.hi);
    ctx.strokeStyle = '#2a5db0'; ctx.lineWidth = 2; ctx.fillStyle = 'rgba(42,93,176,0.12)';
    ctx.fillRect(x0, 1, Math.max(3, x1 - x0), h - 2); ctx.strokeRect(x0, 1, Math.max(3, x1 - x0), h - 2); ctx.lineWidth = 1;
  }
  c._x = x; c._ov = ov;
}

function bindOverview() {
  const c = $('overview');
  let down = false;
  const go = (ev) => {
    const ov = c._ov;
    if (!ov || !S.view) return;
    const r = c.getBoundingClientRect();
    const w = c.clientWidth;
    const k = ov.lo + (ev.clientX - r.left - GUTTER) / (w - GUTTER - 16) * (ov.hi - ov.lo + 1);
    centerOn(k);
  };
  c.addEventListener('mousedown', (ev) => { down = true; go(ev); });
  window.addEventListener('mousemove', (ev) => { if (down) go(ev); });
  window.addEventListener('mouseup', () => { down = false; });
}

// ---- interaction ----
function bindCanvas(pane) {
  const c = pane.canvas;
  let drag = null;
  c.addEventListener('mousedown', (ev) => {
    drag = { x: ev.clientX, view: { ...S.view }, moved: false };
    c.classList.add('dragging');
  });
  window.addEventListener('mousemove', (ev) => {
    if (drag) {
      const dx = ev.clientX - drag.x;
      if (Math.abs(dx) > 3) drag.moved = true;
      if (drag.moved) {
        const sc = scale(c.clientWidth);
        const dk = dx / sc.k;
        setView(drag.view.lo - dk, drag.view.hi - dk, true);
      }
      $('tip').hidden = true;
      return;
    }
    if (ev.target === c) hover(pane, ev); else if (ev.target.tagName === 'CANVAS') { /* other pane */ } else $('tip').hidden = true;
  });
  window.addEventListener('mouseup', (ev) => {
    if (!drag) return;
    const moved = drag.moved;
    drag = null;
    c.classList.remove('dragging');
    if (!moved && ev.target === c) click(pane, ev);
  });
  c.addEventListener('wheel', (ev) => {
    ev.preventDefault();
    if (!S.view) return;
    const r = c.getBoundingClientRect();
    const sc = scale(c.clientWidth);
    const at = sc.toKey(Math.max(GUTTER, ev.clientX - r.left));
    if (ev.shiftKey || Math.abs(ev.deltaX) > Math.abs(ev.deltaY)) { pan((ev.deltaX || ev.deltaY) / 600); return; }
    zoom(Math.exp(ev.deltaY * 0.0015), at);
  }, { passive: false });
  c.addEventListener('mouseleave', () => { $('tip').hidden = true; });
}

function nearest(pane, ev) {
  const r = pane.canvas.getBoundingClientRect();
  const x = ev.clientX - r.left, y = ev.clientY - r.top;
  let best = null, bd = 100;
  for (const h of pane.hits) {
    const d = (h.x - x) ** 2 + (h.y - y) ** 2;
    if (d < bd) { bd = d; best = h; }
  }
  return best;
}

function describe(e) {
  switch (e.k) {
    case 'send': return `send ${e.t} to P${e.pe}${e.f && e.f !== 'delivered' ? ' (' + e.f.replace(/_/g, ' ') + ')' : ''}`;
    case 'receive': return `receive ${e.t} from P${e.pe}`;
    case 'drop': return e.d || `drop ${e.t} (P${e.pe})`;
    case 'cs_request': case 'cs_enter': case 'cs_exit': return `${e.k}(${e.r})`;
  }
  return e.d || e.k;
}

let tipFrame = 0;
function hover(pane, ev) {
  cancelAnimationFrame(tipFrame);
  tipFrame = requestAnimationFrame(() => {
    const tip = $('tip');
    const h = nearest(pane, ev);
    if (!h) { tip.hidden = true; return; }
    const e = h.e;
    tip.textContent = h.group
      ? `${h.group.n} local events P${e.p}#${h.group.first.s}…#${h.group.last.s} (click for the first; untick "collapse" to see each)`
      : `${refName(e.p, e.s)} ${describe(e)} · Lamport ${e.l} · +${fmtDur(e.w)}`;
    tip.style.left = (ev.clientX + 14) + 'px'; tip.style.top = (ev.clientY + 12) + 'px';
    tip.hidden = false;
  });
}

function click(pane, ev) {
  const h = nearest(pane, ev);
  if (!h) { S.sel = null; showEvent(null); draw(); return; }
  select(pane, h.e.p, h.e.s);
}

async function select(pane, p, s, center) {
  S.sel = { pane, p, s, info: null };
  showTab('event');
  $('eventInfo').innerHTML = `<p>reading ${refName(p, s)}…</p>`;
  try {
    const info = await api('/api/event?' + q({ run: pane.key, ref: refName(p, s) }));
    if (!S.sel || S.sel.p !== p || S.sel.s !== s) return;
    S.sel.info = info;
    if (center) centerOn(key({ l: info.lamport, w: info.wall }));
    showEvent(pane, info);
    draw();
  } catch (err) {
    $('eventInfo').innerHTML = `<p class="err">${esc(err.message)}</p>`;
  }
}

function refLink(name) { return name ? `<a class="ref" data-ref="${esc(name)}">${esc(name)}</a>` : '—'; }

function showEvent(pane, e) {
  const el = $('eventInfo');
  if (!e) { el.innerHTML = ''; return; }
  const rows = [
    ['event', `<b>${esc(e.ref)}</b> (id ${e.id})`],
    ['what', esc(e.what)],
    ['kind', esc(e.kind)],
    ['Lamport', e.lamport],
    ['wall', `+${fmtDur(e.wall)} <span class="hint">(${e.wallNs} ns)</span>`],
    ['vector clock', e.vc ? `[${e.vc.join(', ')}]` : '—'],
  ];
  if (e.peer !== null) rows.push(['peer', `P${e.peer}`]);
  if (e.resource !== null) rows.push(['resource', esc(e.resource)]);
  // A message by its name, "P1's message 1"; its id (the messages
  // table's, for SQL) shows on hover.
  if (e.msg) rows.push(['message', `${esc(e.msg.type)}, <span title="id ${e.msg.id} in the messages table">${esc(e.msg.name)}</span>, P${e.msg.sender} → P${e.msg.receiver}, ${esc(e.msg.fate.replace(/_/g, ' '))}; sent ${refLink(e.msg.send)}, received ${refLink(e.msg.recv)}`]);
  if (e.detail) rows.push(['detail', `<pre>${esc(JSON.stringify(e.detail, null, 1))}</pre>`]);
  let causalText = esc(e.causal || '');
  if (e.past) {
    const past = e.past.reduce((a, b) => a + b, 0) - 1;
    const fut = e.future.reduce((a, f, q) => a + (f ? pane.outline.lanes[q].events - f + 1 : 0), 0) - 1;
    causalText = `<span style="color:#1f5fbf">■</span> past: ${past.toLocaleString()} events happened before it · <span style="color:#e07b00">■</span> future: ${fut.toLocaleString()} events it could affect; the rest (faded) is concurrent with it.`;
  }
  rows.push(['causality', causalText]);
  el.innerHTML = `<table>${rows.map(([k, v]) => `<tr><td>${k}</td><td>${v}</td></tr>`).join('')}</table>
    <h4>Algorithm state of P${e.proc} after it</h4><div class="state" id="state">${S.replay ? 'replaying…' : '<span class="hint">this dmx cannot replay runs yet: the state after an event needs dmx replay</span>'}</div>`;
  el.querySelectorAll('a.ref').forEach((a) => a.addEventListener('click', () => { const [p, s] = a.dataset.ref.slice(1).split('#').map(Number); select(pane, p, s, true); }));
  if (S.replay) {
    const ref = e.ref;
    api('/api/state?' + q({ run: pane.key, ref })).then((st) => {
      if (!S.sel || refName(S.sel.p, S.sel.s) !== ref) return;
      $('state').innerHTML = stateHTML(st);
      $('state').querySelectorAll('a.ref').forEach((a) => a.addEventListener('click', () => { const [p, s] = a.dataset.ref.slice(1).split('#').map(Number); select(pane, p, s, true); }));
    }).catch((err) => {
      if (!S.sel || refName(S.sel.p, S.sel.s) !== ref) return;
      $('state').innerHTML = `<p class="err nostate">${esc(err.message)}</p>`;
    });
  }
}

// stateHTML draws the answer of /api/state: each machine's state as a
// table of its members, those the event (or the input it is an output of)
// changed marked, with what they were before.
function stateHTML(st) {
  const step = st.step, s = step.state;
  const changed = step.input ? (step.changed || []) : (st.inputChanged || []);
  const was = {};
  for (const c of changed) was[c.resource + '\u0000' + c.key] = c.before;
  const js = (v) => esc(JSON.stringify(v));
  let h = step.input
    ? `<p class="hint">after the input ${esc(step.event.ref)}${changed.length ? `, which changed ${changed.length === 1 ? 'one member' : changed.length + ' members'} (marked, with what they were)` : ', which changed nothing the machines show'}</p>`
    : `<p class="hint">${esc(step.event.ref)} is an output of the input ${refLink(step.cause)}: the state is the one that input left${changed.length ? ' (what it changed is marked)' : ''}</p>`;
  if (s.down) h += '<p><b>down</b> (crashed)</p>';
  for (const m of s.machines || []) {
    const obj = m.state;
    h += `<table class="machine"><tr><th colspan="2">${m.resource ? 'resource ' + esc(m.resource) : 'machine'}</th></tr>`;
    if (obj && typeof obj === 'object' && !Array.isArray(obj)) {
      const keys = Object.keys(obj);
      for (const c of changed) if (c.resource === m.resource && !(c.key in obj)) keys.push(c.key);
      for (const k of keys) {
        const id = m.resource + '\u0000' + k;
        const ch = id in was;
        const now = k in obj ? js(obj[k]) : '<i>gone</i>';
        h += `<tr${ch ? ' class="changed"' : ''}><td>${esc(k)}</td><td>${now}${ch ? `<div class="was">was ${was[id] === null ? '<i>absent</i>' : js(was[id])}</div>` : ''}</td></tr>`;
      }
    } else {
      h += `<tr><td colspan="2">${js(obj)}</td></tr>`;
    }
    h += '</table>';
  }
  if (!(s.machines || []).length && !s.down) h += '<p class="hint">no machines yet (the process has not started)</p>';
  h += `<p class="hint">timers set: ${s.timers && s.timers.length ? esc(s.timers.join(', ')) : 'none'} · Lamport ${s.lamport} · vc [${(s.vc || []).join(', ')}]</p>`;
  const p = step.event.proc;
  h += `<p class="hint cost">${st.cached ? 'answered from before' : `replayed ${st.replayed.toLocaleString()} event${st.replayed === 1 ? '' : 's'} of P${p} ${st.from ? 'on from P' + p + '#' + st.from : 'from its start'} in ${st.ms} ms`} (dmx replay, this process only)</p>`;
  return h;
}

// ---- jump ----
async function jump(text) {
  text = text.trim();
  if (!text) return;
  const pane = S.panes[0];
  const m = /^P?(\d+)\s*#\s*(\d+)$/i.exec(text);
  if (m) { await select(pane, +m[1], +m[2], true); return; }
  let k = null;
  if (S.axis === 'wall') k = parseDur(text.replace(/^\+/, ''));
  else if (/^\d+$/.test(text)) k = +text;
  if (k === null) { status(`"${text}": want an event (P3#120) or ${S.axis === 'wall' ? 'a time since the start (120ms)' : 'a Lamport time (1500)'}`, true); return; }
  centerOn(k);
}

// ---- findings ----
async function loadFindings(pane) {
  const el = $('findings');
  const runKey = pane.key;
  $('checks').innerHTML = '<p class="hint">checking the run…</p>';
  for (;;) {
    let rep;
    try {
      rep = await api('/api/findings?' + q({ run: pane.key, wait: 1500 }));
    } catch (err) { $('checks').innerHTML = `<p class="err">${esc(err.message)}</p>`; return; }
    if (pane.key !== runKey) return;
    if (rep.state === 'running') { $('checks').innerHTML = `<p class="hint">checking the run… ${rep.seconds.toFixed(1)}s</p>`; continue; }
    if (rep.state === 'error') { $('checks').innerHTML = `<p class="err">${esc(rep.error)}</p>`; return; }
    if (rep.state === 'none') { $('checks').innerHTML = '<p class="hint">no checks wired in</p>'; return; }
    S.findings = rep.findings;
    $('fcount').textContent = rep.findings.length ? `(${rep.findings.length})` : '';
    $('checks').innerHTML = `<p>verdict: <span class="verdict-${rep.verdict}">${rep.verdict}</span> <span class="hint">(checked in ${rep.seconds.toFixed(1)}s)</span></p>
      <table><tr><th>check</th><th>verdict</th><th>findings</th><th>note</th></tr>${rep.checks.map((c) => `<tr><td>${esc(c.check)}</td><td class="verdict-${c.verdict}">${c.verdict}</td><td>${c.findings}</td><td>${esc(c.note || '')}</td></tr>`).join('')}</table>`;
    el.innerHTML = '';
    rep.findings.forEach((f) => {
      const li = document.createElement('li');
      li.innerHTML = `<span class="check">${esc(f.check)}</span>: ${esc(f.message)}`;
      li.addEventListener('click', () => showFinding(f, li));
      el.appendChild(li);
    });
    // A link to a finding (#finding=N) opens on it.
    const want = +(readHash().finding || 0);
    if (want > 0 && want <= rep.findings.length && !S.active) { showTab('findings'); showFinding(rep.findings[want - 1], el.children[want - 1]); }
    // A run with findings says so at once: the list comes up unless the
    // user has chosen a tab or an event meanwhile.
    else if (rep.findings.length && !S.tabChosen && !S.sel) showTab('findings');
    draw();
    return;
  }
}

function showFinding(f, li) {
  S.active = f;
  document.querySelectorAll('#findings li').forEach((x) => x.classList.toggle('on', x === li));
  const pts = [...f.events, ...(f.parts || []).flatMap((p) => p.events)].filter((e) => e.s);
  if (!pts.length) { draw(); return; }
  const ks = pts.map(key);
  const lo = Math.min(...ks), hi = Math.max(...ks);
  const w = Math.max((hi - lo) * 1.6, S.axis === 'wall' ? 2e6 : 40);
  // Keep the finding's lanes in view.
  for (const e of pts) if (S.hidden.has(e.p)) { S.hidden.delete(e.p); renderLanes(); }
  setView((lo + hi) / 2 - w / 2, (lo + hi) / 2 + w / 2, true);
}

// ---- SQL ----
async function runSQL() {
  const pane = S.panes[0];
  const st = $('sqlStatus');
  st.className = ''; st.textContent = 'running…';
  try {
    const res = await api('/api/sql', { run: pane.key, query: $('sql').value });
    S.hl = new Map(); S.hlList = res.highlight.map((h) => ({ ...h, p: h.p }));
    for (const h of S.hlList) S.hl.set(h.p + '#' + h.s, h);
    S.hlList.sort((a, b) => key(a) - key(b));
    S.hlAt = -1;
    st.textContent = `${res.rows.length.toLocaleString()} rows${res.more ? ' (more not shown)' : ''} in ${res.ms} ms · ${S.hlList.length.toLocaleString()} events highlighted${res.how ? ' (by ' + res.how + ')' : ''}`;
    const t = document.createElement('table');
    t.innerHTML = `<tr>${res.columns.map((c) => `<th>${esc(c)}</th>`).join('')}</tr>` +
      res.rows.map((r) => `<tr>${r.map((v) => `<td>${v === null ? '<i>null</i>' : esc(v)}</td>`).join('')}</tr>`).join('');
    $('sqlResult').innerHTML = '';
    $('sqlResult').appendChild(t);
    // A row that names a highlighted event moves the view to it.
    const idCol = res.columns.findIndex((c) => /^(id|event|.*_event)$/i.test(c));
    const pc = res.columns.findIndex((c) => /^proc$/i.test(c)), sc = res.columns.findIndex((c) => /^seq$/i.test(c));
    const byId = new Map(S.hlList.map((h) => [h.i, h]));
    [...t.rows].slice(1).forEach((tr, i) => {
      const row = res.rows[i];
      const h = (idCol >= 0 && byId.get(row[idCol])) || (pc >= 0 && sc >= 0 && S.hl.get(row[pc] + '#' + row[sc]));
      if (!h) return;
      tr.className = 'hl';
      tr.addEventListener('click', () => { centerOn(key(h)); select(pane, h.p, h.s); });
    });
    if (S.hlList.length) nextHL(1);
    draw();
  } catch (err) {
    st.className = 'err'; st.textContent = err.message;
  }
}

// nextHL moves the view to the next (dir 1) or previous (-1) highlighted
// event; the first move goes to the first one at or after the view's start.
function nextHL(dir) {
  const n = S.hlList.length;
  if (!n) return;
  if (S.hlAt < 0) {
    const i = S.hlList.findIndex((h) => key(h) >= S.view.lo);
    S.hlAt = i < 0 ? 0 : i;
  } else {
    S.hlAt = (S.hlAt + dir + n) % n;
  }
  const h = S.hlList[S.hlAt];
  centerOn(key(h));
}

// ---- lanes ----
function renderLanes() {
  const pane = S.panes[0];
  const ul = $('lanes');
  ul.innerHTML = '';
  S.order.forEach((p, i) => {
    if (p >= pane.outline.lanes.length) return;
    const ln = pane.outline.lanes[p];
    const li = document.createElement('li');
    li.innerHTML = `<input type="checkbox" ${S.hidden.has(p) ? '' : 'checked'}><span>${esc(ln.name)}${ln.role ? ' <i class="hint">' + esc(ln.role) + '</i>' : ''} <span class="hint">${ln.events.toLocaleString()} events</span></span><button title="up">↑</button><button title="down">↓</button>`;
    const [cb] = li.getElementsByTagName('input');
    const [up, dn] = li.getElementsByTagName('button');
    cb.addEventListener('change', () => { if (cb.checked) S.hidden.delete(p); else S.hidden.add(p); lanesChanged(); });
    up.addEventListener('click', () => { if (i > 0) { [S.order[i - 1], S.order[i]] = [S.order[i], S.order[i - 1]]; lanesChanged(); } });
    dn.addEventListener('click', () => { if (i < S.order.length - 1) { [S.order[i + 1], S.order[i]] = [S.order[i], S.order[i + 1]]; lanesChanged(); } });
    ul.appendChild(li);
  });
}
function lanesChanged() {
  renderLanes();
  for (const p of S.panes) if (!p.el.hidden) p.need();
  draw();
  saveHash();
}
function filterLanes(text) {
  const pane = S.panes[0];
  text = text.trim();
  S.hidden = new Set();
  if (text) {
    const keep = new Set();
    for (const part of text.split(',')) {
      const m = /^\s*P?(\d+)\s*(?:-\s*P?(\d+))?\s*$/i.exec(part);
      if (m) { for (let p = +m[1]; p <= +(m[2] || m[1]); p++) keep.add(p); continue; }
      pane.outline.lanes.forEach((ln) => { if (ln.name.toLowerCase().includes(part.trim().toLowerCase())) keep.add(ln.p); });
    }
    pane.outline.lanes.forEach((ln) => { if (!keep.has(ln.p)) S.hidden.add(ln.p); });
  }
  lanesChanged();
}

// ---- compare ----
async function compareWith(keyB) {
  const b = S.panes[1];
  S.diff = null;
  $('diff').innerHTML = '';
  if (!keyB) { b.el.hidden = true; legend(); draw(); saveHash(); return; }
  b.el.hidden = false;
  try {
    await b.load(keyB);
  } catch (err) { status(err.message, true); return; }
  legend();
  const n = Math.max(S.panes[0].outline.lanes.length, b.outline.lanes.length);
  for (let p = 0; p < n; p++) if (!S.order.includes(p)) S.order.push(p);
  setView(S.view.lo, S.view.hi);
  showTab('compare');
  $('diff').innerHTML = '<p class="hint">comparing the histories…</p>';
  for (;;) {
    let res;
    try { res = await api('/api/diff?' + q({ a: S.panes[0].key, b: keyB, wait: 1500 })); } catch (err) { $('diff').innerHTML = `<p class="err">${esc(err.message)}</p>`; return; }
    if (b.key !== keyB) return;
    if (res.state === 'running') continue;
    if (res.state === 'error') { $('diff').innerHTML = `<p class="err">${esc(res.error)}</p>`; return; }
    S.diff = res;
    const items = res.procs.map((d, i) => `<li data-i="${i}"><b>P${d.p}</b> differs first at #${d.seq}:<br>top: ${esc(d.whatA)}<br>below: ${esc(d.whatB)}</li>`).join('');
    $('diff').innerHTML = `<p>${res.procs.length ? `${res.procs.length} processes differ` : 'the histories are the same'}${res.same ? `; ${res.same} the same throughout` : ''}. Flags in the diagram mark where.</p><ul>${items}</ul>`;
    $('diff').querySelectorAll('li').forEach((li) => li.addEventListener('click', () => {
      const d = res.procs[+li.dataset.i];
      const pts = [d.a, d.b].filter(Boolean);
      const ks = pts.map(key);
      centerOn((Math.min(...ks) + Math.max(...ks)) / 2);
    }));
    draw();
    saveHash();
    return;
  }
}

// ---- tabs, URL ----
function showTab(name) {
  document.querySelectorAll('nav button').forEach((b) => b.classList.toggle('on', b.dataset.tab === name));
  document.querySelectorAll('.tab').forEach((t) => { t.hidden = t.id !== 'tab-' + name; });
}

function saveHash() {
  if (!S.view || !S.panes[0]) return;
  const h = q({ run: S.panes[0].key, b: S.panes[1].el.hidden ? '' : S.panes[1].key, axis: S.axis, lo: Math.round(S.view.lo), hi: Math.round(S.view.hi), hide: [...S.hidden].join(','), finding: S.active ? S.active.n : '' });
  history.replaceState(null, '', '#' + h);
}
function readHash() {
  const o = {};
  for (const part of location.hash.slice(1).split('&')) { const [k, v] = part.split('='); if (k) o[k] = decodeURIComponent(v || ''); }
  return o;
}

async function setAxis(a) {
  if (a === S.axis) return;
  // Keep the same stretch of the run in view: convert through the event
  // nearest the view's centre.
  const pane = S.panes[0];
  const hits = pane.hits;
  S.axis = a;
  document.querySelectorAll('#axis button').forEach((b) => b.classList.toggle('on', b.dataset.axis === a));
  for (const p of S.panes) { if (p.outline) await p.overview(); p.data = null; }
  if (hits.length > 1) {
    const ks = hits.map((h) => key(h.e)).sort((x, y) => x - y);
    const lo = ks[0], hi = ks[ks.length - 1];
    setView(lo, Math.max(hi, lo + 1), true);
  } else fitAll();
}

async function openRun(keyA, hash) {
  const a = S.panes[0];
  status('reading the run…');
  S.sel = null; S.active = null; S.findings = []; S.hl = new Map(); S.hlList = []; S.diff = null;
  $('findings').innerHTML = ''; $('fcount').textContent = ''; showEvent(null);
  await a.load(keyA);
  S.order = a.outline.lanes.map((l) => l.p);
  S.hidden = new Set();
  if (hash && hash.hide) for (const p of hash.hide.split(',')) if (p !== '') S.hidden.add(+p);
  renderLanes();
  const note = $('note');
  note.hidden = !a.outline.note;
  note.textContent = a.outline.note || '';
  legend();
  if (hash && hash.lo !== undefined && hash.hi !== undefined && hash.lo !== '') setView(+hash.lo, +hash.hi);
  else initialView();
  loadFindings(a);
  $('sql').value = `SELECT id, proc, seq, kind, resource FROM events WHERE run = ${a.outline.run.id} AND kind = 'cs_enter' LIMIT 200`;
}

// legend names the message types and resources of the runs shown (their
// colours stay those the page gave them first, run after run).
function legend() {
  const el = $('legend');
  const shown = S.panes.filter((p) => p.outline && !p.el.hidden);
  const types = [...S.typeColor.keys()].filter((t) => shown.some((p) => p.types.has(t)));
  // Heartbeats keep their grey outside the palette; named when there.
  if (shown.some((p) => p.types.has('heartbeat'))) types.push('heartbeat');
  const res = [...S.resColor.keys()].filter((r) => shown.some((p) => (p.outline.resources || []).includes(r)));
  el.innerHTML = types.map((t) => `<span><i style="background:${typeColor(t)}"></i>${esc(t)}</span>`).join('') +
    res.map((r) => `<span><i style="background:${resColor(r)};height:8px;opacity:.6"></i>section on ${esc(r)}</span>`).join('') +
    `<span><i style="background:${PALETTE.crash};height:2px"></i>× crash</span><span><i style="background:${PALETTE.lost};height:2px"></i>× message lost</span><span><i style="background:${RED}"></i>finding</span><span><i style="background:${PALETTE.highlight}"></i>SQL rows</span><span><i style="background:${PALETTE.past}"></i>causal past</span><span><i style="background:${PALETTE.future}"></i>causal future</span>`;
}

async function main() {
  S.panes = [new Pane($('paneA'), 'A'), new Pane($('paneB'), 'B')];
  bindOverview();
  document.querySelectorAll('#axis button').forEach((b) => b.addEventListener('click', () => setAxis(b.dataset.axis)));
  document.querySelectorAll('nav button').forEach((b) => b.addEventListener('click', () => { S.tabChosen = true; showTab(b.dataset.tab); }));
  $('jump').addEventListener('submit', (ev) => { ev.preventDefault(); jump($('jumpTo').value); });
  $('zoomIn').addEventListener('click', () => zoom(0.5));
  $('zoomOut').addEventListener('click', () => zoom(2));
  $('fit').addEventListener('click', fitAll);
  $('collapse').addEventListener('change', (ev) => { S.collapse = ev.target.checked; draw(); });
  $('runSQL').addEventListener('click', runSQL);
  $('sql').addEventListener('keydown', (ev) => { if (ev.key === 'Enter' && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); runSQL(); } });
  $('prevHL').addEventListener('click', () => nextHL(-1));
  $('nextHL').addEventListener('click', () => nextHL(1));
  $('clearSQL').addEventListener('click', () => { S.hl = new Map(); S.hlList = []; $('sqlResult').innerHTML = ''; $('sqlStatus').textContent = ''; draw(); });
  $('laneFilter').addEventListener('change', (ev) => filterLanes(ev.target.value));
  $('allLanes').addEventListener('click', () => { $('laneFilter').value = ''; filterLanes(''); });
  window.addEventListener('resize', () => { for (const p of S.panes) if (!p.el.hidden) p.need(); draw(); });
  window.addEventListener('keydown', (ev) => {
    if (/INPUT|TEXTAREA|SELECT/.test(document.activeElement.tagName) || !S.view) return;
    if (ev.key === 'ArrowRight') pan(0.2);
    else if (ev.key === 'ArrowLeft') pan(-0.2);
    else if (ev.key === '+' || ev.key === '=') zoom(0.5);
    else if (ev.key === '-') zoom(2);
    else if (ev.key === '0') fitAll();
    else return;
    ev.preventDefault();
  });
  try {
    const runs = await api('/api/runs');
    S.runs = runs.runs; S.replay = runs.replay;
    $('sweepLink').hidden = S.runs.length < 2;
    const opt = (r) => `<option value="${esc(r.key)}">${esc(r.algorithm)} · run ${r.id} of ${esc(r.file.split('/').pop())}${r.seed ? ' · seed ' + esc(r.seed) : ''}</option>`;
    $('runA').innerHTML = S.runs.map(opt).join('');
    $('runB').innerHTML = '<option value="">(none)</option>' + S.runs.map(opt).join('');
    const h = readHash();
    if (h.axis === 'wall') { S.axis = 'wall'; document.querySelectorAll('#axis button').forEach((b) => b.classList.toggle('on', b.dataset.axis === 'wall')); }
    const first = S.runs.find((r) => r.key === h.run) ? h.run : S.runs[0].key;
    $('runA').value = first;
    $('runA').addEventListener('change', () => openRun($('runA').value).then(() => compareWith($('runB').value)).catch((err) => status(err.message, true)));
    $('runB').addEventListener('change', () => compareWith($('runB').value));
    await openRun(first, h);
    if (h.b && S.runs.find((r) => r.key === h.b)) { $('runB').value = h.b; compareWith(h.b); }
  } catch (err) {
    status(err.message, true);
  }
}

// dmxView tells a test (or a curious user at the console) what the page
// shows: the view, what each pane drew, where a drawn event is.
window.dmxView = () => ({
  axis: S.axis, view: S.view, findings: S.findings.length, active: S.active ? S.active.n : 0,
  highlights: S.hlList.length, selected: S.sel ? refName(S.sel.p, S.sel.s) : '',
  // The lanes of pane A, top to bottom.
  order: S.panes[0] ? [...S.panes[0].laneY].sort((a, b) => a[1] - b[1]).map(([p]) => p) : [],
  panes: S.panes.filter((p) => !p.el.hidden).map((p) => ({ key: p.key, drawn: p.drawn, held: p.data ? p.data.kind : '', inflight: !!p.inflight })),
  // Where an event of pane A that is drawn alone (not in a collapsed
  // group), with messages, is: page coordinates for a click.
  hit: (() => {
    const p = S.panes[0];
    const r = p.canvas.getBoundingClientRect();
    const h = p.hits.find((h) => !h.group && (h.e.k === 'receive' || h.e.k === 'send') && h.x > GUTTER + 40 && h.x < p.canvas.clientWidth - 40);
    return h ? { x: r.left + h.x, y: r.top + h.y, ref: refName(h.e.p, h.e.s) } : null;
  })(),
});

// dmxPanBench pans the view by step of its width each frame for frames
// frames, as a drag does, and reports how long each frame's drawing took
// and in how many frames the data held did not cover the view.
window.dmxPanBench = async (frames, step) => {
  const ms = [], gaps = [];
  let uncovered = 0, last = performance.now();
  for (let i = 0; i < frames; i++) {
    pan(step);
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    const now = performance.now();
    gaps.push(now - last); last = now;
    const d = S.panes[0].drawn;
    ms.push(d.ms);
    if (!d.covered) uncovered++;
  }
  const q = (a, f) => a.slice().sort((x, y) => x - y)[Math.min(a.length - 1, Math.floor(a.length * f))];
  return { frames, drawMax: Math.max(...ms), drawP50: q(ms, 0.5), drawP95: q(ms, 0.95), frameP95: q(gaps, 0.95), frameMax: Math.max(...gaps), uncovered };
};

main();

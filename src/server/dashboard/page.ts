/**
 * The dashboard page (`GET /__dashboard`): one HTML document with its style and script inline (no
 * CDN, no framework, no build step), which polls the JSON (`/__dashboard/data`) once a second and
 * draws it with the DOM and SVG. Every name from outside (a route label, a key) goes into the page
 * as text (`textContent`, `setAttribute`), never as markup; the Content-Security-Policy allows only
 * this script and this style, by their hashes, and requests to the page's own origin.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import { DASHBOARD_BUCKETS } from './timeline.js';

/** Where the page polls its data from. */
export const DASHBOARD_DATA_PATH = '/__dashboard/data';
/** Milliseconds between two polls of the page. */
export const DASHBOARD_POLL_MS = 1000;

const STYLE = `
body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#1d2433;background:#f6f7f9}
header{background:#1d2433;color:#fff;padding:12px 20px}
h1{font-size:18px;margin:0}h2{font-size:16px;margin:20px 0 8px}h3{font-size:14px;margin:0 0 6px}
main{padding:0 20px 20px}
#status{margin:4px 0 0;color:#c9d1e0}#status.error{color:#ff9b9b}
.totals{display:flex;gap:24px;margin:10px 0 0}.totals div{display:flex;flex-direction:column}
.totals dt{font-size:12px;color:#c9d1e0}.totals dd{margin:0;font-size:20px;font-weight:600}
.card{background:#fff;border:1px solid #dde1e8;border-radius:6px;padding:12px;margin:0 0 12px}
.counts span{margin-right:16px}.ok{fill:#2f9e61}.no{fill:#d64545}.axis{fill:#6b7385;font-size:10px}
.admitted{color:#2f9e61;font-weight:600}.rejected{color:#d64545;font-weight:600}
table{border-collapse:collapse;margin:6px 0}td,th{border-bottom:1px solid #e6e9ef;padding:3px 10px 3px 0;text-align:left}
td.n,th.n{text-align:right}.cols{display:flex;gap:32px;flex-wrap:wrap}.muted{color:#6b7385}
`;

const SCRIPT = `
'use strict';
var SVG = 'http://www.w3.org/2000/svg';
var BUCKETS = ${DASHBOARD_BUCKETS};
var renders = 0;
function el(tag, attrs) {
  var e = document.createElement(tag);
  for (var k in attrs) e.setAttribute(k, String(attrs[k]));
  for (var i = 2; i < arguments.length; i++) {
    var c = arguments[i];
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}
function svg(tag, attrs) {
  var e = document.createElementNS(SVG, tag);
  for (var k in attrs) e.setAttribute(k, String(attrs[k]));
  return e;
}
function table(heads, rows, numeric) {
  var t = el('table', {});
  var h = el('tr', {});
  heads.forEach(function (x, i) { h.append(el('th', numeric[i] ? { class: 'n' } : {}, x)); });
  t.append(h);
  rows.forEach(function (r) {
    var tr = el('tr', {});
    r.forEach(function (x, i) { tr.append(el('td', numeric[i] ? { class: 'n' } : {}, x)); });
    t.append(tr);
  });
  if (rows.length === 0) t.append(el('tr', {}, el('td', { class: 'muted', colspan: heads.length }, 'none yet')));
  return t;
}
function sum(xs) { return xs.reduce(function (a, b) { return a + b; }, 0); }
function clock(ms) { return new Date(ms).toISOString().slice(11, 19); }
function chart(series, timeline) {
  var W = 900, H = 120, bw = W / BUCKETS, n = series.admitted.length, max = 1;
  for (var i = 0; i < n; i++) max = Math.max(max, series.admitted[i] + series.rejected[i]);
  var s = svg('svg', { viewBox: '0 0 ' + W + ' ' + (H + 14), width: W, height: H + 14, class: 'chart' });
  for (var j = 0; j < n; j++) {
    var a = series.admitted[j], r = series.rejected[j];
    var g = svg('g', { 'data-admitted': a, 'data-rejected': r });
    var x = W - (n - j) * bw, ha = (a / max) * H, hr = (r / max) * H;
    var title = svg('title', {});
    title.textContent = clock(timeline.end - (n - j) * timeline.bucketMs) + ': ' + a + ' admitted, ' + r + ' rejected';
    g.append(title);
    g.append(svg('rect', { class: 'ok', x: x, y: H - ha, width: bw, height: ha }));
    g.append(svg('rect', { class: 'no', x: x, y: H - ha - hr, width: bw, height: hr }));
    s.append(g);
  }
  var top = svg('text', { class: 'axis', x: 2, y: 10 }); top.textContent = max + ' per ' + timeline.bucketMs / 1000 + ' s';
  var left = svg('text', { class: 'axis', x: 2, y: H + 12 }); left.textContent = '-' + (BUCKETS * timeline.bucketMs) / 60000 + ' min';
  var right = svg('text', { class: 'axis', x: W - 24, y: H + 12 }); right.textContent = 'now';
  s.append(top, left, right);
  return s;
}
function histogram(h) {
  var W = 360, H = 80, n = h.counts.length, bw = W / n, max = Math.max(1, Math.max.apply(null, h.counts));
  var s = svg('svg', { viewBox: '0 0 ' + W + ' ' + (H + 14), width: W, height: H + 14 });
  h.counts.forEach(function (c, i) {
    var label = i < h.bounds.length ? '<=' + h.bounds[i] + ' s' : '>' + h.bounds[h.bounds.length - 1] + ' s';
    var g = svg('g', { 'data-count': c });
    var title = svg('title', {}); title.textContent = label + ': ' + c; g.append(title);
    g.append(svg('rect', { class: 'no', x: i * bw + 1, y: H - (c / max) * H, width: bw - 2, height: (c / max) * H }));
    var t = svg('text', { class: 'axis', x: i * bw + 1, y: H + 12 }); t.textContent = i < h.bounds.length ? String(h.bounds[i]) : '+';
    g.append(t);
    s.append(g);
  });
  return s;
}
function render(d) {
  document.getElementById('total-admitted').textContent = d.totals.admitted;
  document.getElementById('total-rejected').textContent = d.totals.rejected;
  document.getElementById('total-degraded').textContent = d.totals.degraded;
  document.getElementById('total-failed-closed').textContent = d.totals.failedClosed;
  var series = new Map(d.timeline.routes.map(function (s) { return [s.route, s]; }));
  var latency = new Map(d.decision.map(function (h) { return [h.route, h]; }));
  var routes = document.getElementById('routes');
  routes.replaceChildren.apply(routes, d.routes.map(function (r) {
    var s = series.get(r.route) || { admitted: [], rejected: [] };
    var lat = latency.get(r.route);
    var card = el('article', { class: 'card route', 'data-route': r.route }, el('h3', {}, r.route));
    card.append(el('p', { class: 'counts' },
      el('span', {}, 'admitted ', el('span', { class: 'admitted' }, r.admitted)),
      el('span', {}, 'rejected ', el('span', { class: 'rejected' }, r.rejected)),
      el('span', { class: 'muted' }, 'in the chart: ' + sum(s.admitted) + ' admitted, ' + sum(s.rejected) + ' rejected'),
      el('span', { class: 'muted' }, lat && lat.count ? 'decision ' + ((lat.sum / lat.count) * 1000).toFixed(3) + ' ms on average' : '')));
    card.append(chart(s, d.timeline));
    card.append(table(['limit', 'allows', 'unit', 'rejected by it', 'keys nearly spent'],
      r.limits.map(function (l) { return [l.name, l.description, l.unit, l.rejected, l.nearlySpent]; }),
      [false, false, false, true, true]));
    var faults = ['unavailable', 'serverErrors', 'resets', 'degraded', 'failedClosed', 'storeErrors']
      .filter(function (k) { return r[k] > 0; }).map(function (k) { return k + ' ' + r[k]; });
    if (faults.length > 0) card.append(el('p', { class: 'muted' }, faults.join(', ')));
    return card;
  }));
  var keyRows = function (hits) { return hits.map(function (h) { return [h.key, h.count, h.error]; }); };
  document.getElementById('top-requests').replaceChildren(el('h3', {}, 'by requests'),
    table(['key', 'requests', 'may over-count by'], keyRows(d.topKeys.requests), [false, true, true]));
  document.getElementById('top-cost').replaceChildren(el('h3', {}, 'by weighted cost'),
    table(['key', 'cost', 'may over-count by'], keyRows(d.topKeys.cost), [false, true, true]));
  var ra = document.getElementById('retry-after');
  ra.replaceChildren.apply(ra, d.retryAfter.length === 0 ? [el('p', { class: 'muted' }, 'no 429 sent with Retry-After yet')]
    : d.retryAfter.map(function (h) {
      return el('div', { class: 'card', 'data-route': h.route }, el('h3', {}, h.route + ' (' + h.count + ')'), histogram(h));
    }));
  var rows = [];
  d.store.storeErrors.forEach(function (x) { rows.push([x.route, x.policy, 'failed ' + x.operation, x.value]); });
  d.store.failOpen.forEach(function (x) { rows.push([x.route, '', 'decided on a local copy (fail open)', x.value]); });
  d.store.failClosed.forEach(function (x) { rows.push([x.route, '', 'refused with 503 (fail closed)', x.value]); });
  document.getElementById('store').replaceChildren(table(['route', 'policy', 'what', 'count'], rows, [false, false, false, true]));
  var held = d.held;
  document.getElementById('held').replaceChildren(table(['held now', 'count'], [
    ['connections', held.connections], ['requests in flight', held.requests], ['request-body bytes', held.bodyBytes],
    ['limiter keys', held.limiterKeys], ['idempotency keys', held.idempotencyKeys]], [false, true]));
  renders++;
  document.body.dataset.renders = String(renders);
  var status = document.getElementById('status');
  status.className = '';
  status.textContent = 'updated ' + clock(d.now) + ' UTC (server time), every ${DASHBOARD_POLL_MS / 1000} s';
}
function poll() {
  fetch('${DASHBOARD_DATA_PATH}', { cache: 'no-store' })
    .then(function (r) { if (!r.ok) throw new Error('HTTP ' + r.status); return r.json(); })
    .then(render)
    .catch(function (e) {
      var status = document.getElementById('status');
      status.className = 'error';
      status.textContent = 'cannot reach the server: ' + e.message;
    })
    .finally(function () { setTimeout(poll, ${DASHBOARD_POLL_MS}); });
}
poll();
`;

const BODY = `<header><h1>limited-client mock server</h1><p id="status">connecting...</p>
<dl class="totals"><div><dt>admitted</dt><dd id="total-admitted">-</dd></div>
<div><dt>rejected (429)</dt><dd id="total-rejected">-</dd></div>
<div><dt>decided on a local copy</dt><dd id="total-degraded">-</dd></div>
<div><dt>failed closed (503)</dt><dd id="total-failed-closed">-</dd></div></dl></header>
<main><h2>Routes: admitted and rejected, the last ${(DASHBOARD_BUCKETS * 1000) / 60000} minutes</h2><div id="routes"></div>
<h2>Top keys</h2><div class="cols"><div id="top-requests"></div><div id="top-cost"></div></div>
<h2>Retry-After sent with 429s</h2><div id="retry-after"></div>
<h2>Store health</h2><div class="cols"><div id="store"></div><div id="held"></div></div></main>`;

/** The page, served as is. */
export const DASHBOARD_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>limited-client mock server</title><style>${STYLE}</style></head>
<body>${BODY}<script>${SCRIPT}</script></body></html>`;

const hash = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

/** The page's Content-Security-Policy: its own script and style only, fetches to its origin only. */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  `script-src ${hash(SCRIPT)}`,
  `style-src ${hash(STYLE)}`,
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

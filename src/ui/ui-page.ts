/**
 * The web view's single page: HTML, CSS and script inline, nothing loaded from elsewhere (no CDN;
 * the server's Content-Security-Policy forbids it). It follows `/events` (Server-Sent Events) and
 * shows:
 *
 * - the objects that exist, one row each, updated as they change and removed when deleted;
 * - the changes, newest first by their number in the feed (whether they came in the backlog a
 *   page gets when it connects or live), with their field diffs and who made each modification;
 * - each watcher's health (phase, synced, seconds since the last event, reconnects, relists, lag);
 * - a chart of changes per second per kind over the last minute;
 * - filters by kind, namespace pattern (`team-*`, `!kube-*`), event type and text;
 * - pause/resume (changes received while paused are applied on resume, none is lost);
 * - an object's history of changes since the page was opened, by clicking it, newest first, in a
 *   panel fixed at the right of the window (in view wherever the page is scrolled);
 * - notices: an outage's start, a reminder every 30 s, its end.
 *
 * The browser's EventSource reconnects by itself and sends the last change number it saw, so a
 * dropped connection or a restarted `raven ui` resumes without gaps or duplicates.
 */

const style = `
:root { color-scheme: light dark; --dim: #888; --add: #2a7; --mod: #c80; --del: #c33; }
body { font: 13px/1.4 system-ui, sans-serif; margin: 0; }
header { display: flex; gap: 12px; align-items: center; padding: 8px 12px; border-bottom: 1px solid #8884; flex-wrap: wrap; }
header h1 { font-size: 16px; margin: 0 8px 0 0; }
#conn { font-weight: 600; }
#conn.live { color: var(--add); } #conn.down { color: var(--del); } #conn.paused { color: var(--mod); }
input, select, button { font: inherit; padding: 2px 6px; }
main { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 12px; padding: 12px; }
section h2 { font-size: 13px; text-transform: uppercase; color: var(--dim); margin: 0 0 6px; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 2px 8px 2px 0; white-space: nowrap; }
th { color: var(--dim); font-weight: 600; font-size: 11px; }
#objects tbody tr, .change { cursor: pointer; }
#objects tbody tr:hover, .change:hover { background: #8882; }
.ADDED { color: var(--add); } .MODIFIED { color: var(--mod); } .DELETED, .GONE { color: var(--del); }
.EXISTING { color: var(--dim); }
.change { border-bottom: 1px solid #8883; padding: 4px 0; }
.change pre, #history pre { margin: 2px 0 0 16px; font: 12px/1.3 ui-monospace, monospace; white-space: pre-wrap; color: var(--dim); }
#changes { max-height: 70vh; overflow: auto; }
#notices { color: var(--del); padding: 0 12px; }
#history { position: fixed; top: 0; right: 0; bottom: 0; width: min(36rem, 92vw); overflow: auto; z-index: 10;
  background: Canvas; color: CanvasText; border-left: 1px solid #8884; box-shadow: -4px 0 12px #0003; padding: 8px 12px; }
.by { margin-left: 16px; font-size: 12px; color: var(--dim); }
#history[hidden] { display: none; }
#legend span { margin-right: 12px; }
.phase-watching { color: var(--add); } .phase-backoff, .phase-failing { color: var(--del); } .phase-listing { color: var(--mod); }
`;

const script = `
'use strict';
const $ = (id) => document.getElementById(id);
const token = new URLSearchParams(location.hash.slice(1)).get('token');
const objects = new Map();   // uid -> latest change
const histories = new Map(); // uid -> changes since the page opened
const perSecond = new Map(); // second -> Map(kind -> count)
const kinds = new Set();
const queued = [];
let paused = false;
let selected = null;
// Changes are ordered by (epoch, seq): seq is the feed's number; a reset (a restarted feed, or a
// page too far behind) starts a new epoch, whose changes are newer than anything before it.
let epoch = 0;
const MAX_CHANGES = 500;
const MAX_HISTORY = 200;

function el(tag, attrs, children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  for (const child of children || []) node.append(child);
  return node;
}
function globToRegExp(glob) {
  return new RegExp('^' + glob.replace(/[.+^$()|[\\]{}\\\\]/g, '\\\\$&').replace(/\\*/g, '.*').replace(/\\?/g, '.') + '$');
}
function namespaceMatches(ns) {
  const terms = $('ns').value.split(/[\\s,]+/).filter(Boolean);
  if (terms.length === 0) return true;
  const include = terms.filter((t) => !t.startsWith('!'));
  const exclude = terms.filter((t) => t.startsWith('!')).map((t) => t.slice(1));
  if (exclude.some((t) => globToRegExp(t).test(ns))) return false;
  return include.length === 0 || include.some((t) => globToRegExp(t).test(ns));
}
function matches(change, forStream) {
  const kind = $('kind').value;
  if (kind && change.kind !== kind) return false;
  const type = $('type').value;
  if (forStream && type && change.type !== type && !(type === 'DELETED' && change.type === 'GONE')) return false;
  if (!namespaceMatches(change.namespace)) return false;
  const text = $('text').value.trim().toLowerCase();
  if (text) {
    const hay = [change.kind, change.namespace, change.name, change.type, ...change.diff.flat(), ...(change.by || [])].join(' ').toLowerCase();
    if (!hay.includes(text)) return false;
  }
  return true;
}
function time(ms) { return new Date(ms).toLocaleTimeString(); }
function objectName(c) { return (c.namespace ? c.namespace + '/' : '') + c.name; }

function newer(a, b) { return a.epoch !== b.epoch ? a.epoch > b.epoch : a.seq > b.seq; }
function byLines(c) { return (c.by || []).map((line) => el('div', { class: 'by' }, [line])); }
function changeNode(c) {
  const node = el('div', { class: 'change', 'data-uid': c.uid, 'data-type': c.type, 'data-seq': String(c.seq), 'data-epoch': String(c.epoch) }, [
    el('span', { class: c.type }, [c.type]), ' ',
    el('b', {}, [c.kind]), ' ', objectName(c), ' ',
    el('small', { class: 'EXISTING' }, [time(c.at)]),
  ]);
  if (c.diff.length > 0) node.append(el('pre', {}, [c.diff.flat().join('\\n')]));
  node.append(...byLines(c));
  node.addEventListener('click', () => showHistory(c.uid));
  return node;
}
function objectRow(c) {
  const count = (histories.get(c.uid) || []).filter((h) => h.type !== 'EXISTING').length;
  const row = el('tr', { 'data-uid': c.uid }, [
    el('td', {}, [c.kind]), el('td', {}, [c.namespace]), el('td', { class: 'name' }, [c.name]),
    el('td', { class: 'last ' + c.type }, [c.type]), el('td', { class: 'count' }, [String(count)]),
    el('td', {}, [time(c.at)]),
  ]);
  row.hidden = !matches(c, false);
  row.addEventListener('click', () => showHistory(c.uid));
  return row;
}

function apply(c) {
  if (!kinds.has(c.kind)) {
    kinds.add(c.kind);
    $('kind').append(el('option', { value: c.kind }, [c.kind]));
  }
  const history = histories.get(c.uid) || [];
  history.push(c);
  if (history.length > MAX_HISTORY) history.shift();
  histories.set(c.uid, history);
  const tbody = $('objects').tBodies[0];
  const existing = tbody.querySelector('tr[data-uid="' + CSS.escape(c.uid) + '"]');
  if (c.type === 'DELETED' || c.type === 'GONE') {
    objects.delete(c.uid);
    if (existing) existing.remove();
  } else {
    objects.set(c.uid, c);
    const row = objectRow(c);
    if (existing) existing.replaceWith(row); else tbody.append(row);
  }
  if (c.type !== 'EXISTING') {
    const second = Math.floor(c.at / 1000);
    const counts = perSecond.get(second) || new Map();
    counts.set(c.kind, (counts.get(c.kind) || 0) + 1);
    perSecond.set(second, counts);
  }
  const list = $('changes');
  const node = changeNode(c);
  node.hidden = !matches(c, true);
  // Newest first by the change's own number, whatever order the backlog and live changes came in.
  let before = list.firstElementChild;
  while (before && !newer(c, { epoch: Number(before.dataset.epoch), seq: Number(before.dataset.seq) }))
    before = before.nextElementSibling;
  list.insertBefore(node, before);
  while (list.childElementCount > MAX_CHANGES) list.lastElementChild.remove();
  if (selected === c.uid) showHistory(c.uid);
}

function refilter() {
  for (const row of $('objects').tBodies[0].rows) {
    const c = objects.get(row.dataset.uid);
    row.hidden = !c || !matches(c, false);
  }
  for (const node of $('changes').children) {
    const history = histories.get(node.dataset.uid) || [];
    const c = history.find((h) => String(h.seq) === node.dataset.seq && String(h.epoch) === node.dataset.epoch);
    node.hidden = !c || !matches(c, true);
  }
}

function showHistory(uid) {
  selected = uid;
  const history = (histories.get(uid) || []).slice().sort((a, b) => (newer(a, b) ? -1 : 1));
  const last = history[0];
  const box = $('history');
  if (box.hidden) box.scrollTop = 0;
  box.hidden = false;
  $('history-title').textContent = last ? last.kind + ' ' + objectName(last) + ': ' + history.length + ' since the page opened' : uid;
  const list = $('history-list');
  list.replaceChildren(...history.map((c) => {
    const item = el('li', { 'data-type': c.type }, [el('span', { class: c.type }, [c.type]), ' ', time(c.at)]);
    if (c.diff.length > 0) item.append(el('pre', {}, [c.diff.flat().join('\\n')]));
    item.append(...byLines(c));
    return item;
  }));
}

function renderHealth(list) {
  const tbody = $('health').tBodies[0];
  tbody.replaceChildren(...list.map((h) => el('tr', { 'data-watcher': h.watcher }, [
    el('td', {}, [h.watcher]),
    el('td', { class: 'phase phase-' + h.phase }, [h.phase]),
    el('td', { class: 'synced' }, [h.synced ? 'yes' : 'no']),
    el('td', {}, [String(Math.round(h.secondsSinceLastEvent))]),
    el('td', { class: 'reconnects' }, [String(h.reconnects)]),
    el('td', { class: 'relists' }, [String(h.relists)]),
    el('td', {}, [h.lagSeconds === undefined || h.lagSeconds === null ? '-' : h.lagSeconds + ' s']),
    el('td', {}, [String(h.objects)]),
    el('td', { class: 'error' }, [h.lastError && h.phase !== 'watching' ? h.lastError : '']),
  ])));
}

const palette = ['#2a7', '#c80', '#36c', '#c33', '#a3c', '#3aa', '#888'];
function drawChart() {
  const canvas = $('chart');
  const ctx = canvas.getContext('2d');
  const now = Math.floor(Date.now() / 1000);
  for (const second of perSecond.keys()) if (second < now - 120) perSecond.delete(second);
  const seconds = Array.from({ length: 60 }, (_, i) => now - 59 + i);
  const all = [...kinds];
  let max = 1;
  for (const s of seconds) for (const n of (perSecond.get(s) || new Map()).values()) max = Math.max(max, n);
  ctx.clearRect(0, 0, canvas.width, canvas.height);
  const x = (i) => (i / 59) * (canvas.width - 4) + 2;
  const y = (n) => canvas.height - 2 - (n / max) * (canvas.height - 14);
  const legend = [];
  all.forEach((kind, k) => {
    ctx.strokeStyle = palette[k % palette.length];
    ctx.beginPath();
    let total = 0;
    seconds.forEach((s, i) => {
      const n = (perSecond.get(s) || new Map()).get(kind) || 0;
      total += n;
      if (i === 0) ctx.moveTo(x(i), y(n)); else ctx.lineTo(x(i), y(n));
    });
    ctx.stroke();
    legend.push(el('span', { style: 'color:' + palette[k % palette.length], 'data-kind': kind, 'data-total': String(total) }, [kind + ': ' + total + ' in 60 s']));
  });
  ctx.fillStyle = '#888';
  ctx.fillText('max ' + max + '/s', 4, 10);
  $('legend').replaceChildren(...legend);
}

function setPaused(value) {
  paused = value;
  if (!paused) while (queued.length > 0) apply(queued.shift());
  updatePauseButton();
  setConn(source && source.readyState === 1 ? 'live' : 'down');
}
function updatePauseButton() {
  $('pause').textContent = paused ? 'Resume (' + queued.length + ' new)' : 'Pause';
}
function setConn(state) {
  const conn = $('conn');
  conn.className = paused ? 'paused' : state;
  conn.textContent = paused ? 'paused' : state === 'live' ? 'live' : 'reconnecting…';
  conn.dataset.state = state;
}

let source = null;
function connect() {
  source = new EventSource('events' + (token ? '?access_token=' + encodeURIComponent(token) : ''));
  source.addEventListener('open', () => setConn('live'));
  source.addEventListener('error', () => setConn('down'));
  source.addEventListener('reset', () => {
    // The server starts over from the objects that exist: drop rows it will send again.
    objects.clear();
    epoch++;
    $('objects').tBodies[0].replaceChildren();
  });
  source.addEventListener('change', (e) => {
    const c = JSON.parse(e.data);
    c.epoch = epoch;
    if (paused) { queued.push(c); updatePauseButton(); } else apply(c);
  });
  source.addEventListener('health', (e) => renderHealth(JSON.parse(e.data)));
  source.addEventListener('notice', (e) => {
    const n = JSON.parse(e.data);
    const box = $('notices');
    box.prepend(el('div', n.outage ? { 'data-outage': n.outage } : {}, [time(n.at) + ' ' + n.watcher + ': ' + n.message]));
    while (box.childElementCount > 5) box.lastElementChild.remove();
  });
}

for (const id of ['kind', 'ns', 'type', 'text']) $(id).addEventListener('input', refilter);
$('pause').addEventListener('click', () => setPaused(!paused));
$('history-close').addEventListener('click', (e) => { e.stopPropagation(); selected = null; $('history').hidden = true; });
setInterval(drawChart, 1000);
drawChart();
connect();
`;

const body = `
<header>
  <h1>Raven</h1>
  <span id="conn" data-state="down">connecting…</span>
  <label>Kind <select id="kind"><option value="">all</option></select></label>
  <label>Namespace <input id="ns" placeholder="team-* !kube-*" size="14"></label>
  <label>Event <select id="type"><option value="">all</option><option>ADDED</option><option>MODIFIED</option><option>DELETED</option></select></label>
  <label>Text <input id="text" type="search" size="16"></label>
  <button id="pause" type="button">Pause</button>
</header>
<div id="notices"></div>
<main>
  <section>
    <h2>Watchers</h2>
    <table id="health"><thead><tr><th>WATCHER</th><th>PHASE</th><th>SYNCED</th><th>LAST EVENT (S)</th><th>RECONNECTS</th><th>RELISTS</th><th>LAG</th><th>OBJECTS</th><th></th></tr></thead><tbody></tbody></table>
  </section>
  <section>
    <h2>Changes per second</h2>
    <canvas id="chart" width="480" height="90"></canvas>
    <div id="legend"></div>
  </section>
  <section>
    <h2>Objects</h2>
    <table id="objects"><thead><tr><th>KIND</th><th>NAMESPACE</th><th>NAME</th><th>LAST</th><th>CHANGES</th><th>AT</th></tr></thead><tbody></tbody></table>
  </section>
  <section>
    <h2>Changes</h2>
    <div id="changes"></div>
  </section>
  <section id="history" hidden>
    <h2><span id="history-title"></span> <button id="history-close" type="button">close</button></h2>
    <ol id="history-list"></ol>
  </section>
</main>`;

/** The page, as served at `/`. */
export function uiPage(): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Raven</title>
<style>${style}</style>
</head>
<body>${body}
<script>${script}</script>
</body>
</html>
`;
}

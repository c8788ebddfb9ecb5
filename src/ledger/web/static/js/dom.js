// DOM and formatting helpers. Every piece of data reaches the page as a text node:
// h() never parses HTML, so memory text like "<img onerror=...>" stays inert. And every
// text node shows what is stored: control characters are drawn as visible stand-ins
// (visible() below), so no text reads other than it is.

// The CLI's rule (src/ledger/termfmt.py visible(); tests/test_web_visible.py runs both):
// C0 controls but tab and newline become their control pictures (ESC shows as ␛), DEL
// ␡, the C1 controls and the bidirectional controls (U+202A-U+202E, U+2066-U+2069, LRM
// U+200E, RLM U+200F, ALM U+061C) U+FFFD. A right-to-left override would otherwise make
// "port \u202e0806\u202c" read "port 6080". Only what is shown changes: edit boxes (value)
// keep the stored text, so saving never rewrites it.
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/g;

function standIn(c) {
  const n = c.charCodeAt(0);
  return n < 0x20 ? String.fromCharCode(0x2400 + n) : n === 0x7f ? '\u2421' : '\ufffd';
}

export function visible(text) {
  return String(text).replace(CONTROLS, standIn);
}

// A text node of `text` shown visibly; each stand-in is a <span class="ctl"> whose
// tooltip names the character it stands for (U+202E), so a person can tell which it was.
export function textNode(text) {
  const s = String(text);
  CONTROLS.lastIndex = 0;
  if (!CONTROLS.test(s)) return document.createTextNode(s);
  const frag = document.createDocumentFragment();
  let last = 0;
  s.replace(CONTROLS, (c, at) => {
    if (at > last) frag.appendChild(document.createTextNode(s.slice(last, at)));
    const span = document.createElement('span');
    span.className = 'ctl';
    span.title = `U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
    span.textContent = standIn(c);
    frag.appendChild(span);
    last = at + 1;
    return c;
  });
  if (last < s.length) frag.appendChild(document.createTextNode(s.slice(last)));
  return frag;
}

export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') el.className = v;
      else if (k === 'text') el.appendChild(textNode(v));
      else if (k === 'style') for (const [p, val] of Object.entries(v)) el.style.setProperty(p, val);
      else if (k === 'dataset') Object.assign(el.dataset, v);
      else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
      else if (k === 'value') el.value = v;
      else if (k === 'checked') el.checked = !!v;
      else if (k === 'title' || k.startsWith('aria-')) el.setAttribute(k, visible(v === true ? '' : v));
      else el.setAttribute(k, v === true ? '' : String(v));
    }
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.appendChild(c instanceof Node ? c : textNode(c));
  }
  return el;
}

export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

export function replace(el, ...children) {
  clear(el);
  return append(el, children);
}

export function debounce(fn, ms) {
  let t = 0;
  const d = (...args) => {
    clearTimeout(t);
    t = setTimeout(() => fn(...args), ms);
  };
  d.cancel = () => clearTimeout(t);
  return d;
}

// ---------------------------------------------------------------- formatting
// Ages follow src/ledger/termfmt.py exactly (tests/test_ages.py runs both at the same
// boundaries): within 10 s either way "now"; then s, m, h, d (under 60 days), mo (30.4
// days, rounded half up, at most 11), y (one decimal); each other unit floored. A future
// instant (another process's clock runs ahead) reads "in 5m".
const SECOND = 1e3, MINUTE = 60e3, HOUR = 3600e3, DAY = 86400e3, JUST_NOW = 10e3;

function span(d) {
  if (d < MINUTE) return `${Math.floor(d / SECOND)}s`;
  if (d < HOUR) return `${Math.floor(d / MINUTE)}m`;
  if (d < DAY) return `${Math.floor(d / HOUR)}h`;
  const days = d / DAY;
  if (days < 60) return `${Math.floor(days)}d`;
  if (days < 365) return `${Math.min(11, Math.floor(days / 30.4 + 0.5))}mo`;
  return `${Math.floor(days / 365 * 10) / 10}y`;
}

// Compact age for table columns: "now", "42s", "3h", "in 5m".
export function age(ms, now = Date.now()) {
  if (ms === null || ms === undefined || Number.isNaN(ms)) return '—';
  const d = now - ms;
  if (Math.abs(d) < JUST_NOW) return 'now';
  return d > 0 ? span(d) : `in ${span(-d)}`;
}

// The same as a phrase: "just now", "42s ago", "in 5m".
export function ago(ms, now = Date.now()) {
  const a = age(ms, now);
  if (a === 'now') return 'just now';
  if (a === '—' || a.startsWith('in ')) return a;
  return `${a} ago`;
}

export function duration(ms) {
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${s % 60}s`;
  const hrs = Math.floor(m / 60);
  if (hrs < 48) return `${hrs}h ${m % 60}m`;
  return `${Math.floor(hrs / 24)}d ${hrs % 24}h`;
}

export function bytes(n) {
  if (!n) return '0 B';
  const u = ['B', 'KB', 'MB', 'GB'];
  let i = 0;
  while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }
  return `${n >= 10 || i === 0 ? Math.round(n) : n.toFixed(1)} ${u[i]}`;
}

// "1 chunk", "2 chunks"; `many` for irregular plurals ("memories").
export function plural(n, word, many) {
  return `${num(n)} ${n === 1 ? word : (many || `${word}s`)}`;
}

export const pct = (x) => Math.round((x || 0) * 100);

export function date(ms) {
  if (ms === null || ms === undefined) return '—';
  const d = new Date(ms);
  const pad = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

export function datetime(ms) {
  if (ms === null || ms === undefined) return '—';
  const d = new Date(ms);
  const pad = (n) => String(n).padStart(2, '0');
  return `${date(ms)} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

export function clock(ms) {
  const d = new Date(ms);
  const pad = (n) => String(n).padStart(2, '0');
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

export function num(n) {
  return (n ?? 0).toLocaleString('en-US');
}

// Strength colours, shared by meters, canvas and badges.
export const LIME = '#b7c14a', AMBER = '#d9a03c', RED = '#d6606a', GREY = '#5b6170', CONFLICT = '#f2913f';

export function strengthColor(s) {
  return s > 0.7 ? LIME : s > 0.4 ? AMBER : RED;
}

export function meter(value, { width = 64, color } = {}) {
  const v = Math.max(0, Math.min(1, value || 0));
  return h('span', { class: 'meter', style: { width: `${width}px` } },
    h('span', { class: 'meter-fill', style: { width: `${(v * 100).toFixed(1)}%`, background: color || strengthColor(v) } }));
}

// A stable colour for a name (agents without a stored colour).
const PALETTE = ['#b7c14a', '#4a9fd4', '#cf6fb8', '#4fb8a8', '#6fbf73', '#d9a03c', '#6f86e0', '#9a76dd', '#e0793f', '#d6606a'];
export function hashColor(name) {
  return PALETTE[fnv1a(name || '') % PALETTE.length];
}

// FNV-1a over the string, then a murmur3-style finaliser so every output bit depends
// on every input character (ids share long prefixes; plain FNV leaves the top bits alike).
export function fnv1a(str) {
  let x = 0x811c9dc5;
  for (let i = 0; i < str.length; i++) {
    x ^= str.charCodeAt(i);
    x = Math.imul(x, 0x01000193);
  }
  x ^= x >>> 16;
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  x ^= x >>> 16;
  return x >>> 0;
}

export function isTyping(e) {
  const t = e.target;
  if (!t || !t.tagName) return false;
  const tag = t.tagName;
  return tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'SELECT' || t.isContentEditable;
}

export function download(blob, filename) {
  const url = URL.createObjectURL(blob);
  const a = h('a', { href: url, download: filename });
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 5000);
}

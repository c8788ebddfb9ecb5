// Shell and router: hash routes (#/review, #/browse, #/sources, #/canvas,
// #/connections), the search box with autocomplete and mode toggle, the sidebar counts
// and the first-run screen for an empty store.
import { api } from './api.js';
import { bytes, debounce, duration, num, plural, visible } from './dom.js';
import { attachAutocomplete } from './query.js';
import { emit, on, setQuery, setReadOnly, state, fail, readOnlyTitle } from './state.js';
import * as inspector from './inspector.js';
import * as review from './review.js';
import * as browse from './browse.js';
import * as sources from './sources.js';
import * as canvas from './canvas.js';
import * as connections from './connections.js';
import * as firstrun from './firstrun.js';

const SCREENS = { review, browse, sources, canvas, connections };
const MODES = ['hybrid', 'keyword', 'fuzzy'];
const view = document.getElementById('view');
let current = null; // {name, screen, handle}

function routeName() {
  const m = location.hash.match(/^#\/([a-z]+)/);
  return m && SCREENS[m[1]] ? m[1] : null;
}

function isEmptyStore() {
  return state.stats && state.stats.memories === 0 && state.stats.sources === 0;
}

function render() {
  const name = routeName();
  if (!name) {
    history.replaceState(null, '', '#/review');
    return render();
  }
  const first = isEmptyStore() && name !== 'connections';
  const key = first ? `first:${name}` : name;
  if (current?.key === key) return;
  if (current?.handle?.unmount) current.handle.unmount();
  inspector.close();
  view.replaceChildren();
  view.className = `view view-${first ? 'firstrun' : name}`;
  state.route = name;
  const screen = first ? firstrun : SCREENS[name];
  if (lookupsStale && (name === 'browse' || name === 'canvas')) refreshLookups();
  current = { key, handle: screen.mount(view) };
  document.querySelectorAll('.sidebar a').forEach((a) => a.classList.toggle('on', a.dataset.route === name));
  document.title = `ledger · ${name}`;
}

function paintStats(st) {
  const set = (id, text, alert = false) => {
    const el = document.getElementById(id);
    if (!el) return;
    el.textContent = text;
    el.classList.toggle('alert', alert);
  };
  const queue = st.reviewQueue;  // claims waiting + open conflicts: the service's one definition
  set('n-review', queue ? num(queue) : '', queue > 0);
  set('n-browse', num(st.memories));
  set('n-sources', num(st.sources));
  set('n-agents', num(st.agents));
  set('sb-uptime', duration(st.uptimeMs || 0));
  set('sb-requests', num(st.requestsToday));
  set('sb-disk', bytes(st.diskBytes));
  set('status-origin', location.host);
  set('status-count', plural(st.memories, 'memory', 'memories'));
}

async function refreshStats(withClusters = false) {
  try {
    const st = await api.stats(withClusters);
    const wasEmpty = isEmptyStore();
    const prev = state.stats;
    state.stats = st;
    if (st.clusters) state.clusters = st.clusters;
    else if (prev && (prev.memories !== st.memories || prev.agents !== st.agents)) {
      // Agents wrote something: refresh what autocomplete and colours rely on.
      api.clusters().then((c) => { state.clusters = c; }).catch(() => {});
      if (['browse', 'canvas'].includes(routeName())) refreshLookupsSoon(); else lookupsStale = true;
    }
    paintStats(st);
    emit('stats', st);
    if (wasEmpty !== isEmptyStore()) render();
  } catch (e) {
    document.getElementById('status-count').textContent = 'offline';
  }
}

// Facets and agent activity are the costliest reads on a big store, so they are
// refreshed after writes only while a screen that shows them is open.
let lookupsStale = false;
const refreshLookupsSoon = debounce(() => refreshLookups(), 400);

async function refreshLookups() {
  lookupsStale = false;
  try {
    const [ag, facets] = await Promise.all([api.agents(), api.facets()]);
    state.agents = ag.agents;
    state.facets = facets;
    emit('lookups');
  } catch (e) { /* the next change retries */ }
}

function setupSearch() {
  const input = document.getElementById('q');
  const list = document.getElementById('suggest');
  // `from`: the screen the text was typed on. Typing on Review, Sources or Connections
  // opens Browse, but only if the user is still there when the debounce fires: text typed
  // on Browse must not pull the user back from a screen they went to meanwhile.
  const commit = debounce((v, from) => {
    if (v === state.query) return;
    setQuery(v);
    if (v.trim() && from === routeName() && ['review', 'sources', 'connections'].includes(from)) location.hash = '#/browse';
  }, 180);
  attachAutocomplete(input, list, (v) => commit(v, routeName()));
  input.addEventListener('input', () => commit(input.value, routeName()));
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter') { commit.cancel(); setQuery(input.value); if (input.value.trim() && routeName() !== 'canvas') location.hash = '#/browse'; }
    if (e.key === 'Escape' && list.hidden) input.blur();
  });
  const mode = document.getElementById('mode');
  mode.addEventListener('click', () => {
    state.mode = MODES[(MODES.indexOf(state.mode) + 1) % MODES.length];
    mode.textContent = state.mode.toUpperCase();
    mode.dataset.mode = state.mode;
    emit('query');
  });
  window.addEventListener('keydown', (e) => {
    if (e.key === '/' && document.activeElement !== input && !['INPUT', 'TEXTAREA', 'SELECT'].includes(document.activeElement?.tagName)) {
      e.preventDefault();
      input.focus();
      input.select();
    }
  });
}

// A read-only store: a notice under the top bar says so, why and what to do, and every
// write control (marked data-write by the screens) is disabled with that as its tooltip,
// now and whenever a screen draws new ones. Write actions also check refuseWrite().
let writeLock = null;

function lockWrites(root) {
  const title = readOnlyTitle();
  const els = root.matches?.('[data-write]') ? [root] : [];
  for (const el of [...els, ...(root.querySelectorAll?.('[data-write]') || [])]) {
    el.disabled = true;
    el.setAttribute('aria-disabled', 'true');
    el.title = title;
  }
}

function showReadOnly() {
  const ro = state.readOnly;
  if (!ro) return;
  const notice = document.getElementById('ro-notice');
  notice.querySelector('.ro-text').textContent = visible(ro.message); // may quote a path
  notice.hidden = false;
  document.body.classList.add('read-only');
  lockWrites(document.body);
  if (!writeLock) {
    writeLock = new MutationObserver((records) => {
      for (const r of records) for (const n of r.addedNodes) if (n.nodeType === 1) lockWrites(n);
    });
    writeLock.observe(document.body, { childList: true, subtree: true });
  }
}

async function start() {
  setupSearch();
  inspector.init();
  on('readonly', showReadOnly);
  try {
    state.meta = await api.meta();
    if (state.meta.readOnly) setReadOnly(state.meta.readOnly);
  } catch (e) {
    fail(e);
  }
  await Promise.all([refreshStats(true), refreshLookups()]);
  window.addEventListener('hashchange', render);
  render();
  on('changed', () => {
    refreshStats(true);
    if (['browse', 'canvas'].includes(routeName())) refreshLookupsSoon(); else lookupsStale = true;
  });
  setInterval(refreshStats, 5000);
  document.body.classList.add('ready');
}

start();

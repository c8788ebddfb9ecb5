// Shared UI state, an event bus and toasts. Screens read `state` and listen on the bus:
//   'query'   the search text, mode or flags changed
//   'changed' something was written (refetch what you show)
//   'stats'   fresh /api/stats arrived
import { h } from './dom.js';

export const state = {
  query: '',
  mode: 'hybrid',
  flags: { pinned: false, conflicted: false, pending: false, archived: false },
  stats: null,
  meta: null,
  clusters: [],
  agents: [],
  facets: null,
  route: '',
  // {why, message} when the store cannot be written (/api/meta says so, or a change was
  // refused as read-only): write controls (marked data-write) are disabled, see app.js.
  readOnly: null,
};

const bus = new EventTarget();

export function on(name, fn) {
  const handler = (e) => fn(e.detail);
  bus.addEventListener(name, handler);
  return () => bus.removeEventListener(name, handler);
}

export function emit(name, detail) {
  bus.dispatchEvent(new CustomEvent(name, { detail }));
}

// A write happened: every view refetches what it shows.
export function changed(what) {
  emit('changed', what);
}

export function clusterById(id) {
  return state.clusters.find((c) => c.id === id);
}

export function agentColor(id) {
  return state.agents.find((a) => a.id === id)?.color;
}

export function toast(message, { error = false, ms } = {}) {
  const box = document.getElementById('toasts');
  const el = h('div', { class: `toast${error ? ' toast-error' : ''}`, role: error ? 'alert' : 'status' },
    h('span', { class: 'toast-mark', text: error ? '✕' : '✓' }), h('span', { text: message }));
  box.appendChild(el);
  requestAnimationFrame(() => el.classList.add('in'));
  setTimeout(() => {
    el.classList.remove('in');
    setTimeout(() => el.remove(), 300);
  }, ms ?? (error ? 6000 : 2600));
}

export function fail(err) {
  toast(err?.message || String(err), { error: true });
  // A change refused because the store is read-only (a database role that may only
  // read, found out only by writing): from now on the UI says so and turns changes off.
  if (err?.reason === 'read-only' && !state.readOnly) setReadOnly({ why: 'a change was refused', message: err.message });
}

// Mark the store read-only ({why, message}) and tell app.js to show it.
export function setReadOnly(ro) {
  state.readOnly = ro;
  emit('readonly', ro);
}

// Call first in every write action: on a read-only store it says why (a toast) and
// returns true, so the action stops before any request (keyboard shortcuts included).
export function refuseWrite() {
  if (!state.readOnly) return false;
  toast(state.readOnly.message, { error: true });
  return true;
}

// The tooltip of a write control turned off on a read-only store: why, and what to do.
export function readOnlyTitle() {
  return state.readOnly ? `Turned off: ${state.readOnly.message}` : '';
}

// Set the search text from code (facets, links) and tell every listener.
export function setQuery(q) {
  state.query = q;
  const input = document.getElementById('q');
  if (input && input.value !== q) input.value = q;
  emit('query');
}

export function searchParams(extra = {}) {
  const f = state.flags;
  return { q: state.query, mode: state.mode, pinned: f.pinned, conflicted: f.conflicted, pending: f.pending, archived: f.archived, ...extra };
}

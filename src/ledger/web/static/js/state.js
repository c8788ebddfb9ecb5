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

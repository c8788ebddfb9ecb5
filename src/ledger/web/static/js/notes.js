// Search warnings: what the server says about a query that ran anyway (a filter that can
// never match, an asof: in the future read as now, a cluster label taken for its id, a
// cluster the store does not have...). /api/search and /api/graph return them as
// `warnings: [{kind, warning, ...}]`; every screen that runs the search box's query
// shows them next to its results with this note. Each message goes in as a text node
// (h() never parses HTML): a warning may quote what the user typed.
import { h, replace } from './dom.js';

// A note that stays empty (and takes no room) until show() is given warnings. It is a
// role="status" live region that is always in the page, never `hidden`: screen readers
// announce a change to a region they already know, without moving the focus.
export function searchNotes(extraClass = '') {
  const el = h('div', { class: `search-notes${extraClass ? ` ${extraClass}` : ''}`, role: 'status', 'aria-live': 'polite' });
  return {
    el,
    // `warnings`: the response's list (missing or empty clears the note).
    show(warnings) {
      const list = Array.isArray(warnings) ? warnings.filter((w) => w && w.warning) : [];
      replace(el, list.map((w) => h('p', { class: 'search-note', dataset: { kind: String(w.kind || 'warning') } },
        h('span', { class: 'search-note-tag mono', 'aria-hidden': 'true', text: '⚠' }),
        h('span', { class: 'search-note-text', text: String(w.warning) }))));
    },
    clear() { this.show([]); },
  };
}

// Browse: the whole store as a sortable table. Facets write `key:value` tokens into the
// search box (so the box always states the filter), flags are API parameters, the mode
// toggle is sent with every search, and rows can be selected for bulk actions.
import { api } from './api.js';
import { age, ago, debounce, download, h, hashColor, meter, num, pct, replace, plural } from './dom.js';
import * as inspector from './inspector.js';
import { searchNotes } from './notes.js';
import { hasFreeText, hasToken, stripFacetTokens, toggleToken } from './query.js';
import { agentColor, changed, emit, fail, on, refuseWrite, searchParams, setQuery, state, toast } from './state.js';

const PAGE = 100;
// Per-screen settings, kept while the page lives.
const local = { kind: 'all', sort: null, dir: 'desc', railOpen: true };

const COLUMNS = [
  { key: 'sel', label: '' },
  { key: 'src', label: 'SRC' },
  { key: 'text', label: 'MEMORY', sort: 'relevance' },
  { key: 'cluster', label: 'CLUSTER' },
  { key: 'agents', label: 'AGENTS' },
  { key: 'strength', label: 'STRENGTH', sort: 'strength' },
  { key: 'hits', label: 'HITS', sort: 'hits' },
  { key: 'seen', label: 'SEEN', sort: 'last' },
  { key: 'age', label: 'AGE', sort: 'created' },
  { key: 'flags', label: 'FLAGS' },
];

export function mount(root) {
  let hits = [];
  let total = 0;
  let tookMs = 0;
  let loading = false;
  let error = null;
  let reqSeq = 0;
  const selected = new Set();
  let activeId = null;

  const rail = h('aside', { class: 'rail' });
  const selBar = h('div', { class: 'selbar', hidden: true });
  const thead = h('thead');
  const tbody = h('tbody');
  const table = h('table', { class: 'table' }, thead, tbody);
  const footer = h('div', { class: 'table-foot mono small' });
  const summary = h('div', { class: 'browse-summary' });
  // The search's warnings, above the rows they are about; replaced by every new search.
  const notes = searchNotes();
  const main = h('section', { class: 'browse-main' }, summary, notes.el, selBar, h('div', { class: 'table-wrap' }, table), footer);
  const screen = h('div', { class: `screen browse${local.railOpen ? '' : ' rail-closed'}` }, rail, main);
  root.append(screen);

  function effectiveSort() {
    const text = hasFreeText(state.query);
    if (local.sort === 'relevance' && !text) return 'strength';
    return local.sort || (text ? 'relevance' : 'strength');
  }

  function params(extra = {}) {
    return searchParams({ kind: local.kind, sort: local.sort && effectiveSort(), dir: local.sort ? local.dir : undefined, ...extra });
  }

  async function load(append = false) {
    const mine = ++reqSeq;
    loading = true;
    error = null;
    if (!append) { notes.clear(); paintFooter(); }
    try {
      const res = await api.search(params({ limit: PAGE, offset: append ? hits.length : 0 }));
      if (mine !== reqSeq) return;
      if (!append) notes.show(res.warnings);
      hits = append ? hits.concat(res.hits) : res.hits;
      total = res.total;
      tookMs = res.tookMs;
      if (!append) for (const id of [...selected]) if (!hits.some((m) => m.id === id)) selected.delete(id);
    } catch (e) {
      if (mine !== reqSeq) return;
      error = e;
      if (!append) { hits = []; total = 0; }
    } finally {
      if (mine === reqSeq) loading = false;
    }
    document.getElementById('q')?.classList.toggle('invalid', error?.kind === 'invalid-query');
    paint();
  }
  const reload = debounce(() => load(false), 60);

  // ------------------------------------------------------------ rail
  function facetGroup(title, key, counts, labelOf, colorOf) {
    const entries = Object.entries(counts || {}).sort((a, b) => b[1] - a[1]);
    return h('div', { class: 'facet' }, h('h4', { text: title }),
      entries.length ? entries.map(([value, n]) => {
        const on_ = hasToken(state.query, key, value);
        return h('button', { class: `facet-row${on_ ? ' on' : ''}`, type: 'button', title: `${key}:${value}`, 'aria-pressed': on_ ? 'true' : 'false',
          dataset: { facet: `${key}:${value}` },
          onclick: () => setQuery(toggleToken(state.query, key, value)) },
        colorOf ? h('span', { class: 'dot', style: { background: colorOf(value) } }) : h('span', { class: 'check', text: on_ ? '■' : '□' }),
        h('span', { class: 'facet-label', text: labelOf ? labelOf(value) : value }),
        h('span', { class: 'facet-n mono', text: num(n) }));
      }) : h('p', { class: 'dim small', text: 'none yet' }));
  }

  function paintRail() {
    const f = state.facets || {};
    const flags = f.flags || {};
    const activeCount = ['type', 'cluster', 'agent', 'kind'].reduce((n, k) => n + (state.query.match(new RegExp(`(^|\\s)${k}:\\S+`, 'gi')) || []).length, 0)
      + Object.values(state.flags).filter(Boolean).length + (local.kind !== 'all' ? 1 : 0);
    const clusterLabel = (id) => state.clusters.find((c) => c.id === id)?.label || id;
    const clusterColor = (id) => state.clusters.find((c) => c.id === id)?.color || '#888';
    const flag = (key, label, n) => h('label', { class: 'flag' },
      h('input', { type: 'checkbox', checked: state.flags[key], dataset: { flag: key }, onchange: (e) => { state.flags[key] = e.target.checked; emit('query'); } }),
      h('span', { text: label }), h('span', { class: 'facet-n mono', text: num(n ?? 0) }));
    replace(rail,
      h('div', { class: 'rail-head' },
        h('span', { class: 'mono small', text: activeCount ? `FILTERS · ${activeCount}` : 'FILTERS' }),
        h('button', { class: 'link-btn small', type: 'button', onclick: resetFilters, text: 'RESET' }),
        h('button', { class: 'icon-btn', type: 'button', title: local.railOpen ? 'collapse' : 'expand', onclick: toggleRail, text: local.railOpen ? '‹' : '›' })),
      h('div', { class: 'rail-body' },
        h('div', { class: 'facet' }, h('h4', { text: 'KIND' }),
          [['all', 'everything'], ['claim', 'claims only'], ['chunk', 'document chunks']].map(([v, label]) => h('label', { class: 'radio' },
            h('input', { type: 'radio', name: 'kind', value: v, checked: local.kind === v, onchange: () => { local.kind = v; load(false); } }),
            h('span', { text: label })))),
        facetGroup('TYPE', 'type', f.origin, (v) => (v === 'doc' ? 'doc · documents' : 'chat · conversations')),
        facetGroup('CLUSTER', 'cluster', f.cluster, clusterLabel, clusterColor),
        facetGroup('AGENT', 'agent', f.agent, null, (a) => agentColor(a) || hashColor(a)),
        h('div', { class: 'facet' }, h('h4', { text: 'FLAGS' }),
          flag('pinned', '◆ pinned', flags.pinned),
          flag('conflicted', '▲ in conflict', flags.conflicted),
          flag('pending', '● not yet reviewed', flags.pending),
          flag('archived', '▫ include archived', flags.archived))));
  }

  function resetFilters() {
    for (const k of Object.keys(state.flags)) state.flags[k] = false;
    local.kind = 'all';
    setQuery(stripFacetTokens(state.query));
  }

  function toggleRail() {
    local.railOpen = !local.railOpen;
    screen.classList.toggle('rail-closed', !local.railOpen);
    paintRail();
  }

  // ------------------------------------------------------------ table
  function paintHead() {
    const eff = effectiveSort();
    const text = hasFreeText(state.query);
    const allOn = hits.length > 0 && hits.every((m) => selected.has(m.id));
    replace(thead, h('tr', {}, COLUMNS.map((c) => {
      if (c.key === 'sel') {
        return h('th', { class: 'c-sel' }, h('input', { type: 'checkbox', 'aria-label': 'select all shown', checked: allOn,
          onchange: (e) => { for (const m of hits) e.target.checked ? selected.add(m.id) : selected.delete(m.id); paintRows(); paintSel(); paintHead(); } }));
      }
      if (!c.sort || (c.sort === 'relevance' && !text)) return h('th', { class: `c-${c.key}`, text: c.label });
      const active = eff === c.sort;
      const dir = active ? (local.sort ? local.dir : 'desc') : null;
      return h('th', { class: `c-${c.key} sortable${active ? ' active' : ''}`, 'aria-sort': active ? (dir === 'asc' ? 'ascending' : 'descending') : 'none' },
        h('button', { type: 'button', class: 'th-btn', dataset: { sort: c.sort }, title: c.sort === 'relevance' ? 'sort by relevance (the default with text)' : `sort by ${c.label.toLowerCase()}`,
          onclick: () => {
            if (active) { local.sort = c.sort; local.dir = dir === 'desc' ? 'asc' : 'desc'; }
            else { local.sort = c.sort; local.dir = 'desc'; }
            load(false);
          } }, c.sort === 'relevance' ? 'MEMORY · RELEVANCE' : c.label, active ? h('span', { class: 'arrow', text: dir === 'asc' ? ' ↑' : ' ↓' }) : null));
    })));
  }

  function row(m) {
    const src = m.kind === 'chunk' ? 'DOC' : m.origin === 'doc' ? 'DIST' : 'CHAT';
    const pending = m.kind === 'claim' && !m.reviewedAt;
    const tr = h('tr', { class: `${pending ? 'pending' : ''}${m.deletedAt ? ' dropped' : ''}${m.id === activeId ? ' active' : ''}${selected.has(m.id) ? ' selected' : ''}`, dataset: { id: m.id },
      onclick: (e) => {
        if (e.target.closest('input')) return;
        activeId = m.id;
        tbody.querySelectorAll('tr.active').forEach((r) => r.classList.remove('active'));
        tr.classList.add('active');
        inspector.open(m.id);
      } },
    h('td', { class: 'c-sel' }, h('input', { type: 'checkbox', 'aria-label': 'select', checked: selected.has(m.id),
      onchange: (e) => { e.target.checked ? selected.add(m.id) : selected.delete(m.id); tr.classList.toggle('selected', e.target.checked); paintSel(); paintHead(); } })),
    h('td', { class: 'c-src' }, h('span', { class: `pill pill-${src.toLowerCase()}`, text: src })),
    h('td', { class: 'c-text' }, pending ? h('span', { class: 'pending-dot', title: 'not yet reviewed' }) : null, h('span', { class: 'cell-text', text: m.text })),
    h('td', { class: 'c-cluster' }, h('span', { class: 'chip' }, h('span', { class: 'dot', style: { background: m.clusterColor } }), m.clusterLabel)),
    h('td', { class: 'c-agents' }, m.readers.slice(0, 3).map((a) => h('span', { class: 'initial', title: a, style: { '--c': agentColor(a) || hashColor(a) }, text: a.slice(0, 2) })),
      m.readers.length > 3 ? h('span', { class: 'dim small', text: `+${m.readers.length - 3}` }) : null),
    h('td', { class: 'c-strength' }, meter(m.strength, { width: 48 }), h('span', { class: 'mono', text: pct(m.strength) })),
    h('td', { class: 'c-hits mono', text: num(m.hits) }),
    h('td', { class: 'c-seen mono dim', text: age(m.lastReadAt) }),
    h('td', { class: 'c-age mono dim', text: age(m.createdAt) }),
    h('td', { class: 'c-flags' },
      m.pinned ? h('span', { class: 'flag-pin', title: 'pinned', text: '◆' }) : null,
      m.conflictWith ? h('span', { class: 'flag-conflict', title: 'in an open conflict', text: '▲' }) : null,
      m.archived ? h('span', { class: 'flag-arch', title: 'archived', text: '▫' }) : null,
      m.deletedAt ? h('span', { class: 'flag-drop', title: `dropped ${ago(m.deletedAt)} — shown because of asof:`, text: '✕' }) : null));
    return tr;
  }

  function paintRows() {
    replace(tbody, hits.map(row));
  }

  function paintFooter() {
    const more = hits.length < total;
    let status;
    if (loading && !hits.length) status = 'SEARCHING…';
    else if (error) status = error.message;
    else if (!total) status = 'NOTHING MATCHES';
    else status = `${num(total)} ${total === 1 ? 'MEMORY' : 'MEMORIES'} · ${tookMs < 10 ? tookMs.toFixed(1) : Math.round(tookMs)} MS${more ? ` · SHOWING ${num(hits.length)}` : ''}`;
    replace(footer,
      h('span', { class: error ? 'err' : '', dataset: { status: error ? 'error' : 'ok' }, text: status }),
      more ? h('button', { class: 'btn btn-quiet', type: 'button', onclick: () => load(true), text: `SHOW ${Math.min(PAGE, total - hits.length)} MORE` }) : null,
      total ? h('a', { class: 'btn btn-quiet', href: api.exportUrl(params()), download: 'ledger-export.jsonl', title: 'every match as NDJSON', text: 'EXPORT ALL' }) : null);
  }

  function paintSummary() {
    const eff = effectiveSort();
    const sortLabel = { relevance: 'relevance', strength: 'strength', hits: 'reads', last: 'last read', created: 'age' }[eff];
    replace(summary,
      h('span', { class: 'mono small dim', text: `sorted by ${sortLabel}${local.sort ? ` · ${local.dir}` : ''} · mode ${state.mode}` }),
      local.sort ? h('button', { class: 'link-btn small', type: 'button', onclick: () => { local.sort = null; load(false); }, text: 'default order' }) : null);
  }

  // ------------------------------------------------------------ selection
  function paintSel() {
    const n = selected.size;
    selBar.hidden = n === 0;
    if (!n) return;
    replace(selBar,
      h('span', { class: 'mono', text: `${n} selected` }),
      h('button', { class: 'link-btn', type: 'button', onclick: () => { hits.forEach((m) => selected.add(m.id)); paintRows(); paintSel(); paintHead(); }, text: `select all ${hits.length}` }),
      h('span', { class: 'sep' }),
      bulkBtn('PIN', 'pin'), bulkBtn('UNPIN', 'unpin'),
      bulkBtn('MERGE', 'merge', n < 2, 'needs two or more; the first selected is kept'),
      bulkBtn('ARCHIVE', 'archive'), bulkBtn('UNARCHIVE', 'unarchive'),
      h('button', { class: 'btn', type: 'button', onclick: exportSelected, text: 'EXPORT' }),
      confirmBtn('DROP', () => runBulk('drop')),
      h('button', { class: 'link-btn', type: 'button', onclick: () => { selected.clear(); paintRows(); paintSel(); paintHead(); }, text: 'clear' }));
  }

  function bulkBtn(label, op, disabled = false, title) {
    return h('button', { class: 'btn', type: 'button', disabled, title, dataset: { op }, 'data-write': true, onclick: () => runBulk(op) }, label);
  }

  function confirmBtn(label, fn) {
    const b = h('button', { class: 'btn btn-danger', type: 'button', dataset: { op: 'drop' }, 'data-write': true, text: label });
    let armed = false;
    let t = 0;
    b.addEventListener('click', () => {
      if (!armed) {
        armed = true;
        b.textContent = `CONFIRM DROP ${selected.size}`;
        t = setTimeout(() => { armed = false; b.textContent = label; }, 3000);
        return;
      }
      clearTimeout(t);
      fn();
    });
    return b;
  }

  async function runBulk(op) {
    if (refuseWrite()) return;
    const ids = [...selected];
    try {
      const res = await api.bulk(op, ids);
      const n = res.affected ?? ids.length;
      const msg = {
        pin: `pinned ${n}`, unpin: `unpinned ${n}`, archive: `archived ${n} — hidden from search`, unarchive: `${n} back in search`,
        drop: `dropped ${n} — still answerable by asof:`, merge: `merged ${ids.length - 1} into one — evidence kept`,
      }[op];
      toast(msg);
      if (op === 'drop' || op === 'merge') selected.clear();
      changed('bulk');
    } catch (e) { fail(e); }
  }

  async function exportSelected() {
    try {
      const blob = await api.exportSelected([...selected]);
      download(blob, 'ledger-export.jsonl');
      toast(`exported ${plural(selected.size, 'memory', 'memories')} as NDJSON`);
    } catch (e) { fail(e); }
  }

  function paint() {
    paintRail();
    paintSummary();
    paintHead();
    paintRows();
    paintFooter();
    paintSel();
  }

  const offs = [
    on('query', () => { paintRail(); reload(); }),
    on('changed', () => load(false)),
    on('lookups', paintRail),
  ];
  const onInspect = (e) => {
    activeId = e.detail;
    tbody.querySelectorAll('tr').forEach((r) => r.classList.toggle('active', r.dataset.id === activeId));
  };
  window.addEventListener('ledger:inspect', onInspect);
  paint();
  load(false);
  return {
    unmount() {
      offs.forEach((f) => f());
      window.removeEventListener('ledger:inspect', onInspect);
      reload.cancel();
    },
  };
}

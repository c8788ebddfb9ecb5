// The query language in the search box: token helpers (facets write `key:value`
// tokens so the box always states the filter) and key/value autocomplete.
import { h, replace, plural } from './dom.js';
import { state } from './state.js';

export function tokens(q) {
  return q.split(/\s+/).filter(Boolean);
}

function sameToken(tok, key, value) {
  const i = tok.indexOf(':');
  return i > 0 && tok.slice(0, i).toLowerCase() === key && tok.slice(i + 1).toLowerCase() === String(value).toLowerCase();
}

export function hasToken(q, key, value) {
  return tokens(q).some((t) => sameToken(t, key, value));
}

export function toggleToken(q, key, value) {
  const toks = tokens(q);
  const kept = toks.filter((t) => !sameToken(t, key, value));
  if (kept.length === toks.length) kept.push(`${key}:${value}`);
  return kept.join(' ');
}

export function setToken(q, key, value) {
  // Replace every `key:` token (asof, before, after: the last one wins anyway).
  const kept = tokens(q).filter((t) => !t.toLowerCase().startsWith(`${key}:`));
  if (value !== null && value !== undefined && value !== '') kept.push(`${key}:${value}`);
  return kept.join(' ');
}

export function stripFacetTokens(q, keys = ['type', 'cluster', 'agent', 'kind']) {
  return tokens(q).filter((t) => {
    const i = t.indexOf(':');
    return !(i > 0 && keys.includes(t.slice(0, i).toLowerCase()));
  }).join(' ');
}

export function hasFreeText(q) {
  const keys = state.meta?.keys || [];
  return tokens(q).some((t) => {
    const i = t.indexOf(':');
    return !(i > 0 && keys.includes(t.slice(0, i).toLowerCase()));
  });
}

// ---------------------------------------------------------------- autocomplete
// The token under the caret: [start, end, text].
function currentToken(input) {
  const v = input.value;
  const caret = input.selectionStart ?? v.length;
  let s = caret;
  while (s > 0 && !/\s/.test(v[s - 1])) s--;
  let e = caret;
  while (e < v.length && !/\s/.test(v[e])) e++;
  return [s, e, v.slice(s, caret)];
}

export function suggestionsFor(tok) {
  const meta = state.meta;
  if (!meta) return [];
  const i = tok.indexOf(':');
  if (i < 0) {
    if (!tok) return [];
    const t = tok.toLowerCase();
    return meta.keys.filter((k) => k.startsWith(t)).map((k) => ({ insert: `${k}:`, label: `${k}:`, hint: meta.keyHints[k], key: true }));
  }
  const key = tok.slice(0, i).toLowerCase();
  if (!meta.keys.includes(key)) return [];
  const prefix = tok.slice(i + 1).toLowerCase();
  let values = [];
  if (key === 'cluster') {
    values = [...state.clusters].sort((a, b) => b.count - a.count)
      .map((c) => ({ v: c.id, hint: `${c.label} · ${c.count}`, color: c.color }));
  } else if (key === 'agent') {
    const counts = state.facets?.agent || {};
    const ids = new Set([...Object.keys(counts), ...state.agents.map((a) => a.id)]);
    values = [...ids].sort((a, b) => (counts[b] || 0) - (counts[a] || 0))
      .map((id) => ({ v: id, hint: counts[id] ? plural(counts[id], 'memory', 'memories') : 'agent', color: state.agents.find((a) => a.id === id)?.color }));
  } else {
    const hints = { chat: 'said in a conversation', doc: 'from a document', claim: 'one assertion', chunk: 'a slice of a document',
      '<20': 'fading', '<40': 'weak', '>70': 'strong', '>90': 'pinned or heavily used' };
    values = (meta.presets[key] || []).map((v) => ({ v, hint: hints[v] || (/^\d+(m|h|d|w|mo|y)$/.test(v) ? `${v} ago` : 'date') }));
  }
  return values.filter((x) => x.v.toLowerCase().startsWith(prefix))
    .map((x) => ({ insert: `${key}:${x.v} `, label: `${key}:${x.v}`, hint: x.hint, color: x.color }));
}

export function attachAutocomplete(input, list, onCommit) {
  let items = [];
  let active = 0;

  function close() {
    items = [];
    list.hidden = true;
    input.setAttribute('aria-expanded', 'false');
  }

  function render() {
    if (!items.length) return close();
    replace(list, items.map((it, i) => h('li', {
      role: 'option', class: `sg${i === active ? ' active' : ''}`, 'aria-selected': i === active ? 'true' : 'false',
      onmousedown: (e) => { e.preventDefault(); accept(i); },
    },
    it.color ? h('span', { class: 'dot', style: { background: it.color } }) : null,
    h('span', { class: 'sg-label mono', text: it.label }),
    h('span', { class: 'sg-hint', text: it.hint || '' }))));
    list.hidden = false;
    input.setAttribute('aria-expanded', 'true');
  }

  function update() {
    const [, , tok] = currentToken(input);
    items = suggestionsFor(tok).slice(0, 8);
    active = 0;
    render();
  }

  function accept(i) {
    const it = items[i];
    if (!it) return;
    const [s, e] = currentToken(input);
    const v = input.value;
    const before = v.slice(0, s);
    const after = v.slice(e).replace(/^\s+/, '');
    input.value = before + it.insert + (after ? after : '');
    const caret = (before + it.insert).length;
    input.setSelectionRange(caret, caret);
    onCommit(input.value);
    if (it.key) update(); else close();
  }

  input.addEventListener('input', update);
  input.addEventListener('focus', update);
  input.addEventListener('blur', () => setTimeout(close, 100));
  input.addEventListener('keydown', (e) => {
    if (list.hidden || !items.length) return;
    if (e.key === 'ArrowDown') { active = (active + 1) % items.length; render(); e.preventDefault(); }
    else if (e.key === 'ArrowUp') { active = (active - 1 + items.length) % items.length; render(); e.preventDefault(); }
    else if (e.key === 'Enter' || e.key === 'Tab') { accept(active); e.preventDefault(); e.stopImmediatePropagation(); }
    else if (e.key === 'Escape') { close(); e.preventDefault(); e.stopImmediatePropagation(); }
  });
  return { close, update };
}

// Review: what the agents learned, one card at a time. Two lanes (claims, conflicts),
// keyboard-first with the terminal review's keys. The conflicts lane also holds the
// candidates still waiting for an agent's verdict: a person may judge and resolve one with
// the same keys, in one step (the server takes a cc_ id where it takes a cf_ id).
//   claims     a keep · e edit · d drop · p pin
//   conflicts  1 keep A · 2 keep B · b both · m merge · n not a conflict
//   j/k or arrows move · Tab switches lane
import { api } from './api.js';
import { ago, date, h, isTyping, num, pct, replace, strengthColor, hashColor, plural } from './dom.js';
import { agentColor, changed, fail, on, refuseWrite, state, toast } from './state.js';

const CLAIM_KEYS = { a: 'keep', e: 'edit', d: 'drop', p: 'pin' };
const CONFLICT_KEYS = { 1: 'a', 2: 'b', b: 'both', m: 'merge', n: 'dismiss' };
const TOASTS = {
  keep: 'kept', pin: 'kept and pinned — held at full strength', drop: 'dropped', edit: 'updated and kept',
  a: 'kept A · 1 memory retired', b: 'kept B · 1 memory retired', both: 'both kept · linked as related, not contradictory',
  merge: 'merged — newer value kept, evidence preserved', dismiss: 'dismissed — detector marked wrong',
};

export function mount(root) {
  let data = null;
  let lane = 'claims';
  const index = { claims: 0, conflicts: 0 };
  let busy = false;
  let editing = false;
  let loadedOnce = false;

  const title = h('h1', { text: 'What your agents learned' });
  const sub = h('p', { class: 'sub' });
  const progFill = h('div', { class: 'progress-fill' });
  const progText = h('span', { class: 'mono small dim' });
  const tabs = h('div', { class: 'tabs', role: 'tablist' });
  const laneEl = h('div', { class: 'lane', role: 'list' });
  const keys = h('div', { class: 'keys mono small dim' });
  root.append(h('div', { class: 'screen review' },
    h('header', { class: 'screen-head' }, h('div', {}, title, sub),
      h('div', { class: 'progress-wrap' }, h('div', { class: 'progress' }, progFill), progText)),
    h('div', { class: 'tabbar' }, tabs, keys),
    laneEl));

  let reloadAfterEdit = false;

  async function load() {
    try {
      const fresh = await api.review(100);
      // A refresh that lands while a card is being edited would repaint the lane and
      // throw the edit box away: keep the lane as it is and refresh once the edit ends.
      if (editing) { reloadAfterEdit = true; return; }
      data = fresh;
      if (!loadedOnce && !data.claims.length && items('conflicts').length) lane = 'conflicts';
      loadedOnce = true;
      paint();
    } catch (e) { fail(e); }
  }

  function items(which = lane) {
    if (!data) return [];
    return which === 'claims' ? data.claims : data.conflicts.concat(data.candidates || []);
  }

  function paint() {
    if (!data) return;
    const waiting = data.claimCount + data.conflictCount;
    const cleared = Math.max(0, data.claimsTotal - data.pendingTotal);
    const cand = data.candidateCount;
    sub.textContent = waiting
      ? `${num(waiting)} waiting · ${num(cand)} ${cand === 1 ? 'pair' : 'pairs'} still with the agents`
      : `queue clear · ${num(cand)} ${cand === 1 ? 'pair' : 'pairs'} still with the agents`;
    const frac = cleared + waiting ? cleared / (cleared + waiting) : 1;
    progFill.style.setProperty('width', `${(frac * 100).toFixed(1)}%`);
    progText.textContent = `${num(cleared)} of ${num(cleared + waiting)} reviewed`;

    const other = lane === 'claims' ? 'conflicts' : 'claims';
    if (!items().length && items(other).length) lane = other;
    replace(tabs,
      tab('claims', 'CLAIMS', data.claimCount),
      tab('conflicts', 'CONFLICTS', data.conflictCount + (data.candidateCount || 0)));
    keys.textContent = lane === 'claims'
      ? 'a keep · e edit · p pin · d drop · j/k move · tab lane'
      : '1 keep A · 2 keep B · b both · m merge · n not a conflict · j/k move · tab lane';

    const list = items();
    index[lane] = Math.max(0, Math.min(index[lane], list.length - 1));
    if (!items('claims').length && !items('conflicts').length) {
      replace(laneEl, h('div', { class: 'empty' },
        h('div', { class: 'empty-title mono', text: 'QUEUE CLEAR' }),
        h('p', { text: `Your agents are writing straight through. ${plural(state.stats?.memories ?? 0, 'memory', 'memories')} on this machine.` }),
        h('p', { class: 'dim', text: 'Everything new is searchable right away — the queue is an audit, not a gate.' })));
      return;
    }
    if (!list.length) {
      replace(laneEl, h('div', { class: 'empty' }, h('p', { class: 'dim', text: `No ${lane} waiting.` })));
      return;
    }
    replace(laneEl, list.map((it, i) => (lane === 'claims' ? claimCard(it, i) : it.kind ? conflictCard(it, i) : candidateCard(it, i))));
    focusCard(false);
  }

  function tab(name, label, n) {
    return h('button', { class: `tab${lane === name ? ' on' : ''}`, role: 'tab', 'aria-selected': lane === name ? 'true' : 'false', type: 'button',
      onclick: () => { lane = name; paint(); } },
    label, h('span', { class: `tab-n${n ? ' alert' : ''}`, text: num(n) }));
  }

  function focusCard(scroll = true) {
    const cards = laneEl.querySelectorAll('.card');
    cards.forEach((c, i) => c.classList.toggle('focus', i === index[lane]));
    const el = cards[index[lane]];
    if (el && scroll) el.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
  }

  function meta(m) {
    return [
      h('span', { class: 'badge', style: { '--c': agentColor(m.writer) || hashColor(m.writer) }, text: m.writer }),
      h('span', { class: 'dim mono small', text: `${ago(m.createdAt)}` }),
      h('span', { class: `pill pill-${m.origin}`, text: m.origin === 'doc' ? 'DOC' : 'CHAT' }),
      h('span', { class: 'chip' }, h('span', { class: 'dot', style: { background: m.clusterColor } }), m.clusterLabel),
      h('span', { class: 'mono small', style: { color: strengthColor(m.strength) }, text: `str ${pct(m.strength)}` }),
    ];
  }

  function claimCard(m, i) {
    const text = h('p', { class: 'card-text', text: m.text });
    return h('article', { class: 'card', role: 'listitem', dataset: { id: m.id }, onclick: (e) => { if (e.target.closest('button, textarea')) return; index.claims = i; focusCard(false); } },
      h('div', { class: 'card-meta' }, meta(m)),
      text,
      m.provenance ? h('p', { class: 'card-prov dim small', text: m.provenance }) : null,
      m.topic ? h('p', { class: 'card-prov dim small mono', text: m.topic }) : null,
      h('div', { class: 'card-actions' },
        btn('KEEP', 'A', () => claimAction(m, 'keep')),
        btn('EDIT', 'E', () => { index.claims = i; focusCard(false); startEdit(m); }),
        btn('PIN', 'P', () => claimAction(m, 'pin')),
        btn('DROP', 'D', () => claimAction(m, 'drop'), 'btn-danger')));
  }

  function side(label, m) {
    return h('div', { class: 'side' },
      h('div', { class: 'side-head' }, h('span', { class: 'side-label mono', text: label }), meta(m).filter((_, k) => k !== 3)),
      h('p', { class: 'card-text', text: m.text }),
      h('p', { class: 'card-prov dim small', text: m.provenance || `written ${date(m.createdAt)}` }));
  }

  // Conflicts and candidates share a frame (the two sides, the five resolutions); what
  // differs is the kind line, the detail chips and the note.
  function pairCard(c, i, { extraClass, kindText, chips, note }) {
    return h('article', { class: `card card-conflict${extraClass}`, role: 'listitem', dataset: { id: c.id }, onclick: (e) => { if (e.target.closest('button')) return; index.conflicts = i; focusCard(false); } },
      h('div', { class: 'card-meta' },
        h('span', { class: 'conflict-kind mono', text: kindText }),
        h('span', { class: 'chip' }, h('span', { class: 'dot', style: { background: c.a.clusterColor } }), c.a.clusterLabel),
        ...chips.map((text) => h('span', { class: 'mono small dim', text })),
        h('span', { class: 'mono small dim', text: `${ago(c.createdAt)}` })),
      h('div', { class: 'sides' }, side('A', c.a), side('B', c.b)),
      note ? h('p', { class: 'card-note', text: note }) : null,
      h('div', { class: 'card-actions' },
        btn('KEEP A', '1', () => resolve(c, 'a')),
        btn('KEEP B', '2', () => resolve(c, 'b')),
        btn('KEEP BOTH', 'B', () => resolve(c, 'both')),
        btn('MERGE', 'M', () => resolve(c, 'merge')),
        btn('NOT A CONFLICT', 'N', () => resolve(c, 'dismiss'), 'btn-quiet')));
  }

  function conflictCard(c, i) {
    return pairCard(c, i, { extraClass: '', kindText: `▲ ${c.kind.toUpperCase()}`, chips: [`detector ${pct(c.detector)}`], note: c.note });
  }

  // A candidate has no kind, detector or note yet: its signals and score, and a line
  // saying that a key here judges and resolves it at once.
  function candidateCard(c, i) {
    return pairCard(c, i, {
      extraClass: ' card-candidate', kindText: '? CANDIDATE', chips: [c.signals.join(', '), `score ${pct(c.score)}`],
      note: "Waiting for an agent's verdict — your choice judges and resolves it now.",
    });
  }

  function btn(label, key, fn, cls = '') {
    return h('button', { class: `btn ${cls}`, type: 'button', 'data-write': true, onclick: (e) => { e.stopPropagation(); fn(); } },
      label, h('kbd', { text: key }));
  }

  function removeCurrent(id) {
    const key = lane === 'claims' ? 'claims' : data.conflicts.some((x) => x.id === id) ? 'conflicts' : 'candidates';
    const list = data[key];
    const at = list.findIndex((x) => x.id === id);
    if (at >= 0) list.splice(at, 1);
    if (key === 'claims') { data.claimCount = Math.max(0, data.claimCount - 1); data.pendingTotal = Math.max(0, data.pendingTotal - 1); }
    else if (key === 'conflicts') data.conflictCount = Math.max(0, data.conflictCount - 1);
    else data.candidateCount = Math.max(0, data.candidateCount - 1);
    paint();
  }

  async function claimAction(m, action, text) {
    if (busy || refuseWrite()) return;
    busy = true;
    try {
      await api.reviewAction(m.id, action, text);
      toast(TOASTS[action]);
      if (action === 'drop') data.claimsTotal = Math.max(0, data.claimsTotal - 1);
      removeCurrent(m.id);
      changed('review');
    } catch (e) { fail(e); } finally { busy = false; }
  }

  async function resolve(c, resolution) {
    if (busy || refuseWrite()) return;
    busy = true;
    try {
      await api.resolve(c.id, resolution);
      toast(TOASTS[resolution]);
      removeCurrent(c.id);
      changed('review');
    } catch (e) { fail(e); } finally { busy = false; }
  }

  function startEdit(m) {
    if (refuseWrite()) return;
    const card = laneEl.querySelector(`.card[data-id="${CSS.escape(m.id)}"]`);
    if (!card) return;
    const p = card.querySelector('.card-text');
    const ta = h('textarea', { class: 'edit', rows: 3, 'aria-label': 'new text' });
    ta.value = m.text;
    p.replaceWith(ta);
    editing = true;
    ta.focus();
    ta.setSelectionRange(ta.value.length, ta.value.length);
    let finished = false;
    const done = (save) => {
      if (finished) return;
      finished = true;
      editing = false;
      const v = ta.value.trim();
      if (save && v && v !== m.text) claimAction(m, 'edit', v);
      else ta.replaceWith(p);
      if (reloadAfterEdit) { reloadAfterEdit = false; load(); }
    };
    ta.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && !e.shiftKey) { e.preventDefault(); done(true); }
      else if (e.key === 'Escape') { e.preventDefault(); e.stopPropagation(); done(false); }
    });
    ta.addEventListener('blur', () => done(true));
  }

  function onKey(e) {
    if (!data || editing || isTyping(e) || e.ctrlKey || e.metaKey || e.altKey) return;
    const list = items();
    const k = e.key;
    if (k === 'Tab') {
      e.preventDefault();
      lane = lane === 'claims' ? 'conflicts' : 'claims';
      paint();
      return;
    }
    if (k === 'j' || k === 'ArrowDown') { index[lane] = Math.min(list.length - 1, index[lane] + 1); focusCard(); e.preventDefault(); return; }
    if (k === 'k' || k === 'ArrowUp') { index[lane] = Math.max(0, index[lane] - 1); focusCard(); e.preventDefault(); return; }
    const it = list[index[lane]];
    if (!it) return;
    if (lane === 'claims' && CLAIM_KEYS[k.toLowerCase()] && k.length === 1) {
      e.preventDefault();
      const action = CLAIM_KEYS[k.toLowerCase()];
      if (action === 'edit') startEdit(it); else claimAction(it, action);
    } else if (lane === 'conflicts' && CONFLICT_KEYS[k.toLowerCase()] && k.length === 1) {
      e.preventDefault();
      resolve(it, CONFLICT_KEYS[k.toLowerCase()]);
    }
  }

  window.addEventListener('keydown', onKey);
  const offChanged = on('changed', (what) => { if (what !== 'review' && !editing) load(); });
  let lastQueue = null;
  const offStats = on('stats', (st) => {
    const q = `${st.reviewQueue}:${st.conflicts}:${st.candidates}`;
    if (lastQueue !== null && q !== lastQueue && !editing && !busy) load();
    lastQueue = q;
  });
  load();
  return {
    unmount() {
      window.removeEventListener('keydown', onKey);
      offChanged();
      offStats();
    },
  };
}

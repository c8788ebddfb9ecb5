// The memory inspector (Browse and Canvas): the text, why it has its strength, where it
// came from, who read it, related memories, and the actions a person may take.
import { api } from './api.js';
import { ago, date, datetime, h, meter, pct, replace, strengthColor, hashColor } from './dom.js';
import { agentColor, changed, fail, on, refuseWrite, state, toast } from './state.js';

let panel;
let currentId = null;
let seq = 0;

export function init() {
  panel = document.getElementById('inspector');
  window.addEventListener('keydown', (e) => {
    if (e.key === 'Escape' && !panel.hidden && !['INPUT', 'TEXTAREA'].includes(document.activeElement?.tagName)) close();
  });
  on('changed', () => { if (currentId && !panel.hidden) load(currentId, true); });
}

export function isOpen() {
  return panel && !panel.hidden;
}

export function close() {
  if (!panel) return;
  panel.hidden = true;
  currentId = null;
  document.body.classList.remove('inspecting');
  window.dispatchEvent(new CustomEvent('ledger:inspect', { detail: null }));
}

export function open(id) {
  currentId = id;
  panel.hidden = false;
  document.body.classList.add('inspecting');
  window.dispatchEvent(new CustomEvent('ledger:inspect', { detail: id }));
  load(id, false);
}

async function load(id, quiet) {
  const mine = ++seq;
  if (!quiet) replace(panel, h('div', { class: 'insp-loading mono dim', text: 'loading…' }));
  try {
    const data = await api.memory(id);
    if (mine !== seq || currentId !== id) return;
    render(data.memory, data.related);
  } catch (e) {
    if (mine !== seq) return;
    replace(panel, header(null), h('div', { class: 'insp-body' }, h('p', { class: 'err', text: e.message })));
  }
}

function header(m) {
  return h('div', { class: 'insp-head' },
    h('span', { class: 'insp-kind mono', text: m ? kindLabel(m).toUpperCase() : 'MEMORY' }),
    m ? h('span', { class: 'insp-id mono dim', title: m.id, text: m.id }) : null,
    h('button', { class: 'icon-btn', title: 'close (Esc)', 'aria-label': 'close inspector', onclick: close, text: '×' }));
}

function kindLabel(m) {
  if (m.kind === 'chunk') return 'document chunk';
  return m.origin === 'doc' ? 'claim · distilled from a document' : 'claim · from conversation';
}

function factorRow(name, weight, value, hint) {
  return h('div', { class: 'factor' },
    h('div', { class: 'factor-top' },
      h('span', { class: 'factor-name', text: name }),
      h('span', { class: 'factor-w mono dim', text: `× ${weight.toFixed(2)}` }),
      h('span', { class: 'factor-v mono', text: `${pct(value)}` })),
    meter(value, { width: 300, color: '#7f8fb0' }),
    h('div', { class: 'factor-hint dim', text: hint }));
}

function render(m, related) {
  const S = state.meta?.strength || { base: 0.17, wUsed: 0.27, wFresh: 0.34, wCorroborated: 0.22 };
  const f = m.factors;
  const nReaders = m.readers.length;
  const body = h('div', { class: 'insp-body' });

  if (m.deletedAt) body.append(h('div', { class: 'banner banner-drop', text: `dropped ${datetime(m.deletedAt)} — still answerable by asof: queries` }));
  if (m.conflictWith) body.append(h('div', { class: 'banner banner-conflict', text: `▲ in an open conflict with ${m.conflictWith} — resolve it in Review` }));

  const textEl = h('p', { class: 'insp-text', text: m.text });
  body.append(textEl);

  // strength headline
  body.append(h('div', { class: 'insp-strength' },
    h('span', { class: 'big mono', style: { color: strengthColor(m.strength) }, text: pct(m.strength) }),
    h('div', { class: 'insp-strength-meter' }, h('span', { class: 'label', text: 'STRENGTH' }), meter(m.strength, { width: 240 }))));

  // why this strength
  const why = h('section', { class: 'insp-sec' }, h('h4', { text: 'WHY THIS STRENGTH' }));
  // A chunk's strength is its document's trust; the use factors do not apply to it.
  if (m.kind === 'chunk') why.append(factorRow('source trust', 1, m.sourceTrust ?? m.strength, `trust of ${m.sourceId}, set in Sources`));
  else why.append(
    factorRow('used', S.wUsed, f.used, `${m.hits} ${m.hits === 1 ? 'read' : 'reads'} by agents (saturates at ${S.useCeiling ?? 300})`),
    factorRow('fresh', S.wFresh, f.fresh, `last read ${ago(m.lastReadAt)} (halves in about ${Math.round((S.tauDays ?? 190) * Math.LN2)} days unread)`),
    factorRow('corroborated', S.wCorroborated, f.corroborated, `${m.sourceCount} ${m.sourceCount === 1 ? 'source' : 'sources'} · ${nReaders} ${nReaders === 1 ? 'agent' : 'agents'}`),
  );
  let note;
  if (m.kind === 'chunk') note = 'A chunk is as strong as its document\'s trust (clamped 15–97). It never decays; move the trust slider in Sources.';
  else if (m.pinned) note = 'Pinned: held at 99 whatever the factors say.';
  else {
    const raw = S.base + S.wUsed * f.used + S.wFresh * f.fresh + S.wCorroborated * f.corroborated;
    note = `${S.base.toFixed(2)} + ${S.wUsed}·used + ${S.wFresh}·fresh + ${S.wCorroborated}·corroborated = ${pct(Math.min(0.99, raw))}. Recomputed on every read; only agents' recalls count, never this screen.`;
  }
  why.append(h('p', { class: 'insp-note dim', text: note }));
  body.append(why);

  // provenance
  const rows = [
    ['kind', kindLabel(m)],
    ['cluster', h('span', { class: 'chip' }, h('span', { class: 'dot', style: { background: m.clusterColor } }), m.clusterLabel)],
    ['written by', h('span', { class: 'badge', style: { '--c': agentColor(m.writer) || hashColor(m.writer) }, text: m.writer })],
    ['on machine', m.machine || 'not recorded (written before machines were)'],
    ['created', `${datetime(m.createdAt)} · ${ago(m.createdAt)}`],
    ['last read', `${datetime(m.lastReadAt)} · ${ago(m.lastReadAt)}`],
    ['reads', String(m.hits)],
    ['reviewed', m.kind === 'chunk' ? 'documents are not reviewed' : m.reviewedAt ? date(m.reviewedAt) : 'not yet — waiting in Review'],
  ];
  if (m.provenance) rows.push(['provenance', m.provenance]);
  if (m.topic) rows.push(['topic', m.topic]);
  if (m.files?.length) rows.push(['files', h('span', { class: 'mono small' }, m.files.map((x) => h('div', { text: x.path })))]);
  if (m.pinned) rows.push(['pinned', 'yes']);
  if (m.archived) rows.push(['archived', 'yes — hidden from search unless asked']);
  const prov = h('section', { class: 'insp-sec' }, h('h4', { text: 'PROVENANCE' }),
    h('dl', { class: 'kvs' }, rows.map(([k, v]) => [h('dt', { text: k }), h('dd', {}, v)])));
  body.append(prov);

  body.append(h('section', { class: 'insp-sec' }, h('h4', { text: `READ BY · ${nReaders}` }),
    h('div', { class: 'badges' }, m.readers.map((a) => h('span', { class: 'badge', style: { '--c': agentColor(a) || hashColor(a) }, text: a })))));

  const rel = h('section', { class: 'insp-sec' }, h('h4', { text: 'RELATED' }));
  if (!related.length) rel.append(h('p', { class: 'dim small', text: 'nothing related yet' }));
  for (const r of related) {
    rel.append(h('button', { class: 'related', type: 'button', onclick: () => open(r.id) },
      h('span', { class: 'dot', style: { background: r.clusterColor } }),
      h('span', { class: 'related-text', text: r.text }),
      h('span', { class: 'mono small', style: { color: strengthColor(r.strength) }, text: pct(r.strength) })));
  }
  body.append(rel);

  // actions
  const actions = h('div', { class: 'insp-actions' });
  if (!m.deletedAt) {
    if (m.kind === 'claim') {
      actions.append(
        h('button', { class: 'btn', type: 'button', 'data-write': true, onclick: () => bulk(m.pinned ? 'unpin' : 'pin', m), text: m.pinned ? 'UNPIN' : 'PIN' }),
        h('button', { class: 'btn', type: 'button', 'data-write': true, onclick: () => startEdit(m, textEl), text: 'EDIT' }),
      );
    }
    actions.append(h('button', { class: 'btn', type: 'button', 'data-write': true, onclick: () => bulk(m.archived ? 'unarchive' : 'archive', m), text: m.archived ? 'UNARCHIVE' : 'ARCHIVE' }));
    if (m.kind === 'claim') actions.append(clusterSelect(m));
    if (m.kind === 'claim') actions.append(h('button', { class: 'btn btn-danger', type: 'button', 'data-write': true, onclick: () => bulk('drop', m), text: 'DROP' }));
  }
  body.append(actions);
  if (m.kind === 'chunk') body.append(h('p', { class: 'dim small', text: 'Chunks are trusted or dropped with their whole document: use Sources.' }));

  replace(panel, header(m), body);
}

function clusterSelect(m) {
  const sel = h('select', { class: 'sel', title: 'move to another cluster', 'aria-label': 'cluster', 'data-write': true,
    onchange: async () => {
      if (refuseWrite()) return;
      try {
        await api.update(m.id, { cluster: sel.value });
        toast(`moved to ${sel.options[sel.selectedIndex].text}`);
        changed('memory');
      } catch (e) { fail(e); }
    } },
  state.clusters.map((c) => h('option', { value: c.id, selected: c.id === m.clusterId, text: c.label })));
  return sel;
}

function startEdit(m, textEl) {
  if (refuseWrite()) return;
  const ta = h('textarea', { class: 'edit', rows: 4, 'aria-label': 'memory text' });
  ta.value = m.text;
  textEl.replaceWith(ta);
  ta.focus();
  let finished = false;
  const done = async (save) => {
    if (finished) return;
    finished = true;
    const v = ta.value.trim();
    if (!save || !v || v === m.text) { ta.replaceWith(textEl); return; }
    try {
      await api.update(m.id, { text: v });
      toast('updated — re-indexed and checked for contradictions');
      changed('memory');
    } catch (e) { fail(e); ta.replaceWith(textEl); }
  };
  ta.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey) { e.preventDefault(); done(true); }
    if (e.key === 'Escape') { e.preventDefault(); e.stopPropagation(); done(false); }
  });
  ta.addEventListener('blur', () => done(true), { once: true });
}

async function bulk(op, m) {
  if (refuseWrite()) return;
  try {
    await api.bulk(op, [m.id]);
    const msg = { pin: 'pinned — held at full strength', unpin: 'unpinned', archive: 'archived — hidden from search',
      unarchive: 'back in search', drop: 'dropped — still answerable by asof:' }[op];
    toast(msg);
    changed('memory');
    if (op === 'drop') close();
  } catch (e) { fail(e); }
}

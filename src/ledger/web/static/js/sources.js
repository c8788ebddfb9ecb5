// Sources: ingested documents. A document is trusted or dropped whole: the trust slider
// moves every chunk's strength at once; dropping removes its chunks and sends the claims
// distilled from it back to review.
import { api } from './api.js';
import { ago, bytes, h, hashColor, num, pct, replace, strengthColor, plural } from './dom.js';
import * as inspector from './inspector.js';
import { agentColor, changed, fail, on, refuseWrite, toast } from './state.js';

const expanded = new Set();

export function mount(root) {
  let data = null;
  const head = h('header', { class: 'screen-head' });
  const list = h('div', { class: 'sources' });
  root.append(h('div', { class: 'screen sources-screen' }, head, list));

  async function load() {
    try {
      data = await api.sources(0);
      paint();
    } catch (e) { fail(e); }
  }

  function paint() {
    const t = data.totals;
    replace(head,
      h('div', {},
        h('h1', { text: 'Sources' }),
        h('p', { class: 'sub', text: 'Documents your agents ingested. A document is trusted or dropped whole: its chunks never decay and are never reviewed one by one.' })),
      h('div', { class: 'stat-strip stat-strip-head' },
        stat('DOCUMENTS', num(t.documents)), stat('CHUNKS', num(t.chunks)), stat('CLAIMS DISTILLED', num(t.claims)), stat('TOTAL SIZE', bytes(t.bytes))));
    if (!data.sources.length) {
      replace(list, h('div', { class: 'empty' },
        h('div', { class: 'empty-title mono', text: 'NO DOCUMENTS YET' }),
        h('p', { text: 'Give your agents a document to read:' }),
        h('pre', { class: 'cmd', text: 'ledger ingest notes.md --cluster reading --trust 0.8' }),
        h('p', { class: 'dim', text: 'Markdown, text, CSV/TSV, JSON/JSONL, YAML and logs are read natively; pipe anything else through `ledger ingest -`.' })));
      return;
    }
    replace(list, data.sources.map(sourceRow));
  }

  function stat(label, value) {
    return h('div', { class: 'stat' }, h('span', { class: 'stat-v mono', text: value }), h('span', { class: 'stat-l', text: label }));
  }

  function sourceRow(s) {
    const open = expanded.has(s.id);
    const trustNum = h('span', { class: 'trust-n mono', text: String(pct(s.trust)) });
    const slider = h('input', { type: 'range', min: 0, max: 100, step: 1, value: String(pct(s.trust)), class: 'trust', 'aria-label': `trust for ${s.filename}`, 'data-write': true,
      style: { '--v': `${pct(s.trust)}%`, '--tc': strengthColor(s.trust) } });
    slider.addEventListener('input', () => {
      trustNum.textContent = slider.value;
      slider.style.setProperty('--v', `${slider.value}%`);
      slider.style.setProperty('--tc', strengthColor(slider.value / 100));
      trustNum.style.setProperty('color', strengthColor(slider.value / 100));
    });
    slider.addEventListener('change', async () => {
      if (refuseWrite()) return;
      const v = Number(slider.value) / 100;
      try {
        const res = await api.trust(s.id, v);
        s.trust = res.trust;
        toast(`${s.filename} trusted at ${pct(res.trust)} · ${plural(s.chunkCount, 'chunk')} moved with it`);
        if (expanded.has(s.id)) fillBody(s, body);
        changed('trust');
      } catch (e) { fail(e); }
    });
    trustNum.style.setProperty('color', strengthColor(s.trust));

    const body = h('div', { class: 'source-body', hidden: !open });
    const row = h('article', { class: `source${open ? ' open' : ''}`, dataset: { id: s.id } },
      h('div', { class: 'source-row' },
        h('button', { class: 'expander', type: 'button', 'aria-expanded': open ? 'true' : 'false', title: 'show claims and chunks', onclick: () => toggle(s, row, body) },
          h('span', { class: 'caret', text: open ? '▾' : '▸' }),
          h('span', { class: 'ext mono', text: (s.ext || 'txt').toUpperCase() }),
          h('span', { class: 'source-name' },
            h('span', { class: 'fname', text: s.filename }),
            h('span', { class: 'source-sub' },
              h('span', { class: 'badge', style: { '--c': agentColor(s.ingestedBy) || hashColor(s.ingestedBy) }, text: s.ingestedBy }),
              h('span', { class: 'dim small mono', text: `ingested ${ago(s.ingestedAt)} · ${bytes(s.bytes)}` })))),
        count('CHUNKS', s.chunkCount), count('CLAIMS', s.claimCount), count('READS', s.hits),
        h('div', { class: 'trust-wrap' }, h('span', { class: 'stat-l', text: 'TRUST' }), slider, trustNum),
        dropButton(s)),
      body);
    if (open) fillBody(s, body);
    return row;
  }

  function count(label, n) {
    return h('div', { class: 'count' }, h('span', { class: 'mono', text: num(n) }), h('span', { class: 'stat-l', text: label }));
  }

  function dropButton(s) {
    const b = h('button', { class: 'btn btn-danger', type: 'button', title: 'drop the whole document', 'data-write': true, text: 'DROP' });
    let armed = false;
    let t = 0;
    b.addEventListener('click', async () => {
      if (refuseWrite()) return;
      if (!armed) {
        armed = true;
        b.textContent = 'CONFIRM';
        b.title = `removes ${plural(s.chunkCount, 'chunk')}; ${plural(s.claimCount, 'distilled claim')} go back to review`;
        t = setTimeout(() => { armed = false; b.textContent = 'DROP'; }, 3500);
        return;
      }
      clearTimeout(t);
      try {
        const res = await api.dropSource(s.id);
        toast(`dropped ${s.filename} · ${plural(res.chunks, 'chunk')} removed, ${plural(res.flagged, 'claim')} flagged`);
        expanded.delete(s.id);
        changed('source');
      } catch (e) { fail(e); }
    });
    return b;
  }

  function toggle(s, row, body) {
    const open = !expanded.has(s.id);
    if (open) expanded.add(s.id); else expanded.delete(s.id);
    row.classList.toggle('open', open);
    body.hidden = !open;
    row.querySelector('.caret').textContent = open ? '▾' : '▸';
    row.querySelector('.expander').setAttribute('aria-expanded', open ? 'true' : 'false');
    if (open) fillBody(s, body);
  }

  async function fillBody(s, body) {
    replace(body, h('p', { class: 'dim small mono', text: 'loading…' }));
    let d;
    try { d = await api.source(s.id, 12); } catch (e) { fail(e); replace(body); return; }
    const claims = h('section', { class: 'sec' }, h('h4', { text: 'CLAIMS DISTILLED FROM THIS DOCUMENT' }),
      d.claimList.length ? d.claimList.map((c) => h('button', { class: 'related', type: 'button', onclick: () => inspector.open(c.id) },
        h('span', { class: `pending-dot${c.reviewedAt ? ' off' : ''}`, title: c.reviewedAt ? 'reviewed' : 'waiting in review' }),
        h('span', { class: 'related-text', text: c.text }),
        h('span', { class: 'mono small', style: { color: strengthColor(c.strength) }, text: pct(c.strength) })))
        : h('p', { class: 'dim small', text: 'none — agents ingested it but wrote no claims from it' }));
    const chunks = h('section', { class: 'sec' }, h('h4', { text: `CHUNKS · FIRST ${d.chunkPreview.length} OF ${num(d.chunkCount)}` }),
      d.chunkPreview.map((c) => h('button', { class: 'chunk', type: 'button', onclick: () => inspector.open(c.id) },
        h('span', { class: 'chunk-i mono dim', text: `#${c.chunkIndex}` }),
        // Stored text as every screen shows it: h() draws CR, NEL and bidi controls as stand-ins,
        // and .chunk-text's white-space: nowrap lays newlines and tabs out as one space.
        h('span', { class: 'chunk-text', text: c.text }),
        h('span', { class: 'mono small dim', text: plural(c.hits, 'read') }))));
    const consequence = h('p', { class: 'consequence small', text:
      `Dropping ${d.filename} removes its ${plural(d.chunkCount, 'chunk')} (still visible to asof: queries) and sends ${num(d.claimCount)} distilled ${d.claimCount === 1 ? 'claim' : 'claims'} back to review.` });
    replace(body, claims, chunks, consequence);
  }

  const off = on('changed', (what) => { if (what !== 'trust') load(); });
  load();
  return { unmount() { off(); } };
}

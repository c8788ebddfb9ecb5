// Connections: the server, the agents using this store (activity, hit rate, what they
// read), the knowledge they share, and the live request feed from the event log.
import { api } from './api.js';
import { ago, bytes, clock, duration, h, hashColor, num, replace } from './dom.js';
import { on, state, toast } from './state.js';

const FEED = 30;

// The install step says what src/ledger/install_hint.py says (tests/test_install_hint.py):
// ledger is not on PyPI, so every way starts from the repository.
export const CONNECT_STEPS = [
  ['install ledger — from a clone of the repository: the first or second; without a clone: the third',
    ['pipx install .', 'uv tool install .', 'pip install git+<repository URL>']],
  ['wire up Claude Code (adds its hooks)', 'ledger install claude-code'],
  ['an agent writes a fact', 'ledger remember "CI runs on Python 3.11" --cluster code --agent claude'],
  ['an agent recalls it (counts as a read)', 'ledger recall "python version" --agent claude'],
  ['give it a document', 'ledger ingest notes.md --cluster reading'],
];

function cmdline(cmd) {
  return h('div', { class: 'cmdline' },
    h('code', { class: 'cmd mono', text: cmd }),
    h('button', { class: 'copy', type: 'button', title: 'copy', 'aria-label': `copy: ${cmd}`,
      onclick: async () => {
        try { await navigator.clipboard.writeText(cmd); toast('copied'); } catch (e) { toast('select the command and copy it by hand', { error: true }); }
      }, text: 'COPY' }));
}

// A step is [what, command] or [what, [alternative commands]].
export function commandBlock(steps = CONNECT_STEPS) {
  return h('ol', { class: 'steps' }, steps.map(([what, cmd]) => h('li', {},
    h('span', { class: 'step-what dim small', text: what }),
    ...(Array.isArray(cmd) ? cmd : [cmd]).map(cmdline))));
}

export function mount(root) {
  let lastEvent = 0;
  let events = [];
  const server = h('section', { class: 'panel server-panel' });
  const connect = h('section', { class: 'panel' }, h('h3', { text: 'CONNECT AN AGENT' }),
    h('p', { class: 'dim small', text: 'Agents use the ledger through its command line: no daemon, no network protocol. Each one names itself with --agent or $LEDGER_AGENT.' }),
    commandBlock());
  const agentsEl = h('div', { class: 'agents' });
  const shared = h('section', { class: 'panel' });
  const machinesEl = h('section', { class: 'panel machines' });
  const feed = h('ol', { class: 'feed mono small' });
  root.append(h('div', { class: 'screen connections' },
    h('header', { class: 'screen-head' }, h('div', {}, h('h1', { text: 'Connections' }),
      h('p', { class: 'sub', text: 'Who is using this store, how often their recalls find something, and what they share.' }))),
    h('div', { class: 'conn-grid' },
      h('div', { class: 'conn-col' }, server, machinesEl, connect, shared),
      h('div', { class: 'conn-col' }, h('h3', { class: 'section-title', text: 'AGENTS' }), agentsEl),
      h('section', { class: 'panel feed-panel' }, h('h3', {}, h('span', { class: 'live-dot' }), ' REQUEST FEED'), feed))));

  function paintServer(st) {
    if (!st) return;
    replace(server,
      h('h3', {}, h('span', { class: 'live-dot' }), ' SERVER RUNNING'),
      h('p', { class: 'mono origin', text: location.origin }),
      h('div', { class: 'stat-strip' },
        stat('UPTIME', duration(st.uptimeMs || 0)), stat('REQUESTS TODAY', num(st.requestsToday)),
        stat('P50 SEARCH', st.p50SearchMs === null || st.p50SearchMs === undefined ? '—' : `${st.p50SearchMs} ms`), stat('ON DISK', bytes(st.diskBytes))),
      h('p', { class: 'mono small dim path', text: st.db }),
      h('p', { class: 'small dim', text: /^postgres(ql)?:/.test(st.db || '')
        ? 'Bound to loopback. The store is a shared PostgreSQL database: other machines write to it too.'
        : 'Bound to loopback. Nothing in this store leaves this machine.' }));
  }

  function stat(label, value) {
    return h('div', { class: 'stat' }, h('span', { class: 'stat-v mono', text: value }), h('span', { class: 'stat-l', text: label }));
  }

  async function loadAgents() {
    try {
      const data = await api.agents();
      state.agents = data.agents;
      paintAgents(data);
    } catch (e) { /* retried on the next tick */ }
  }

  // Row-level attribution: every write records its machine ($LEDGER_MACHINE or the host name).
  function paintMachines(machines) {
    const now = Date.now();
    replace(machinesEl, h('h3', { text: 'MACHINES' }),
      h('p', { class: 'dim small', text: 'The machines whose agents wrote to this store, from the operation log.' }),
      machines.length ? machines.map((m) => h('div', { class: 'machine', dataset: { machine: m.machine } },
        h('span', { class: `state ${now - m.lastSeen < 5 * 60e3 ? 'on' : ''}`, text: now - m.lastSeen < 5 * 60e3 ? 'active' : 'idle' }),
        h('span', { class: 'mono machine-id', text: m.machine }),
        h('span', { class: 'small dim', text: `${num(m.writes)} op${m.writes === 1 ? '' : 's'} · ${m.agents.join(', ')} · last ${ago(m.lastSeen)}` })))
        : h('p', { class: 'dim small', text: 'No write has been attributed to a machine yet.' }));
  }

  function paintAgents({ agents, overlap, machines = [] }) {
    paintMachines(machines);
    const now = Date.now();
    if (!agents.length) {
      replace(agentsEl, h('div', { class: 'empty small' }, h('p', { class: 'dim', text: 'No agent has written or recalled anything yet.' })));
    } else {
      // The person at this screen acts as "human"; list the agents first.
      const ordered = [...agents.filter((a) => a.id !== 'human'), ...agents.filter((a) => a.id === 'human')];
      replace(agentsEl, ordered.map((a) => {
        const live = now - a.lastSeen < 5 * 60e3;
        const maxTop = Math.max(1, ...a.top.map((t) => t.count));
        return h('article', { class: 'agent', style: { '--c': a.color || hashColor(a.id) }, dataset: { agent: a.id } },
          h('div', { class: 'agent-head' },
            h('span', { class: 'agent-id mono', text: a.id }),
            h('span', { class: `state ${live ? 'on' : ''}`, text: live ? 'connected' : 'idle' })),
          h('p', { class: 'small dim', text: a.id === 'human' && !a.role
            ? 'you — review, resolve and edits from this UI and `ledger review`'
            : `${a.role || 'role undeclared'} · ${a.endpoint || 'endpoint not declared'}` }),
          h('div', { class: 'agent-stats' },
            stat('WROTE', num(a.wrote)), stat('CALLS/24H', num(a.calls)),
            stat('HIT RATE', a.hitRate === null || a.hitRate === undefined ? '—' : `${Math.round(a.hitRate * 100)}%`)),
          h('div', { class: 'top' }, h('h5', { text: 'TOP CLUSTERS' }),
            a.top.length ? a.top.map((t) => {
              const c = state.clusters.find((x) => x.id === t.cluster);
              return h('div', { class: 'topbar-row' },
                h('span', { class: 'small', text: c?.label || t.cluster }),
                h('span', { class: 'bar-track' }, h('span', { class: 'bar-fill', style: { width: `${(t.count / maxTop) * 100}%`, background: c?.color || '#888' } })),
                h('span', { class: 'mono small dim', text: num(t.count) }));
            }) : h('p', { class: 'dim small', text: 'nothing read yet' })),
          h('p', { class: 'small dim scopes', text: `may read ${a.readScope || 'all clusters'} · may write ${a.writeScope || 'all clusters'} (descriptive, not enforced) · last call ${ago(a.lastSeen)}` }));
      }));
    }
    const pairs = overlap.filter((p) => p.shared > 0).slice(0, 6);
    const maxShared = Math.max(1, ...pairs.map((p) => p.shared));
    replace(shared, h('h3', { text: 'SHARED KNOWLEDGE' }),
      h('p', { class: 'dim small', text: 'Memories both agents have read or written. When a second agent reads a memory it becomes corroborated, and its strength rises.' }),
      pairs.length ? pairs.map((p) => h('div', { class: 'pair' },
        h('span', { class: 'badge', style: { '--c': state.agents.find((a) => a.id === p.a)?.color || hashColor(p.a) }, text: p.a }),
        h('span', { class: 'dim', text: '⇄' }),
        h('span', { class: 'badge', style: { '--c': state.agents.find((a) => a.id === p.b)?.color || hashColor(p.b) }, text: p.b }),
        h('span', { class: 'bar-track' }, h('span', { class: 'bar-fill', style: { width: `${(p.shared / maxShared) * 100}%` } })),
        h('span', { class: 'mono small', text: num(p.shared) })))
        : h('p', { class: 'dim small', text: 'No memory has been read by two agents yet.' }));
  }

  async function loadEvents() {
    try {
      const res = await api.events(FEED, lastEvent);
      if (!res.events.length) return;
      lastEvent = Math.max(lastEvent, ...res.events.map((e) => e.id));
      events = res.events.concat(events).slice(0, FEED);
      paintFeed();
    } catch (e) { /* retried on the next tick */ }
  }

  function paintFeed() {
    replace(feed, events.map((e) => h('li', { class: `ev ev-${e.op.split('.')[0]}` },
      h('span', { class: 'ev-time dim', text: clock(e.at) }),
      h('span', { class: 'badge', style: { '--c': state.agents.find((a) => a.id === e.agent)?.color || hashColor(e.agent) }, text: e.agent }),
      h('span', { class: 'ev-op', text: e.op }),
      h('span', { class: 'ev-detail dim', text: e.ms ? `${e.detail} · ${e.ms.toFixed(1)} ms` : e.detail }))));
  }

  paintServer(state.stats);
  const offStats = on('stats', paintServer);
  loadAgents();
  loadEvents();
  const timer = setInterval(() => { loadEvents(); }, 2500);
  const agentTimer = setInterval(loadAgents, 15000);
  const offChanged = on('changed', () => { loadAgents(); loadEvents(); });
  return {
    unmount() {
      clearInterval(timer);
      clearInterval(agentTimer);
      offStats();
      offChanged();
    },
  };
}

// First run: the store is empty. Say how to connect an agent, with the real commands.
import { h } from './dom.js';
import { commandBlock } from './connections.js';
import { state } from './state.js';

export function mount(root) {
  root.append(h('div', { class: 'screen firstrun' },
    h('div', { class: 'firstrun-card' },
      h('div', { class: 'firstrun-mark mono', text: '● LEDGER' }),
      h('h1', { text: 'Nothing remembered yet' }),
      h('p', { class: 'sub', text: 'This store is empty. Memories appear here as soon as an agent writes one — this page updates by itself.' }),
      commandBlock(),
      h('p', { class: 'small dim', text: 'Agents recall before answering and remember what will still matter next week. You review what they learned here, or in the terminal with `ledger review`.' }),
      h('p', { class: 'mono small dim path', text: state.stats?.db || '' }))));
  return { unmount() {} };
}

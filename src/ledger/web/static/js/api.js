// The JSON API client. Every state-changing call sends a JSON body, so the server's
// same-origin and content-type checks pass for our own page and for nothing else.

export class ApiError extends Error {
  constructor(message, kind, status, reason) {
    super(message);
    this.kind = kind;
    this.status = status;
    this.reason = reason; // a store error's reason ('read-only', 'locked', ...), else undefined
  }
}

async function request(method, path, { params, body, raw } = {}) {
  let url = path;
  if (params) {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) {
      if (v === undefined || v === null || v === false || v === '') continue;
      qs.set(k, v === true ? '1' : String(v));
    }
    const s = qs.toString();
    if (s) url += `?${s}`;
  }
  const init = { method, headers: { accept: 'application/json' }, credentials: 'same-origin' };
  if (method !== 'GET') {
    init.headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body || {});
  }
  let res;
  try {
    res = await fetch(url, init);
  } catch (e) {
    throw new ApiError('The ledger server is not answering. Is `ledger serve` still running?', 'offline', 0);
  }
  if (!res.ok) {
    let data = null;
    try { data = await res.json(); } catch (_) { /* not JSON */ }
    throw new ApiError(data?.error || `${res.status} ${res.statusText}`, data?.kind || 'http', res.status, data?.reason);
  }
  if (raw) return res;
  return res.json();
}

const get = (path, params) => request('GET', path, { params });
const post = (path, body) => request('POST', path, { body });
const enc = encodeURIComponent;

export const api = {
  meta: () => get('/api/meta'),
  stats: (clusters = true) => get('/api/stats', clusters ? {} : { clusters: '0' }),
  clusters: () => get('/api/clusters'),
  agents: () => get('/api/agents'),
  events: (limit = 20, after = 0) => get('/api/events', { limit, after }),
  facets: () => get('/api/facets'),
  timeline: (buckets = 60) => get('/api/timeline', { buckets }),
  search: (params) => get('/api/search', params),
  graph: (params) => get('/api/graph', params),
  memory: (id) => get(`/api/memories/${enc(id)}`),
  update: (id, body) => request('PATCH', `/api/memories/${enc(id)}`, { body }),
  bulk: (op, ids) => post('/api/memories/bulk', { op, ids }),
  exportSelected: async (ids) => (await request('POST', '/api/memories/bulk', { body: { op: 'export', ids }, raw: true })).blob(),
  exportUrl: (params) => {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== false && v !== '') qs.set(k, v === true ? '1' : String(v));
    return `/api/export?${qs}`;
  },
  review: (limit = 50) => get('/api/review', { limit }),
  reviewAction: (id, action, text) => post(`/api/review/${enc(id)}/${enc(action)}`, text === undefined ? {} : { text }),
  resolve: (id, resolution) => post(`/api/conflicts/${enc(id)}/resolve`, { resolution }),
  sources: (preview = 4) => get('/api/sources', { preview }),
  source: (id, preview = 50) => get(`/api/sources/${enc(id)}`, { preview }),
  trust: (id, trust) => post(`/api/sources/${enc(id)}/trust`, { trust }),
  dropSource: (id) => request('DELETE', `/api/sources/${enc(id)}`, { body: {} }),
};

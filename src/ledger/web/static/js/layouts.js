// Canvas layouts: each sets a target (tx, ty) in world units for every node it is given.
// The canvas eases live positions toward the targets, so switching layout animates.
//   clusters  one disc per cluster, discs packed without overlap
//   graph     force-directed: Barnes–Hut repulsion between every pair of nodes,
//             springs along links, a weak pull toward each cluster's anchor
//   timeline  x = creation time, one lane per cluster
//   heat      x = how often retrieved (log), y = strength
import { fnv1a } from './dom.js';

const GOLDEN = Math.PI * (3 - Math.sqrt(5));

export function hash01(id, salt = 0) {
  return fnv1a(salt ? `${id}#${salt}` : id) / 4294967296;
}

function groupByCluster(nodes) {
  const groups = new Map();
  for (const n of nodes) {
    let g = groups.get(n.cluster);
    if (!g) groups.set(n.cluster, (g = []));
    g.push(n);
  }
  return groups;
}

export function clustersLayout(nodes) {
  const groups = [...groupByCluster(nodes).entries()].sort((a, b) => b[1].length - a[1].length || (a[0] < b[0] ? -1 : 1));
  const maxCount = groups.length ? groups[0][1].length : 0;
  const [floor, scale, gap] = maxCount < 40 ? [16, 22, 22] : [40, 15, 44];
  const discs = groups.map(([id, members], i) => {
    const r = floor + Math.sqrt(members.length) * scale;
    const a = i * GOLDEN;
    const d = (floor + scale * 3) * 1.6 * Math.sqrt(i);
    return { id, members, r, x: Math.cos(a) * d, y: Math.sin(a) * d * 0.82 };
  });
  // Relax: push overlapping discs apart.
  for (let pass = 0; pass < 220; pass++) {
    let moved = false;
    for (let i = 0; i < discs.length; i++) {
      for (let j = i + 1; j < discs.length; j++) {
        const p = discs[i], q = discs[j];
        let dx = q.x - p.x, dy = q.y - p.y;
        let d = Math.hypot(dx, dy);
        const min = p.r + q.r + gap;
        if (d >= min) continue;
        if (d < 1e-6) { dx = Math.cos(j); dy = Math.sin(j); d = 1; }
        const push = (min - d) / 2;
        const ux = dx / d, uy = dy / d;
        p.x -= ux * push; p.y -= uy * push;
        q.x += ux * push; q.y += uy * push;
        moved = true;
      }
    }
    if (!moved) break;
  }
  let mx = 0, my = 0;
  for (const c of discs) { mx += c.x; my += c.y; }
  if (discs.length) { mx /= discs.length; my /= discs.length; }
  for (const c of discs) {
    c.x -= mx; c.y -= my;
    for (const n of c.members) {
      const rr = 0.68 * c.r * Math.sqrt(hash01(n.id, 1));
      const a = 2 * Math.PI * hash01(n.id, 2);
      n.tx = c.x + rr * Math.cos(a);
      n.ty = c.y + rr * Math.sin(a);
    }
  }
  return { discs };
}

export function timelineLayout(nodes, clusterOrder) {
  let min = Infinity, max = -Infinity;
  for (const n of nodes) { if (n.createdAt < min) min = n.createdAt; if (n.createdAt > max) max = n.createdAt; }
  const span = max - min || 1;
  const present = new Set(nodes.map((n) => n.cluster));
  const lanes = clusterOrder.filter((c) => present.has(c.id));
  const laneOf = new Map(lanes.map((c, i) => [c.id, i]));
  for (const n of nodes) {
    n.tx = ((n.createdAt - min) / span) * 1100;
    n.ty = (laneOf.get(n.cluster) ?? 0) * 58 + (hash01(n.id, 3) - 0.5) * 16;
  }
  return { min, max, lanes: lanes.map((c, i) => ({ id: c.id, label: c.label, color: c.color, y: i * 58 })) };
}

export function heatLayout(nodes) {
  let maxHits = 1;
  for (const n of nodes) if (n.hits > maxHits) maxHits = n.hits;
  const lm = Math.log1p(maxHits);
  for (const n of nodes) {
    n.tx = (Math.log1p(Math.max(0, n.hits)) / lm) * 1000 + (hash01(n.id, 4) - 0.5) * 8;
    n.ty = (0.5 - n.strength) * 620 + (hash01(n.id, 5) - 0.5) * 18;
  }
  return { maxHits };
}

// ---------------------------------------------------------------- force simulation
// A small Barnes–Hut quadtree rebuilt every tick: far groups of nodes act as one body
// at their centre of mass when (cell size / distance) < theta.
class Quad {
  constructor(x0, y0, size) {
    this.x0 = x0; this.y0 = y0; this.s = size;
    this.mass = 0; this.cx = 0; this.cy = 0;
    this.body = -1; this.kids = null;
  }
}

function quadInsert(q, i, xs, ys, depth) {
  const x = xs[i], y = ys[i];
  q.cx = (q.cx * q.mass + x) / (q.mass + 1);
  q.cy = (q.cy * q.mass + y) / (q.mass + 1);
  q.mass += 1;
  if (q.kids === null) {
    if (q.mass === 1) { q.body = i; return; }
    if (depth > 28) return; // (near-)coincident points: keep them aggregated in this leaf
    q.kids = [null, null, null, null];
    const b = q.body;
    q.body = -1;
    if (b >= 0) quadChild(q, b, xs, ys, depth);
  }
  quadChild(q, i, xs, ys, depth);
}

function quadChild(q, i, xs, ys, depth) {
  const half = q.s / 2;
  const east = xs[i] >= q.x0 + half ? 1 : 0;
  const south = ys[i] >= q.y0 + half ? 1 : 0;
  const k = east + 2 * south;
  let c = q.kids[k];
  if (!c) c = q.kids[k] = new Quad(q.x0 + east * half, q.y0 + south * half, half);
  quadInsert(c, i, xs, ys, depth + 1);
}

export class ForceSim {
  // nodes: [{id, cluster, x, y}], links: [[i, j]] (indices into nodes)
  constructor(nodes, links, { charge = -38, linkDistance = 36, linkStrength = 0.35, clusterPull = 0.06, theta = 0.9 } = {}) {
    const n = nodes.length;
    this.n = n;
    this.nodes = nodes;
    this.links = links;
    this.x = new Float64Array(n);
    this.y = new Float64Array(n);
    this.vx = new Float64Array(n);
    this.vy = new Float64Array(n);
    this.charge = charge;
    this.linkDistance = linkDistance;
    this.linkStrength = linkStrength;
    this.clusterPull = clusterPull;
    this.theta2 = theta * theta;
    this.alpha = 1;
    this.alphaMin = 0.002;
    this.alphaDecay = 1 - Math.pow(this.alphaMin, 1 / 300);
    this.velocityDecay = 0.6;
    this.ticks = 0;
    // Cluster anchors on a ring sized to the population, so communities separate.
    const groups = [...groupByCluster(nodes).entries()].sort((a, b) => b[1].length - a[1].length);
    const ring = Math.sqrt(n) * 9 + 60;
    this.anchor = new Map();
    groups.forEach(([id], i) => {
      const a = (i / Math.max(1, groups.length)) * 2 * Math.PI;
      this.anchor.set(id, groups.length > 1 ? [Math.cos(a) * ring, Math.sin(a) * ring] : [0, 0]);
    });
    const degree = new Float64Array(n);
    for (const [a, b] of links) { degree[a]++; degree[b]++; }
    this.degree = degree;
    const spread = Math.sqrt(n) * 10 + 40;
    nodes.forEach((node, i) => {
      if (Number.isFinite(node.x) && Number.isFinite(node.y) && node.placed) {
        this.x[i] = node.x; this.y[i] = node.y;
      } else {
        const r = spread * Math.sqrt(hash01(node.id, 6));
        const a = 2 * Math.PI * hash01(node.id, 7);
        this.x[i] = Math.cos(a) * r; this.y[i] = Math.sin(a) * r;
      }
    });
  }

  get done() {
    return this.alpha < this.alphaMin;
  }

  tick() {
    const { n, x, y, vx, vy } = this;
    const alpha = this.alpha;
    // Repulsion (Barnes–Hut).
    let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    for (let i = 0; i < n; i++) {
      if (x[i] < x0) x0 = x[i]; if (x[i] > x1) x1 = x[i];
      if (y[i] < y0) y0 = y[i]; if (y[i] > y1) y1 = y[i];
    }
    const size = Math.max(x1 - x0, y1 - y0, 1) + 1;
    const root = new Quad(x0, y0, size);
    for (let i = 0; i < n; i++) quadInsert(root, i, x, y, 0);
    const k = this.charge * alpha;
    const theta2 = this.theta2;
    const stack = [];
    for (let i = 0; i < n; i++) {
      const xi = x[i], yi = y[i];
      let fx = 0, fy = 0;
      stack.length = 0;
      stack.push(root);
      while (stack.length) {
        const q = stack.pop();
        if (q.mass === 0) continue;
        const dx = q.cx - xi, dy = q.cy - yi;
        let d2 = dx * dx + dy * dy;
        if (q.kids === null || (q.s * q.s) / d2 < theta2) {
          if (q.kids === null && q.body === i && q.mass === 1) continue;
          if (d2 < 1e-9) {
            // Coincident: nudge apart deterministically.
            fx += (hash01(this.nodes[i].id, this.ticks) - 0.5) * 0.5;
            fy += (hash01(this.nodes[i].id, this.ticks + 1) - 0.5) * 0.5;
            continue;
          }
          if (d2 < 4) d2 = 4;
          const w = (k * q.mass) / d2;
          fx += dx * w; fy += dy * w;
          continue;
        }
        for (const c of q.kids) if (c) stack.push(c);
      }
      vx[i] += fx; vy[i] += fy;
    }
    // Springs along links.
    for (const [a, b] of this.links) {
      let dx = x[b] + vx[b] - x[a] - vx[a];
      let dy = y[b] + vy[b] - y[a] - vy[a];
      const l = Math.hypot(dx, dy) || 1e-6;
      const s = this.linkStrength / Math.min(this.degree[a], this.degree[b]);
      const f = ((l - this.linkDistance) / l) * alpha * s;
      dx *= f; dy *= f;
      const bias = this.degree[a] / (this.degree[a] + this.degree[b]);
      vx[b] -= dx * bias; vy[b] -= dy * bias;
      vx[a] += dx * (1 - bias); vy[a] += dy * (1 - bias);
    }
    // Weak pull toward each cluster's anchor.
    const pull = this.clusterPull * alpha;
    for (let i = 0; i < n; i++) {
      const [ax, ay] = this.anchor.get(this.nodes[i].cluster) || [0, 0];
      vx[i] += (ax - x[i]) * pull;
      vy[i] += (ay - y[i]) * pull;
    }
    // Integrate.
    const decay = this.velocityDecay;
    for (let i = 0; i < n; i++) {
      vx[i] *= decay; vy[i] *= decay;
      x[i] += vx[i]; y[i] += vy[i];
    }
    this.alpha += (0 - this.alpha) * this.alphaDecay;
    this.ticks++;
  }

  // Copy positions into the nodes' targets.
  commit() {
    for (let i = 0; i < this.n; i++) {
      const node = this.nodes[i];
      node.tx = this.x[i];
      node.ty = this.y[i];
    }
  }
}

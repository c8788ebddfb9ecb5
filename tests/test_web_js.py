"""Unit tests for the front end's pure JavaScript (query tokens and autocomplete, canvas
layouts and the force simulation, dot stamping), run with Node when it is installed.

The browser flows are in ``test_web_e2e.py``; these pin down the algorithms directly.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

NODE = shutil.which("node")
JS = Path(__file__).resolve().parent.parent / "src" / "ledger" / "web" / "static" / "js"

pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")


def run(body: str) -> dict:
    """Run an ES module snippet that ends by printing one JSON value."""
    code = textwrap.dedent(body).replace("@JS@", JS.as_uri())
    out = subprocess.run([NODE, "--input-type=module", "-e", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_query_tokens():
    r = run("""
        import { toggleToken, hasToken, setToken, stripFacetTokens, tokens } from '@JS@/query.js';
        const q1 = toggleToken('deploy', 'cluster', 'proc');
        const q2 = toggleToken(q1, 'cluster', 'proc');
        console.log(JSON.stringify({
          q1, q2,
          has: hasToken('Cluster:PROC x', 'cluster', 'proc'),
          widen: toggleToken('cluster:proc', 'cluster', 'code'),
          asof: setToken('x asof:2026-01-01 y', 'asof', '2026-02-02T00:00:00.000Z'),
          cleared: setToken('x asof:1d', 'asof', null),
          strip: stripFacetTokens('fix agent:claude cluster:code type:doc kind:claim asof:1d'),
          toks: tokens('  a   b '),
        }));
    """)
    assert r["q1"] == "deploy cluster:proc" and r["q2"] == "deploy"
    assert r["has"] is True and r["widen"] == "cluster:proc cluster:code"
    assert r["asof"] == "x y asof:2026-02-02T00:00:00.000Z" and r["cleared"] == "x"
    assert r["strip"] == "fix asof:1d" and r["toks"] == ["a", "b"]


def test_autocomplete_suggests_keys_then_values():
    r = run("""
        import { suggestionsFor } from '@JS@/query.js';
        import { state } from '@JS@/state.js';
        state.meta = { keys: ['agent', 'cluster', 'type', 'kind', 'strength', 'asof', 'after', 'before'],
                       keyHints: { agent: 'who', cluster: 'topic', asof: 'then', after: 'a', before: 'b' },
                       presets: { type: ['chat', 'doc'], kind: ['claim', 'chunk'], strength: ['<20', '>70'], asof: ['30d', '2026-01-01'] } };
        state.clusters = [{ id: 'code', label: 'codebases', count: 9, color: '#cf6fb8' }, { id: 'proc', label: 'procedures', count: 3, color: '#e0793f' }];
        state.agents = [{ id: 'claude', color: '#b7c14a' }];
        state.facets = { agent: { claude: 4, codex: 7 } };
        const lab = (xs) => xs.map((x) => x.label);
        console.log(JSON.stringify({
          a: lab(suggestionsFor('a')), c: lab(suggestionsFor('cluster:')), cp: lab(suggestionsFor('cluster:p')),
          ag: lab(suggestionsFor('agent:')), st: lab(suggestionsFor('strength:')), none: lab(suggestionsFor('colour:')),
          empty: lab(suggestionsFor('')), insert: suggestionsFor('asof:2')[0].insert,
        }));
    """)
    assert r["a"] == ["agent:", "asof:", "after:"]
    assert r["c"] == ["cluster:code", "cluster:proc"] and r["cp"] == ["cluster:proc"]
    assert r["ag"] == ["agent:codex", "agent:claude"]  # by how many memories they read
    assert r["st"] == ["strength:<20", "strength:>70"] and r["none"] == [] and r["empty"] == []
    assert r["insert"] == "asof:2026-01-01 "


def test_force_layout_repels_and_clusters_do_not_overlap():
    r = run("""
        import { ForceSim, clustersLayout, heatLayout, timelineLayout } from '@JS@/layouts.js';
        const mk = (n) => Array.from({ length: n }, (_, i) => ({ id: 'm_' + i, cluster: ['code', 'proc', 'prefs'][i % 3],
          hits: i % 50, strength: 0.2 + (i % 7) / 10, createdAt: 1000 + i, placed: false }));
        // Graph: 600 nodes, a few links; every cluster anchor pulls, repulsion must keep nodes apart.
        const nodes = mk(600);
        const sim = new ForceSim(nodes, [[0, 3], [3, 6], [1, 4]]);
        while (!sim.done) sim.tick();
        sim.commit();
        const nn = nodes.map((a) => Math.min(...nodes.filter((b) => b !== a).map((b) => Math.hypot(a.tx - b.tx, a.ty - b.ty))));
        nn.sort((x, y) => x - y);
        // No repulsion: the same simulation with charge 0 collapses onto the anchors.
        const flat = mk(600);
        const s0 = new ForceSim(flat, [], { charge: 0 });
        while (!s0.done) s0.tick();
        s0.commit();
        const nn0 = flat.map((a) => Math.min(...flat.filter((b) => b !== a).map((b) => Math.hypot(a.tx - b.tx, a.ty - b.ty)))).sort((x, y) => x - y);
        // Clusters: discs must not overlap.
        const cl = mk(900);
        const { discs } = clustersLayout(cl);
        let overlap = 0;
        for (let i = 0; i < discs.length; i++) for (let j = i + 1; j < discs.length; j++) {
          const d = Math.hypot(discs[i].x - discs[j].x, discs[i].y - discs[j].y);
          if (d < discs[i].r + discs[j].r) overlap++;
        }
        const inside = cl.every((n) => { const d = discs.find((x) => x.id === n.cluster); return Math.hypot(n.tx - d.x, n.ty - d.y) <= d.r * 0.68 + 1e-9; });
        const tl = timelineLayout(mk(30), [{ id: 'code', label: 'codebases' }, { id: 'prefs', label: 'preferences' }, { id: 'proc', label: 'procedures' }]);
        const heat = mk(30); heatLayout(heat);
        console.log(JSON.stringify({ ticks: sim.ticks, minNN: nn[0], medianNN: nn[300], medianFlat: nn0[300], overlap, inside,
          lanes: tl.lanes.map((l) => l.label), heatOrder: heat[49 % 30].tx >= heat[0].tx }));
    """)
    assert r["ticks"] < 400 and r["overlap"] == 0 and r["inside"] is True
    assert r["minNN"] > 1 and r["medianNN"] > 8, r
    assert r["medianFlat"] < r["medianNN"] / 4, r  # without repulsion nodes pile up
    assert r["lanes"] == ["codebases", "preferences", "procedures"] and r["heatOrder"] is True


def test_dot_stamper_covers_a_disc():
    r = run("""
        import { DotStamper } from '@JS@/dots.js';
        const W = 40, H = 40, data = new Uint8ClampedArray(W * H * 4);
        const s = new DotStamper();
        s.stamp(data, W, H, 20.3, 19.6, 6, '#ffffff', 1);
        let sum = 0; for (let i = 0; i < data.length; i += 4) sum += data[i] / 255;
        // A dot half off the edge must not write outside the buffer or wrap around.
        const edge = new Uint8ClampedArray(W * H * 4);
        s.stamp(edge, W, H, 0.5, 20, 5, '#ff0000', 1);
        let right = 0; for (let y = 0; y < H; y++) right += edge[(y * W + W - 1) * 4];
        const rgb = s.rgb('#cf6fb8');
        console.log(JSON.stringify({ area: sum, right, rgb, masks: s.masks.size }));
    """)
    assert abs(r["area"] - 3.14159 * 36) < 3, r
    assert r["right"] == 0 and r["rgb"] == [0xCF, 0x6F, 0xB8]


def test_the_strength_shown_is_the_same_integer_in_the_browser_and_the_cli():
    """dom.js ``pct`` (Math.round) and ``ledger.strength.shown`` (what ``strength:<N``
    compares, and the CLI prints) give the same 0-100 integer, halves included."""
    from ledger.strength import shown

    values = [0, 0.04, 0.125, 0.15, 0.2449999, 0.245, 0.4999999, 0.505, 0.5099999, 0.51, 0.515, 0.625, 0.6251,
              0.635, 0.705, 0.97, 0.99, 1] + [i / 1000 for i in range(0, 1001, 7)]
    r = run(f"""
        import {{ pct }} from '@JS@/dom.js';
        console.log(JSON.stringify({json.dumps(values)}.map(pct)));
    """)
    assert r == [shown(v) for v in values]

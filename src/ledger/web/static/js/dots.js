// Stamping thousands of small antialiased dots straight into an ImageData buffer.
//
// Why: without a GPU (headless, remote desktops, some laptops) the browser rasterises
// canvas paths on the CPU, and 5,000 arcs cost tens of milliseconds per frame. Copying
// precomputed coverage masks into the pixel buffer is two to three times cheaper, so
// the Canvas keeps its frame rate. With a GPU the vector path is used instead.

const SUB = 4; // sub-pixel steps for centres and radii (quarter pixels)

// True when canvases are drawn by a real GPU. A WebGL context alone does not prove it:
// without a GPU, Chromium still offers WebGL through a software renderer (SwiftShader).
export function hasGpuCanvas() {
  try {
    const c = document.createElement('canvas');
    const gl = c.getContext('webgl2') || c.getContext('webgl');
    if (!gl) return false;
    const info = gl.getExtension('WEBGL_debug_renderer_info');
    const name = String(gl.getParameter(info ? info.UNMASKED_RENDERER_WEBGL : gl.RENDERER) || '');
    gl.getExtension('WEBGL_lose_context')?.loseContext();
    return !/swiftshader|llvmpipe|softpipe|software|basic render/i.test(name);
  } catch (e) {
    return false;
  }
}

export class DotStamper {
  constructor() {
    this.masks = new Map();
    this.colors = new Map();
  }

  rgb(hex) {
    let c = this.colors.get(hex);
    if (!c) {
      const v = hex.length === 4 ? hex.slice(1).split('').map((x) => x + x).join('') : hex.slice(1, 7);
      c = [parseInt(v.slice(0, 2), 16), parseInt(v.slice(2, 4), 16), parseInt(v.slice(4, 6), 16)];
      this.colors.set(hex, c);
    }
    return c;
  }

  // Coverage (0-1) of each pixel of a (2R+2)² box by a disc of radius rq/SUB whose
  // centre sits at (R + qx/SUB, R + qy/SUB) inside the box; 4×4 samples per pixel.
  mask(rq, qx, qy) {
    const key = (rq * SUB + qx) * SUB + qy;
    let m = this.masks.get(key);
    if (m) return m;
    const r = rq / SUB;
    const R = Math.ceil(r) + 1;
    const size = 2 * R + 2;
    const cx = R + qx / SUB, cy = R + qy / SUB;
    const cov = new Float32Array(size * size);
    const r2 = r * r;
    for (let y = 0; y < size; y++) {
      for (let x = 0; x < size; x++) {
        let n = 0;
        for (let sy = 0; sy < 4; sy++) {
          const dy = y + (sy + 0.5) / 4 - cy;
          for (let sx = 0; sx < 4; sx++) {
            const dx = x + (sx + 0.5) / 4 - cx;
            if (dx * dx + dy * dy <= r2) n++;
          }
        }
        cov[y * size + x] = n / 16;
      }
    }
    m = { R, size, cov };
    this.masks.set(key, m);
    return m;
  }

  // Blend a dot of radius r (device pixels) centred at (x, y) into RGBA `data`.
  stamp(data, width, height, x, y, r, hex, alpha) {
    const ix = Math.floor(x), iy = Math.floor(y);
    const qx = Math.min(SUB - 1, Math.floor((x - ix) * SUB));
    const qy = Math.min(SUB - 1, Math.floor((y - iy) * SUB));
    const rq = Math.max(2, Math.round(r * SUB));
    const m = this.mask(rq, qx, qy);
    const [cr, cg, cb] = this.rgb(hex);
    const x0 = ix - m.R, y0 = iy - m.R;
    const size = m.size, cov = m.cov;
    const xs = Math.max(0, -x0), xe = Math.min(size, width - x0);
    const ys = Math.max(0, -y0), ye = Math.min(size, height - y0);
    for (let my = ys; my < ye; my++) {
      let o = ((y0 + my) * width + x0 + xs) * 4;
      let k = my * size + xs;
      for (let mx = xs; mx < xe; mx++, o += 4, k++) {
        const c = cov[k];
        if (c === 0) continue;
        const a = c * alpha;
        data[o] += (cr - data[o]) * a;
        data[o + 1] += (cg - data[o + 1]) * a;
        data[o + 2] += (cb - data[o + 2]) * a;
      }
    }
  }
}

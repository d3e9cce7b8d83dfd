/** Seeded pseudo-random numbers (mulberry32): reproducible data for init, tests and benches. */

/** A generator of uniform numbers in [0, 1) from a 32-bit seed. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `n` uniform values in [lo, hi) from `seed`. */
export function uniformArray(n: number, seed: number, lo = -1, hi = 1): Float32Array<ArrayBuffer> {
  const next = mulberry32(seed);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = lo + (hi - lo) * next();
  return out;
}

/** A standard normal draw from the uniform generator `next` (Box-Muller). */
export function normalSample(next: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - next())) * Math.cos(2 * Math.PI * next());
}

/** A Gamma(`shape`, 1) draw from `next` (Marsaglia-Tsang; shape < 1 by the boost x U^(1/k)). */
export function gammaSample(shape: number, next: () => number): number {
  if (shape < 1) return gammaSample(shape + 1, next) * Math.pow(1 - next(), 1 / shape);
  const d = shape - 1 / 3, c = 1 / Math.sqrt(9 * d);
  for (;;) {
    const x = normalSample(next), v = Math.pow(1 + c * x, 3);
    if (v <= 0) continue;
    const u = 1 - next();
    if (Math.log(u) < 0.5 * x * x + d - d * v + d * Math.log(v)) return d * v;
  }
}

/** A Beta(`a`, `b`) draw from `next`. */
export function betaSample(a: number, b: number, next: () => number): number {
  const x = gammaSample(a, next);
  return x / (x + gammaSample(b, next));
}

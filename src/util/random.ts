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

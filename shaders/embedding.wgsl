// Embedding lookup (a gather of table rows) and its backward (a scatter-add of the output
// gradient into a table-shaped gradient), deterministic and without float atomics.
// ids are read as u32 (an i32 id is reinterpreted bit for bit, so a negative one is >= 2^31).
// The table may be rows [first, first + vocab) of a larger one (a row shard): ids are taken
// relative to `first`. An id outside the range is out of range: its output row is zeros and its
// gradient is dropped; no read or write goes out of bounds.
// Bindings (both entry points): src (read), ids [tokens] (read), out (write), params. src is
// read as 32-bit words: f32 values, or with SRC_FORMAT (forward only: a frozen table) two
// half-precision values each (element 2i in the low half of word i), widened to f32.
// forward:  src = table [vocab, dim]; out [tokens, dim]: out[t] = table[ids[t]], or zeros.
//           One invocation per output element, index = (wid.x + wid.y * nwg.x) * WG + lid.
// backward: src = g [tokens, dim]; out [vocab, dim], zeroed by the host before the launch:
//           out[v] = sum of g[t] over t with ids[t] == v, in increasing t. One invocation per
//           (token t, block of COLS columns), index = block * tokens + t (same grid as forward):
//           the first token holding an id writes that id's row block, adding the later tokens
//           holding it in order; the others return. Every row has one writer, so no atomics.
//           Cost: tokens^2 * dim / COLS id loads at most, plus one read of g.
//           ACCUMULATE: out holds a running sum (not zeroed) and the rows gain the sums instead:
//           rows of ids no token holds are left as they are.

override WG: u32 = 256u;
override COLS: u32 = 32u; // columns per backward invocation
override ACCUMULATE: bool = false;
// How src's words hold values: 0 f32, 1 two bfloat16, 2 two IEEE binary16.
// #include half_weights
override SRC_FORMAT: u32 = 0u;

struct Params {
  tokens: u32,
  vocab: u32,
  dim: u32,
  first: u32,
}

@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read> ids: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> p: Params;

// Element i of src as f32.
fn src_at(i: u32) -> f32 {
  if (SRC_FORMAT == 0u) { return bitcast<f32>(src[i]); }
  return half_at(SRC_FORMAT, src[i / 2u], i);
}

@compute @workgroup_size(WG)
fn forward(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let i = (wid.x + wid.y * nwg.x) * WG + lid;
  if (i >= p.tokens * p.dim) { return; }
  let id = ids[i / p.dim] - p.first; // wraps past vocab for ids below first
  var value = 0.0;
  if (id < p.vocab) { value = src_at(id * p.dim + i % p.dim); }
  out[i] = value;
}

@compute @workgroup_size(WG)
fn backward(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let i = (wid.x + wid.y * nwg.x) * WG + lid;
  let t = i % p.tokens;
  let d0 = (i / p.tokens) * COLS;
  if (d0 >= p.dim) { return; }
  let id = ids[t];
  let v = id - p.first;
  if (v >= p.vocab) { return; }
  for (var e = 0u; e < t; e++) {
    if (ids[e] == id) { return; } // an earlier token writes this row
  }
  let d1 = min(d0 + COLS, p.dim);
  let row = v * p.dim;
  for (var d = d0; d < d1; d++) {
    var value = src_at(t * p.dim + d);
    if (ACCUMULATE) { value += out[row + d]; }
    out[row + d] = value;
  }
  for (var e = t + 1u; e < p.tokens; e++) {
    if (ids[e] != id) { continue; }
    for (var d = d0; d < d1; d++) { out[row + d] += src_at(e * p.dim + d); }
  }
}

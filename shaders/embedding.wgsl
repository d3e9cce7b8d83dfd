// Embedding lookup (a gather of table rows) and its backward (a scatter-add of the output
// gradient into a table-shaped gradient), deterministic and without float atomics.
// ids are read as u32 (an i32 id is reinterpreted bit for bit, so a negative one is >= 2^31).
// The table may be rows [first, first + vocab) of a larger one (a row shard): ids are taken
// relative to `first`. An id outside the range is out of range: its output row is zeros and its
// gradient is dropped; no read or write goes out of bounds.
// Bindings (both entry points): src (read), ids [tokens] (read), out (write), params.
// forward:  src = table [vocab, dim]; out [tokens, dim]: out[t] = table[ids[t]], or zeros.
//           One invocation per output element, index = (wid.x + wid.y * nwg.x) * WG + lid.
// backward: src = g [tokens, dim]; out [vocab, dim]: out[v] = sum of g[t] over t with ids[t] == v
//           (zeros for ids that do not occur). One workgroup per vocab row
//           v = wid.x + wid.y * nwg.x (2-D grid when vocab > 65535). It walks the ids in chunks
//           of WG staged in workgroup memory; a chunk holding v is added token by token in
//           increasing t by the thread owning each column (d = lid, lid + WG, ...), so the
//           summation order is fixed. Cost: vocab * ceil(tokens / WG) chunk steps, plus
//           WG * ceil(dim / WG) per chunk holding v.

override WG: u32 = 256u;

struct Params {
  tokens: u32,
  vocab: u32,
  dim: u32,
  first: u32,
}

@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read> ids: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> p: Params;

// The current chunk of ids (backward), and start + 1 of the last chunk that held this row's id.
var<workgroup> chunk_ids: array<u32, WG>;
var<workgroup> hit_chunk: atomic<u32>;

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
  if (id < p.vocab) { value = src[id * p.dim + i % p.dim]; }
  out[i] = value;
}

@compute @workgroup_size(WG)
fn backward(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let v = wid.x + wid.y * nwg.x;
  if (v >= p.vocab) { return; }
  let row = v * p.dim;
  for (var d = lid; d < p.dim; d += WG) { out[row + d] = 0.0; }
  for (var start = 0u; start < p.tokens; start += WG) {
    let t = start + lid;
    var id = p.vocab; // past the end: matches no row
    if (t < p.tokens) { id = ids[t] - p.first; }
    chunk_ids[lid] = id;
    if (id == v) { atomicStore(&hit_chunk, start + 1u); }
    workgroupBarrier();
    if (atomicLoad(&hit_chunk) == start + 1u) {
      let n = min(WG, p.tokens - start);
      for (var d = lid; d < p.dim; d += WG) {
        var acc = out[row + d];
        for (var k = 0u; k < n; k++) {
          if (chunk_ids[k] == v) { acc += src[(start + k) * p.dim + d]; }
        }
        out[row + d] = acc;
      }
    }
    workgroupBarrier(); // chunk_ids and hit_chunk are rewritten by the next chunk
  }
}

// Global L2 norm of many gradient tensors and the clip scale derived from it, in two stages:
// `sumsq` writes one partial sum of squares per block of CHUNK = WG * ITEMS elements of one
// tensor (one launch per tensor, each at its own offset into a shared partials buffer); `finish`
// (one workgroup) sums all partials. f32 accumulation with tree reductions; no f64, no Kahan.
// Bindings (both entry points): src (read), dst (read_write), params.
// sumsq:  src = x [n], dst = partials; dst[offset + b] = sum of x[i]^2 over block b.
// finish: src = partials [n], dst = out [2]; out[0] = norm = sqrt(sum of partials),
//         out[1] = scale = min(1, max_norm / (norm + 1e-6)) when CLIP, else 1.
// Block b = wid.x + wid.y * nwg.x; WG must be a power of two.

override WG: u32 = 256u;
override ITEMS: u32 = 16u;
override CLIP: u32 = 1u;

struct Params {
  n: u32,
  offset: u32,
  max_norm: f32,
}

@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;

// #include workgroup_reduce

@compute @workgroup_size(WG)
fn sumsq(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let block = wid.x + wid.y * nwg.x;
  let chunk = WG * ITEMS;
  if (block >= (p.n + chunk - 1u) / chunk) { return; }
  var acc = 0.0;
  for (var k = 0u; k < ITEMS; k++) {
    let i = block * chunk + k * WG + lid;
    if (i < p.n) {
      let x = src[i];
      acc += x * x;
    }
  }
  let total = workgroup_reduce(acc, lid, false);
  if (lid == 0u) { dst[p.offset + block] = total; }
}

@compute @workgroup_size(WG)
fn finish(@builtin(local_invocation_index) lid: u32) {
  var acc = 0.0;
  for (var i = lid; i < p.n; i += WG) { acc += src[i]; }
  let norm = sqrt(workgroup_reduce(acc, lid, false));
  if (lid == 0u) {
    dst[0] = norm;
    dst[1] = select(1.0, min(1.0, p.max_norm / (norm + 1e-6)), CLIP != 0u);
  }
}

// Logits processors of the sampler (OpenAI's logit_bias, frequency_penalty, presence_penalty,
// and constrained decoding's masks, which arrive as a -inf bias), and the per-row token counts
// the penalties read. Rows are samples, cols the vocabulary.
//
// adjust: bindings z [rows, cols] (read), bias [rows, cols] (read), counts [rows, cols] (read),
//         penalties [rows, 2] (read: frequency, presence), out [rows, cols] (read_write), params.
//         out = z + bias - frequency * count - presence * (count > 0). One invocation per element.
// count:  bindings tokens [rows] (u32, read), bindings 1 to 3 unused (callers bind tokens),
//         counts [rows, cols] (read_write, in place), params. counts[row, tokens[row]] += 1
//         (tokens >= cols skipped). One invocation per row.
// index = (wid.x + wid.y * nwg.x) * WG + lid.

override WG: u32 = 64u;

struct Params {
  rows: u32,
  cols: u32,
}

@group(0) @binding(0) var<storage, read> z: array<f32>;
@group(0) @binding(1) var<storage, read> bias: array<f32>;
@group(0) @binding(2) var<storage, read> counts_in: array<f32>;
@group(0) @binding(3) var<storage, read> penalties: array<f32>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;
@group(0) @binding(5) var<uniform> p: Params;
// count's bindings (never used by the same entry point as the above).
@group(0) @binding(0) var<storage, read> tokens: array<u32>;
@group(0) @binding(4) var<storage, read_write> counts: array<f32>;

@compute @workgroup_size(WG)
fn adjust(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let i = (wid.x + wid.y * nwg.x) * WG + lid;
  if (i >= p.rows * p.cols) { return; }
  let row = i / p.cols;
  let c = counts_in[i];
  let seen = select(0.0, 1.0, c > 0.0);
  out[i] = z[i] + bias[i] - penalties[2u * row] * c - penalties[2u * row + 1u] * seen;
}

@compute @workgroup_size(WG)
fn count(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let row = (wid.x + wid.y * nwg.x) * WG + lid;
  if (row >= p.rows) { return; }
  let token = tokens[row];
  if (token >= p.cols) { return; }
  counts[row * p.cols + token] += 1.0;
}

// Gated activations (SwiGLU, GeGLU: f(gate) * up) and the gate's gradient, one pass each.
// OP (override): the activation f, codes of lib/activation.wgsl (6 silu, 5 gelu, ...).
// Bindings (both entry points): gate (read), up (read), grad (read), out (write), params.
// forward:       out[i] = f(gate[i]) * up[i]                (grad is unused; callers bind gate)
// backward_gate: out[i] = grad[i] * up[i] * f'(gate[i])
// (up's gradient, grad * f(gate), is `forward` with grad bound as up.)
// forward4, backward_gate4 (n a multiple of 4): the same, four elements per invocation (i indexes
// vec4s), the bindings read and written as vec4 arrays.
// #include activation

override OP: u32 = 6u;
override WG: u32 = 256u;

struct Params {
  n: u32,
}

@group(0) @binding(0) var<storage, read> gate: array<f32>;
@group(0) @binding(1) var<storage, read> up: array<f32>;
@group(0) @binding(2) var<storage, read> grad: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<uniform> p: Params;

@compute @workgroup_size(WG)
fn forward(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = gid.x + gid.y * nwg.x * WG;
  if (i >= p.n) { return; }
  out[i] = activation(gate[i], 1.0, 0.0) * up[i];
}

@compute @workgroup_size(WG)
fn backward_gate(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = gid.x + gid.y * nwg.x * WG;
  if (i >= p.n) { return; }
  out[i] = grad[i] * up[i] * activation_grad(gate[i], 1.0);
}

// The same buffers as vec4s, for the entry points ending in 4 (n a multiple of 4): each
// invocation takes four elements, loaded and stored as one vec4 (on llvmpipe a vec4 load per lane
// costs far less than four scalar ones).
@group(0) @binding(0) var<storage, read> gate4: array<vec4f>;
@group(0) @binding(1) var<storage, read> up4: array<vec4f>;
@group(0) @binding(2) var<storage, read> grad4: array<vec4f>;
@group(0) @binding(3) var<storage, read_write> out4: array<vec4f>;

@compute @workgroup_size(WG)
fn forward4(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = gid.x + gid.y * nwg.x * WG;
  if (i >= p.n / 4u) { return; }
  out4[i] = activation4(gate4[i]) * up4[i];
}

@compute @workgroup_size(WG)
fn backward_gate4(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = gid.x + gid.y * nwg.x * WG;
  if (i >= p.n / 4u) { return; }
  out4[i] = grad4[i] * up4[i] * activation_grad4(gate4[i]);
}

// Gated activations (SwiGLU, GeGLU: f(gate) * up) and the gate's gradient, one pass each.
// OP (override): the activation f, codes of lib/activation.wgsl (6 silu, 5 gelu, ...).
// Bindings (both entry points): gate (read), up (read), grad (read), out (write), params.
// forward:       out[i] = f(gate[i]) * up[i]                (grad is unused; callers bind gate)
// backward_gate: out[i] = grad[i] * up[i] * f'(gate[i])
// (up's gradient, grad * f(gate), is `forward` with grad bound as up.)
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

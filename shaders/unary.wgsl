// Element-wise unary ops and their derivatives (the functions: lib/activation.wgsl).
// OP (override): 0 affine (alpha*x + beta), 1 exp, 2 log, 3 sqrt, 4 relu, 5 gelu (tanh approx),
// 6 silu, 7 sigmoid, 8 tanh, 9 square.
// Bindings (both entry points): x (read), g (read), out (write), params.
// forward:  out[i] = f(x[i])            (g is unused; callers bind x there)
// backward: out[i] = g[i] * f'(x[i])
// #include activation

override OP: u32 = 0u;
override WG: u32 = 256u;

struct Params {
  n: u32,
  alpha: f32,
  beta: f32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> g: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> p: Params;

@compute @workgroup_size(WG)
fn forward(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = gid.x + gid.y * nwg.x * WG;
  if (i >= p.n) { return; }
  out[i] = activation(x[i], p.alpha, p.beta);
}

@compute @workgroup_size(WG)
fn backward(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = gid.x + gid.y * nwg.x * WG;
  if (i >= p.n) { return; }
  out[i] = g[i] * activation_grad(x[i], p.alpha);
}

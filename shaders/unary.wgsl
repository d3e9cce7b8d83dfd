// Element-wise unary ops and their derivatives.
// OP (override): 0 affine (alpha*x + beta), 1 exp, 2 log, 3 sqrt, 4 relu, 5 gelu (tanh approx),
// 6 silu, 7 sigmoid, 8 tanh, 9 square.
// Bindings (both entry points): x (read), g (read), out (write), params.
// forward:  out[i] = f(x[i])            (g is unused; callers bind x there)
// backward: out[i] = g[i] * f'(x[i])

override OP: u32 = 0u;
override WG: u32 = 256u;

struct Params {
  n: u32,
  alpha: f32,
  beta: f32,
}

const GELU_C: f32 = 0.7978845608028654; // sqrt(2 / pi)
const GELU_K: f32 = 0.044715;

fn safe_tanh(x: f32) -> f32 {
  return tanh(clamp(x, -15.0, 15.0));
}

fn sigmoid(x: f32) -> f32 {
  return 1.0 / (1.0 + exp(-x));
}

fn f(x: f32) -> f32 {
  switch OP {
    case 0u: { return p.alpha * x + p.beta; }
    case 1u: { return exp(x); }
    case 2u: { return log(x); }
    case 3u: { return sqrt(x); }
    case 4u: { return max(x, 0.0); }
    case 5u: { return 0.5 * x * (1.0 + safe_tanh(GELU_C * (x + GELU_K * x * x * x))); }
    case 6u: { return x * sigmoid(x); }
    case 7u: { return sigmoid(x); }
    case 8u: { return safe_tanh(x); }
    default: { return x * x; }
  }
}

fn df(x: f32) -> f32 {
  switch OP {
    case 0u: { return p.alpha; }
    case 1u: { return exp(x); }
    case 2u: { return 1.0 / x; }
    case 3u: { return 0.5 / sqrt(x); }
    case 4u: { return select(0.0, 1.0, x > 0.0); }
    case 5u: {
      let t = safe_tanh(GELU_C * (x + GELU_K * x * x * x));
      return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * GELU_C * (1.0 + 3.0 * GELU_K * x * x);
    }
    case 6u: {
      let s = sigmoid(x);
      return s * (1.0 + x * (1.0 - s));
    }
    case 7u: {
      let s = sigmoid(x);
      return s * (1.0 - s);
    }
    case 8u: {
      let t = safe_tanh(x);
      return 1.0 - t * t;
    }
    default: { return 2.0 * x; }
  }
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> g: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> p: Params;

@compute @workgroup_size(WG)
fn forward(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = gid.x + gid.y * nwg.x * WG;
  if (i >= p.n) { return; }
  out[i] = f(x[i]);
}

@compute @workgroup_size(WG)
fn backward(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = gid.x + gid.y * nwg.x * WG;
  if (i >= p.n) { return; }
  out[i] = g[i] * df(x[i]);
}

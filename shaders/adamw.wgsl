// AdamW update of one parameter tensor and its two moment buffers, in place (PyTorch AdamW:
// decoupled weight decay, bias-corrected moments). Element-wise; no reduction, no gradient
// clipping of its own (the clip scale comes from grad_norm.wgsl), no mixed precision.
// Bindings: grad [n] (read), step [3] (uniform: lr, 1 - beta1^t, 1 - beta2^t), clip [2] (uniform:
// global gradient norm, gradient scale), m [n] (read_write), v [n] (read_write), param [n]
// (read_write), params. One invocation per element, index = (wid.x + wid.y * nwg.x) * WG + lid.
// step and clip are uniform bindings: CPU adapters load a uniform value once per invocation
// group, a storage value once per lane (AdamW ~40% slower on llvmpipe when they were storage).
//   g = grad * clip.scale
//   m = beta1 * m + (1 - beta1) * g          v = beta2 * v + (1 - beta2) * g^2
//   param -= lr * ((m / bc1) / (sqrt(v / bc2) + eps) + weight_decay * param)

override WG: u32 = 256u;

// 1 - beta1 and 1 - beta2 come from the host (computed in f64): 1 - f32(0.999) is off by 1.3e-5.
struct Params {
  n: u32,
  beta1: f32,
  one_minus_beta1: f32,
  beta2: f32,
  one_minus_beta2: f32,
  eps: f32,
  weight_decay: f32,
}

// The host's per-step state (the tensor [lr, 1 - beta1^t, 1 - beta2^t]).
struct StepState {
  lr: f32,
  bias_correction1: f32,
  bias_correction2: f32,
}

// grad_norm.wgsl's result (the tensor [norm, scale]).
struct Clip {
  norm: f32,
  scale: f32,
}

@group(0) @binding(0) var<storage, read> grad: array<f32>;
@group(0) @binding(1) var<uniform> step: StepState;
@group(0) @binding(2) var<uniform> clip: Clip;
@group(0) @binding(3) var<storage, read_write> m: array<f32>;
@group(0) @binding(4) var<storage, read_write> v: array<f32>;
@group(0) @binding(5) var<storage, read_write> param: array<f32>;
@group(0) @binding(6) var<uniform> p: Params;

@compute @workgroup_size(WG)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let i = (wid.x + wid.y * nwg.x) * WG + lid;
  if (i >= p.n) { return; }
  let g = grad[i] * clip.scale;
  let m1 = p.beta1 * m[i] + p.one_minus_beta1 * g;
  let v1 = p.beta2 * v[i] + p.one_minus_beta2 * g * g;
  m[i] = m1;
  v[i] = v1;
  let m_hat = m1 / step.bias_correction1;
  let v_hat = v1 / step.bias_correction2;
  let w = param[i];
  param[i] = w - step.lr * (m_hat / (sqrt(v_hat) + p.eps) + p.weight_decay * w);
}

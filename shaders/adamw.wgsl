// AdamW update of one parameter tensor and its two moment buffers, in place (PyTorch AdamW:
// decoupled weight decay, bias-corrected moments). Element-wise; no reduction, no gradient
// clipping of its own (the clip scale comes from grad_norm.wgsl). The parameter and gradient are
// f32; the moments f32, or with MOMENTS_BF16 bfloat16, two per word (element 2i in the low half
// of word i), updated in f32 and stored rounded to nearest even.
// Bindings: grad [n] (read), step [3] (uniform: lr, 1 - beta1^t, 1 - beta2^t), clip [2] (uniform:
// global gradient norm, gradient scale), m [n] (read_write), v [n] (read_write), param [n]
// (read_write), params. One invocation per moment word (an element, or with MOMENTS_BF16 two),
// index = (wid.x + wid.y * nwg.x) * WG + lid.
// step and clip are uniform bindings: CPU adapters load a uniform value once per invocation
// group, a storage value once per lane (AdamW ~40% slower on llvmpipe when they were storage).
//   g = grad * clip.scale
//   m = beta1 * m + (1 - beta1) * g          v = beta2 * v + (1 - beta2) * g^2
//   param -= lr * ((m / bc1) / (sqrt(v / bc2) + eps) + weight_decay * param)

override WG: u32 = 256u;
override MOMENTS_BF16: bool = false;

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
@group(0) @binding(3) var<storage, read_write> m: array<u32>;
@group(0) @binding(4) var<storage, read_write> v: array<u32>;
@group(0) @binding(5) var<storage, read_write> param: array<f32>;
@group(0) @binding(6) var<uniform> p: Params;

// Updates param[i] from moments m0, v0; returns the new (m, v).
fn update(i: u32, m0: f32, v0: f32) -> vec2f {
  let g = grad[i] * clip.scale;
  let m1 = p.beta1 * m0 + p.one_minus_beta1 * g;
  let v1 = p.beta2 * v0 + p.one_minus_beta2 * g * g;
  let m_hat = m1 / step.bias_correction1;
  let v_hat = v1 / step.bias_correction2;
  let w = param[i];
  param[i] = w - step.lr * (m_hat / (sqrt(v_hat) + p.eps) + p.weight_decay * w);
  return vec2f(m1, v1);
}

// The bfloat16 bits of x, rounded to nearest even (no NaN in a moment of finite gradients).
fn bf16_bits(x: f32) -> u32 {
  let b = bitcast<u32>(x);
  return (b + 0x7fffu + ((b >> 16u) & 1u)) >> 16u;
}

fn bf16_pair(lo: f32, hi: f32) -> u32 {
  return bf16_bits(lo) | (bf16_bits(hi) << 16u);
}

@compute @workgroup_size(WG)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let word = (wid.x + wid.y * nwg.x) * WG + lid;
  if (!MOMENTS_BF16) {
    if (word >= p.n) { return; }
    let r = update(word, bitcast<f32>(m[word]), bitcast<f32>(v[word]));
    m[word] = bitcast<u32>(r.x);
    v[word] = bitcast<u32>(r.y);
    return;
  }
  let first = 2u * word;
  if (first >= p.n) { return; }
  let mw = m[word];
  let vw = v[word];
  let a = update(first, bitcast<f32>(mw << 16u), bitcast<f32>(vw << 16u));
  var b = vec2f(0.0);
  if (first + 1u < p.n) {
    b = update(first + 1u, bitcast<f32>(mw & 0xffff0000u), bitcast<f32>(vw & 0xffff0000u));
  }
  m[word] = bf16_pair(a.x, b.x);
  v[word] = bf16_pair(a.y, b.y);
}

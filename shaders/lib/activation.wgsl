// The element-wise activation functions and their derivatives, selected by the including shader's
// `override OP: u32` (the codes of UNARY_OPS in src/ops/unary.ts): 0 affine (alpha*x + beta),
// 1 exp, 2 log, 3 sqrt, 4 relu, 5 gelu (tanh approx), 6 silu, 7 sigmoid, 8 tanh, 9 square.

const GELU_C: f32 = 0.7978845608028654; // sqrt(2 / pi)
const GELU_K: f32 = 0.044715;

fn safe_tanh(x: f32) -> f32 {
  return tanh(clamp(x, -15.0, 15.0));
}

fn sigmoid(x: f32) -> f32 {
  return 1.0 / (1.0 + exp(-x));
}

fn activation(x: f32, alpha: f32, beta: f32) -> f32 {
  switch OP {
    case 0u: { return alpha * x + beta; }
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

fn activation_grad(x: f32, alpha: f32) -> f32 {
  switch OP {
    case 0u: { return alpha; }
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

// activation(x, 1, 0) of four elements (the gated activations' f).
fn activation4(x: vec4f) -> vec4f {
  return vec4f(activation(x.x, 1.0, 0.0), activation(x.y, 1.0, 0.0), activation(x.z, 1.0, 0.0),
    activation(x.w, 1.0, 0.0));
}

// activation_grad(x, 1) of four elements.
fn activation_grad4(x: vec4f) -> vec4f {
  return vec4f(activation_grad(x.x, 1.0), activation_grad(x.y, 1.0), activation_grad(x.z, 1.0),
    activation_grad(x.w, 1.0));
}

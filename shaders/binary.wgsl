// Element-wise binary ops with broadcasting: out[i] = a[ia] OP b[ib], where each operand is read
// as (outer, n, inner) over the output: ia = (i / inner_a) % n_a (same for b).
// OP (override): 0 add, 1 sub, 2 mul, 3 div. SAME_A / SAME_B (overrides): that operand has the
// output's shape, so it is read at i without the division and modulo (about 30% of an add's
// time on llvmpipe, whose integer division runs a lane at a time).
// Bindings: a (read), b (read), out (write), params.

override OP: u32 = 0u;
override WG: u32 = 256u;
override SAME_A: bool = false;
override SAME_B: bool = false;

struct Params {
  n: u32,        // elements of out
  n_a: u32,
  inner_a: u32,
  n_b: u32,
  inner_b: u32,
}

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> p: Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = gid.x + gid.y * nwg.x * WG;
  if (i >= p.n) { return; }
  let x = a[select((i / p.inner_a) % p.n_a, i, SAME_A)];
  let y = b[select((i / p.inner_b) % p.n_b, i, SAME_B)];
  var r: f32;
  switch OP {
    case 0u: { r = x + y; }
    case 1u: { r = x - y; }
    case 2u: { r = x * y; }
    default: { r = x / y; }
  }
  out[i] = r;
}

#!/bin/bash
# Runs the bench suite on a lent GPU machine (see bench/README.md, "Latest figures: GPU"), from the
# repository root, with what bench/gpu/pack_runtime.sh put in .gl/ (Vulkan loader packages, deno
# and node_modules): no network needed. Everything lands in $OUT: suite.log (all output) and
# json.tar (each script's --json report, `rft info`, the autotune cache), train_profile.log (the
# train bench under RFT_DEBUG=2: every dispatch's GPU time). Each step gets at most
# its own cap and whatever is left of RFT_SUITE_SECONDS (default 520) in all.
# RFT_SUITE_ONLY=decode,forward runs those steps alone (info always runs). Steps, in order:
# kernels (the GPU kernels' tests: flash attention, GEMV, halves, subgroups, batch-1 decode),
# attention (each attention kernel family at the train step's shape), train, decode, matmul (f32 and f16 rows),
# forward, train-profile, tests (the GPU-related test folders), step, acceptance (issue 48's
# table from the reports, $OUT/acceptance.md: bench/gpu/acceptance.ts), real-size and
# real-size-lora (issue 46: bench/real_size.ts's GRPO step on Trinity's gsm8k.yaml, Qwen2.5-0.5B
# with every parameter trained, Qwen2.5-1.5B with LoRA r16; GPU memory is their reports' device
# GiB; not in acceptance.sh). A .gl/autotune.json
# (an earlier run's cache) becomes the autotune cache where there is none, so kernels are not
# timed again (entries of another adapter are ignored); the H100 lease's table of 2026-11-27 ships
# with rft (src/gpu/tuning_tables/h100_vulkan.json) and serves an H100 without it.
# RFT_SUITE_SMALL=1 runs the same steps at tiny shapes (a dry run on a CPU adapter);
# RFT_SUITE_LOCAL=1 uses this checkout's deno and node_modules instead of .gl/ (no loaders
# unpacked). RFT_SUITE_SIZES=1024,2048 sets matmul's sizes (default 1024,2048,4096).
# RFT_SUITE_BATCHES=32 sets decode's batches (default 1,32); RFT_SUITE_NO_NODE_WEBGPU=1 leaves out
# ORT-node's WebGPU EP (minutes at batch 32); RFT_SUITE_DECODE_ARGS adds flags to decode's (say
# "--reps 2 --sampled"); RFT_SUITE_CAP_<STEP>=SECONDS replaces a step's cap (RFT_SUITE_CAP_DECODE).
set -u
OUT=${OUT:?set OUT to a folder for the results}
start=$(date +%s)
budget=${RFT_SUITE_SECONDS:-520}
log=$OUT/suite.log
mkdir -p "$OUT/json"

if [ -z "${RFT_SUITE_NO_LOADERS:-}${RFT_SUITE_LOCAL:-}" ]; then
  for f in .gl/*.deb; do dpkg -x "$f" /; done
  ldconfig
fi
icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
if [ -f "$icd" ]; then
  export VK_DRIVER_FILES=$icd
  export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
fi
if [ -z "${RFT_SUITE_LOCAL:-}" ]; then
  rt=${TMPDIR:-/tmp}/rft-runtime-pack
  mkdir -p "$rt"
  if command -v xz >/dev/null; then
    xz -dc .gl/rt.tar.xz | tar -xf - -C "$rt"
  else
    python3 -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" .gl/rt.tar.xz "$rt"
  fi
  [ -d node_modules ] || mv "$rt/node_modules" node_modules # a checkout keeps its own
  export RFT_DENO=$rt/deno
  export DENO_DIR=$rt/deno_dir
fi
export DENO_WEBGPU_BACKEND=${DENO_WEBGPU_BACKEND:-vulkan}
export NO_COLOR=1
tuned=.gl/autotune.json
if [ -f $tuned ] && [ ! -f ~/.cache/rft/autotune.json ]; then
  mkdir -p ~/.cache/rft && cp $tuned ~/.cache/rft/autotune.json
fi

# step NAME CAP_SECONDS COMMAND...: runs COMMAND under the smaller of CAP and the time left.
step() {
  local name=$1 cap=$2 cap_var
  shift 2
  case ",${RFT_SUITE_ONLY:-$name},info,info-gl," in *",$name,"*) ;; *) return ;; esac
  cap_var=RFT_SUITE_CAP_${name^^}
  cap_var=${cap_var//-/_}
  cap=${!cap_var:-$cap}
  local left=$((budget - ($(date +%s) - start)))
  [ "$cap" -gt "$left" ] && cap=$left
  if [ "$cap" -lt 15 ]; then
    echo "=== $name: skipped, ${left}s left" | tee -a "$log"
    return
  fi
  echo "=== $name (cap ${cap}s): $*" | tee -a "$log"
  local t0=$(date +%s)
  timeout -k 5 "$cap" "$@" >>"$log" 2>&1
  echo "=== $name: exit $? after $(($(date +%s) - t0))s" | tee -a "$log"
}

{ nvidia-smi -L; nproc; } >>"$log" 2>&1
if [ -n "${RFT_SUITE_SMALL:-}" ]; then
  model=tiny sizes=128,256 seqs=64 rows=2 len=32 batches=1,8 attention=1,64,4,2,64
  rollouts="--repeat 2 --response 4"
else
  model=smollm2-135m sizes=${RFT_SUITE_SIZES:-1024,2048,4096} seqs=128 rows=8 len=256
  batches=${RFT_SUITE_BATCHES:-1,32} attention=8,256,9,3,64
  rollouts="--repeat 8 --response 128"
fi
j=$OUT/json
node_webgpu=--ort-node-webgpu
[ -n "${RFT_SUITE_NO_NODE_WEBGPU:-}" ] && node_webgpu=
ls /usr/local/nvidia/share/vulkan/icd.d /etc/vulkan/icd.d /usr/share/vulkan/icd.d >>"$log" 2>&1
step info 40 ./rft info
# No GPU adapter through Vulkan: try GL (EGL); a dry run stays on the CPU adapter it has.
if [ -z "${RFT_SUITE_SMALL:-}" ] && ! grep -q "^fallback     no" "$log"; then
  export DENO_WEBGPU_BACKEND=gl
  step info-gl 40 ./rft info
  if ! grep -q "^fallback     no" "$log"; then
    echo "=== no GPU adapter through Vulkan or GL: stopping (see suite.log)" | tee -a "$log"
    exit 3
  fi
fi
step kernels 150 bash -c "./rft deno test -A --no-check tests/ops/flash_attention_test.ts \
  tests/ops/half_weight_kernels_test.ts tests/ops/half_weights_test.ts tests/ops/normed_gated_gemv_test.ts \
  tests/ops/normed_qkv_gemv_test.ts tests/engine/gpu_path_decode_test.ts tests/gpu/subgroups_test.ts && \
  ./rft deno test -A --no-check tests/ops/matmul_test.ts --filter '/gemv_|tiled_8x8/'"
step attention 60 ./rft deno run -A bench/attention.ts --shape $attention --json $j/attention.json
step train 150 ./rft deno run -A bench/train.ts --models $model --rows $rows --len $len \
  --json $j/train.json
step decode 130 ./rft deno run -A bench/decode.ts --models $model --batches $batches \
  --wasm-batches "" $node_webgpu ${RFT_SUITE_DECODE_ARGS:-} --json $j/decode.json
step matmul 90 ./rft deno run -A bench/matmul.ts --sizes $sizes --f16 --json $j/matmul.json
step forward 100 ./rft deno run -A bench/forward.ts --models $model --seqs $seqs --batches 1,8 \
  --webgpu-batches 1 $node_webgpu --min-ms 300 --rounds 1 --json $j/forward.json
step train-profile 200 bash -c "RFT_DEBUG=2 ./rft deno run -A bench/train.ts --models $model \
  --rows $rows --len $len --reps 1 >/dev/null 2>$OUT/train_profile.log"
step tests 120 ./rft deno test -A --parallel --no-check tests/gpu tests/ops tests/graph tests/model \
  tests/engine tests/trainer tests/lora tests/algorithm tests/architecture
step step 60 ./rft deno run -A bench/step.ts --json $j/step.json
step acceptance 30 bash -c "./rft deno run -A bench/gpu/acceptance.ts --dir $j --log $log \
  >$OUT/acceptance.md && cat $OUT/acceptance.md"
lora='model.lora_configs=[{name: grpo, lora_rank: 16, lora_alpha: 32, target_modules: all-linear}]'
step real-size 280 ./rft deno run -A bench/real_size.ts --model qwen2.5-0.5b --steps 1 --batch 1 \
  $rollouts --json $j/real_size_0.5b.json
step real-size-lora 280 ./rft deno run -A bench/real_size.ts --model qwen2.5-1.5b --steps 1 \
  --batch 1 $rollouts --set "$lora" --json $j/real_size_1.5b_lora.json
cp ~/.cache/rft/autotune.json "$j/" 2>/dev/null
tar -cf "$OUT/json.tar" -C "$OUT" json && rm -rf "$OUT/json"
echo "=== suite done after $(($(date +%s) - start))s" | tee -a "$log"

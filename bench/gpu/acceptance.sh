#!/bin/bash
# Issue 48's acceptance figures on a lent GPU in one `run` call of < 10 minutes (carry: [".gl"],
# timeout_s 600; prepared at no device time as bench/README.md, "Issue 48 on a GPU", says):
# bench/gpu/run_suite.sh's steps info (adapter, features: subgroups granted and probed or not),
# kernels (the GPU kernels' tests on the GPU: a failure means the figures ran wrong kernels),
# train (8 x 256 on the SmolLM2-135M shape: model FLOPs against rft's 1024^3 matmul rate in the
# same process), decode (batches 1 and 32, greedy tokens against onnxruntime-node's, dispatches
# per step), matmul (1024^3 and 2048^3, f32 and by an f16 weight), then acceptance: the table of
# figures against the issue's targets in $OUT/acceptance.md (and the log). Everything else lands
# where run_suite.sh puts it ($OUT/suite.log, $OUT/json.tar with the autotune cache).
# Any RFT_SUITE_* variable set by the caller wins (RFT_SUITE_ONLY=decode,matmul,acceptance to rerun
# the steps a cut call left, with the first call's autotune.json as .gl/autotune.json);
# RFT_SUITE_SMALL=1 RFT_SUITE_LOCAL=1 is the dry run at tiny shapes on a CPU adapter.
set -u
export RFT_SUITE_ONLY=${RFT_SUITE_ONLY:-kernels,train,decode,matmul,acceptance}
export RFT_SUITE_SECONDS=${RFT_SUITE_SECONDS:-540}
export RFT_SUITE_NO_NODE_WEBGPU=${RFT_SUITE_NO_NODE_WEBGPU:-1}
export RFT_SUITE_DECODE_ARGS=${RFT_SUITE_DECODE_ARGS:---reps 2}
export RFT_SUITE_SIZES=${RFT_SUITE_SIZES:-1024,2048}
export RFT_SUITE_CAP_KERNELS=${RFT_SUITE_CAP_KERNELS:-100}
exec bash "$(dirname "$0")/run_suite.sh"

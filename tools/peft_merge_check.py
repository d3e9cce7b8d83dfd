#!/usr/bin/env python3
"""Independent check of an rft LoRA checkpoint (numpy only; not run by CI, which lacks numpy).

Reads DIR/model.safetensors (the frozen base) and DIR/adapter_model.safetensors +
DIR/adapter_config.json (PEFT's format) with a hand-written safetensors parser, merges
W + lora_alpha/r * B @ A under PEFT's tensor names in float64 (transposed for GPT-2's Conv1D,
PEFT's fan_in_fan_out), runs a plain numpy forward of the Llama family (RMSNorm, rotate-half
RoPE, grouped-query attention, SwiGLU) on a few token sequences and compares the log-probs with
the ones rft computed from the same checkpoint (a JSON list of lists, as `PolicyModel.logprobs`
returns them):

    ./rft deno eval 'import { loadModel } from "./src/model/policy.ts";
      const m = await loadModel("DIR", { adapter: "attach" });
      console.log(JSON.stringify(await m.logprobs([[1,5,6,3,11,7,8,3],[1,9,9,3,4,4,11]])))' > lp.json
    python3 tools/peft_merge_check.py DIR lp.json

Prints the largest absolute difference and exits 1 when it is above 1e-4.
"""

import json
import struct
import sys

import numpy as np

SEQUENCES = [[1, 5, 6, 3, 11, 7, 8, 3], [1, 9, 9, 3, 4, 4, 11]]
DTYPES = {"F32": np.float32, "F16": np.float16, "F64": np.float64}


def read_safetensors(path):
    """Every tensor of a safetensors file, as float64 arrays by name."""
    with open(path, "rb") as f:
        data = f.read()
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + length])
    body = data[8 + length :]
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        if info["dtype"] == "BF16":
            raw = np.frombuffer(body[start:end], dtype=np.uint16).astype(np.uint32) << 16
            values = raw.view(np.float32)
        else:
            values = np.frombuffer(body[start:end], dtype=DTYPES[info["dtype"]])
        out[name] = values.astype(np.float64).reshape(info["shape"])
    return out


def merge(base, adapter, config):
    """W + alpha/r * B @ A for every adapted module, by PEFT's names."""
    scale = config["lora_alpha"] / config["r"]
    merged = dict(base)
    prefix = "base_model.model."
    for name, a in adapter.items():
        if not name.endswith(".lora_A.weight"):
            continue
        module = name[len(prefix) : -len(".lora_A.weight")]
        b = adapter[f"{prefix}{module}.lora_B.weight"]
        delta = scale * (b @ a)
        if config.get("fan_in_fan_out"):
            delta = delta.T
        merged[f"{module}.weight"] = base[f"{module}.weight"] + delta
    return merged


def rms_norm(x, w, eps):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * w


def rope(x, theta):
    """Rotate-half RoPE of x [T, heads, D] at positions 0..T-1."""
    T, _, D = x.shape
    inv = theta ** (-np.arange(0, D // 2) * 2 / D)
    ang = np.arange(T)[:, None] * inv[None, :]
    cos = np.concatenate([np.cos(ang)] * 2, axis=-1)[:, None, :]
    sin = np.concatenate([np.sin(ang)] * 2, axis=-1)[:, None, :]
    rotated = np.concatenate([-x[..., D // 2 :], x[..., : D // 2]], axis=-1)
    return x * cos + rotated * sin


def llama_logprobs(cfg, w, tokens):
    """log p(tokens[t+1] | tokens[..t]) of a Llama-family model with weights w."""
    H = cfg["num_attention_heads"]
    Hkv = cfg.get("num_key_value_heads", H)
    D = cfg.get("head_dim", cfg["hidden_size"] // H)
    eps = cfg["rms_norm_eps"]
    theta = cfg.get("rope_theta", 10000)
    T = len(tokens)
    h = w["model.embed_tokens.weight"][tokens]
    lin = lambda x, name: x @ w[f"{name}.weight"].T + w.get(f"{name}.bias", 0)
    mask = np.triu(np.full((T, T), -np.inf), 1)
    for l in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{l}."
        x = rms_norm(h, w[p + "input_layernorm.weight"], eps)
        q = rope(lin(x, p + "self_attn.q_proj").reshape(T, H, D), theta)
        k = rope(lin(x, p + "self_attn.k_proj").reshape(T, Hkv, D), theta)
        v = lin(x, p + "self_attn.v_proj").reshape(T, Hkv, D)
        k, v = np.repeat(k, H // Hkv, axis=1), np.repeat(v, H // Hkv, axis=1)
        s = np.einsum("thd,shd->hts", q, k) / np.sqrt(D) + mask
        s = np.exp(s - s.max(-1, keepdims=True))
        s /= s.sum(-1, keepdims=True)
        attn = np.einsum("hts,shd->thd", s, v).reshape(T, H * D)
        h = h + lin(attn, p + "self_attn.o_proj")
        y = rms_norm(h, w[p + "post_attention_layernorm.weight"], eps)
        gate = lin(y, p + "mlp.gate_proj")
        h = h + lin(gate / (1 + np.exp(-gate)) * lin(y, p + "mlp.up_proj"), p + "mlp.down_proj")
    h = rms_norm(h, w["model.norm.weight"], eps)
    head = w.get("lm_head.weight", w["model.embed_tokens.weight"])
    logits = h @ head.T
    logits -= logits.max(-1, keepdims=True)
    logp = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    return [logp[t, tokens[t + 1]] for t in range(T - 1)]


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    ckpt, rft_file = sys.argv[1], sys.argv[2]
    cfg = json.load(open(f"{ckpt}/config.json"))
    adapter_cfg = json.load(open(f"{ckpt}/adapter_config.json"))
    base = read_safetensors(f"{ckpt}/model.safetensors")
    adapter = read_safetensors(f"{ckpt}/adapter_model.safetensors")
    merged = merge(base, adapter, adapter_cfg)
    rft = json.load(open(rft_file))
    worst = 0.0
    for tokens, theirs in zip(SEQUENCES, rft):
        ours = llama_logprobs(cfg, merged, tokens)
        worst = max(worst, float(np.max(np.abs(np.array(ours) - np.array(theirs)))))
    base_lp = [llama_logprobs(cfg, base, t) for t in SEQUENCES]
    moved = max(float(np.max(np.abs(np.array(b) - np.array(r)))) for b, r in zip(base_lp, rft))
    n = sum(1 for k in adapter if k.endswith("lora_A.weight"))
    print(f"adapted modules {n}, r {adapter_cfg['r']}, alpha {adapter_cfg['lora_alpha']}")
    print(f"max |numpy merged - rft| log-prob difference: {worst:.3g}")
    print(f"max |base - rft| (what the adapter changed): {moved:.3g}")
    return 0 if worst <= 1e-4 else 1


if __name__ == "__main__":
    sys.exit(main())

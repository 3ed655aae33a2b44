# modeling_graft_student.py: written by graft beside a hybrid student's weights.
#
# A graft student is a Llama / Qwen2 / Qwen3 decoder whose layers listed in
# config.graft_student["gdn_layers"] replace softmax attention with a Gated
# DeltaNet (GDN) layer. The tensor names are the ones graft writes
# (docs/student-format.md in graft's repository):
#   model.layers.{i}.self_attn.*     attention layers (every layer carries them)
#   model.layers.{i}.linear_attn.*   GDN layers: q/k/v/a/b/g/o_proj, A_log, dt_bias,
#                                    o_norm.weight, optional q/k/v biases and
#                                    q/k/v_conv1d (depthwise causal, kernel 4)
# GDN layer, for the layer's normalized input x [B, T, D] (H heads of dk = dv):
#   q, k, v = silu(conv?(W x + b?)); q, k <- q / sqrt(sum q^2 + eps) per head
#   beta = sigmoid(Wb x), g = -exp(A_log) softplus(Wa x + dt_bias)
#   S_t = exp(g_t) S_{t-1} (I - beta_t k_t k_t^T) + beta_t v_t k_t^T
#   o_t = S_t (scale q_t),  y = Wo concat_h(RMSNorm(o_t) * o_norm.weight * silu(Wg x)_h)
# The recurrence runs with flash-linear-attention's chunk kernel when `fla` is
# importable and the model runs bfloat16 / float16 on a GPU, else as a chunked
# PyTorch loop in float32 (prefill) or a token step (decoding with a cache).
# RoPE uses Hugging Face's half-split pairing: graft permutes a llama2.c
# teacher's q/k rows when it saves.
#
# Load with AutoModelForCausalLM.from_pretrained(folder, trust_remote_code=True);
# pass gdn_backend="torch" to force the PyTorch recurrence.
import math

import torch
import torch.nn.functional as F
from torch import nn
from transformers import GenerationMixin, PreTrainedModel
from transformers.modeling_outputs import BaseModelOutputWithPast, CausalLMOutputWithPast

try:
    from transformers import PreTrainedConfig as _BaseConfig
except ImportError:  # transformers 4.x
    from transformers import PretrainedConfig as _BaseConfig

try:
    from transformers import initialization as _hf_init  # v5: leaves tensors read from the checkpoint alone
except ImportError:
    _hf_init = None

try:
    from fla.ops.gated_delta_rule import chunk_gated_delta_rule as _fla_chunk_gated_delta_rule
except Exception:  # flash-linear-attention (or Triton) missing: the PyTorch recurrence runs
    _fla_chunk_gated_delta_rule = None

# transformers renamed the cache argument and output field from past_key_values to cache (5.2x)
_CACHE_KEY = "cache" if "cache" in CausalLMOutputWithPast.__dataclass_fields__ else "past_key_values"
_ROPE_SCALING_IS_PROPERTY = isinstance(getattr(_BaseConfig, "rope_scaling", None), property)


class GraftStudentConfig(_BaseConfig):
    model_type = "graft_student"
    keys_to_ignore_at_inference = ["past_key_values", "cache"]

    def __init__(
        self,
        vocab_size=32000,
        hidden_size=4096,
        intermediate_size=11008,
        num_hidden_layers=32,
        num_attention_heads=32,
        num_key_value_heads=None,
        head_dim=None,
        hidden_act="silu",
        max_position_embeddings=2048,
        rms_norm_eps=1e-6,
        rope_theta=10000.0,
        rope_scaling=None,
        rope_parameters=None,
        attention_bias=False,
        tie_word_embeddings=False,
        use_cache=True,
        graft_student=None,
        gdn_backend="auto",
        initializer_range=0.02,
        **kwargs,
    ):
        self.vocab_size = vocab_size
        self.hidden_size = hidden_size
        self.intermediate_size = intermediate_size
        self.num_hidden_layers = num_hidden_layers
        self.num_attention_heads = num_attention_heads
        self.num_key_value_heads = num_key_value_heads or num_attention_heads
        self.head_dim = head_dim or hidden_size // num_attention_heads
        self.hidden_act = hidden_act
        self.max_position_embeddings = max_position_embeddings
        self.rms_norm_eps = rms_norm_eps
        self.attention_bias = attention_bias
        self.use_cache = use_cache
        self.graft_student = graft_student or {}
        self.gdn_backend = gdn_backend  # "auto" (fla on GPU when importable), "torch" or "fla"
        self.initializer_range = initializer_range
        if hidden_act != "silu":
            raise ValueError(f"graft students use silu MLPs, not {hidden_act}")
        # one normalized RoPE description, whichever layout the file used
        rp = dict(rope_parameters or {})
        if rope_scaling:
            rp.update(rope_scaling)
        if "type" in rp and "rope_type" not in rp:
            rp["rope_type"] = rp.pop("type")
        rp.setdefault("rope_type", "default")
        rp.setdefault("rope_theta", rope_theta)
        self.rope_parameters = rp
        self.rope_theta = rp["rope_theta"]
        if not _ROPE_SCALING_IS_PROPERTY:
            self.rope_scaling = None if rp["rope_type"] == "default" else {k: v for k, v in rp.items() if k != "rope_theta"}
        super().__init__(tie_word_embeddings=tie_word_embeddings, **kwargs)

    @property
    def teacher_model_type(self):
        return self.graft_student.get("teacher_model_type", "llama")

    @property
    def gdn_layers(self):
        return set(self.graft_student.get("gdn_layers", []))


def _rope_inv_freq(config):
    """inv_freq [head_dim / 2] in float64, as graft computes it."""
    hd = config.head_dim
    rp = config.rope_parameters
    inv = 1.0 / (float(rp["rope_theta"]) ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd))
    kind = rp.get("rope_type", "default")
    if kind == "linear":
        inv = inv / float(rp["factor"])
    elif kind == "llama3":
        factor, lo, hi = float(rp["factor"]), float(rp["low_freq_factor"]), float(rp["high_freq_factor"])
        orig = float(rp["original_max_position_embeddings"])
        wavelen = 2 * math.pi / inv
        smooth = (orig / wavelen - lo) / (hi - lo)
        blended = (1 - smooth) * inv / factor + smooth * inv
        inv = torch.where(wavelen > orig / lo, inv / factor, torch.where(wavelen >= orig / hi, blended, inv))
    elif kind != "default":
        raise ValueError(f"rope type {kind} is not one graft writes (default, linear, llama3)")
    factors = config.graft_student.get("rope_freq_factors")
    if factors:  # GGUF rope_freqs.weight: one divisor per frequency
        inv = inv / torch.tensor(factors, dtype=torch.float64)
    return inv


def _rotate(x, cos, sin):
    """Half-split RoPE on x [B, heads, T, hd] with cos, sin [B, 1, T, hd / 2]."""
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1)


class GraftRMSNorm(nn.Module):
    def __init__(self, size, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(size))
        self.eps = eps

    def forward(self, x):
        dtype = x.dtype
        x = x.float()
        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * x.to(dtype)


class GraftMLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.gate_proj = nn.Linear(config.hidden_size, config.intermediate_size, bias=False)
        self.up_proj = nn.Linear(config.hidden_size, config.intermediate_size, bias=False)
        self.down_proj = nn.Linear(config.intermediate_size, config.hidden_size, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class GraftStudentCache:
    """Per layer: attention keys / values [B, KV, T, hd] (rotated), or the GDN
    recurrent state [B, H, dk, dv] (float32) and the short-conv history
    [B, 3, channels] (q|k|v projections of the last 3 tokens). Memory of a GDN
    layer does not grow with the sequence."""

    def __init__(self, num_layers):
        self.layers = [dict() for _ in range(num_layers)]
        self.seen = 0

    def get_seq_length(self, layer_idx=0):
        return self.seen

    def __len__(self):
        return len(self.layers)

    def reorder_cache(self, beam_idx):
        for layer in self.layers:
            for key, t in layer.items():
                layer[key] = t.index_select(0, beam_idx.to(t.device))

    def bytes_per_token(self):
        """KV-cache bytes one more token costs (GDN layers cost none)."""
        return sum(layer["k"][0, :, :1].numel() * 2 * layer["k"].element_size()
                   for layer in self.layers if "k" in layer)


class GraftAttention(nn.Module):
    def __init__(self, config, layer_idx):
        super().__init__()
        self.layer_idx = layer_idx
        self.heads, self.kv_heads, self.hd = config.num_attention_heads, config.num_key_value_heads, config.head_dim
        bias = config.teacher_model_type == "qwen2" or bool(config.attention_bias)
        D = config.hidden_size
        self.q_proj = nn.Linear(D, self.heads * self.hd, bias=bias)
        self.k_proj = nn.Linear(D, self.kv_heads * self.hd, bias=bias)
        self.v_proj = nn.Linear(D, self.kv_heads * self.hd, bias=bias)
        self.o_proj = nn.Linear(self.heads * self.hd, D, bias=False)
        if config.teacher_model_type == "qwen3":
            self.q_norm = GraftRMSNorm(self.hd, config.rms_norm_eps)
            self.k_norm = GraftRMSNorm(self.hd, config.rms_norm_eps)
        else:
            self.q_norm = self.k_norm = None

    def forward(self, x, rope, mask, layer_cache):
        B, T, _ = x.shape
        q = self.q_proj(x).view(B, T, self.heads, self.hd)
        k = self.k_proj(x).view(B, T, self.kv_heads, self.hd)
        v = self.v_proj(x).view(B, T, self.kv_heads, self.hd).transpose(1, 2)
        if self.q_norm is not None:
            q, k = self.q_norm(q), self.k_norm(k)
        cos, sin = rope
        q = _rotate(q.transpose(1, 2), cos, sin)
        k = _rotate(k.transpose(1, 2), cos, sin)
        if layer_cache is not None:
            if "k" in layer_cache:
                k = torch.cat((layer_cache["k"], k), dim=2)
                v = torch.cat((layer_cache["v"], v), dim=2)
            layer_cache["k"], layer_cache["v"] = k, v
        group = self.heads // self.kv_heads
        if group > 1:
            k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
        if mask is None:
            o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            o = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.o_proj(o.transpose(1, 2).reshape(B, T, self.heads * self.hd))


def _gdn_recurrent(q, k, v, g, beta, scale, state):
    """Token by token. q, k [B, T, H, dk], v [B, T, H, dv], g, beta [B, T, H]
    (float32); state [B, H, dk, dv]. Returns o [B, T, H, dv] and the state."""
    outs = []
    for t in range(q.shape[1]):
        state = state * g[:, t].exp()[..., None, None]
        kt = k[:, t]
        delta = (v[:, t] - torch.einsum("bhk,bhkv->bhv", kt, state)) * beta[:, t][..., None]
        state = state + kt[..., :, None] * delta[..., None, :]
        outs.append(torch.einsum("bhk,bhkv->bhv", q[:, t] * scale, state))
    return torch.stack(outs, dim=1), state


def _gdn_chunked(q, k, v, g, beta, scale, state, chunk):
    """The chunked (WY) form of the same recurrence, METHOD.md section 3: within a
    chunk of C tokens, gamma = cumsum(g), A = (I + StrictLower(diag(beta)
    (K K^T * exp(gamma_i - gamma_j))))^-1, W = A (beta exp(gamma) K), U = A (beta V);
    then per chunk V' = U - W h, O = scale ((Q exp(gamma)) h + Lower(Q K^T decay) V'),
    h <- exp(gamma_C) h + (K exp(gamma_C - gamma))^T V'. Shapes as _gdn_recurrent."""
    B, T, H, dk = q.shape
    dv = v.shape[-1]
    pad = (-T) % chunk
    if pad:  # zero tokens with g = 0, beta = 0 leave the state alone
        q, k, v = (F.pad(x, (0, 0, 0, 0, 0, pad)) for x in (q, k, v))
        g, beta = (F.pad(x, (0, 0, 0, pad)) for x in (g, beta))
    N = q.shape[1] // chunk
    # [B, H, N, C, *]
    q, k, v = (x.view(B, N, chunk, H, -1).permute(0, 3, 1, 2, 4) for x in (q, k, v))
    g, beta = (x.view(B, N, chunk, H).permute(0, 3, 1, 2) for x in (g, beta))
    gamma = g.cumsum(-1)
    idx = torch.arange(chunk, device=q.device)
    lower = idx[:, None] >= idx[None, :]
    diff = (gamma[..., :, None] - gamma[..., None, :]).masked_fill(~lower, float("-inf"))
    decay = diff.exp()  # exp(gamma_i - gamma_j) for j <= i, else 0
    strict = (beta[..., :, None] * (k @ k.transpose(-1, -2)) * decay).masked_fill(idx[:, None] == idx[None, :], 0.0)
    eye = torch.eye(chunk, dtype=q.dtype, device=q.device)
    rhs = torch.cat((k * (beta * gamma.exp())[..., None], v * beta[..., None]), dim=-1)
    wu = torch.linalg.solve_triangular(eye + strict, rhs, upper=False, unitriangular=True)
    w, u = wu[..., :dk], wu[..., dk:]
    qk = (q @ k.transpose(-1, -2)) * decay
    out = torch.empty(B, H, N, chunk, dv, dtype=q.dtype, device=q.device)
    for n in range(N):
        vn = u[:, :, n] - w[:, :, n] @ state
        gam = gamma[:, :, n]
        out[:, :, n] = scale * ((q[:, :, n] * gam.exp()[..., None]) @ state + qk[:, :, n] @ vn)
        last = gam[..., -1:]
        state = state * last.exp()[..., None] + (k[:, :, n] * (last - gam).exp()[..., None]).transpose(-1, -2) @ vn
    out = out.permute(0, 2, 3, 1, 4).reshape(B, N * chunk, H, dv)
    return out[:, :T], state


class GraftGatedDeltaNet(nn.Module):
    def __init__(self, config, layer_idx):
        super().__init__()
        gd = config.graft_student["gdn"]
        D = config.hidden_size
        self.layer_idx = layer_idx
        self.H, self.dk, self.dv = gd["num_heads"], gd["head_k_dim"], gd["head_v_dim"]
        bias = bool(gd.get("qkv_bias", False))
        self.q_proj = nn.Linear(D, self.H * self.dk, bias=bias)
        self.k_proj = nn.Linear(D, self.H * self.dk, bias=bias)
        self.v_proj = nn.Linear(D, self.H * self.dv, bias=bias)
        self.a_proj = nn.Linear(D, self.H, bias=False)
        self.b_proj = nn.Linear(D, self.H, bias=False)
        self.g_proj = nn.Linear(D, self.H * self.dv, bias=False)
        self.o_proj = nn.Linear(self.H * self.dv, D, bias=False)
        self.A_log = nn.Parameter(torch.zeros(self.H))
        self.dt_bias = nn.Parameter(torch.zeros(self.H))
        self.o_norm = GraftRMSNorm(self.dv, gd.get("norm_eps", 1e-5))
        self.conv = bool(gd.get("use_short_conv", False))
        self.conv_size = int(gd.get("conv_size", 4))
        if self.conv:
            for name, width in (("q", self.H * self.dk), ("k", self.H * self.dk), ("v", self.H * self.dv)):
                setattr(self, f"{name}_conv1d", nn.Conv1d(width, width, self.conv_size, groups=width, bias=False))
        scale = gd.get("query_scale", "dk^-1/2")
        if scale not in ("dk^-1/2", "none"):
            raise ValueError(f"unknown query_scale {scale}")
        self.scale = self.dk ** -0.5 if scale == "dk^-1/2" else 1.0
        self.chunk = int(gd.get("chunk_size", 64))
        self.l2_eps = float(gd.get("qk_l2_eps", 1e-6))
        self.backend = config.gdn_backend

    def _short_conv(self, x, name, layer_cache):
        """Depthwise causal conv over time of x [B, T, C], continuing the
        history kept in the cache (zeros before the first token)."""
        conv = getattr(self, f"{name}_conv1d")
        B, T, C = x.shape
        K1 = self.conv_size - 1
        key = f"conv_{name}"
        past = layer_cache.get(key) if layer_cache is not None else None
        if past is None:
            past = x.new_zeros(B, K1, C)
        full = torch.cat((past, x), dim=1)
        if layer_cache is not None:
            layer_cache[key] = full[:, -K1:].detach() if K1 else full[:, :0]
        return F.conv1d(full.transpose(1, 2), conv.weight, groups=C).transpose(1, 2)

    def _use_fla(self, x):
        """fla's chunk kernel runs bfloat16 / float16 on a GPU (it refuses float32)."""
        if self.backend == "torch":
            return False
        usable = x.is_cuda and x.dtype in (torch.bfloat16, torch.float16)
        if self.backend == "fla":
            if _fla_chunk_gated_delta_rule is None:
                raise RuntimeError("gdn_backend='fla' but flash-linear-attention is not importable")
            if not usable:
                raise RuntimeError(f"gdn_backend='fla' needs bfloat16 / float16 on a GPU, not {x.dtype} on {x.device}")
            return True
        return _fla_chunk_gated_delta_rule is not None and usable

    def forward(self, x, token_mask, layer_cache):
        B, T, _ = x.shape
        dtype = x.dtype
        q, k, v = self.q_proj(x), self.k_proj(x), self.v_proj(x)
        if token_mask is not None:  # padding: zero conv inputs, as before a sequence starts
            m = token_mask[..., None].to(q.dtype)
            q, k, v = q * m, k * m, v * m
        if self.conv:
            q, k, v = (self._short_conv(t, n, layer_cache) for t, n in ((q, "q"), (k, "k"), (v, "v")))
        q = F.silu(q.float()).view(B, T, self.H, self.dk)
        k = F.silu(k.float()).view(B, T, self.H, self.dk)
        v = F.silu(v.float()).view(B, T, self.H, self.dv)
        q = q / torch.sqrt(q.pow(2).sum(-1, keepdim=True) + self.l2_eps)
        k = k / torch.sqrt(k.pow(2).sum(-1, keepdim=True) + self.l2_eps)
        beta = torch.sigmoid(self.b_proj(x).float())
        g = -self.A_log.float().exp() * F.softplus(self.a_proj(x).float() + self.dt_bias.float())
        if token_mask is not None:  # padding tokens neither decay nor write the state
            m = token_mask.to(beta.dtype)
            beta, g = beta * m[..., None], g * m[..., None]
        state = layer_cache.get("state") if layer_cache is not None else None
        if state is None:
            state = q.new_zeros(B, self.H, self.dk, self.dv)
        if T >= 16 and self._use_fla(x):  # prefill; decoding steps stay on the token step below
            o, state = _fla_chunk_gated_delta_rule(
                q=q.to(dtype), k=k.to(dtype), v=v.to(dtype), g=g, beta=beta.to(dtype), scale=self.scale,
                initial_state=state, output_final_state=True,
            )
            o, state = o.float(), state.float()
        elif T <= 2:
            o, state = _gdn_recurrent(q, k, v, g, beta, self.scale, state)
        else:
            o, state = _gdn_chunked(q, k, v, g, beta, self.scale, state, self.chunk)
        if layer_cache is not None:
            layer_cache["state"] = state
        gate = F.silu(self.g_proj(x).float()).view(B, T, self.H, self.dv)
        o = o * torch.rsqrt(o.pow(2).mean(-1, keepdim=True) + self.o_norm.eps) * self.o_norm.weight.float() * gate
        return self.o_proj(o.reshape(B, T, self.H * self.dv).to(dtype))


class GraftDecoderLayer(nn.Module):
    def __init__(self, config, layer_idx):
        super().__init__()
        self.is_gdn = layer_idx in config.gdn_layers
        self.input_layernorm = GraftRMSNorm(config.hidden_size, config.rms_norm_eps)
        if self.is_gdn:
            self.linear_attn = GraftGatedDeltaNet(config, layer_idx)
        else:
            self.self_attn = GraftAttention(config, layer_idx)
        self.post_attention_layernorm = GraftRMSNorm(config.hidden_size, config.rms_norm_eps)
        self.mlp = GraftMLP(config)

    def forward(self, x, rope, attn_mask, token_mask, layer_cache):
        h = self.input_layernorm(x)
        if self.is_gdn:
            h = self.linear_attn(h, token_mask, layer_cache)
        else:
            h = self.self_attn(h, rope, attn_mask, layer_cache)
        x = x + h
        return x + self.mlp(self.post_attention_layernorm(x))


def _unused_teacher_keys(config):
    """Every layer of a graft student folder keeps its teacher attention tensors;
    GDN layers do not use them."""
    return [rf"(^|\.)layers\.{i}\.self_attn\." for i in sorted(config.gdn_layers)]


class GraftStudentPreTrainedModel(PreTrainedModel):
    config_class = GraftStudentConfig
    base_model_prefix = "model"
    supports_gradient_checkpointing = True
    _no_split_modules = ["GraftDecoderLayer"]
    _is_stateful = True  # GDN state cannot be rolled back (no assisted generation)

    @classmethod
    def _supports_default_dynamic_cache(cls):
        return False  # the model makes its own GraftStudentCache

    def _init_weights(self, module):
        super()._init_weights(module)
        if isinstance(module, GraftGatedDeltaNet):  # graft's section 3 defaults for a fresh layer
            a_log = torch.empty_like(module.A_log, dtype=torch.float32).uniform_(1e-3, 16).log()
            dt = torch.exp(torch.empty_like(a_log).uniform_(math.log(1e-3), math.log(0.1))).clamp(min=1e-4)
            dt_bias = dt + torch.log(-torch.expm1(-dt))
            if _hf_init is not None:
                _hf_init.copy_(module.A_log, a_log)
                _hf_init.copy_(module.dt_bias, dt_bias)
            else:
                with torch.no_grad():
                    module.A_log.copy_(a_log)
                    module.dt_bias.copy_(dt_bias)


class GraftStudentModel(GraftStudentPreTrainedModel):
    def __init__(self, config):
        super().__init__(config)
        self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size)
        self.layers = nn.ModuleList(GraftDecoderLayer(config, i) for i in range(config.num_hidden_layers))
        self.norm = GraftRMSNorm(config.hidden_size, config.rms_norm_eps)
        self.gradient_checkpointing = False
        # AutoModel reads the folder without the head
        self._keys_to_ignore_on_load_unexpected = _unused_teacher_keys(config) + [r"^lm_head\."]
        self.post_init()

    def get_input_embeddings(self):
        return self.embed_tokens

    def set_input_embeddings(self, value):
        self.embed_tokens = value

    def forward(self, input_ids=None, attention_mask=None, position_ids=None, inputs_embeds=None, state=None,
                **kwargs):
        """Final-normed hidden states [B, T, D]; `state` (a GraftStudentCache) is
        continued and updated when given."""
        x = self.embed_tokens(input_ids) if inputs_embeds is None else inputs_embeds
        B, T, _ = x.shape
        past = state.seen if state is not None else 0
        if position_ids is None:
            if attention_mask is not None:  # left padding: each row counts from its first token
                position_ids = (attention_mask.long().cumsum(-1) - 1).clamp(min=0)[:, past : past + T]
            else:
                position_ids = torch.arange(past, past + T, device=x.device)[None].expand(B, T)
        # computed here, not kept as a buffer: transformers may build the model on the
        # meta device, and a non-persistent buffer would come back uninitialized
        inv_freq = _rope_inv_freq(self.config).to(x.device)
        angles = position_ids.to(torch.float64)[..., None] * inv_freq
        rope = (angles.cos().to(x.dtype)[:, None], angles.sin().to(x.dtype)[:, None])
        attn_mask = token_mask = None
        if attention_mask is not None and not bool(attention_mask.all()):
            keys = attention_mask[:, : past + T].bool()  # [B, past + T]
            token_mask = keys[:, past:]
            qpos = torch.arange(past, past + T, device=x.device)
            kpos = torch.arange(past + T, device=x.device)
            allowed = (kpos[None, :] <= qpos[:, None])[None] & keys[:, None, :]
            allowed |= (kpos[None, :] == qpos[:, None])[None]  # a padding query attends to itself (no NaN)
            attn_mask = allowed[:, None]  # [B, 1, T, past + T]
        elif past > 0:
            attn_mask = torch.ones(1, 1, T, past + T, dtype=torch.bool, device=x.device).tril(past)
        for i, layer in enumerate(self.layers):
            layer_cache = state.layers[i] if state is not None else None
            if self.gradient_checkpointing and self.training and state is None:
                x = torch.utils.checkpoint.checkpoint(layer, x, rope, attn_mask, token_mask, None, use_reentrant=False)
            else:
                x = layer(x, rope, attn_mask, token_mask, layer_cache)
        if state is not None:
            state.seen = past + T
        return BaseModelOutputWithPast(last_hidden_state=self.norm(x), **{_CACHE_KEY: state})


class GraftStudentForCausalLM(GraftStudentPreTrainedModel, GenerationMixin):
    def __init__(self, config):
        super().__init__(config)
        self.model = GraftStudentModel(config)
        # tied students store no lm_head.weight: the logits use the embedding itself
        self.lm_head = None if config.tie_word_embeddings else nn.Linear(config.hidden_size, config.vocab_size, bias=False)
        self._keys_to_ignore_on_load_unexpected = _unused_teacher_keys(config)
        self.post_init()

    def get_input_embeddings(self):
        return self.model.embed_tokens

    def set_input_embeddings(self, value):
        self.model.embed_tokens = value

    def get_output_embeddings(self):
        return self.lm_head

    def set_output_embeddings(self, value):
        self.lm_head = value

    def _logits(self, h):
        return self.lm_head(h) if self.lm_head is not None else F.linear(h, self.model.embed_tokens.weight)

    def forward(
        self,
        input_ids=None,
        attention_mask=None,
        position_ids=None,
        past_key_values=None,
        cache=None,
        inputs_embeds=None,
        labels=None,
        use_cache=None,
        output_hidden_states=None,
        return_dict=None,
        logits_to_keep=0,
        token_type_ids=None,  # accepted and ignored: some tokenizers return them
        **kwargs,
    ):
        state = cache if cache is not None else past_key_values
        if not isinstance(state, GraftStudentCache):
            state = None  # a transformers Cache handed in by generate(): ours replaces it
        if use_cache is None:
            use_cache = self.config.use_cache and labels is None and not self.training
        if state is None and use_cache:
            state = GraftStudentCache(self.config.num_hidden_layers)
        h = self.model(input_ids, attention_mask, position_ids, inputs_embeds, state).last_hidden_state
        keep = slice(-logits_to_keep, None) if isinstance(logits_to_keep, int) and logits_to_keep > 0 else slice(None)
        logits = self._logits(h[:, keep])
        loss = None
        if labels is not None:
            shift = logits[:, :-1].float().reshape(-1, logits.shape[-1])
            loss = F.cross_entropy(shift, labels[:, 1:].reshape(-1).to(shift.device), ignore_index=-100)
        return CausalLMOutputWithPast(
            loss=loss, logits=logits, hidden_states=(h,) if output_hidden_states else None, **{_CACHE_KEY: state}
        )

    def prepare_inputs_for_generation(
        self, input_ids, past_key_values=None, attention_mask=None, inputs_embeds=None, cache=None, **kwargs
    ):
        state = cache if cache is not None else past_key_values
        if not isinstance(state, GraftStudentCache):
            state = None
        inputs = {"attention_mask": attention_mask, "use_cache": kwargs.get("use_cache", True), _CACHE_KEY: state}
        if state is not None and state.seen > 0:
            inputs["input_ids"] = input_ids[:, state.seen :]
        elif inputs_embeds is not None:
            inputs["inputs_embeds"] = inputs_embeds
        else:
            inputs["input_ids"] = input_ids
        return inputs


__all__ = ["GraftStudentConfig", "GraftStudentForCausalLM", "GraftStudentModel", "GraftStudentCache"]

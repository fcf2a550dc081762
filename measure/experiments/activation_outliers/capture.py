"""One forward pass, two captures: the residual stream after every decoder layer
(forward hooks on the layers), and the input of every linear projection (forward
pre-hooks on its Linear modules), which is what an 8-bit activation scheme quantizes
(LLM.int8(), SmoothQuant: the activation operand of each int8 matrix multiply).

A Llama-style block multiplies four different tensors: the hidden state after
input_layernorm (the input of q_proj, k_proj and v_proj alike), the attention's output
(o_proj), the hidden state after post_attention_layernorm (gate_proj and up_proj alike)
and the MLP's inner activation, act(gate) * up (down_proj). The residual stream itself
is added to, never multiplied: no scheme quantizes it.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

# (label, the module whose input is captured): the projections that read the same tensor
# share one label, captured once at the first of them (a test holds the others' inputs equal).
INPUTS = (
    ("q_proj, k_proj, v_proj", "self_attn.q_proj"),
    ("o_proj", "self_attn.o_proj"),
    ("gate_proj, up_proj", "mlp.gate_proj"),
    ("down_proj", "mlp.down_proj"),
)
# the inputs that a normalisation (RMSNorm) produces: what the residual stream becomes
# before the block multiplies it
NORMALISED = ("q_proj, k_proj, v_proj", "gate_proj, up_proj")
RESIDUAL = "residual stream"


@dataclass(frozen=True)
class Capture:
    residual: torch.Tensor  # (layers, tokens, hidden), after every decoder layer
    inputs: dict[str, torch.Tensor]  # INPUTS' label -> (layers, tokens, width)


@torch.inference_mode()
def capture(model, ids: torch.Tensor) -> Capture:
    """Both captures of one forward pass of ``ids`` (one sequence), in float32 on the CPU."""
    layers = model.model.layers
    residual: list[torch.Tensor] = []
    inputs: dict[str, list[torch.Tensor]] = {label: [] for label, _ in INPUTS}

    def after_layer(_module, _inputs, output):
        h = output[0] if isinstance(output, tuple) else output
        residual.append(h[0].detach().float().cpu())

    def before(label):
        def hook(_module, args):
            inputs[label].append(args[0][0].detach().float().cpu())

        return hook

    handles = [layer.register_forward_hook(after_layer) for layer in layers]
    handles += [
        layer.get_submodule(path).register_forward_pre_hook(before(label)) for layer in layers for label, path in INPUTS
    ]
    try:
        model(input_ids=ids, use_cache=False)
    finally:
        for h in handles:
            h.remove()
    return Capture(torch.stack(residual), {label: torch.stack(xs) for label, xs in inputs.items()})


def residual_stream(model, ids: torch.Tensor) -> torch.Tensor:
    """The hidden state after every decoder layer: (layers, tokens, hidden), float32."""
    return capture(model, ids).residual

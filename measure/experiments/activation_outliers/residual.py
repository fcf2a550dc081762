"""The residual stream after every decoder layer, captured by forward hooks."""

from __future__ import annotations

import torch


@torch.inference_mode()
def residual_stream(model, ids: torch.Tensor) -> torch.Tensor:
    """The hidden state after every decoder layer: (layers, tokens, hidden), float32."""
    captured: list[torch.Tensor] = []

    def hook(_module, _inputs, output):
        h = output[0] if isinstance(output, tuple) else output
        captured.append(h[0].detach().float().cpu())

    handles = [layer.register_forward_hook(hook) for layer in model.model.layers]
    try:
        model(input_ids=ids, use_cache=False)
    finally:
        for h in handles:
            h.remove()
    return torch.stack(captured)

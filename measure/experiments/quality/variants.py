"""§7 helpers: the model's default repetition penalty, and quantizing the run's model in
place one scheme at a time with the original weights restored."""

from __future__ import annotations

import torch

from measure.lab import quantizers as q


def default_penalty(model) -> tuple[float, str]:
    gc = getattr(model, "generation_config", None)
    p = getattr(gc, "repetition_penalty", None) if gc is not None else None
    if p is None:
        return 1.0, "none in the model's generation config"
    return float(p), "from the model's generation config"


class Variants:
    """Quantize the run's model in place, one scheme at a time, restoring the originals."""

    def __init__(self, model) -> None:
        self.model = model
        self.saved = {name: lin.weight.detach().clone() for name, lin in q.projection_layers(model)}

    @torch.no_grad()
    def restore(self) -> None:
        for name, lin in q.projection_layers(self.model):
            lin.weight.copy_(self.saved[name])

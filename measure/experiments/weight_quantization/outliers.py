"""The most outlier-heavy projection matrix, and where int4 puts its ordinary weights.

For §5's tables ``outlier_matrix``, ``outlier_levels`` and ``outlier_codes``: the
matrix with the largest max|w| / std, its statistics, and which int4 levels its ordinary
weights (within 3 standard deviations) land on under each scale granularity.
"""

from __future__ import annotations

import torch

from measure.lab import quantizers as q

ORDINARY_SIGMAS = 3.0  # "ordinary" weights: within 3 std of the mean (99.7% of a normal)
OUTLIER_SIGMAS = 6.0  # spec §5.4 counts weights beyond 6 sigma
OUTLIER_SCHEMES = ("int4_tensor", "int4_row", "int4_g128", "int4_g64", "nf4_b64")


def outlier_matrix(layers) -> tuple[list, list, list, dict]:
    """Rows of ``outlier_matrix``, ``outlier_levels`` and ``outlier_codes``, and the values
    ``outlier_matrix``, ``outlier_tensor_scale``, ``ordinary_sigmas``, ``ordinary_share``."""

    def heaviness(lin) -> float:
        w = lin.weight.detach().float()
        return float(w.abs().max() / w.std())

    name, lin = max(layers, key=lambda nl: heaviness(nl[1]))
    w = lin.weight.detach().float()
    mean, std = float(w.mean()), float(w.std())
    absmax = float(w.abs().max())
    beyond = int(((w - mean).abs() > OUTLIER_SIGMAS * std).sum())
    ordinary = (w - mean).abs() <= ORDINARY_SIGMAS * std
    stats = [
        {
            "matrix": f"{name}.weight",
            "rows": w.shape[0],
            "cols": w.shape[1],
            "mean_abs": float(w.abs().mean()),
            "std": std,
            "max_abs": absmax,
            "max_over_std": absmax / std,
            "beyond_6_sigma": beyond,
            "beyond_6_sigma_share": beyond / w.numel(),
        }
    ]
    level_rows, code_rows = [], []
    for s in OUTLIER_SCHEMES:
        qt = q.quantize(w, s)
        codes = qt.codes.reshape(-1)[: w.numel()].view(w.shape)
        zero_code = 7 if q.SCHEMES[s].levels == "nf4" else 0
        ord_codes = codes[ordinary]
        level_rows.append(
            {
                "scheme": q.SCHEMES[s].label,
                "levels_available": 16 if q.SCHEMES[s].levels == "nf4" else 2 * q.SCHEMES[s].qmax + 1,
                "ordinary_levels_used": int(torch.unique(ord_codes).numel()),
                "ordinary_to_zero_share": float((ord_codes == zero_code).float().mean()),
                "rel_error": q.relative_error(w, q.dequantize(qt)),
            }
        )
        if s == "int4_tensor":
            scale = float(qt.scales.view(-1)[0])
            for c in range(-8, 8):
                code_rows.append(
                    {
                        "code": c,
                        "value": c * scale,
                        "all_weights": int((codes == c).sum()),
                        "ordinary_weights": int((ord_codes == c).sum()),
                    }
                )
    values = {
        "outlier_matrix": f"{name}.weight",
        "outlier_tensor_scale": code_rows[0]["value"] / -8,
        "ordinary_sigmas": ORDINARY_SIGMAS,
        "ordinary_share": float(ordinary.float().mean()),
    }
    return stats, level_rows, code_rows, values

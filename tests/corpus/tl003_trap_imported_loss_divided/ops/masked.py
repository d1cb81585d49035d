"""Masked reductions."""
import torch


def masked_sum_over(values, mask, denominator):
    return (values * mask).sum() / denominator


def masked_mean(values, mask, axis=None, denominator=None):
    """Mean of the values where the mask holds, or their sum over a given denominator."""
    extra_dims = values.ndim - mask.ndim
    sum_dims = tuple(range(extra_dims, values.ndim)) if axis is None else axis
    numerator = (values * mask).sum(dim=sum_dims)
    denom = mask.sum(dim=axis) if denominator is None else denominator
    if isinstance(denom, torch.Tensor):
        result = torch.where(denom > 0, numerator / denom, torch.zeros_like(numerator))
    else:
        result = numerator / denom if denom > 0 else torch.zeros_like(numerator)
    return result.flatten(extra_dims).mean(-1) if result.ndim > extra_dims else result

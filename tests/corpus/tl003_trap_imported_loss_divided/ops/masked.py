"""Masked reductions."""


def masked_sum_over(values, mask, denominator):
    return (values * mask).sum() / denominator

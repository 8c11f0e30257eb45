import torch


def double(x: torch.Tensor) -> torch.Tensor:
    doubled_by_the_reference = x.mul(2.0)
    return doubled_by_the_reference

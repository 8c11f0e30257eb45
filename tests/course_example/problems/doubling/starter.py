import torch


def double(x: torch.Tensor) -> torch.Tensor:
    raise NotImplementedError

"""attention-grader: grades multi-head attention exercises in PyTorch."""

__version__ = "0.1.0"

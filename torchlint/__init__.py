"""torchlint: a linter for the gradient bugs of PyTorch training loops.

Importing this package is cheap on purpose (no libcst, no rich), so that
`torchlint --version` answers at once.
"""

__version__ = "0.1.0"

"""torchlint: a linter for the gradient bugs of PyTorch training loops.

Importing this package is cheap on purpose (no libcst, no rich), so that
`torchlint --version` answers at once.
"""

__version__ = "0.1.0"


def env_flag(name: str) -> bool:
    """Whether the environment variable `name` is set to something other than empty, 0, false or no."""
    import os

    return os.environ.get(name, "").strip().lower() not in ("", "0", "false", "no", "off")

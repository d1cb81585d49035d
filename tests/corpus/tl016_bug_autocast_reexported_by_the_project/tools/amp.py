"""The project's own names for what installed packages provide: `autocast` imported again under another name,
DDP imported again, and a gradient-sync switch under a name that does not say so."""
from torch.cuda.amp import autocast as mixed_precision  # noqa: F401
from torch.nn.parallel import DistributedDataParallel  # noqa: F401

from distkit.sync import no_sync as quiet_reduce  # noqa: F401

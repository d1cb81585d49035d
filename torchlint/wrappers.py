"""Calls that hand back the module they are given, shared by the name table and the sparse parse.

Kept apart from `torchlint.names` so that screening a file (`torchlint.engine.screen`) never imports LibCST.
"""

# Methods that return the module they are called on.
SAME_MODULE_METHODS = frozenset({"to", "cuda", "cpu", "float", "half", "double", "bfloat16", "train", "eval"})
# Wrappers whose parameters are the wrapped module's: `DDP(model)`, `torch.compile(model)`.
MODULE_WRAPPERS = frozenset(
    {"DistributedDataParallel", "DataParallel", "DDP", "FullyShardedDataParallel", "FSDP", "compile",
     "convert_sync_batchnorm"}
)

# Calls that hand each argument back, in order: `model, optimizer = accelerator.prepare(model, optimizer)`,
# `model, opt = amp.initialize(model, opt)`.
HANDING_BACK = frozenset({"prepare", "initialize"})
# Class methods that build an object of their class: `Ner.from_pretrained(path)` builds a `Ner`.
LOADERS = frozenset({"from_pretrained", "from_config"})

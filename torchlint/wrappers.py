"""Name tables shared by the analysis and the sparse parse: calls that hand back the module they are given,
and the packages whose import says which autograd a file trains with.

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

TORCH = "PyTorch"
# The packages whose import says which autograd a file trains with (the longest prefix of an imported name
# wins: `from d2l import mxnet as d2l` is MXNet's d2l). PyTorch's own frameworks count as PyTorch.
AUTOGRAD_PACKAGES = {
    "torch": TORCH, "torchvision": TORCH, "torchaudio": TORCH, "torchtext": TORCH, "accelerate": TORCH,
    "lightning": TORCH, "pytorch_lightning": TORCH, "deepspeed": TORCH, "ignite": TORCH, "timm": TORCH,
    "apex": TORCH, "speechbrain": TORCH, "d2l.torch": TORCH, "fastai": TORCH,
    "fastbook": TORCH,
    "mxnet": "MXNet", "gluonnlp": "MXNet", "gluoncv": "MXNet", "d2l.mxnet": "MXNet",
    "paddle": "Paddle", "paddlenlp": "Paddle", "d2l.paddle": "Paddle",
    "oneflow": "OneFlow", "flowvision": "OneFlow", "libai": "OneFlow",
    "mindspore": "MindSpore", "msadapter": "MindSpore",
    "chainer": "Chainer", "jittor": "Jittor", "megengine": "MegEngine", "tinygrad": "tinygrad",
    "jax": "JAX", "flax": "JAX", "optax": "JAX", "haiku": "JAX", "equinox": "JAX", "d2l.jax": "JAX",
    "tensorflow": "TensorFlow", "keras": "Keras", "tf_keras": "Keras", "d2l.tensorflow": "TensorFlow",
    "mlx": "MLX", "theano": "Theano",
}

from .policy import *
from .pretrain import *

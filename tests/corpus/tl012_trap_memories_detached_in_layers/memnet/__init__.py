from memnet.model import MemoryTransformer

# expect: simulator=1 min_microbatches=1 solver=0
# include: reference
# A memory bomb while loading (an 800 GB numpy array; caught, the load goes on) and one in solve that
# touches every page (uncaught): the address-space limit turns both into MemoryError inside the
# sandbox; the machine is not hurt.
import numpy as np

try:
    huge = np.ones(10**11)
except MemoryError:
    pass
_Reference = AsymmetricPipelineScheduler  # noqa: F821


class AsymmetricPipelineScheduler(_Reference):
    def solve_optimal_layer_partition(self, *args):
        hog = []
        while True:
            hog.append(bytearray(64 << 20))

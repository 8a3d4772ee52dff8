# expect: simulator=0 min_microbatches=0 solver=0
# include: reference
# os._exit() while the cells load: the process is gone before any test can call it. Nothing can be
# graded (the message says the code could not be loaded); other students are unaffected.
import os

os._exit(0)

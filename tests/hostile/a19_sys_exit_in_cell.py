# expect: simulator=1 min_microbatches=1 solver=2
# include: reference
# sys.exit() at the end of the exercise cell (after the class is defined): it ends that cell only, as
# in Jupyter; the grader notes a cell error and grades the class in full.
import sys

sys.exit("bye")

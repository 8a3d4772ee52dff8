# expect: simulator=1 min_microbatches=1 solver=2
# include: reference
# An honest, correct submission graded between the hostile ones.

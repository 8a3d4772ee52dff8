# expect: simulator=2 solver=2
# include: reference
# An honest, correct submission graded between the hostile ones.

# expect: stage_times=0 partition=0 scheduling=0 frontier=0
# Nothing submitted.

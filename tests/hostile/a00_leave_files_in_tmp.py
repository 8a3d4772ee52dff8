# expect: simulator=1 min_microbatches=1 solver=2
# include: reference
# Leaves files where a later submission graded by the same sandbox could find them (/tmp, the
# worker's scratch directory, its own working directory, HOME) and tries /dev/shm (read-only).
# z99_read_files_left_in_tmp.py looks for them. Its own grade is unaffected.
import os

for path in (
    "/tmp/leak.txt",
    "/tmp/work/leak.txt",
    "leak.txt",
    os.path.expanduser("~/leak.txt"),
    "/dev/shm/leak.txt",
    "/tmp/work/sub-2/leak.txt",
):
    try:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(path, "w") as fh:
            fh.write("secret from a00")
    except OSError:
        pass

"""pipelab — a small, readable pipeline-parallel simulation library for the course.

Forward flow (lesson 16's model), F/B/W schedules (GPipe, 1F1B, interleaved 1F1B, ZB-H1) on an
event-driven simulator with heterogeneous stage costs, hop latency, finite buffers with blocking sends
and activation memory, exact partitioners, Gantt/memory figures and Chrome traces.  See README.md.
Importing pipelab registers the course's Chinese font with matplotlib (``pipelab.fonts``) when matplotlib
is in use (imported before pipelab, or by ``pipelab.plot``); simulations alone never import matplotlib.
"""

import sys

from . import fonts
from .flow import bubble_limit, forward_closed_form, forward_flow, uniform_bubble
from .schedules import Schedule, gpipe, interleaved_1f1b, make_schedule, one_f_one_b, zb_h1
from .simulate import activation_bytes_per_layer, run, simulate
from .timeline import Op, Timeline
from .trace import chrome_trace, write_chrome_trace

__all__ = [
    "forward_flow",
    "forward_closed_form",
    "bubble_limit",
    "uniform_bubble",
    "Timeline",
    "Op",
    "Schedule",
    "make_schedule",
    "gpipe",
    "one_f_one_b",
    "interleaved_1f1b",
    "zb_h1",
    "simulate",
    "run",
    "activation_bytes_per_layer",
    "chrome_trace",
    "write_chrome_trace",
]

if (
    "matplotlib" in sys.modules
):  # a notebook's setup cell imports matplotlib first; pipelab.plot registers too
    fonts.register()

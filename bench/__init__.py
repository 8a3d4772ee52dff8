"""Speed figures for ``make bench``: every ``bench/bench_*.py`` module's ``main()``."""

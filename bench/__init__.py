"""The benchmark suite (issue 11): what players and operators feel, measured as ratios
against a baseline taken in the same run. `python3 dev.py bench` runs it (see README)."""

"""The dataset preparation behind prepare_polyglot_dataset.py: exercises of the upstream layout
read and written as instances (exercises.py), the reference runs recorded for grading's checks
(recording.py), the whole preparation, staged and renamed into place (dataset.py), the
benchmark's clone (fetch.py) and the command line (cli.py)."""

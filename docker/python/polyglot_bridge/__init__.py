"""Trusted grading for Python: the tests run in a process that never loads solution code.

plugin.py (loaded by pytest with -p, in the test process) serves solution modules as proxies;
solver.py (a separate process, another uid) is the only place solution code runs; wire.py is
the protocol between them; trusted.py holds the test side's rules.
"""

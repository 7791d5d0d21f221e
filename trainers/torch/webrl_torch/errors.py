"""The two ways a job ends early: bad input (exit 2, nothing written) and a run that went wrong (exit 3)."""


class InputError(Exception):
    """Bad input: a one-line reason naming the file (or variable) and the field. Exit code 2."""

    exit_code = 2


class TrainingStopped(Exception):
    """NaN loss or diverging KL: the step and the last metrics; no output is claimed. Exit code 3."""

    exit_code = 3

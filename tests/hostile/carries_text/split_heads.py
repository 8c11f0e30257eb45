"""Tries to carry text out through a visible check's message: an exception's message and class
name, and a returned object's repr and class name, chosen by the candidate's code."""


class Shape_2_8_48_SECRET(Exception):
    pass


class SECRET_CLASS:
    def __repr__(self):
        return "SECRET-REPR"


def split_heads(x, num_heads):
    raise Shape_2_8_48_SECRET("SECRET-MESSAGE " + repr(tuple(x.shape)))


def merge_heads(x):
    return SECRET_CLASS()

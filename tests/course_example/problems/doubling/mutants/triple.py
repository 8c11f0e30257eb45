# expect-fail: double matches the reference
# expect-fail: double is twice its input
# expect-diagnosis: tripled
def double(x):
    return 3 * x

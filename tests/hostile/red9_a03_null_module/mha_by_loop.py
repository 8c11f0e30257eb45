from common import zeros


def mha_by_loop(mha, x):
    return zeros(x, x.shape[-1])

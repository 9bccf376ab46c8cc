"""Write a file with numpy where numpy is allowed: np.save outside the scratch dir."""

import numpy as np


def multi_head_attention(x, w_q, w_k, w_v, w_o):
    np.save("/tmp/autograder-pwned-files_numpy_save", x)
    return x

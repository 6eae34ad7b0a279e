"""A tiny neural radiance field: sinusoidal positional encoding of sample points along one ray, a small
MLP giving density and colour, and volume rendering by an exclusive cumulative sum of optical depth.

Idea from: google-research/google-research, jaxnerf/nerf/model_utils.py (posenc and
volumetric_rendering), here for one ray in NumPy.
"""
import numpy as np

DEPTHS = np.linspace(0.5, 2.0, 6)
ORIGIN, DIRECTION = np.array([0.0, 0.1]), np.array([0.6, 0.8])
TARGET_COLOUR = np.array([0.7, 0.2, 0.4])


def encode(points, degrees=3):
    features = [points] + [f(2.0 ** d * points) for d in range(degrees) for f in (np.sin, np.cos)]
    return np.concatenate(features, axis=-1)


def loss(params):
    points = ORIGIN + DEPTHS[:, None] * DIRECTION
    hidden = np.maximum(encode(points) @ params["w1"] + params["b1"], 0.0)
    out = hidden @ params["w2"]
    density = np.log1p(np.exp(out[:, 0]))
    colour = 1.0 / (1.0 + np.exp(-out[:, 1:]))
    gaps = np.concatenate([np.diff(DEPTHS), np.array([1e3])])
    depth = density * gaps
    transmittance = np.exp(-np.concatenate([np.zeros(1), np.cumsum(depth[:-1])]))
    weights = transmittance * (1.0 - np.exp(-depth))
    rendered = np.sum(weights[:, None] * colour, axis=0)
    return np.sum((rendered - TARGET_COLOUR) ** 2)


_RNG = np.random.default_rng(18)
ARGS = ({"w1": _RNG.standard_normal((14, 5)) * 0.4, "b1": _RNG.standard_normal(5) * 0.1 + 0.3,
         "w2": _RNG.standard_normal((5, 4)) * 0.4},)
WRT = 0

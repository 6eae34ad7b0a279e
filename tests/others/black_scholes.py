"""The Black-Scholes price of a small book of European calls and puts; its gradient gives the greeks
(delta with respect to spot, vega with respect to volatility, rho with respect to the rate).

Idea from: google/tf-quant-finance, tf_quant_finance/black_scholes/vanilla_prices.py (closed-form
option prices whose sensitivities come from automatic differentiation).
"""
import numpy as np
from scipy.special import ndtr

STRIKES = np.array([90.0, 100.0, 110.0])
EXPIRIES = np.array([0.5, 1.0, 2.0])
IS_CALL = np.array([True, False, True])
HOLDINGS = np.array([1.0, -2.0, 0.5])


def option_prices(spot, vol, rate):
    root_t = np.sqrt(EXPIRIES)
    d1 = (np.log(spot / STRIKES) + (rate + 0.5 * vol ** 2) * EXPIRIES) / (vol * root_t)
    d2 = d1 - vol * root_t
    discount = np.exp(-rate * EXPIRIES)
    calls = spot * ndtr(d1) - STRIKES * discount * ndtr(d2)
    puts = STRIKES * discount * ndtr(-d2) - spot * ndtr(-d1)
    return np.where(IS_CALL, calls, puts)


def loss(spot, vol, rate):
    return np.sum(HOLDINGS * option_prices(spot, vol, rate)) / spot ** 0.5


ARGS = (101.0, np.array([0.2, 0.25, 0.3]), 0.03)
WRT = (0, 1, 2)
JAX_NAMES = {"ndtr": "jax.scipy.special.ndtr"}

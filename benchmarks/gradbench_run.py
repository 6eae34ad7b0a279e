"""Time GradBench's evals (benchmarks/gradbench.py): objective against adsrc's derivative, lazy and eager.

    python -m benchmarks.gradbench_run              # small and medium sizes
    python -m benchmarks.gradbench_run --quick      # tiny sizes (smoke test)
    python -m benchmarks.gradbench_run --eval gmm,ba
    python -m benchmarks.gradbench_run --passes 2   # everything twice, each row's worst pass kept
    python -m benchmarks.gradbench_run --cpu-time   # process CPU time: other load on the machine counts less

One process, samples interleaved (benchmarks/measure.py). Before its numbers
count, each derivative is checked against a central finite difference of the
objective along a random direction, and lazy against eager (to 1e-10); a
failure or a refusal is a row of its own, never a number.
"""
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import sys  # noqa: E402

import numpy as np  # noqa: E402

import adsrc  # noqa: E402

from . import gradbench as gb  # noqa: E402
from .checks import close, directional_fd_ok, to_numpy  # noqa: E402
from .measure import run_workload  # noqa: E402
from .spellings_run import SYSTEMS as GRADIENT_SYSTEMS, _refusal, failure_reason, settings  # noqa: E402
from .systems import Prepared  # noqa: E402
from .workloads import Workload  # noqa: E402


# --- derivatives other than a gradient ---------------------------------------------

def ba_observation(cam, X, w, feat):
    return w * (gb.ba_project(cam, X) - feat)


def ba_weight_error(w):
    return 1 - w * w


def _ba_loop_jacobian(cams, X, w, obs, feats):
    """One reverse-mode Jacobian (2 x 15) per observation, as a per-observation code would do it."""
    jac = adsrc.jacobian(ba_observation, wrt=(0, 1, 2))
    blocks = []
    for i in range(len(obs)):
        d_cam, d_X, d_w = jac(cams[obs[i, 0]], X[obs[i, 1]], w[i], feats[i])
        blocks.append(np.column_stack([d_cam, d_X, d_w]))
    return np.stack(blocks), adsrc.elementwise_grad(ba_weight_error)(w)


def _ba_vectorized_jacobian(cams, X, w, obs, feats):
    """Row i of the residuals depends on row i of the gathered inputs only, so two pullbacks
    (one per image coordinate) give every observation's 2 x 15 block."""
    cam, Xp = cams[obs[:, 0]], X[obs[:, 1]]
    _, pullback = adsrc.vjp(gb.ba_residuals, cam, Xp, w, feats, wrt=(0, 1, 2))
    rows = []
    for k in range(2):
        seed = np.zeros((len(w), 2))
        seed[:, k] = 1.0
        d_cam, d_X, d_w = pullback(seed)
        rows.append(np.column_stack([d_cam, d_X, d_w]))
    return np.stack(rows, axis=1), adsrc.elementwise_grad(ba_weight_error)(w)


def _ba_jvp(result, args, tangents):
    """The Jacobian blocks applied to a direction (t_cams, t_X, t_w): what a jvp of the objective gives."""
    blocks, d_werr = result
    cams, X, w, obs, feats = args
    t_cams, t_X, t_w = tangents
    t = np.column_stack([t_cams[obs[:, 0]], t_X[obs[:, 1]], t_w])
    return np.concatenate([np.einsum("pij,pj->pi", blocks, t).ravel(), d_werr * t_w])


def _ht_jacobian(f):
    jac = adsrc.jacobian(f, wrt=0, mode="fwd")
    return lambda *args: (jac(*args),)


def _kmeans_direction(f):
    """Newton's step for k-means: gradient over the Hessian's diagonal, which, the Hessian
    being diagonal, is one Hessian-vector product with ones."""
    grad, hvp = adsrc.grad(f, wrt=1), adsrc.hvp(f, wrt=1)

    def direction(points, centroids):
        return (grad(points, centroids) / hvp(points, centroids, np.ones_like(centroids)),)
    return direction


def derivative(e: gb.Eval):
    """A function of the eval's arguments returning a tuple: its derivative's parts."""
    if e.name == "ba":
        return _ba_loop_jacobian if e.form == "loop" else _ba_vectorized_jacobian
    if e.name == "ht":
        return _ht_jacobian(e.f)
    if e.derivative == "newton direction":
        return _kmeans_direction(e.f)
    raise ValueError(f"{e.name}: a gradient eval has no special derivative")


def _derivative_system(e, eager):
    def prepare(wl, args):
        d = derivative(e)

        def call():
            with adsrc.eager_unthunk(eager):
                return d(*args)
        return Prepared(call=call, traced=False)
    return prepare


def check_derivative(e: gb.Eval, args, result, eps=1e-6, rtol=1e-5) -> bool:
    """The derivative against central finite differences of the objective along a random direction."""
    rng = np.random.default_rng(3)
    if e.derivative == "gradient":
        return directional_fd_ok(e.f, args, e.wrt, result)
    if e.derivative == "newton direction":
        points, centroids = args
        g = to_numpy(adsrc.grad(e.f, wrt=1)(points, centroids))
        ones = np.ones_like(centroids)
        h = (to_numpy(adsrc.grad(e.f, wrt=1)(points, centroids + eps * ones))
             - to_numpy(adsrc.grad(e.f, wrt=1)(points, centroids - eps * ones))) / (2 * eps)
        return directional_fd_ok(e.f, args, e.wrt, (g,)) and np.allclose(result[0], g / h, rtol=rtol)
    tangents = [rng.standard_normal(np.shape(args[i])) for i in e.wrt]

    def moved(sign):
        out = list(args)
        for i, t in zip(e.wrt, tangents):
            out[i] = args[i] + sign * eps * t
        return np.asarray(e.f(*out))
    expected = (moved(1) - moved(-1)) / (2 * eps)
    got = _ba_jvp(result, args, tangents) if e.name == "ba" else to_numpy(result[0]) @ tangents[0]
    return np.allclose(got, expected, rtol=rtol, atol=rtol * max(1.0, float(np.max(np.abs(expected)))))


# --- running ------------------------------------------------------------------------

def measure(e: gb.Eval, size: str, s) -> dict:
    args = e.make_args(size)
    wl = Workload(f"{e.name} {e.form}", e.f, e.wrt, lambda quick: args, lambda a: 0, e.derivative)
    systems = GRADIENT_SYSTEMS if e.derivative == "gradient" else {
        "primal": GRADIENT_SYSTEMS["primal"], "lazy": _derivative_system(e, False),
        "eager": _derivative_system(e, True)}
    cells = {c.system: c for c in run_workload(wl, args, systems, s)}
    row = {"eval": e.name, "form": e.form, "derivative": e.derivative, "size": size}
    errors = [(name, c.error) for name, c in cells.items() if c.error]
    if errors:
        name, error = errors[0]
        again = (lambda: adsrc.grad(e.f, wrt=e.wrt)(*args)) if e.derivative == "gradient" else \
            (lambda: derivative(e)(*args))
        row["status"] = f"{'refused' if _refusal(error) else 'FAIL'} ({name}): {failure_reason(again, error)}"
        return row
    lazy, eager = cells["lazy"].grads, cells["eager"].grads
    if not check_derivative(e, args, lazy):
        row["status"] = "FAIL: disagrees with a finite difference"
    elif not close(eager, lazy, 1e-10):
        row["status"] = "FAIL: eager differs from lazy"
    else:
        primal = cells["primal"].median_us
        row.update(status="ok", primal_us=primal, lazy=cells["lazy"].median_us / primal,
                   eager=cells["eager"].median_us / primal,
                   over_eager=cells["lazy"].median_us / cells["eager"].median_us, spread=1.0)
    return row


def _worst(r):
    return float("inf") if r["status"] != "ok" else max(r["lazy"], r["eager"])


def worst_of(passes: list[dict]) -> dict:
    """One row over several passes: each ratio at its worst, a failure in any pass kept."""
    failed = [r for r in passes if r["status"] != "ok"]
    if failed:
        return failed[0]
    row = dict(passes[0], primal_us=min(r["primal_us"] for r in passes))
    for key in ("lazy", "eager", "over_eager"):
        row[key] = max(r[key] for r in passes)
    row["spread"] = max(map(_worst, passes)) / min(map(_worst, passes))
    return row


def table(rows: list[dict]) -> str:
    """Every eval, form and size; the worst ratio first, failures before everything."""
    lines = ["| eval | form | derivative | size | objective µs | lazy / objective | eager / objective | "
             "lazy / eager | spread | ok |", "| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    for r in sorted(rows, key=lambda r: -_worst(r)):
        head = f"| {r['eval']} | {r['form']} | {r['derivative']} | {r['size']} |"
        if r["status"] != "ok":
            lines.append(f"{head}  |  |  |  |  | {r['status']} |")
        else:
            lines.append(f"{head} {r['primal_us']:,.1f} | {r['lazy']:.2f} | {r['eager']:.2f} | "
                         f"{r['over_eager']:.2f} | {r['spread']:.2f} | yes |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="tiny sizes and few repeats (smoke test)")
    ap.add_argument("--passes", type=int, default=1, help="measure everything this many times, keep the worst")
    ap.add_argument("--cpu-time", action="store_true", help="time in process CPU time, not wall time")
    ap.add_argument("--eval", help="comma-separated subset of: " + ",".join(dict.fromkeys(e.name for e in gb.EVALS)))
    opts = ap.parse_args(argv)
    names = set(opts.eval.split(",")) if opts.eval else {e.name for e in gb.EVALS}
    unknown = names - {e.name for e in gb.EVALS}
    if unknown:
        raise SystemExit(f"unknown eval: {', '.join(sorted(unknown))}")
    s = settings(opts.quick, opts.cpu_time)
    cases = [(e, size) for e in gb.EVALS if e.name in names for size in (("tiny",) if opts.quick else ("small", "medium"))]
    passes = []
    for k in range(opts.passes):
        rows = []
        for e, size in cases:
            row = measure(e, size, s)
            print(f"  pass {k + 1}: {e.name} {e.form} {e.derivative} {size}: {row['status']}"
                  + (f", lazy {row['lazy']:.2f}x, eager {row['eager']:.2f}x" if row["status"] == "ok" else ""),
                  file=sys.stderr, flush=True)
            rows.append(row)
        passes.append(rows)
    print(f"{opts.passes} pass(es), each row's worst shown; {'CPU' if opts.cpu_time else 'wall'} time{' (quick sizes: no claims)' if opts.quick else ''}\n")
    print(table([worst_of(list(rows)) for rows in zip(*passes)]))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Second order reads a function's own lines where its file is not Python as a whole (a Markdown page)."""
import numpy as np

import adsrc


def test_a_vjp_defined_in_a_file_that_is_not_python_is_differentiated_again(tmp_path):
    page = tmp_path / "page.md"
    prose = "# A page\n\nProse, which is not Python: it does not parse.\n\n"
    body = ("def cube(x):\n    return x ** 3\n\n\n"
            "def cube_vjp(g, ans, x):\n    return 3.0 * g * x ** 2\n")
    page.write_text(prose + body + "\nMore prose.\n")
    namespace = {"np": np}
    exec(compile("\n" * prose.count("\n") + body, str(page), "exec"), namespace)
    cube = namespace["cube"]
    adsrc.register_adjoint(cube, namespace["cube_vjp"])

    def energy(x):
        return np.sum(np.sin(cube(x)))

    x = np.array([0.5, -1.2])
    expected = np.diag(6.0 * x * np.cos(x ** 3) - 9.0 * x ** 4 * np.sin(x ** 3))
    np.testing.assert_allclose(adsrc.hessian(energy)(x), expected, rtol=1e-12)
    np.testing.assert_allclose(adsrc.hvp(energy)(x, np.ones(2)), expected @ np.ones(2), rtol=1e-12)

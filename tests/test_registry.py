"""native_functions.yaml and derivatives.yaml: exact rows on the sample."""
from __future__ import annotations

from conftest import SAMPLE_ENTRIES


def q(ix, sql, **p):
    return [tuple(r.values()) for r in ix.rows(sql, p)]


def test_native_function_counts(ix):
    assert q(ix, "SELECT count(*) FROM native_functions") == [(SAMPLE_ENTRIES,)] == [(26,)]
    assert q(ix, "SELECT count(*) FROM native_functions WHERE structured_delegate IS NOT NULL") == [(7,)]


def test_dispatch_rows_split_per_key(ix):
    rows = q(ix, "SELECT dispatch_key, kernel, implicit, line FROM native_dispatch WHERE function = 'relu' "
                 "ORDER BY dispatch_key")
    assert rows == [("CPU", "relu", 0, 8), ("CUDA", "relu", 0, 8), ("MPS", "relu_mps", 0, 9)]


def test_implicit_composite_rows(ix):
    rows = q(ix, "SELECT function, dispatch_key, kernel FROM native_dispatch WHERE implicit ORDER BY function, 2")
    assert rows == [("linear", "CompositeImplicitAutograd", "linear"),
                    ("lstm.input", "CompositeImplicitAutograd", "lstm"),
                    ("mul.out", "CPU", "ufunc_mul_CPU"), ("mul.out", "CUDA", "ufunc_mul_CUDA"),
                    ("softmax.int", "CompositeImplicitAutograd", "softmax")]
    # WHERE NOT implicit is exactly what the file writes: 3+2+2+1+3+1+1+2+1+1+3+2+3, argmax.out's 2, zero_'s 2
    # (CPU, CUDA) and zeros_like's 1
    assert q(ix, "SELECT count(*) FROM native_dispatch WHERE NOT implicit") == [(30,)]


def test_structured_delegate_has_no_rows_of_its_own(ix):
    assert q(ix, "SELECT count(*) FROM native_dispatch WHERE function = 'add.Tensor'") == [(0,)]
    assert q(ix, "SELECT structured_delegate, variants FROM native_functions WHERE full_name = 'add.Tensor'") == [
        ("add.out", "function, method")]


def test_entry_fields(ix):
    rows = q(ix, "SELECT name, overload, structured, structured_inherits, tags, autogen, is_out, line "
                 "FROM native_functions WHERE full_name IN ('add.out', 'add.Scalar', 'relu') ORDER BY line")
    assert rows == [("relu", "", 0, None, "core, pointwise", None, 0, 4),
                    ("add", "out", 1, "TensorIteratorBase", "pointwise", None, 1, 43),
                    ("add", "Scalar", 0, None, None, "add.Scalar_out", 0, 51)]
    assert q(ix, "SELECT python_module FROM native_functions WHERE name = 'linear'") == [("nn",)]


def test_ufunc_loops(ix):
    rows = q(ix, "SELECT function, ufunc_key, loop, dtypes, line FROM native_ufunc_loops ORDER BY line")
    assert rows == [("mul.out", "Generic", "mul", "AllAndComplex, BFloat16, Half", 65),
                    ("mul.out", "ScalarOnly", "mul", "Bool", 66)]


def test_derivatives(ix):
    assert q(ix, "SELECT count(*) FROM derivatives") == [(7,)]
    rows = q(ix, "SELECT dispatch_key, inputs, is_forward, uses_result, uses_grads, line FROM derivative_formulas "
                 "WHERE function = '_cudnn_rnn' OR function = 'relu' ORDER BY line")
    assert rows == [("Default", "self", 0, 1, 0, 4), ("Default", "result", 1, 0, 0, 5),
                    ("Default", "input, hx, cx, weight", 0, 1, 1, 19)]
    assert q(ix, "SELECT output_differentiability FROM derivatives WHERE name = '_cudnn_rnn'") == [
        ("[True, True, True, False, False]",)]
    nested = q(ix, "SELECT inputs, formula FROM derivative_formulas WHERE dispatch_key = 'AutogradNestedTensor'")
    assert nested == [("self", "grad * other.conj()"), ("other", "grad * self.conj()")]
    assert q(ix, "SELECT dispatch FROM derivatives WHERE full_name = 'mul.Tensor'") == [("AutogradNestedTensor",)]

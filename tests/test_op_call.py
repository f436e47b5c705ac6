"""An op a profile recorded with shapes, written as a call opindex traces (profile/op_call.py): the inputs as
torch.profiler 2.11 records them (Input Dims, Input type, Concrete Inputs; tests/data/profiles/*)."""
from __future__ import annotations

import json

from opindex.profile.op_call import call_of

SORT = ["sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)",
        "sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False) -> (Tensor values, Tensor "
        "indices)"]


def inputs(dims, types, concrete):
    return json.dumps({"dims": dims, "types": types, "concrete": concrete})


def test_tensors_scalars_and_keyword_only_arguments():
    # sort_index_h200_torch2.11.0.json.gz: aten::sort of an int64 vector, recorded as sort.stable's four arguments
    recorded = inputs([[16384], [], [], []], ["long int", "Scalar", "Scalar", "Scalar"], ["", "False", "-1", "False"])
    assert call_of("aten::sort", recorded, SORT) == (
        "torch.ops.aten.sort(torch.empty(16384, dtype=torch.int64), stable=False, dim=-1, descending=False)")
    assert call_of("aten::sort", recorded) == (  # no schema: positional, as recorded
        "torch.ops.aten.sort(torch.empty(16384, dtype=torch.int64), False, -1, False)")
    topk = inputs([[65536], [], [], [], []], ["float", "Scalar", "Scalar", "Scalar", "Scalar"],
                  ["", "100", "-1", "True", "True"])
    assert call_of("aten::topk", topk) == "torch.ops.aten.topk(torch.empty(65536), 100, -1, True, True)"
    # a 0-dim tensor; trailing undefined optionals are left to the defaults
    assert call_of("aten::add", inputs([[4, 8], [], []], ["c10::Half", "double", ""], ["", "", ""])) == (
        "torch.ops.aten.add(torch.empty(4, 8, dtype=torch.float16), torch.empty([], dtype=torch.float64))")


def test_what_cannot_be_written_makes_no_call():
    assert call_of("aten::cat", inputs([[[3, 4], [3, 4]], []], ["TensorList", "Scalar"], ["", "0"])) is None
    assert call_of("aten::sum", inputs([[4], []], ["float", "Scalar"], ["", "<opaque>"])) is None
    assert call_of("autograd::engine::evaluate_function: SumBackward0", inputs([[]], ["float"], [""])) is None


def test_an_operand_with_other_strides_is_written_with_them():
    # train_step_h200_torch2.11.json.gz: aten::add of a broadcast bias (strides (1, 0)) and aten::mm of a transposed
    # weight (strides (1, 256)); row-major strides, and a size-1 dimension, stay a plain torch.empty
    add = inputs([[256, 1000], [256, 1000], []], ["float", "float", "Scalar"], ["", "", "1"])
    recorded = json.loads(add)
    recorded["strides"] = [[1, 0], [1000, 1], []]
    assert call_of("aten::add", json.dumps(recorded)) == (
        "torch.ops.aten.add(torch.empty_strided((256, 1000), (1, 0)), torch.empty(256, 1000), 1)")
    mm = json.loads(inputs([[256, 1024], [1, 256]], ["float", "float"], ["", ""]))
    mm["strides"] = [[1, 256], [1, 1]]
    assert call_of("aten::mm", json.dumps(mm)) == (
        "torch.ops.aten.mm(torch.empty_strided((256, 1024), (1, 256)), torch.empty(1, 256))")


def test_an_op_call_s_overloads_that_need_their_defaults_rank_after_the_one_taking_its_arguments():
    """C++ picks the overload whose parameters take a call's arguments one for one: `at::sort(self, dim,
    descending)` (PyTorch 2.4 Sorting.cpp:984) is sort(Tensor self, int dim, bool descending), not sort.stable,
    whose four parameters would take `dim` for `bool? stable`. A method call's receiver is an argument; an _out
    call's outputs are parameters; with no overload taking the arguments one for one, none is set apart."""
    from opindex.trace.walk.sites import not_exact
    sort = {"schema": "sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)"}
    stable = {"schema": "sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False) -> "
                        "(Tensor values, Tensor indices)"}
    call = {"qualifier": "at", "callee": "sort", "is_method": 0}
    assert not_exact([sort, stable], ["self", "dim", "descending"], call) == {
        stable["schema"]: "C++ picks the overload that takes these 3 arguments one for one (at::sort(...) at its line)"}
    assert not_exact([sort, stable], ["self", "false", "dim", "descending"], call) == {
        sort["schema"]: "C++ picks the overload that takes these 4 arguments one for one (at::sort(...) at its line)"}
    method = {"qualifier": "self", "callee": "sort", "is_method": 1}
    assert set(not_exact([sort, stable], ["dim", "descending"], method)) == {stable["schema"]}
    assert not_exact([sort, stable], ["self"], call) == {}  # neither takes one argument one for one
    assert not_exact([sort, stable], None, call) == {}  # arguments unknown
    out = {"schema": "topk.values(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True, *, "
                     "Tensor(a!) values, Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)"}
    topk_out = {"qualifier": "at", "callee": "topk_out", "is_method": 0}
    assert not_exact([out], ["vals", "result", "q", "n_sample", "-1", "true", "true"], topk_out) == {}


def test_an_overload_takes_a_call_s_tensors_and_numbers_only_where_its_types_can():
    """C++ converts a number to a Scalar, never to a Tensor, and a Tensor to nothing but a Tensor: isnan's
    `self != self` (PyTorch 2.4 TensorCompare.cpp:363, `self` a `const Tensor&` parameter) calls ne.Tensor, not
    ne.Scalar; relu's `at::clamp_min(self, 0)` calls clamp_min, not clamp_min.Tensor. An _out call's outputs come
    first (the C++ API's order); an argument the caller does not declare, or unknown arguments, fit anything."""
    from opindex.trace.walk.sites import fits, tensor_parameters
    tensors = tensor_parameters("(const Tensor& self, const std::optional<Tensor>& weight, TensorList rest, "
                                "at::Tensor& out, const Scalar& alpha, Tensor other = {})")
    assert tensors == {"self", "out", "other"}
    ne_scalar = "ne.Scalar(Tensor self, Scalar other) -> Tensor"
    ne_tensor = "ne.Tensor(Tensor self, Tensor other) -> Tensor"
    operator = {"qualifier": "self", "callee": "ne", "is_method": 1}
    assert [fits(s, ["self"], operator, tensors) for s in (ne_scalar, ne_tensor)] == [False, True]
    assert [fits(s, ["alpha"], operator, tensors) for s in (ne_scalar, ne_tensor)] == [True, True]
    assert [fits(s, ["self"], operator) for s in (ne_scalar, ne_tensor)] == [True, True]  # (types unknown)
    assert fits(ne_scalar, None, operator, tensors)
    clamp = {"qualifier": "at", "callee": "clamp_min", "is_method": 0}
    assert [fits(s, ["self", "0"], clamp, tensors) for s in (
        "clamp_min(Tensor self, Scalar min) -> Tensor", "clamp_min.Tensor(Tensor self, Tensor min) -> Tensor")] == [
        True, False]
    # at::add_out(out, self, alpha): `out` is the output, first in C++; alpha a Scalar, no Tensor
    add_out = {"qualifier": "at", "callee": "add_out", "is_method": 0}
    schema = "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)"
    assert fits(schema, ["out", "self", "other"], add_out, tensors)
    assert not fits(schema, ["out", "self", "other", "self"], add_out, tensors)

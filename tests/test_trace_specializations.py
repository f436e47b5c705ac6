"""Template specializations and `#if`/`#else` twins on the main chain (issue 28): the definition a call runs is the
one the stated build compiles and, of a template's explicit specializations, the one written for the input's dtype,
else the primary template. A miniature of ReduceSumProdKernel.cu's prod_functor, of Shape.cu's brace-splitting
`#ifdef USE_MACA ... #else ... #endif` and of ScatterGatherKernel.cu's `typeid(f) == typeid(TensorAssign)`."""
from __future__ import annotations

import sqlite3

import pytest

from opindex.extract import cpp
from opindex.trace import typeids

FUNCTOR = (
    "namespace at { namespace native {\n"                                     # 1
    "__global__ void k_jit(int n) {}\n"                                       # 2
    "__global__ void k_plain(int n) {}\n"                                     # 3
    "__global__ void k_bool(int n) {}\n"                                      # 4
    "__global__ void k_half(int n) {}\n"                                      # 5
    "template <typename scalar_t, typename acc_t = scalar_t>\n"               # 6
    "struct my_functor {\n"                                                   # 7
    "#ifdef MY_JIT\n"                                                         # 8
    "  void operator()(TensorIterator& iter) { k_jit<<<1, 1>>>(1); }\n"       # 9
    "#else\n"                                                                 # 10
    "  void operator()(TensorIterator& iter) { k_plain<<<1, 1>>>(1); }\n"     # 11
    "#endif\n"                                                                # 12
    "};\n"                                                                    # 13
    "template <>\n"                                                           # 14
    "struct my_functor<bool> {\n"                                             # 15
    "  void operator()(TensorIterator& iter) { k_bool<<<1, 1>>>(1); }\n"      # 16
    "};\n"                                                                    # 17
    "template <>\n"                                                           # 18
    "struct my_functor<c10::complex<at::Half>> {\n"                           # 19
    "  void operator()(TensorIterator& iter) { k_half<<<1, 1>>>(1); }\n"      # 20
    "};\n"                                                                    # 21
    "void my_kernel(TensorIterator& iter) {\n"                                # 22
    "  my_functor<scalar_t>{}(iter);\n"                                       # 23
    "}\n"                                                                     # 24
    "}}\n")


def _index_with(sample_copy, tmp_path, name: str, text: str):
    """The sample checkout with one more CUDA file, indexed: (Index, its path), the Index open while used."""
    from opindex.api import Index, build
    (sample_copy / f"aten/src/ATen/native/cuda/{name}").write_text(text)
    db = tmp_path / f"{name}.sqlite"
    build(str(sample_copy), db, jobs=1)
    return Index(db), db


@pytest.fixture
def functor_index(sample_copy, tmp_path):
    ix, db = _index_with(sample_copy, tmp_path, "MyFunctor.cu", FUNCTOR)
    with ix:
        yield ix, db


def _end(t):
    h = t.main_chain()[-1]
    return h.name, h.line


def test_a_class_specialization_keeps_its_template_arguments_and_its_members_under_if_are_methods(functor_index):
    _, db = functor_index
    con = sqlite3.connect(db)
    got = con.execute("SELECT line, kind, template_args, template_parameters FROM symbols WHERE file LIKE "
                      "'%/MyFunctor.cu' AND name IN ('my_functor', 'operator()') ORDER BY line").fetchall()
    assert got == [(7, "struct", None, '["scalar_t", "acc_t"]'), (9, "method", None, None),
                   (11, "method", None, None), (15, "struct", "<bool>", "[]"), (16, "method", None, None),
                   (19, "struct", "<c10::complex<at::Half>>", "[]"), (20, "method", None, None)]


def test_float32_takes_the_primary_template_and_the_build_chooses_its_twin(functor_index):
    """my_functor<scalar_t>{}(iter) may reach five operator()s: the primary's `#ifdef MY_JIT` one (:9) and its
    `#else` twin (:11), and those of the <bool> (:16) and <c10::complex<at::Half>> (:20) specializations. float32
    has no specialization: the primary's, of the two the one the build compiles (MY_JIT is no macro opindex knows
    a value of: stated with -D or -U)."""
    ix, _ = functor_index
    assert _end(ix.trace("at::native::my_kernel", undefines=["MY_JIT"])) == ("__global__ at::native::k_plain", 3)
    assert _end(ix.trace("at::native::my_kernel", defines=["MY_JIT"])) == ("__global__ at::native::k_jit", 2)
    t = ix.trace("at::native::my_kernel", defines=["MY_JIT"])
    said = {h.line: [(c.text, c.assumed) for c in h.conditions] for h in t.hops
            if h.name == "at::native::my_functor::operator()"}
    assert said == {9: [], 11: [("not (defined(MY_JIT))", False)], 16: [("scalar_t is bool", False)],
                    20: [("scalar_t is complex32", False)]}


def test_a_dtype_with_a_specialization_takes_it_not_the_primary_template(functor_index):
    ix, _ = functor_index
    t = ix.trace("at::native::my_kernel", dtype="bool", undefines=["MY_JIT"])
    assert _end(t) == ("__global__ at::native::k_bool", 4)
    primary = next(h for h in t.hops if h.name == "at::native::my_functor::operator()" and h.line == 11)
    assert [(c.text, c.assumed) for c in primary.conditions] == [("scalar_t is not bool", False)]
    assert "[the primary template: bool has its own specialization]" in primary.detail


BRACES = (
    "namespace at { namespace native {\n"           # 1
    "void cat_out(const Tensor& out) {\n"           # 2
    "#ifdef USE_MACA\n"                             # 3
    "  if (out.dim() > 1) {\n"                      # 4
    "    maca_parallel_cat(out);\n"                 # 5
    "#else\n"                                       # 6
    "  if (out.dim() > 2) {\n"                      # 7
    "    parallel_cat(out);\n"                      # 8
    "#endif\n"                                      # 9
    "  }\n"                                         # 10
    "  narrow_copy(out);\n"                         # 11
    "}\n"                                           # 12
    "}}\n")


def test_each_branch_of_an_if_group_that_splits_braces_is_read_in_a_balanced_reading():
    """Both branches open the `if` block that the line after #endif closes: the first is read with the file, the
    `#else` in a reading that keeps it instead; its calls belong to the same function."""
    facts = cpp.extract("aten/src/ATen/native/cuda/Cat.cu", BRACES.encode(), "cuda")
    calls = sorted((r[1], r[3], r[4]) for r in facts.rows["calls"] if not r[6])
    assert calls == [(5, "at::native::cat_out", "maca_parallel_cat"), (8, "at::native::cat_out", "parallel_cat"),
                     (11, "at::native::cat_out", "narrow_copy")]
    assert [(r[1], r[2], r[6]) for r in facts.rows["symbols"]] == [(2, 12, "at::native::cat_out")]


def test_a_typeid_test_reads_the_class_the_caller_passes():
    """ScatterGatherKernel.cu (2.4): `_cuda_scatter_gather_internal_kernel::operator()(..., const func_t& f)` tests
    `typeid(f) == typeid(TensorAssign)`; cuda_scatter_gather_base_kernel's operator() declares `const ReduceAdd& f`
    and passes `f` on."""
    callee = "( TensorIterator& iter, int64_t numel, const func_t& f )"
    assert typeids.declared_types(callee, ["func_t"]) == {"iter": "TensorIterator"}
    caller = typeids.declared_types("( const Tensor& self, const std::string& name, const at::native::ReduceAdd& f )")
    assert caller == {"self": "Tensor", "name": "string", "f": "ReduceAdd"}
    from opindex.pytorch.receivers import split_parameters
    types = typeids.passed_types(split_parameters(callee), ["iter", "self.numel()", "f"], caller)
    assert types == {"f": "ReduceAdd"}
    assert typeids.written("ndim == 2 && typeid(f) == typeid(TensorAssign)", types) == "ndim == 2 && false"
    assert typeids.written("typeid(f)!=typeid(at::native::ReduceAdd)", types) == "false"
    assert typeids.written("typeid(g) == typeid(ReduceAdd)", types) == "typeid(g) == typeid(ReduceAdd)"


def test_a_line_comment_in_a_parameter_list_does_not_swallow_the_parameters_after_it():
    code = ("namespace at {\n"
            "void f(int a,  // a note\n"
            "       const func_t& g) { h(a); }\n"
            "}\n")
    facts = cpp.extract("aten/src/ATen/native/F.cpp", code.encode(), "cpp")
    assert [r[8] for r in facts.rows["symbols"]] == ["(int a, const func_t& g)"]


OVERLOADS = (
    "namespace at { namespace native {\n"                                          # 1
    "__global__ void k_add(int n) {}\n"                                            # 2
    "__global__ void k_assign(int n) {}\n"                                         # 3
    "__global__ void k_any(int n) {}\n"                                            # 4
    "class ReduceAdd {};\n"                                                        # 5
    "class TensorAssign {};\n"                                                     # 6
    "static TensorAssign tensor_assign;\n"                                         # 7
    "template <bool is_scatter_like = true>\n"                                     # 8
    "struct base_kernel {\n"                                                       # 9
    "  void operator()(const Tensor& self, const ReduceAdd& f) { k_add<<<1, 1>>>(1); }\n"        # 10
    "  void operator()(const Tensor& self, const TensorAssign& f) { k_assign<<<1, 1>>>(1); }\n"  # 11
    "  template <typename func_t>\n"                                               # 12
    "  void operator()(const Tensor& self, const func_t& f) { k_any<<<1, 1>>>(1); }\n"           # 13
    "};\n"                                                                         # 14
    "void scatter_kernel(const Tensor& self) {\n"                                  # 15
    "  base_kernel<>()(self, tensor_assign);\n"                                    # 16
    "}\n"                                                                          # 17
    "}}\n")


def test_the_class_of_what_a_call_passes_chooses_the_overload(sample_copy, tmp_path):
    """ScatterGatherKernel.cu's shape: `static TensorAssign tensor_assign;` passed to a call that may reach three
    operator()s; the one declaring `const TensorAssign& f` runs, not the ReduceAdd one nor the template one."""
    from opindex.api import Index, build
    (sample_copy / "aten/src/ATen/native/cuda/Overloads.cu").write_text(OVERLOADS)
    db = tmp_path / "overloads.sqlite"
    build(str(sample_copy), db, jobs=1)
    with Index(db) as ix:
        t = ix.trace("at::native::scatter_kernel")
    assert _end(t) == ("__global__ at::native::k_assign", 3)
    said = {h.line: [(c.text, c.assumed) for c in h.conditions] for h in t.hops
            if h.name == "at::native::base_kernel::operator()"}
    assert said == {10: [("tensor_assign is ReduceAdd", False)], 11: [],
                    13: [("tensor_assign is not TensorAssign", False)]}


TEMPLATE_VALUES = (
    "namespace at { namespace native {\n"                                           # 1
    "__global__ void k_scatter(int n) {}\n"                                         # 2
    "__global__ void k_gather(int n) {}\n"                                          # 3
    "template <bool is_scatter_like, typename scalar_t>\n"                         # 4
    "struct internal_kernel {\n"                                                    # 5
    "  void operator()(TensorIterator& iter) {\n"                                   # 6
    "    if (is_scatter_like && iter.numel() > 0) {\n"                              # 7
    "      k_scatter<<<1, 1>>>(1);\n"                                               # 8
    "    } else {\n"                                                                # 9
    "      k_gather<<<1, 1>>>(1);\n"                                                # 10
    "    }\n"                                                                       # 11
    "  }\n"                                                                         # 12
    "};\n"                                                                          # 13
    "template <bool is_scatter_like = true,\n"                                      # 14
    "          bool cast_to_opaque = true>\n"                                       # 15
    "struct base_kernel {\n"                                                        # 16
    "  void operator()(TensorIterator& iter) {\n"                                   # 17
    "    internal_kernel<is_scatter_like, float>()(iter);\n"                        # 18
    "  }\n"                                                                         # 19
    "};\n"                                                                          # 20
    "void my_gather(TensorIterator& iter) {\n"                                      # 21
    "  base_kernel</*is_scatter_like=*/false>()(iter);\n"                           # 22
    "}\n"                                                                           # 23
    "void my_scatter(TensorIterator& iter) {\n"                                     # 24
    "  base_kernel<>()(iter);\n"                                                    # 25
    "}\n"                                                                           # 26
    "}}\n")


@pytest.fixture
def template_index(sample_copy, tmp_path):
    ix, _ = _index_with(sample_copy, tmp_path, "MyGather.cu", TEMPLATE_VALUES)
    with ix:
        yield ix


def test_a_template_argument_a_call_writes_decides_the_tests_of_its_parameter(template_index):
    """my_gather's `base_kernel</*is_scatter_like=*/false>` makes the parameter false in base_kernel's operator(),
    which passes it on by name to internal_kernel<is_scatter_like, float>: the `is_scatter_like && ...` branch (:7)
    is false, so the else's k_gather. my_scatter's `base_kernel<>` takes the head's default (true, :14); the
    branch's other part, `iter.numel() > 0`, holds for an input of the general case (not empty): k_scatter."""
    gather = template_index.trace("at::native::my_gather")
    assert _end(gather) == ("__global__ at::native::k_gather", 3)
    said = {h.line: [(c.text, c.assumed) for c in h.conditions] for h in gather.hops if "<<<" in h.name}
    assert said == {8: [("is_scatter_like && iter.numel() > 0", False)], 10: []}
    scatter = template_index.trace("at::native::my_scatter")
    assert _end(scatter) == ("__global__ at::native::k_scatter", 2)
    said = {h.line: [(c.text, c.assumed) for c in h.conditions] for h in scatter.hops if "<<<" in h.name}
    assert said == {8: [], 10: [("not (is_scatter_like && iter.numel() > 0)", False)]}


def test_template_values_are_read_from_the_written_arguments_and_the_head_defaults(template_index, tmp_path):
    from opindex.trace.walk import template_values
    assert template_values._value("/*is_scatter_like=*/false", {}) == "false"
    assert template_values._value("128u", {}) == "128"
    assert template_values._value("is_scatter_like", {"is_scatter_like": False}) == "false"
    assert template_values._value("scalar_t", {}) == "scalar_t"  # a type a test compares (std::is_same<DT, ...>)
    assert template_values._value("cutlass::half_t", {}) == "cutlass::half_t"
    assert template_values._value("opmath_t", {}) is None

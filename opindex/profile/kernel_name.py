"""Kernel names as profilers print them, parsed into what the index can look up.

torch.profiler, Nsight Systems and ncu print the demangled C++ name of a `__global__` function:

    void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul> >(
        int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)

The kernel (`vectorized_elementwise_kernel`) is shared by hundreds of ops; the op is only in the template arguments:
a functor class (`CUDAFunctor_add`), or a lambda whose enclosing function names the op body
(`exp_kernel_cuda(at::TensorIteratorBase&)::{lambda()#1}::operator()() const::{lambda(float)#1}`). So the name is
parsed into a tree (qualified names, template arguments, parameter lists, lambdas) rather than matched with
regular expressions, and the hints are read off the tree.

Library kernels (cuBLAS, cuDNN, CUTLASS-in-cuBLAS, cub, NCCL ...) have no source in a PyTorch checkout: they are
classified by their naming conventions. Mangled names (`_ZN...`) are demangled with binutils' `c++filt` when it is
installed, else with a small Itanium demangler for the common subset; failing both the name says so.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..pytorch.launchers import is_launcher
from .demangle import demangle, demangle_many, is_mangled, itanium_demangle  # noqa: F401  (re-exported)

ANON = "(anonymous namespace)"


# -- the tree ------------------------------------------------------------------------------------------------------
@dataclass
class Comp:
    """One component of a qualified name: `ns`, `kernel<args>(params)`, `{lambda(float)#1}`, `operator()()`."""
    name: str
    targs: list | None = None        # list[Arg] when the component has <...>
    params: list | None = None       # list[Arg] when it has (...): a function (the kernel itself, or a local scope)
    lambda_n: int | None = None      # N of {lambda(...)#N}

    @property
    def is_lambda(self) -> bool:
        return self.lambda_n is not None or self.name.startswith("{lambda")


@dataclass
class QName:
    comps: list[Comp]

    def names(self) -> list[str]:
        return [c.name for c in self.comps]


@dataclass
class Arg:
    """One template argument or parameter: its text and the nodes in it (QName, list[Arg] for a parenthesized
    group such as the cast in `(at::native::NormType)1`, or str for literals and punctuation)."""
    text: str
    items: list


MAX_NESTING = 100  # template and parameter lists followed this deep; a real kernel name nests under 20


class _Parser:
    """Recursive descent over the printed name. Nesting of <>, () and {} is followed by the grammar itself, so a
    `>` closing `std::array<char*, 3ul> >` or a `)` inside `{lambda(float, bool)#1}` never ends the wrong list."""

    IDENT = re.compile(r"[A-Za-z_$][A-Za-z_0-9$]*")
    NUMBER = re.compile(r"-?[0-9][A-Za-z_0-9.]*")

    def __init__(self, s: str, depth: int = 0):
        self.s = s
        self.i = 0
        self.depth = depth  # lists open around the position: past MAX_NESTING a list is kept as its text

    def peek(self, text: str) -> bool:
        return self.s.startswith(text, self.i)

    def skip_ws(self):
        while self.i < len(self.s) and self.s[self.i] == " ":
            self.i += 1

    # items: a sequence of names, literals and groups up to a stop character at this level
    def items(self, stops: str) -> list:
        out = []
        while True:
            self.skip_ws()
            if self.i >= len(self.s) or self.s[self.i] in stops:
                return out
            start = self.i
            q = self.qname()
            if q is not None:
                out.append(q)
            elif self.s[self.i] == "(":
                out.append(self.arglist("(", ")"))
            else:
                m = self.NUMBER.match(self.s, self.i)
                if m:
                    self.i = m.end()
                    out.append(m.group())
                else:                            # punctuation: * & [ ] ... or a stray closer: keep it as text
                    self.i += 1
                    out.append(self.s[start])
            if self.i == start:                  # no progress would loop forever on malformed input
                self.i += 1

    def arglist(self, open_: str, close: str) -> list[Arg]:
        assert self.s[self.i] == open_
        if self.depth >= MAX_NESTING:
            return self._flat(open_, close)
        self.depth += 1
        try:
            return self._arglist(open_, close)
        finally:
            self.depth -= 1

    def _flat(self, open_: str, close: str) -> list[Arg]:
        """A list nested past MAX_NESTING: one argument of its text, up to its matching closer (a loop, not a
        descent: 50,000 nested template arguments would exhaust Python's stack)."""
        depth, j, s = 0, self.i, self.s
        while j < len(s):
            depth += 1 if s[j] == open_ else -1 if s[j] == close else 0
            j += 1
            if depth == 0:
                break
        text, self.i = s[self.i + 1:j - 1 if depth == 0 else j].strip(), j  # an unclosed list: to the end
        return [Arg(text, [text])] if text else []

    def _arglist(self, open_: str, close: str) -> list[Arg]:
        self.i += 1
        args = []
        while True:
            self.skip_ws()
            if self.i >= len(self.s):
                return args
            if self.s[self.i] == close:
                self.i += 1
                return args
            start = self.i
            items = self.items(",>)}" if close == ">" else ",)}>" if close == ")" else ",}")
            text = self.s[start:self.i].strip()
            if text or items:
                args.append(Arg(text, items))
            if self.i < len(self.s) and self.s[self.i] == ",":
                self.i += 1
            elif self.i < len(self.s) and self.s[self.i] != close:
                # a closer of another kind at this level (unbalanced input, or `>` as an operator): take it as text
                self.i += 1

    def qname(self) -> QName | None:
        comps = []
        while True:
            comp = self.component()
            if comp is None:
                break
            comps.append(comp)
            if self.peek("::"):
                self.i += 2
                continue
            break
        return QName(comps) if comps else None

    def component(self) -> Comp | None:
        s = self.s
        if self.peek(ANON):
            self.i += len(ANON)
            return Comp(ANON)
        if self.peek("{"):
            # {lambda(float, bool)#1}, {unnamed type#1}: up to the matching brace
            depth, j = 0, self.i
            while j < len(s):
                depth += {"{": 1, "}": -1}.get(s[j], 0)
                if depth == 0:
                    break
                j += 1
            body = s[self.i + 1:j]
            comp = Comp("{" + body.split("(")[0].split("#")[0] + "}")
            m = re.search(r"#(\d+)$", body)
            if body.startswith("lambda"):
                comp.name = "{lambda}"
                comp.lambda_n = int(m.group(1)) if m else None
                sub = _Parser(body[len("lambda"):], self.depth)
                if sub.peek("("):
                    comp.params = sub.arglist("(", ")")
            self.i = j + 1
            return comp
        m = self.IDENT.match(s, self.i)
        if not m:
            return None
        name = m.group()
        self.i = m.end()
        if name == "operator":
            # operator() / operator< / operator new: the operator's own symbol is part of the name
            if self.peek("()"):
                name, self.i = "operator()", self.i + 2
            else:
                om = re.compile(r"\s*(new\[\]|delete\[\]|new|delete|[^\sA-Za-z_0-9(]+)").match(s, self.i)
                if om:
                    name, self.i = "operator" + om.group(1).strip(), om.end()
        comp = Comp(name)
        if name in ("const", "volatile", "unsigned", "signed", "struct", "class", "enum"):
            return comp
        if self.peek("<"):
            # template arguments, also of a member template operator: `operator()<float>(...)`
            comp.targs = self.arglist("<", ">")
        if self.peek("("):
            comp.params = self.arglist("(", ")")
            # cv-qualifier of a member function: `operator()() const::{lambda...}`
            cm = re.compile(r"( const| volatile| &&| &)+").match(s, self.i)
            if cm:
                self.i = cm.end()
        return comp


# -- what a kernel name tells ----------------------------------------------------------------------------------------
# Names whose template arguments carry the op, and plumbing types: never an op body themselves. The launchers
# (gpu_kernel, launch_vectorized_kernel, their variants) are pytorch/launchers.py's: is_infra asks both.
INFRA = {
    "AUnaryFunctor", "BUnaryFunctor", "BinaryFunctor",
    "func_wrapper_t", "ReduceOp", "TensorListMetadata", "TensorListScalarListMetadata",
    "FusedOptimizerTensorListMetadata", "array", "TrivialOffsetCalculator", "OffsetCalculator", "LoadWithCast",
    "StoreWithCast", "LoadWithoutCast", "StoreWithoutCast", "TensorInfo", "PhiloxCudaState", "TensorIteratorBase",
    "TensorIterator", "Tensor", "Scalar", "OpaqueType", "CatArrInputTensorMetadata", "TensorSizeStride",
    "TensorListAddresses", "ClampLimits", "GeluType", "NormType", "complex", "Half", "BFloat16", "IntDivider",
    "reduced_divisor", "Params", "Sm80", "Sm75", "Sm70", "Sm90", "tuple", "pair", "integral_constant",
    "ArrayRef", "IntArrayRef", "OptionalArrayRef", "IndexBoundsCheck", "RestrictPtrTraits", "DefaultPtrTraits",
    "GenericPackedTensorAccessor", "PackedTensorAccessor", "PackedTensorAccessor32", "PackedTensorAccessor64",
    "TensorAccessor", "GenericTensorAccessor", "Array", "OpMathType", "opmath_type", "acc_type", "Float8_e4m3fn",
    "Float8_e5m2", "ScalarType", "Layout", "Device", "Generator", "CUDAGeneratorImpl", "TensorListScalarListMetadata",
}


def is_infra(name: str) -> bool:
    """A launcher or a plumbing type (INFRA): its template arguments may carry the op, it is never the op's body."""
    return name in INFRA or is_launcher(name)
# std:: function objects that foreach/multi_tensor_apply kernels take as their op.
STD_OPS = {"plus", "minus", "multiplies", "divides", "modulus", "negate", "equal_to", "not_equal_to", "greater",
           "less", "greater_equal", "less_equal", "logical_and", "logical_or", "logical_not", "bit_and", "bit_or",
           "bit_xor", "bit_not"}
_FUNCTOR_NAME = re.compile(r"(Functor|functor|Ops|Op)(_\w+)?$|^CUDAFunctor")
_OP_NAMESPACES = {"at", "c10", "native"}

# Library kernels by naming convention: (library, pattern on the printed global name). First match wins; the
# suffix of an xmma name (_cublas / _cudnn) says which library ships it.
LIBRARY_PATTERNS = [
    ("triton", re.compile(r"^triton_")),          # Inductor-generated at run time: never a source kernel
    ("cublas", re.compile(r"^sm\d+_xmma_.*_cublas$")),
    ("cudnn", re.compile(r"^sm\d+_xmma_.*_cudnn$")),
    ("cudnn", re.compile(r"^sm\d+_xmma_(fprop|dgrad|wgrad)")),
    ("cublas", re.compile(r"^sm\d+_xmma_gemm")),
    ("cublas", re.compile(r"^nvjet_")),
    ("cublas", re.compile(r"^(ampere|volta|turing|maxwell|hopper|sm\d+)_[a-z0-9_]*gemm")),
    ("cudnn", re.compile(r"^(ampere|volta|turing|maxwell|hopper)_[a-z0-9_]*(fprop|dgrad|wgrad|conv)")),
    ("cublas", re.compile(r"^(gemmSN_|gemmk1_|gemv2?[NT]_|gemvx|dot_kernel|scal_kernel|axpy_kernel|splitKreduce)")),
    ("cudnn", re.compile(r"^(RNN_|LSTM_|GRU_|GENERIC_elementWise|elemWiseRNNcell|implicit_convolve|"
                         r"explicit_convolve|fft2d_|fft1d_|winograd|cudnn)")),
    ("nccl", re.compile(r"^nccl")),
    ("cufft", re.compile(r"^(regular_fft|vector_fft|fft_|cufft)")),
]
LIBRARY_NAMESPACES = {"cublasLt": "cublas", "cublas": "cublas", "cudnn": "cudnn", "cub": "cub", "thrust": "thrust",
                      "nccl": "nccl", "cufft": "cufft", "cusparse": "cusparse", "cusolver": "cusolver",
                      "cutlass": "cutlass", "cusparseLt": "cusparse"}


@dataclass
class KernelName:
    raw: str
    demangled: str                    # the printed (or demangled) name; equals raw unless raw was mangled
    mangled: bool = False
    demangle_error: str | None = None  # set when a mangled name could not be demangled
    kind: str = "global"              # global (a __global__ to find), library, generated (triton), runtime
    library: str | None = None        # cublas, cudnn, cub, thrust, nccl, cufft, triton (for kind library/generated)
    name: str = ""                    # the __global__'s unqualified name
    namespace: str = ""               # its namespace as printed, `(anonymous namespace)` kept: at::native::(anonymous namespace)
    return_type: str = ""
    template_args: list[str] = field(default_factory=list)
    params: list[str] = field(default_factory=list)
    functors: list[str] = field(default_factory=list)    # qualified functor classes, outermost first
    lambdas: list[str] = field(default_factory=list)     # qualified functions enclosing a lambda, outermost first

    @property
    def qualified_name(self) -> str:
        return f"{self.namespace}::{self.name}" if self.namespace else self.name

    @property
    def namespace_parts(self) -> list[str]:
        """The namespace without anonymous namespaces (the index's qualified names leave those out)."""
        return [p for p in self.namespace.split("::") if p and p != ANON]

    @property
    def hints(self) -> list[str]:
        return self.lambdas + self.functors

    def to_dict(self) -> dict:
        return {"name": self.name, "namespace": self.namespace, "kind": self.kind, "library": self.library,
                "return_type": self.return_type, "template_args": self.template_args, "params": self.params,
                "functors": self.functors, "lambdas": self.lambdas, "mangled": self.mangled,
                "demangled": self.demangled if self.mangled else None, "demangle_error": self.demangle_error}


def parse_kernel_name(raw: str, demangled: str | None = None) -> KernelName:
    """Parse one name as a profiler prints it (or mangled). `demangled` may be passed when the caller demangled a
    batch already (see demangle_many)."""
    raw = raw.strip()
    kn = KernelName(raw, raw)
    if raw.startswith("Memcpy") or raw.startswith("Memset"):
        kn.kind, kn.name = "runtime", raw
        return kn
    text = raw
    if is_mangled(raw):
        kn.mangled = True
        text = demangled if demangled is not None else demangle(raw)
        if text is None:
            kn.demangle_error = "could not be demangled (no c++filt, and beyond the built-in demangler's subset)"
            kn.name = raw
            kn.kind = "global"
            _classify_library(kn)
            return kn
        kn.demangled = text
    p = _Parser(text)
    top = p.items("")
    # the kernel is the last qualified name at the top level; anything before it is the return type
    q_index = max((i for i, it in enumerate(top) if isinstance(it, QName)), default=None)
    if q_index is None:
        kn.name = text
        _classify_library(kn)
        return kn
    q = top[q_index]
    kn.return_type = " ".join(_text(it) for it in top[:q_index]).strip()
    last = q.comps[-1]
    kn.name = last.name
    kn.namespace = "::".join(c.name for c in q.comps[:-1])
    kn.template_args = [a.text for a in last.targs or []]
    kn.params = [a.text for a in last.params or []]
    # a kernel given as a parenthesized group after the name (fmha_x(Params)) parses as params of the component
    _collect_hints(last, kn)
    _classify_library(kn)
    return kn


def _text(it) -> str:
    if isinstance(it, QName):
        return "::".join(c.name for c in it.comps)
    if isinstance(it, list):
        return "(" + ", ".join(a.text for a in it) + ")"
    return str(it)


def _qual(comps: list[Comp]) -> str:
    return "::".join(c.name for c in comps)


def _collect_hints(kernel: Comp, kn: KernelName) -> None:
    """Walk the kernel's template arguments (then parameters, which repeat them) for functors and lambdas."""
    seen_f, seen_l = set(), set()

    def visit_args(args):
        for a in args or ():
            for it in a.items:
                visit(it)

    def visit(it):
        if isinstance(it, list):
            visit_args(it)
            return
        if not isinstance(it, QName):
            return
        comps = it.comps
        lam = next((k for k, c in enumerate(comps) if c.is_lambda), None)
        if lam is not None:
            # the named function that encloses the outermost lambda: skip lambdas' own operator()() on the way
            j = lam - 1
            while j >= 0 and (comps[j].is_lambda or (comps[j].name == "operator()" and j > 0 and
                                                     comps[j - 1].is_lambda)):
                j -= 1
            if j >= 0:
                enc = comps[j]
                if enc.name == "operator()" and j > 0:
                    # a lambda inside a functor's operator(): the functor is the op body (sum_functor)
                    cls = comps[:j]
                    _add(kn.functors, seen_f, _qual(cls))
                elif not is_infra(enc.name):
                    _add(kn.lambdas, seen_l, _qual(comps[:j + 1]))
        else:
            cls = comps[-1]
            ns = [c.name for c in comps[:-1]]
            if not is_infra(cls.name) and not cls.is_lambda and (
                    (ns == ["std"] and cls.name in STD_OPS) or
                    (ns and ns[0] in _OP_NAMESPACES and (cls.targs is not None or _FUNCTOR_NAME.search(cls.name)))
                    or _FUNCTOR_NAME.search(cls.name) and ns and ns[0] != "std"):
                if cls.params is None:       # a type, not a function
                    _add(kn.functors, seen_f, _qual(comps))
        for c in comps:
            visit_args(c.targs)
            visit_args(c.params)

    visit_args(kernel.targs)
    visit_args(kernel.params)


def _add(lst, seen, name):
    if name and name not in seen:
        seen.add(name)
        lst.append(name)


def _classify_library(kn: KernelName) -> None:
    parts = kn.namespace_parts
    head = parts[0] if parts else ""
    # cub and thrust are often wrapped: at_cuda_detail::cub:: (PyTorch's CUB_NS_PREFIX), thrust::THRUST_300001_NS
    wrapped = next((p for p in parts[1:3] if p in ("cub", "thrust")), None)
    if head not in LIBRARY_NAMESPACES and wrapped:
        head = wrapped
    if head.startswith("cutlass_") or head.startswith("cutlass__"):
        # a vendor's private CUTLASS build: cutlass__5x_cudnn::Kernel<...>, cutlass__5x_cublas::Kernel<...>
        lib = next((l for l in ("cudnn", "cublas") if l in head), None)
        if lib:
            kn.kind, kn.library = "library", lib
            return
    if head in LIBRARY_NAMESPACES:
        lib = LIBRARY_NAMESPACES[head]
        if lib == "cutlass":
            # cutlass::Kernel2<cutlass_80_simt_sgemm_...>: a CUTLASS kernel compiled into cuBLAS (gemm) or cuDNN
            # (fprop/dgrad/wgrad); PyTorch's own CUTLASS users (memory-efficient attention) have __global__ names
            inner = " ".join(kn.template_args)
            if re.search(r"\bcutlass_\d+_\w*(fprop|dgrad|wgrad|conv)", inner):
                lib = "cudnn"
            elif re.search(r"\bcutlass_\d+_\w*gemm", inner):
                lib = "cublas"
            else:
                return
        kn.kind, kn.library = "library", lib
        return
    for lib, pat in LIBRARY_PATTERNS:
        if pat.search(kn.name):
            kn.kind, kn.library = ("generated", lib) if lib == "triton" else ("library", lib)
            return

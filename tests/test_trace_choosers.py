"""Choosers (trace/walk/sites.py chooser, method_chooser): a call whose result picks the path below its body is shown
where the choice is made, though it runs no device code itself."""
from __future__ import annotations

from opindex.api import Index, build

BLAS = "aten/src/ATen/native/cuda/Blas.cpp"


def test_a_method_of_a_class_of_the_calling_file_in_an_if_test_is_a_chooser(sample_copy, tmp_path):
    """`if (params.use_fast(self))` in mm_out_cuda_impl, with `struct MmParams { bool use_fast(...) const; }` and
    its definition in the same file (1.4's ConvParams::use_cudnn in _convolution): MmParams::use_fast is a chooser
    hop at its definition, called at the test; a method of no class of the file (`self.is_contiguous()`) is not."""
    blas = sample_copy / BLAS
    text = blas.read_text().replace("namespace {\n", "namespace {\nstruct MmParams {\n"
                                    "  bool use_fast(const Tensor& t) const;\n};\n"
                                    "bool MmParams::use_fast(const Tensor& t) const { return t.dim() == 2; }\n", 1)
    text = text.replace("  AT_DISPATCH_FLOATING_TYPES(self.scalar_type(), \"mm_cuda\"",
                        "  MmParams params;\n  if (params.use_fast(self) && self.is_contiguous()) {}\n"
                        "  AT_DISPATCH_FLOATING_TYPES(self.scalar_type(), \"mm_cuda\"", 1)
    blas.write_text(text)
    lines = text.splitlines()
    definition = next(i for i, t in enumerate(lines, 1) if t.startswith("bool MmParams::use_fast"))
    test = next(i for i, t in enumerate(lines, 1) if "if (params.use_fast(self)" in t)
    build(str(sample_copy), tmp_path / "c.sqlite", jobs=1)
    with Index(tmp_path / "c.sqlite") as ix:
        t = ix.trace("torch.mm", device="cuda")
        body = next(h for h in t.hops if h.name == "at::native::mm_out_cuda_impl")
        choosers = [(h.name, h.file, h.line, h.called_at, h.parent) for h in t.hops if h.kind == "chooser"]
        assert choosers == [("at::native::MmParams::use_fast", BLAS, definition, f"{BLAS}:{test}", body.id)]
        assert t.main_chain()[-1].layer == "library"

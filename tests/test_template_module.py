"""A Python module under a templates/ folder that is a package is indexed as Python (issue 29, item 8): PyTorch's
torch/distributed/nn/jit/templates/remote_module_template.py is a real module whose strings hold a template;
codegen's template folders (tools/autograd/templates, aten/src/ATen/templates) are no packages and stay templates."""
from __future__ import annotations

from opindex.api import Index, build

MODULE = "torch/distributed/nn/jit/templates/remote_module_template.py"


def test_a_module_in_a_templates_package_is_python(sample_copy, tmp_path):
    package = sample_copy / "torch" / "distributed" / "nn" / "jit" / "templates"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "remote_module_template.py").write_text(
        "def get_remote_module_template(flag: bool):\n    return _PREFIX\n\n\n_PREFIX = \"\"\"def f(self, {args}):\n"
        "    return {x}\n\"\"\"\n")
    codegen = sample_copy / "tools" / "autograd" / "templates" / "annotated_fn_args.py"
    codegen.write_text("annotated_args = {\n${annotated_args}\n}\n")
    db = tmp_path / "i.sqlite"
    build(str(sample_copy), db, jobs=1)
    with Index(db) as ix:
        files = {r["path"]: (r["language"], r["layer"]) for r in ix.rows(
            "SELECT path, language, layer FROM files WHERE path LIKE '%templates/%.py'")}
        assert files == {f"{MODULE}": ("python", "python"),
                         "torch/distributed/nn/jit/templates/__init__.py": ("python", "python"),
                         "tools/autograd/templates/annotated_fn_args.py": ("template", "codegen")}
        assert [(s.qualified_name, s.location.line) for s in ix.find("get_remote_module_template")] == [
            ("torch.distributed.nn.jit.templates.remote_module_template.get_remote_module_template", 1)]


def test_the_2_4_template_module_is_indexed(real_index):
    # remote_module_template.py:5 `def get_remote_module_template(enable_moving_cpu_tensors_to_cuda: bool):`
    assert [(s.location.file, s.location.line, s.kind) for s in real_index.find("get_remote_module_template")] == [
        (MODULE, 5, "function")]
    assert real_index.rows("SELECT language, layer FROM files WHERE path = :p", {"p": MODULE}) == [
        {"language": "python", "layer": "python"}]

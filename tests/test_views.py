"""The views: `kernel` is a bare name in every view (however the source qualified it), `definition` the qualified
name; the documented columns are the views' columns."""
from __future__ import annotations

import re


def test_a_launched_kernel_is_found_by_its_bare_name(ix):
    # cunn_SoftMaxForward is defined in at::native: the bare name finds its launch, the qualified one is beside it
    assert ix.rows("SELECT kernel, definition, caller, file, line FROM kernel_launch_sites "
                   "WHERE kernel = 'cunn_SoftMaxForward'") == [
        {"kernel": "cunn_SoftMaxForward", "definition": "at::native::cunn_SoftMaxForward",
         "caller": "at::native::host_softmax", "file": "aten/src/ATen/native/cuda/SoftMax.cu", "line": 38}]
    assert ix.rows("SELECT count(*) AS n FROM kernel_launch_sites WHERE kernel LIKE '%::%'") == [{"n": 0}]


def test_a_qualified_or_templated_registration_has_a_bare_kernel(sample_copy, tmp_path):
    from opindex.api import Index, build
    src = sample_copy / "aten/src/ATen/native/cpu/ActivationKernel.cpp"
    text = src.read_text()
    # as PyTorch writes them: REGISTER_DISPATCH(abs_stub, &CPU_CAPABILITY::abs_kernel), qadd_kernel<false>
    text = text.replace("REGISTER_DISPATCH(threshold_stub, &threshold_kernel);",
                        "REGISTER_DISPATCH(threshold_stub, &at::native::threshold_kernel);\n"
                        "REGISTER_DISPATCH(qthreshold_stub, &qthreshold_kernel<false>);\n"
                        "REGISTER_DISPATCH(qthreshold_relu_stub, &ns::qthreshold_kernel<true>);")
    src.write_text(text)
    db = tmp_path / "i.sqlite"
    build(str(sample_copy), db, jobs=1)
    with Index(db) as ix:
        rows = ix.rows("SELECT stub, kernel, template_args FROM stub_kernels WHERE "
                       "registered_in LIKE '%ActivationKernel.cpp' ORDER BY registered_line")
        written = ix.rows("SELECT kernel FROM dispatch_registrations WHERE file LIKE '%ActivationKernel.cpp' "
                          "ORDER BY line")
    assert [r for r in rows if r["stub"].startswith(("threshold", "qthreshold"))] == [
        {"stub": "threshold_stub", "kernel": "threshold_kernel", "template_args": ""},
        {"stub": "qthreshold_stub", "kernel": "qthreshold_kernel", "template_args": "<false>"},
        {"stub": "qthreshold_relu_stub", "kernel": "qthreshold_kernel", "template_args": "<true>"}]
    # the table keeps the name as written
    assert [r["kernel"] for r in written] == ["at::native::threshold_kernel", "qthreshold_kernel<false>",
                                              "ns::qthreshold_kernel<true>"]


def test_every_view_documents_its_columns_in_order(ix):
    from opindex.schema import VIEWS
    from opindex.schema.views import VIEW_DOCS
    for name in VIEWS:
        columns = [r["name"] for r in ix.rows(f"SELECT name FROM pragma_table_info('{name}')")]
        listed = VIEW_DOCS[name].split("Columns: ", 1)[1]
        listed = re.sub(r"\([^()]*(\([^()]*\)[^()]*)*\)", "", listed)  # drop the parenthesised notes
        assert [c.strip(" .") for c in listed.split(",")] == columns, name

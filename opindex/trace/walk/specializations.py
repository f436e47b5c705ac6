"""Which of a template's definitions a call runs for the input's dtype: the explicit specialization written for it,
else the primary template (C++ picks a specialization only for the arguments it names).

A call such as `prod_functor<scalar_t>{}(iter)` inside an AT_DISPATCH, or `gemm<scalar_t>(...)`, may reach the
primary template's definition and explicit specializations (`template <> struct prod_functor<bool>`, `template <>
void gemm<float>(...)`). scalar_t is the input's dtype there, so of those definitions the one written for that dtype
runs, and when none is, the primary one: ReduceSumProdKernel.cu's prod_functor<bool>::operator() (:110) and the
complex<Half> ones (:124, :131) are not float32's path; the primary's operator() (:88, or its `#else` twin :98, as
the build decides) is. A definition's dtype is the one scalar type its own template arguments name (symbols.
template_args), else its parameters (`CUDABLAS_GEMM_ARGTYPES(float)`), else its class's template arguments (a member
of an explicit class specialization).
"""
from __future__ import annotations

from .. import facts as q
from ..conditions import specialization_dtype
from ..model import Condition

PRIMARY = "primary"  # a definition of the template itself, for any dtype no specialization is written for


def written_for(con, d: dict) -> str | None:
    """The dtype a definition is an explicit specialization for (float32, bool, complex32 ...), PRIMARY for the
    template's own definition (a template, or a member of a class template, written for no arguments), else None
    (not a template, or arguments naming no single dtype)."""
    if d.get("template_args"):
        return specialization_dtype(d["template_args"])
    mine = specialization_dtype(d.get("signature"))
    if mine is not None:
        return mine  # `gemm_internal_cublas<float>(CUDABLAS_GEMM_ARGTYPES(float))` written by a macro
    owner = q.enclosing_class(con, d)
    if owner is not None and owner["template_args"]:
        return specialization_dtype(owner["template_args"])
    if d.get("is_template") or (owner is not None and owner["is_template"]):
        return PRIMARY
    return None


def not_taken(con, target: dict, links: list[dict], dtype: str) -> Condition | None:
    """The condition under which `target`, one of the definitions a call may reach (`links`), runs, when the
    input's dtype rules it out: it is written for another dtype while a sibling is written for this one or is the
    primary template, or it is the primary template while a sibling is written for this one. None otherwise (also
    when `target` has a sibling of no known kind: the rule does not guess)."""
    links = [ln for ln in links if ln.get("qualified_name") == target.get("qualified_name")]  # one template's
    if "id" not in target or len(links) < 2:
        return None
    kinds = {ln["id"]: written_for(con, ln) for ln in links if "id" in ln and ln.get("kind")}
    mine = kinds.get(target["id"])
    if mine is None or mine == dtype:
        return None
    found = set(kinds.values())
    if mine == PRIMARY and dtype in found:
        return Condition("if", f"scalar_t is not {dtype}", target["file"], target["line"], assumed=False)
    if mine != PRIMARY and (dtype in found or PRIMARY in found):
        return Condition("if", f"scalar_t is {mine}", target["file"], target["line"], assumed=False)
    return None

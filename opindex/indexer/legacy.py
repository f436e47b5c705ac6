"""Legacy kernels generated at build time (PyTorch 1.4 and earlier): `legacy::cuda::_th_sort` and
`legacy::cuda::_thnn_nll_loss_forward` are written into LegacyTHFunctionsCUDA.cpp by the build, from
aten/src/ATen/Declarations.cwrap (`name: _th_sort`, `cname: sort`) and aten/src/ATen/nn.yaml (`- name:
_thnn_nll_loss(...)`, `cname: ClassNLLCriterion`), so the source holds no definition of them. What they call does
exist: the generic TH/THC/THNN function of that cname (THCTensor_(sort) in THC/generic/, whose definition the index
names THCTensor_sort). This module reads the two declaration files and links such dispatch rows to it."""
from __future__ import annotations

import re

import yaml

from ..paths import safe_path
from .definitions import S_FILE, Symbols, definition_columns

CWRAP = "aten/src/ATen/Declarations.cwrap"
NN_YAML = "aten/src/ATen/nn.yaml"
_BLOCK = re.compile(r"^\[\[\n(.*?)^\]\]", re.M | re.S)
_NN_NAME = re.compile(r"^- name: (\w+)\(", re.M)
_NN_CNAME = re.compile(r"^\s+cname: (\w+)", re.M)
# the generated function's name -> the declaration and the part of the cname it calls (nn.yaml's _forward runs
# X_updateOutput; _backward X_updateGradInput and, for weights, X_accGradParameters)
_THNN = re.compile(r"^(_thnn_\w+?)_(forward|backward)(?:_out)?$")
_THNN_PARTS = {"forward": ("_updateOutput",), "backward": ("_updateGradInput", "_accGradParameters")}
# per backend: (generic-name prefix of _th_ functions, folder of TH functions, folder of THNN functions)
_BACKENDS = {"cuda": ("THCTensor_", "aten/src/THC/", "aten/src/THCUNN/"),
             "cpu": ("THTensor_", "aten/src/TH/", "aten/src/THNN/")}


def _read(root: str, rel: str) -> str:
    """One of the two declaration files (not source code the index holds facts of: the one text the link step
    still reads, and only in a tree that has them, PyTorch 1.4 and earlier)."""
    path = safe_path(root, rel)
    try:
        if path is None:
            return ""
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def declarations(root: str) -> dict[str, tuple[str, int, list[str]]]:
    """declaration name -> (file, line of its name, cnames), from Declarations.cwrap and nn.yaml (empty when
    the checkout has neither: PyTorch 1.8 and later keep the generated file in the source, or none)."""
    out: dict[str, tuple[str, int, list[str]]] = {}
    text = _read(root, CWRAP)
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    for m in _BLOCK.finditer(text):
        try:
            d = yaml.load(m.group(1), Loader=loader)
        except yaml.YAMLError:
            continue  # a block the file's own generator reads differently: no link, never a wrong one
        if not isinstance(d, dict) or not isinstance(d.get("name"), str):
            continue
        cnames = [d["cname"]] if isinstance(d.get("cname"), str) else []
        cnames += [o["cname"] for o in d.get("options") or () if isinstance(o, dict) and isinstance(o.get("cname"), str)]
        at = text.find("name:", m.start(1))
        out[d["name"]] = (CWRAP, text.count("\n", 0, at) + 1, list(dict.fromkeys(cnames)))
    text = _read(root, NN_YAML)
    names = list(_NN_NAME.finditer(text))
    for i, m in enumerate(names):
        end = names[i + 1].start() if i + 1 < len(names) else len(text)
        c = _NN_CNAME.search(text, m.end(), end)
        if c:
            out[m.group(1)] = (NN_YAML, text.count("\n", 0, m.start()) + 1, [c.group(1)])
    return out


def legacy_links(con, symbols: Symbols, root: str | None) -> list[tuple]:
    """legacy_kernel_links rows: (dispatch_id, kernel, declaration, decl_file, decl_line, cname, definition
    columns...) for the dispatch rows naming a legacy::<backend>:: function the source does not define, and (with
    dispatch_id None) for such functions C++ code calls."""
    decls = declarations(root) if root else {}
    if not decls:  # PyTorch 1.5 and later: nothing is generated this way (and no scan of the calls table)
        return []
    unlinked = con.execute("SELECT dispatch_id, kernel FROM op_kernel_links WHERE symbol_id IS NULL AND kernel LIKE "
                           "'legacy::%' ORDER BY dispatch_id").fetchall()
    # and those C++ code calls by name (bmm_cuda: `return legacy::cuda::_th_bmm(self, mat2);`) that nothing defines
    called = {f"{q}::{c}" for q, c in con.execute(
        "SELECT DISTINCT qualifier, callee FROM calls WHERE qualifier IN ('legacy::cuda', 'legacy::cpu')")
        if c not in symbols.by_name}
    unlinked += [(None, k) for k in sorted(called - {k for _, k in unlinked})]
    if not unlinked:
        return []
    rows = []
    for dispatch_id, kernel in unlinked:
        parts = kernel.split("::")
        if len(parts) != 3 or parts[1] not in _BACKENDS:
            continue
        prefix, th_folder, nn_folder = _BACKENDS[parts[1]]
        name = parts[2]
        thnn = _THNN.match(name)
        # _th_addmm_ and _th_addmm_out are generated from the declaration _th_addmm
        tried = (thnn.group(1),) if thnn else (name, name.removesuffix("_out"), name.rstrip("_"),
                                               name.removesuffix("_out").rstrip("_"))
        declaration = next((n for n in tried if n in decls), None)
        if declaration is None:
            continue
        found = decls[declaration]
        wanted = [(f"THNN_{c}{part}", nn_folder) for c in found[2] for part in _THNN_PARTS[thnn.group(2)]] \
            if thnn else [(f"{prefix}{c}", th_folder) for c in found[2]]
        for generic, folder in wanted:
            for s in symbols.by_name.get(generic, ()):
                if s[S_FILE].startswith(folder):
                    rows.append((dispatch_id, kernel, declaration, found[0], found[1],
                                 generic.removeprefix(prefix).removeprefix("THNN_"), *definition_columns(s)))
    return rows

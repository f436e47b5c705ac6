"""Dispatch stubs as C++ code calls them: what makes a call a stub call.

The extractor records every bare call whose first argument names a device (`stub(kCUDA, ...)`,
`argmax_stub(iter.device_type(), iter)`) in stub_calls; whether the callee is a stub is known only with the whole
tree (its DECLARE_DISPATCH may sit in any header), so the link step and the trace decide it here.
"""
from __future__ import annotations

import re

# a parameter's name in a C++ signature's text: `const Tensor& self,` -> self
PARAMETER = re.compile(r"([A-Za-z_]\w*)\s*(?:\[[^\]]*\]\s*)?(?:=[^,]*)?(?:,|\)\s*$)")


def is_stub_call(stub: str, declared: set[str], signature: str | None) -> bool:
    """A stub_calls row is a call of a dispatch stub when the stub is declared (DECLARE_DISPATCH) or is a parameter
    of the calling function (argmax_argmin_impl(..., Stub& stub) calls `stub(iter.device_type(), iter)`); a call
    whose first argument merely names a device (`Device(kCUDA, current_device())`, `to_ucc_memType(...)`) is not."""
    return stub in declared or stub in PARAMETER.findall(signature or "")

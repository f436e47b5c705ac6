"""The GPU a trace is for: its compute capability, from the build setting TORCH_CUDA_ARCH_LIST (one architecture,
`9.0`, `90` or `sm_90`; PyTorch's own name for the architectures a build targets), read where host code tests the
device it runs on:

- a device-properties object's `major` and `minor` (`auto dprops = at::cuda::getCurrentDeviceProperties();` then
  `dprops->major == 8 && dprops->minor > 0`, flash_fwd_launch_template.h:214);
- a local made of them, `const int computeCapability = p->major * 10 + p->minor;` (attention.cu:1131), which a call
  then passes on (`dispatch_cutlassF<scalar_t>(launchKernel, computeCapability)`: cutlassF.h's `80 <= cc && cc <
  100`).

A list of several architectures names no one device: those tests stay open.
"""
from __future__ import annotations

import re

SETTING = "TORCH_CUDA_ARCH_LIST"
UPSTREAM = "9.0"  # the GPU the runtime truth was taken on (H200, sm_90): an upstream build runs its sm_90 code
_ONE = re.compile(r"^\s*(?:sm_|compute_)?(\d{1,2})\.?(\d)\s*(?:a|\+PTX)?\s*$", re.I)
# a device-properties object: `cudaDeviceProp* p = at::cuda::getDeviceProperties(...)`, `auto dprops =
# at::cuda::getCurrentDeviceProperties();`, `const cudaDeviceProp& prop = ...`
_PROPS = re.compile(r"(?:\bcudaDeviceProp\s*[*&]?\s*|\bauto\s*[*&]?\s*)(?:const\s+)?([A-Za-z_]\w*)\s*=\s*"
                    r"(?:at::cuda::|c10::cuda::)?get(?:Current)?DeviceProperties\s*\(")
_CC_LOCAL = r"\b(?:const\s+)?(?:int|auto|int64_t|int32_t)\s+([A-Za-z_]\w*)\s*=\s*{p}\s*->\s*major\s*\*\s*10\s*\+\s*" \
            r"{p}\s*->\s*minor\s*;"


def capability(text: str | None) -> tuple[int, int] | None:
    """(major, minor) of a setting naming one architecture (`9.0`, `90`, `sm_90`); None for a list or none."""
    if not text:
        return None
    m = _ONE.match(str(text))
    return (int(m.group(1)), int(m.group(2))) if m else None


def props_names(body: str) -> tuple[str, ...]:
    """The locals of a body that hold the device's properties."""
    return tuple(dict.fromkeys(_PROPS.findall(body))) if "DeviceProperties" in body else ()


def capability_locals(body: str, names: tuple[str, ...], cc: tuple[int, int]) -> dict[str, int]:
    """{local: major * 10 + minor} for the locals a body makes of a properties object's major and minor."""
    out = {}
    for p in names:
        for local in re.findall(_CC_LOCAL.format(p=re.escape(p)), body):
            out[local] = cc[0] * 10 + cc[1]
    return out


def substitute(condition: str, names: tuple[str, ...], cc: tuple[int, int]) -> str:
    """`dprops->major == 8 && dprops->minor > 0` with the numbers: `9 == 8 && 0 > 0`."""
    for p in names:
        condition = re.sub(rf"\b{re.escape(p)}\s*(?:->|\.)\s*major\b", str(cc[0]), condition)
        condition = re.sub(rf"\b{re.escape(p)}\s*(?:->|\.)\s*minor\b", str(cc[1]), condition)
    return condition

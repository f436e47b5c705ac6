"""From a GPU profile to the source: parse kernel names as profilers print them (kernel_name), read torch.profiler
Chrome traces and plain kernel lists (chrome), and attribute each kernel to the indexed checkout (attribute)."""
from __future__ import annotations

from .chrome import KernelGroup, Profile, read_profile
from .kernel_name import KernelName, parse_kernel_name
from .report import ProfileRows, annotate

__all__ = ["KernelGroup", "KernelName", "Profile", "ProfileRows", "annotate", "parse_kernel_name", "read_profile"]

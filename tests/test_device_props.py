"""The GPU a trace is for (pytorch/device_props.py): TORCH_CUDA_ARCH_LIST naming one architecture, read where host
code tests the device's properties (2.4's attention.cu:1130-1131, flash_fwd_launch_template.h:214)."""
from __future__ import annotations

from opindex.pytorch import device_props

BODY = """  cudaDeviceProp* p = at::cuda::getDeviceProperties(query.device().index());
  const int computeCapability = p->major * 10 + p->minor;
  auto dprops = at::cuda::getCurrentDeviceProperties();
  if (dprops->major == 8 && dprops->minor > 0) {"""


def test_one_architecture_is_a_capability_and_a_list_is_none():
    assert [device_props.capability(t) for t in ("9.0", "90", "sm_90", "8.6", "9.0a", "8.0+PTX")] == [
        (9, 0), (9, 0), (9, 0), (8, 6), (9, 0), (8, 0)]
    assert [device_props.capability(t) for t in ("8.0;9.0", "8.0 9.0", "", None, "all")] == [None] * 5


def test_the_properties_tests_read_the_capability():
    names = device_props.props_names(BODY)
    assert names == ("p", "dprops")
    assert device_props.capability_locals(BODY, names, (9, 0)) == {"computeCapability": 90}
    assert device_props.substitute("dprops->major == 8 && dprops->minor > 0", names, (9, 0)) == "9 == 8 && 0 > 0"
    assert device_props.substitute("other->major == 8", names, (9, 0)) == "other->major == 8"  # not a device's
    assert device_props.props_names("int major = v.major;") == ()

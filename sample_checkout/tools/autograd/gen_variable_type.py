"""opindex sample: the generator that fills templates/VariableType.cpp from derivatives.yaml."""


def gen_variable_type(out: str, native_yaml_path: str, derivatives_yaml_path: str, template_path: str) -> None:
    """Write VariableType_*.cpp: one autograd kernel per differentiable op."""
    infos = load_derivatives(derivatives_yaml_path, native_yaml_path)
    write_template(template_path, out, {"type_derived_method_definitions": [emit_body(i) for i in infos]})


def load_derivatives(derivatives_yaml_path: str, native_yaml_path: str) -> list:
    return []


def emit_body(info) -> str:
    return ""


def write_template(template_path: str, out: str, env: dict) -> None:
    pass

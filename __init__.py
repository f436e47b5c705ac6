"""Not part of the package: Python started in the folder that holds this clone (when the clone's folder is named
opindex, as `git clone` names it) finds this folder before the installed package, and without this file imported it
as an empty namespace package (`module 'opindex' has no attribute 'open'`). This file makes that import the package
inside the clone, opindex/, the same code an editable install runs. (A src/ layout would avoid it too, by moving every
file of the package.)"""
import os as _os

__path__ = [_os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "opindex")]
with open(_os.path.join(__path__[0], "__init__.py"), encoding="utf-8") as _init:
    exec(compile(_init.read(), _init.name, "exec"))  # noqa: S102 - the package's own __init__, in this module
del _init

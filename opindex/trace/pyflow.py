"""The values a Python def passes on, for the arguments a call gives it: its statements read in order with
three-valued tests, as a compiler folds constants (never executed).

What is followed: assignments of a name (`mode_enum = 2`), `if`/`elif`/`else` (a test the values decide takes one
side; an undecided one both, and a name the sides set differently is then unknown), `return` and `raise` (the
path ends), and calls of a Python helper with known arguments (`_Reduction.get_enum(reduction)`: the helper is read
the same way and its returned value taken; `resolve` finds it). Every call a followed statement makes is kept
with its arguments' values, by line: what a bridge at that line passes into C++. Anything else (loops, `with`,
`try`, attribute writes) makes the names it assigns unknown.
"""
from __future__ import annotations

import ast
import operator

from ..pytorch.call_expr import Tensor, Unknown

UNKNOWN = Unknown("?")  # a value the inputs do not say
MAX_DEPTH = 3  # helper calls followed inside each other (a helper's helper ...); deeper ones are unknown


class Named(int):
    """An int a Python helper made from a string (`get_enum('none')` -> 0), which keeps the string: a C++ enum
    constant compares with it by name (Reduction::None) when its own value is not known."""

    def __new__(cls, number: int, name: str):
        obj = super().__new__(cls, number)
        obj.name = name
        return obj

    def __repr__(self) -> str:
        return f"{int(self)} ({self.name!r})"


def value(node, env: dict, resolve=None, depth: int = 0):
    """The value of an expression under `env` (name -> value), or UNKNOWN. `resolve(dotted)` returns a helper's
    ast.FunctionDef (and the resolve for its own module) or None."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return env.get(node.id, UNKNOWN)
    if isinstance(node, (ast.Tuple, ast.List)):
        items = [value(e, env, resolve, depth) for e in node.elts]
        return UNKNOWN if any(i is UNKNOWN for i in items) else tuple(items)
    if isinstance(node, ast.UnaryOp):
        inner = value(node.operand, env, resolve, depth)
        if inner is UNKNOWN:
            return UNKNOWN
        if isinstance(node.op, ast.Not):
            return UNKNOWN if isinstance(inner, Tensor) else not inner
        if isinstance(node.op, ast.USub) and isinstance(inner, (int, float)):
            return -inner
        return UNKNOWN
    if isinstance(node, ast.BoolOp):
        return _bool_op(node, env, resolve, depth)
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        return compare(node.ops[0], value(node.left, env, resolve, depth),
                       value(node.comparators[0], env, resolve, depth))
    if isinstance(node, ast.Attribute) and node.attr == "ndim":
        tensor = value(node.value, env, resolve, depth)
        return tensor.dim() if isinstance(tensor, Tensor) and tensor.dim() is not None else UNKNOWN
    if isinstance(node, ast.Call):
        return _call(node, env, resolve, depth)
    return UNKNOWN


def _bool_op(node, env, resolve, depth):
    """and/or with three values: a known False (and) or True (or) decides whatever the rest is."""
    values = [value(v, env, resolve, depth) for v in node.values]
    truths = [None if v is UNKNOWN or isinstance(v, Tensor) else bool(v) for v in values]
    if isinstance(node.op, ast.And):
        return False if False in truths else True if all(t is True for t in truths) else UNKNOWN
    return True if True in truths else False if all(t is False for t in truths) else UNKNOWN


_COMPARE = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
            ast.Gt: operator.gt, ast.GtE: operator.ge}


def compare(op, left, right):
    if left is UNKNOWN or right is UNKNOWN or isinstance(left, (Tensor, Unknown)) \
            or isinstance(right, (Tensor, Unknown)):
        if isinstance(op, (ast.Is, ast.IsNot)) and (left is None or right is None) and \
                isinstance(left if right is None else right, Tensor):
            return isinstance(op, ast.IsNot)  # a tensor is not None
        return UNKNOWN
    if isinstance(op, ast.Is):
        return left is right if left is None or right is None else UNKNOWN
    if isinstance(op, ast.IsNot):
        return left is not right if left is None or right is None else UNKNOWN
    if isinstance(op, (ast.In, ast.NotIn)):
        if not isinstance(right, (tuple, list, str)):
            return UNKNOWN
        return (left in right) == isinstance(op, ast.In)
    if type(left) is not type(right) and not (isinstance(left, (int, float)) and isinstance(right, (int, float))):
        return isinstance(op, ast.NotEq) if isinstance(op, (ast.Eq, ast.NotEq)) and left is not None and \
            right is not None and not isinstance(left, bool) and not isinstance(right, bool) else UNKNOWN
    try:
        return _COMPARE[type(op)](left, right)
    except (TypeError, KeyError):
        return UNKNOWN


def _call(node: ast.Call, env, resolve, depth):
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr in ("dim", "ndimension", "numel", "size") \
            and not node.keywords:
        tensor = value(func.value, env, resolve, depth)
        if isinstance(tensor, (tuple, list)) and func.attr == "size" and not node.args:
            return len(tensor)  # an int[] argument's size() in C++ (`pad.size() == 4`)
        if not isinstance(tensor, Tensor):
            return UNKNOWN
        if func.attr == "size":
            if len(node.args) != 1:
                return UNKNOWN
            d = value(node.args[0], env, resolve, depth)
            found = tensor.size(d) if isinstance(d, int) else None
        else:
            found = tensor.numel() if func.attr == "numel" else tensor.dim()
        return UNKNOWN if found is None else found
    if isinstance(func, ast.Name) and func.id == "len" and len(node.args) == 1:
        inner = value(node.args[0], env, resolve, depth)
        return len(inner) if isinstance(inner, (tuple, list, str)) else UNKNOWN
    if isinstance(func, ast.Name) and func.id == "isinstance" and len(node.args) == 2:
        return _isinstance(value(node.args[0], env, resolve, depth), node.args[1])
    if resolve is None or depth >= MAX_DEPTH:
        return UNKNOWN
    found = resolve(ast.unparse(func))
    if found is None:
        return UNKNOWN
    helper, helper_resolve = found
    args = [value(a, env, resolve, depth) for a in node.args]
    kwargs = {k.arg: value(k.value, env, resolve, depth) for k in node.keywords if k.arg}
    bound = bind(helper.args, args, kwargs)
    if bound is None:
        return UNKNOWN
    result = run(helper, bound, helper_resolve, depth + 1).returned
    if isinstance(result, int) and not isinstance(result, bool) and len(args) == 1 and isinstance(args[0], str):
        return Named(result, args[0])  # a string made into an int (an enum's value): keep the string
    return result


_TYPES = {"str": str, "int": int, "float": float, "bool": bool, "list": list, "tuple": tuple}


def _isinstance(obj, types_node):
    if obj is UNKNOWN or isinstance(obj, Unknown):
        return UNKNOWN
    names = [ast.unparse(t) for t in (types_node.elts if isinstance(types_node, ast.Tuple) else [types_node])]
    if isinstance(obj, Tensor):
        return True if any(n in ("Tensor", "torch.Tensor") for n in names) else (
            False if all(n in _TYPES for n in names) else UNKNOWN)
    known = tuple(_TYPES[n] for n in names if n in _TYPES)
    if known and isinstance(obj, known):  # `isinstance(out_size, (int, torch.SymInt))` with an int: one fits
        return True
    if all(n in _TYPES for n in names):
        return False
    return False if obj is None or isinstance(obj, (str, int, float)) else UNKNOWN


def bind(args: ast.arguments, positional: list, keywords: dict) -> dict | None:
    """A def's parameters bound to the values given (its literal defaults, UNKNOWN for the rest); None when the
    values do not fit its signature."""
    params = [a.arg for a in args.posonlyargs + args.args]
    env: dict = {}
    defaults = args.defaults
    first_default = len(params) - len(defaults)
    for i, name in enumerate(params):
        if i >= first_default:
            env[name] = literal(defaults[i - first_default])
    for a, d in zip(args.kwonlyargs, args.kw_defaults):
        env[a.arg] = literal(d) if d is not None else UNKNOWN
    if len(positional) > len(params) and args.vararg is None:
        return None
    for name, v in zip(params, positional):
        env[name] = v
    for name, v in keywords.items():
        if name not in env and name not in params and args.kwarg is None and \
                name not in {a.arg for a in args.kwonlyargs}:
            return None
        env[name] = v
    for name in params + [a.arg for a in args.kwonlyargs]:
        env.setdefault(name, UNKNOWN)
    return env


def literal(node):
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError):
        return UNKNOWN


class Run:
    """What reading a def's body found: the value it returned (UNKNOWN unless every path that returns agrees) and
    each call made on a followed path, by its line: [(callee as written, args, kwargs, the value of the object
    a method is called on, or UNKNOWN)]."""

    def __init__(self):
        self.returned = None
        self.returns: list = []
        self.calls: dict[int, list[tuple[str, list, dict]]] = {}


def run(fn: ast.FunctionDef, env: dict, resolve=None, depth: int = 0) -> Run:
    out = Run()
    _block(fn.body, dict(env), out, resolve, depth)
    values = out.returns
    out.returned = values[0] if values and all(v == values[0] and type(v) is type(values[0]) for v in values) \
        else UNKNOWN
    return out


def _block(body: list, env: dict, out: Run, resolve, depth) -> bool:
    """Follow statements; False when the path ends (return, raise)."""
    for stmt in body:
        _note_calls(stmt, env, out, resolve, depth)
        if isinstance(stmt, ast.Return):
            out.returns.append(value(stmt.value, env, resolve, depth) if stmt.value is not None else None)
            return False
        if isinstance(stmt, ast.Raise):
            return False
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            env[stmt.targets[0].id] = value(stmt.value, env, resolve, depth)
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
            env[stmt.target.id] = value(stmt.value, env, resolve, depth)
        elif isinstance(stmt, ast.If):
            test = value(stmt.test, env, resolve, depth)
            truth = None if test is UNKNOWN or isinstance(test, Tensor) else bool(test)
            if truth is True:
                if not _block(stmt.body, env, out, resolve, depth):
                    return False
            elif truth is False:
                if not _block(stmt.orelse, env, out, resolve, depth):
                    return False
            else:
                sides = []
                for branch in (stmt.body, stmt.orelse):
                    side = dict(env)
                    if _block(branch, side, out, resolve, depth):
                        sides.append(side)
                if not sides:
                    return False
                env.clear()
                env.update(_merge(sides))
        elif isinstance(stmt, (ast.Expr, ast.Pass, ast.Assert, ast.Import, ast.ImportFrom, ast.FunctionDef)):
            continue
        else:
            for node in ast.walk(stmt):  # a loop, with, try, an attribute or subscript write: what it sets is unknown
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    env[node.id] = UNKNOWN
    return True


def _merge(sides: list[dict]) -> dict:
    keys = set().union(*sides)
    out = {}
    for k in keys:
        vals = [s.get(k, UNKNOWN) for s in sides]
        same = all(v is vals[0] or (type(v) is type(vals[0]) and v == vals[0]) for v in vals)
        out[k] = vals[0] if same else UNKNOWN
    return out


def _note_calls(stmt, env: dict, out: Run, resolve, depth) -> None:
    """The calls a statement makes (not inside a nested def or lambda), with their arguments' values."""
    if isinstance(stmt, (ast.If, ast.FunctionDef)):
        nodes = [stmt.test] if isinstance(stmt, ast.If) else []
    else:
        nodes = [stmt]
    for top in nodes:
        for node in ast.walk(top):
            if isinstance(node, ast.Call):
                args = [value(a, env, resolve, depth) for a in node.args]
                kwargs = {k.arg: value(k.value, env, resolve, depth) for k in node.keywords if k.arg}
                receiver = value(node.func.value, env, resolve, depth) if isinstance(node.func, ast.Attribute) \
                    else UNKNOWN  # (`input.softmax(dim)`: a Tensor method's self)
                out.calls.setdefault(node.lineno, []).append((ast.unparse(node.func), args, kwargs, receiver))

"""A KernelBench problem's workload, read from its source with ``ast``: the file is never run.

A problem file is code from outside, so it is parsed, never imported or executed. What
``get_inputs()`` builds is worked out by a small evaluator that knows only literals,
arithmetic on them, module constants, tuples, ``*`` unpacking and the tensor constructors
and shape-keeping methods KernelBench uses (``torch.randn(batch_size, *input_shape)``,
``torch.randint(0, 2, x.shape).bool()``, ``(torch.rand(n, m) * scale).softmax(dim=-1)``).
Anything else raises Unreadable with what could not be read: the problem is skipped, never
guessed.
"""

from __future__ import annotations

import ast
import hashlib
import operator
from dataclasses import dataclass, field
from typing import Any


class Unreadable(ValueError):
    """The workload cannot be read statically; the message says which expression stopped it."""


@dataclass(frozen=True)
class Tensor:
    shape: tuple[int, ...]
    dtype: str


@dataclass
class Problem:
    """What a problem file says statically: its constants, inputs and the Model that computes it."""

    constants: dict[str, Any]
    """Module constants get_inputs() or get_init_inputs() read (numbers, strings, tuples of them)."""
    inputs: list[Tensor | int | float | bool]
    """What get_inputs() returns, in order."""
    init: list[Any]
    """What get_init_inputs() returns, in order."""
    forward: str | None
    """``ast.unparse`` of Model.forward's last return expression, if it has one."""
    model_source: str
    """Model class as ``ast.unparse`` gives it, docstrings removed: the code that defines the operation."""
    model_digest: str = field(default="")
    """sha256 hex of model_source."""


DTYPES = {
    "float32": "fp32", "float": "fp32", "float16": "fp16", "half": "fp16", "bfloat16": "bf16",
    "float64": "fp64", "double": "fp64", "int64": "int64", "long": "int64", "int32": "int32",
    "int": "int32", "int16": "int16", "int8": "int8", "uint8": "uint8", "bool": "bool",
}
# Tensor methods that convert the element type and keep the shape.
_CASTS = {"float": "fp32", "half": "fp16", "bfloat16": "bf16", "double": "fp64", "long": "int64", "int": "int32", "bool": "bool"}
# Methods and torch functions that keep shape and type (the argument beyond the tensor is a dim or a bound).
_SAME = {"softmax", "log_softmax", "abs", "exp", "sigmoid", "tanh", "relu", "sign", "tril", "triu", "contiguous",
         "cuda", "clone", "detach", "clamp", "requires_grad_", "sqrt", "neg"}
_CONSTRUCTORS = {"rand", "randn", "zeros", "ones", "empty"}
_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
           ast.Div: operator.truediv, ast.Mod: operator.mod, ast.Pow: operator.pow}
# A constant like 2 ** 10000 or [0] * 10**9 must not take the importer's memory: they are refused.
_MAX_NUMBER = 1 << 62
_MAX_ITEMS = 4096
# The evaluator and ast.unparse recurse once or more per level of the tree; KernelBench's problems
# nest at most 15 deep. A file nested deeper is refused before either runs.
MAX_DEPTH = 100


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _dtype_of(node: ast.expr) -> str:
    text = ast.unparse(node)
    name = text.removeprefix("torch.")
    if text.startswith("torch.") and name in DTYPES:
        return DTYPES[name]
    raise Unreadable(f"dtype {text}")


class _Evaluator:
    def __init__(self, constants: dict[str, Any]):
        self.names = dict(constants)
        self.read: set[str] = set()

    def value(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, str, bool)):
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in self.names:
                raise Unreadable(f"name {node.id}")
            self.read.add(node.id)
            return self.names[node.id]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            operand = self.value(node.operand)
            if _number(operand):
                return -operand if isinstance(node.op, ast.USub) else operand
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            return self._binary(node)
        if isinstance(node, (ast.Tuple, ast.List)):
            items: list[Any] = []
            for element in node.elts:
                if isinstance(element, ast.Starred):
                    inner = self.value(element.value)
                    if not isinstance(inner, tuple):
                        raise Unreadable(ast.unparse(element))
                    items.extend(inner)
                else:
                    items.append(self.value(element))
            return tuple(items)
        if isinstance(node, ast.Attribute) and node.attr in ("shape", "T"):
            tensor = self.value(node.value)
            if isinstance(tensor, Tensor) and node.attr == "shape":
                return tensor.shape
            if isinstance(tensor, Tensor) and len(tensor.shape) == 2:
                return Tensor(tensor.shape[::-1], tensor.dtype)
        if isinstance(node, ast.Call):
            return self._call(node)
        raise Unreadable(ast.unparse(node))

    def _binary(self, node: ast.BinOp) -> Any:
        left, right = self.value(node.left), self.value(node.right)
        if _number(left) and _number(right):
            if isinstance(node.op, ast.Pow) and (abs(right) > 64 or abs(left) > _MAX_NUMBER):
                raise Unreadable(ast.unparse(node))
            try:
                result = _BINARY[type(node.op)](left, right)
            except (ArithmeticError, ValueError):
                raise Unreadable(ast.unparse(node)) from None
            if _number(result) and abs(result) <= _MAX_NUMBER:
                return result
            raise Unreadable(ast.unparse(node))
        if isinstance(left, tuple) and isinstance(right, tuple) and isinstance(node.op, ast.Add):
            return left + right
        if isinstance(node.op, ast.Mult) and isinstance(left, tuple) and isinstance(right, int) and not isinstance(right, bool) \
                and 0 <= right and len(left) * right <= _MAX_ITEMS:
            return left * right
        # A tensor with a number (or a 0-d tensor) keeps its shape; two tensors must have one shape.
        tensors = [t for t in (left, right) if isinstance(t, Tensor) and t.shape]
        others = [t for t in (left, right) if not (isinstance(t, Tensor) and t.shape)]
        if tensors and all(_number(o) or (isinstance(o, Tensor) and not o.shape) for o in others):
            if len(tensors) == 2 and tensors[0] != tensors[1]:
                raise Unreadable(ast.unparse(node))
            return tensors[0]
        raise Unreadable(ast.unparse(node))

    def _dims(self, args: list[ast.expr]) -> tuple[int, ...]:
        dims: list[Any] = []
        if len(args) == 1 and not isinstance(args[0], ast.Starred):
            single = self.value(args[0])
            dims.extend(single if isinstance(single, tuple) else (single,))
        else:
            dims.extend(self.value(ast.Tuple(elts=args, ctx=ast.Load())))
        if not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in dims):
            raise Unreadable(f"shape {', '.join(ast.unparse(a) for a in args)}")
        return tuple(dims)

    def _keywords(self, node: ast.Call, default: str) -> str:
        dtype = default
        for keyword in node.keywords:
            if keyword.arg == "dtype":
                dtype = _dtype_of(keyword.value)
            elif keyword.arg not in ("device", "requires_grad", "dim", "diagonal", "min", "max"):
                raise Unreadable(ast.unparse(node))
        return dtype

    def _call(self, node: ast.Call) -> Any:
        func = node.func
        if not isinstance(func, ast.Attribute):
            raise Unreadable(ast.unparse(node))
        if isinstance(func.value, ast.Name) and func.value.id == "torch":
            name = func.attr
            if name in _CONSTRUCTORS:
                return Tensor(self._dims(node.args), self._keywords(node, "fp32"))
            if name == "randint" and len(node.args) in (2, 3):
                size = node.args[-1]
                return Tensor(self._dims([size]), self._keywords(node, "int64"))
            if name in ("rand_like", "randn_like", "zeros_like", "ones_like") and len(node.args) == 1:
                like = self.value(node.args[0])
                if isinstance(like, Tensor):
                    return Tensor(like.shape, self._keywords(node, like.dtype))
            if name in _SAME and node.args:
                tensor = self.value(node.args[0])
                for extra in node.args[1:]:
                    self.value(extra)
                if isinstance(tensor, Tensor):
                    return Tensor(tensor.shape, self._keywords(node, tensor.dtype))
            raise Unreadable(ast.unparse(node))
        tensor = self.value(func.value)
        if not isinstance(tensor, Tensor):
            raise Unreadable(ast.unparse(node))
        if func.attr in _CASTS and not node.args and not node.keywords:
            return Tensor(tensor.shape, _CASTS[func.attr])
        if func.attr == "to" and len(node.args) + len(node.keywords) == 1:
            target = node.args[0] if node.args else node.keywords[0].value
            if node.keywords and node.keywords[0].arg != "dtype":
                raise Unreadable(ast.unparse(node))
            return Tensor(tensor.shape, _dtype_of(target))
        if func.attr in _SAME:
            for extra in node.args:
                self.value(extra)
            return Tensor(tensor.shape, self._keywords(node, tensor.dtype))
        raise Unreadable(ast.unparse(node))

    def body(self, function: ast.FunctionDef) -> list[Any]:
        """Run a get_inputs()-like body of assignments ending in ``return [...]``, symbolically."""
        for statement in function.body:
            if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
                continue  # a docstring
            targets = _targets(statement) if isinstance(statement, ast.Assign) else None
            if targets is not None:
                _assign(self.names, self.value(statement.value), statement)
                continue
            if isinstance(statement, ast.Return) and statement.value is not None:
                result = self.value(statement.value)
                if not isinstance(result, tuple):
                    raise Unreadable(f"{function.name}() returns {ast.unparse(statement.value)}")
                return list(result)
            raise Unreadable(f"{function.name}(): {ast.unparse(statement).splitlines()[0]}")
        raise Unreadable(f"{function.name}() has no return")


def _targets(statement: ast.Assign) -> list[str] | None:
    """Names an assignment binds (``a = b = …``, ``a, b = …``); None for anything else (``x[0] = …``)."""
    names = []
    for target in statement.targets:
        if isinstance(target, ast.Name):
            names.append(target.id)
        elif isinstance(target, ast.Tuple) and all(isinstance(t, ast.Name) for t in target.elts):
            names.extend(t.id for t in target.elts)
        else:
            return None
    return names


def _assign(names: dict[str, Any], value: Any, statement: ast.Assign) -> None:
    for target in statement.targets:
        if isinstance(target, ast.Name):
            names[target.id] = value
        elif isinstance(value, tuple) and len(value) == len(target.elts):
            names.update((t.id, v) for t, v in zip(target.elts, value))
        else:
            raise Unreadable(ast.unparse(statement))


def _module_constants(tree: ast.Module) -> dict[str, Any]:
    """Module-level ``NAME = expr`` (or ``A, B = x, y``) whose value reads statically; the others are left out."""
    constants: dict[str, Any] = {}
    for statement in tree.body:
        targets = _targets(statement) if isinstance(statement, ast.Assign) else None
        if targets is None:
            continue
        for name in targets:
            constants.pop(name, None)
        try:
            value = _Evaluator(constants).value(statement.value)
            if isinstance(value, Tensor) or (isinstance(value, tuple) and any(isinstance(v, Tensor) for v in value)):
                continue
            _assign(constants, value, statement)
        except Unreadable:
            continue
    return constants


def _without_docstrings(node: ast.AST) -> ast.AST:
    for child in ast.walk(node):
        body = getattr(child, "body", None)
        if isinstance(child, (ast.ClassDef, ast.FunctionDef)) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            child.body = body[1:] or [ast.Pass()]
    return node


def _forward(model: ast.ClassDef) -> str | None:
    for item in model.body:
        if isinstance(item, ast.FunctionDef) and item.name == "forward":
            returns = [s for s in item.body if isinstance(s, ast.Return) and s.value is not None]
            return ast.unparse(returns[-1].value) if returns else None
    return None


def _check_depth(tree: ast.AST) -> None:
    """Unreadable if the tree nests deeper than MAX_DEPTH; walked without recursion."""
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise Unreadable(f"nested deeper than {MAX_DEPTH} levels (line {getattr(node, 'lineno', '?')})")
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))


def read_problem(text: str) -> Problem:
    """Parse a problem's source; raise Unreadable when its inputs cannot be read without running it."""
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        raise Unreadable(f"not Python: {exc.msg} (line {exc.lineno})") from None
    except (RecursionError, MemoryError):
        # CPython's parser gives these for nesting past its own stack (x.a.a…, - - - …), not for size.
        raise Unreadable("nested too deeply for Python's parser") from None
    _check_depth(tree)
    functions = {s.name: s for s in tree.body if isinstance(s, ast.FunctionDef)}
    models = [s for s in tree.body if isinstance(s, ast.ClassDef) and s.name == "Model"]
    if not models:
        raise Unreadable("no class Model")
    if "get_inputs" not in functions:
        raise Unreadable("no get_inputs()")
    constants = _module_constants(tree)
    inputs_reader = _Evaluator(constants)
    inputs = inputs_reader.body(functions["get_inputs"])
    for item in inputs:
        if not (isinstance(item, Tensor) or _number(item) or isinstance(item, bool)):
            raise Unreadable(f"get_inputs() returns {item!r}, neither a tensor nor a number")
    init_reader = _Evaluator(constants)
    init = init_reader.body(functions["get_init_inputs"]) if "get_init_inputs" in functions else []
    if any(isinstance(item, Tensor) for item in init):
        raise Unreadable("get_init_inputs() returns a tensor")
    read = (inputs_reader.read | init_reader.read) & constants.keys()
    model = _without_docstrings(models[0])
    source = ast.unparse(model)
    return Problem(
        constants={name: constants[name] for name in sorted(read, key=list(constants).index)},
        inputs=inputs, init=init, forward=_forward(models[0]), model_source=source,
        model_digest=hashlib.sha256(source.encode("utf-8")).hexdigest(),
    )
